//! Large entities: a property value too large for a table entity is stored
//! as a blob, and the entity keeps a [`Pointer`] to it.
//!
//! The pointer names the blob and pins the exact bytes: container, blob
//! name, ETag, length and SHA-256. Reading through it presents the ETag
//! (`If-Match`) and checks length and hash, so a reader can tell a
//! **stale** pointer (the blob was overwritten or deleted since: the entity
//! is out of date) from a **corrupted** one (same version, other bytes).
//!
//! Writes are ordered blob first, entity second: the blob is complete before
//! any entity can point at it, and a crash in between leaves only an
//! unreferenced blob, which [`LargeEntityStore::find_unreferenced`] finds
//! later. Blob names end in the value's hash and are written create-only,
//! so writing the same value twice (a retry after a lost answer) yields the
//! same blob and the same pointer.
//!
//! ```no_run
//! use stowage_client::patterns::large_entity::{LargeEntityStore, Pointer};
//! use stowage_client::{BlobServiceClient, DeleteSnapshots, Error};
//!
//! # async fn demo() -> stowage_client::Result<()> {
//! let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
//! let container = service.container("entities");
//! container.create_if_not_exists().await?;
//! let store = LargeEntityStore::new(container);
//!
//! // Blob first: the pointer exists only once the bytes are stored.
//! let pointer = store.put("orders/42/attachment", vec![7u8; 1 << 20]).await?;
//! // The entity keeps the pointer as one string...
//! let kept = pointer.to_string();
//! // ...and a reader verifies the bytes against it.
//! let read = store.get(&kept.parse::<Pointer>()?).await?;
//! assert_eq!(read.len(), 1 << 20);
//!
//! // Once the blob is gone (or overwritten), the pointer is stale, which is
//! // not the same as corrupted.
//! store
//!     .container()
//!     .blob(&pointer.blob)
//!     .delete_if_exists(DeleteSnapshots::Include)
//!     .await?;
//! assert!(matches!(store.get(&pointer).await, Err(Error::StalePointer { .. })));
//! # Ok(())
//! # }
//! ```

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::TryStreamExt;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};

use crate::{
    BlobEntry, Conditions, ContainerClient, DownloadOptions, Error, ErrorCode, Etag,
    ListBlobsOptions, Metadata, Result, UploadOptions,
};

/// The metadata name holding the value's SHA-256 (hex).
const SHA256_METADATA: &str = "sha256";
/// The pointer format's tag.
const TAG: &str = "le1";
/// Characters escaped in a pointer's fields: all but unreserved and `/`.
const FIELD: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// Where a large value is and exactly which bytes it is.
///
/// Serialises to one string (`le1;<container>;<blob>;<etag>;<length>;<sha256>`,
/// fields percent-encoded) to keep in a table entity, and parses back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pointer {
    /// The container.
    pub container: String,
    /// The blob name.
    pub blob: String,
    /// The blob's ETag when the value was written.
    pub etag: Etag,
    /// The value's length in bytes.
    pub length: u64,
    /// The value's SHA-256.
    pub sha256: [u8; 32],
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{TAG};{};{};{};{};{}",
            utf8_percent_encode(&self.container, FIELD),
            utf8_percent_encode(&self.blob, FIELD),
            utf8_percent_encode(self.etag.as_str(), FIELD),
            self.length,
            hex::encode(self.sha256)
        )
    }
}

impl FromStr for Pointer {
    type Err = Error;

    fn from_str(s: &str) -> Result<Pointer> {
        let bad = |why: &str| Error::InvalidPointer(format!("{why}: `{s}`"));
        let fields: Vec<&str> = s.split(';').collect();
        let [tag, container, blob, etag, length, sha] = fields[..] else {
            return Err(bad("expected 6 fields"));
        };
        if tag != TAG {
            return Err(bad("unknown format tag"));
        }
        let decode = |field: &str| {
            percent_decode_str(field)
                .decode_utf8()
                .map(|c| c.into_owned())
                .map_err(|_| bad("field is not UTF-8"))
        };
        let mut sha256 = [0u8; 32];
        hex::decode_to_slice(sha, &mut sha256).map_err(|_| bad("bad SHA-256"))?;
        Ok(Pointer {
            container: decode(container)?,
            blob: decode(blob)?,
            etag: Etag::new(&decode(etag)?),
            length: length.parse().map_err(|_| bad("bad length"))?,
            sha256,
        })
    }
}

/// A blob that no pointer references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// The blob name.
    pub blob: String,
    /// Its ETag when listed.
    pub etag: Etag,
    /// Its length.
    pub length: u64,
    /// Its Last-Modified.
    pub last_modified: SystemTime,
}

/// Stores large values as blobs in one container, under a name prefix.
#[derive(Debug, Clone)]
pub struct LargeEntityStore {
    container: ContainerClient,
    prefix: String,
}

impl LargeEntityStore {
    /// Values go into `container` (which must exist).
    pub fn new(container: ContainerClient) -> LargeEntityStore {
        LargeEntityStore {
            container,
            prefix: String::new(),
        }
    }

    /// Blob names start with `prefix` (e.g. `"orders/"`); the sweep looks
    /// only there.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> LargeEntityStore {
        self.prefix = prefix.into();
        self
    }

    /// The container values are stored in.
    pub fn container(&self) -> &ContainerClient {
        &self.container
    }

    /// The blob name of a value under `key`: prefix, key, `/`, SHA-256 hex.
    pub fn blob_name(&self, key: &str, sha256: &[u8; 32]) -> String {
        format!("{}{key}/{}", self.prefix, hex::encode(sha256))
    }

    /// Stores `value` for `key` and returns the pointer to keep in the
    /// entity. Write the entity only after this returns (blob first).
    ///
    /// Idempotent: the same key and value give the same blob and pointer.
    ///
    /// # Errors
    /// Service and transport errors (`404 ContainerNotFound` when the
    /// container does not exist).
    pub async fn put(&self, key: &str, value: impl Into<Bytes>) -> Result<Pointer> {
        let value = value.into();
        let sha256: [u8; 32] = Sha256::digest(&value).into();
        let blob = self.container.blob(&self.blob_name(key, &sha256));
        let options = UploadOptions::default()
            .with_metadata(Metadata::from([(SHA256_METADATA, hex::encode(sha256))]))
            .with_conditions(Conditions::new().with_if_not_exists());
        let pointer = |etag: Etag| Pointer {
            container: self.container.name().to_owned(),
            blob: blob.name().to_owned(),
            etag,
            length: value.len() as u64,
            sha256,
        };
        match blob.upload(value.clone(), &options).await {
            Ok(written) => Ok(pointer(written.etag)),
            Err(e) if e.has_code(&ErrorCode::BlobAlreadyExists) => {
                let existing = blob.properties(&Conditions::new()).await?;
                let same = existing.content_length == value.len() as u64
                    && existing.metadata.get(SHA256_METADATA) == Some(&hex::encode(sha256));
                if same {
                    return Ok(pointer(existing.etag));
                }
                // The name promises these bytes; whatever is there is not
                // them. Replace exactly that version.
                let replace =
                    options.with_conditions(Conditions::new().with_if_match(existing.etag));
                let written = blob.upload(value.clone(), &replace).await?;
                Ok(pointer(written.etag))
            }
            Err(e) => Err(e),
        }
    }

    /// Reads the value behind `pointer`, verified.
    ///
    /// # Errors
    /// [`Error::StalePointer`] when the blob was overwritten or deleted
    /// since the pointer was made; [`Error::CorruptedPointer`] when it has
    /// the pointer's ETag but not its length or SHA-256; service and
    /// transport errors otherwise.
    pub async fn get(&self, pointer: &Pointer) -> Result<Bytes> {
        let blob = self.service_container(pointer).blob(&pointer.blob);
        let options = DownloadOptions::default()
            .with_conditions(Conditions::new().with_if_match(pointer.etag.clone()));
        let stale = || Error::StalePointer {
            container: pointer.container.clone(),
            blob: pointer.blob.clone(),
        };
        let corrupted = |reason: String| Error::CorruptedPointer {
            container: pointer.container.clone(),
            blob: pointer.blob.clone(),
            reason,
        };
        let bytes = match blob.download(&options).await {
            Ok(download) => download.bytes().await?,
            Err(e) if e.is_not_found() || e.has_code(&ErrorCode::ConditionNotMet) => {
                return Err(stale());
            }
            Err(e) => return Err(e),
        };
        if bytes.len() as u64 != pointer.length {
            return Err(corrupted(format!(
                "length {} instead of {}",
                bytes.len(),
                pointer.length
            )));
        }
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        if sha256 != pointer.sha256 {
            return Err(corrupted(format!(
                "SHA-256 {} instead of {}",
                hex::encode(sha256),
                hex::encode(pointer.sha256)
            )));
        }
        Ok(bytes)
    }

    /// Deletes the blob behind `pointer` if it is still that version;
    /// returns whether it was deleted.
    ///
    /// # Errors
    /// Service and transport errors other than "gone" and "changed".
    pub async fn delete(&self, pointer: &Pointer) -> Result<bool> {
        let blob = self.service_container(pointer).blob(&pointer.blob);
        let only_this = Conditions::new().with_if_match(pointer.etag.clone());
        match blob
            .delete(crate::DeleteSnapshots::Include, &only_this)
            .await
        {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() || e.is_precondition_failed() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The blobs under the prefix that no pointer in `referenced` names and
    /// that were last modified at least `min_age` ago by the client's clock.
    ///
    /// `min_age` covers the window between a blob's write and its entity's:
    /// a blob younger than that may be about to be referenced.
    ///
    /// # Errors
    /// Service and transport errors of the listing.
    pub async fn find_unreferenced<'a>(
        &self,
        referenced: impl IntoIterator<Item = &'a Pointer>,
        min_age: Duration,
    ) -> Result<Vec<Orphan>> {
        let names: HashSet<&str> = referenced
            .into_iter()
            .filter(|p| p.container == self.container.name())
            .map(|p| p.blob.as_str())
            .collect();
        let now = self.container.clock().now();
        let options = ListBlobsOptions::default().with_prefix(self.prefix.clone());
        let mut listing = self.container.list_blobs(options);
        let mut orphans = Vec::new();
        while let Some(entry) = listing.try_next().await? {
            let BlobEntry::Blob(item) = entry else {
                continue;
            };
            let age = now
                .duration_since(item.properties.last_modified)
                .unwrap_or_default();
            if !names.contains(item.name.as_str()) && age >= min_age {
                orphans.push(Orphan {
                    blob: item.name,
                    etag: item.properties.etag,
                    length: item.properties.content_length,
                    last_modified: item.properties.last_modified,
                });
            }
        }
        Ok(orphans)
    }

    /// Finds unreferenced blobs as [`LargeEntityStore::find_unreferenced`]
    /// does and deletes each one that is still the version listed; returns
    /// those deleted.
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn delete_unreferenced<'a>(
        &self,
        referenced: impl IntoIterator<Item = &'a Pointer>,
        min_age: Duration,
    ) -> Result<Vec<Orphan>> {
        let mut deleted = Vec::new();
        for orphan in self.find_unreferenced(referenced, min_age).await? {
            let only_this = Conditions::new().with_if_match(orphan.etag.clone());
            let blob = self.container.blob(&orphan.blob);
            match blob
                .delete(crate::DeleteSnapshots::Include, &only_this)
                .await
            {
                Ok(()) => deleted.push(orphan),
                Err(e) if e.is_not_found() || e.is_precondition_failed() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }

    /// The container a pointer names (normally this store's).
    fn service_container(&self, pointer: &Pointer) -> ContainerClient {
        if pointer.container == self.container.name() {
            self.container.clone()
        } else {
            self.container.sibling(&pointer.container)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_round_trip_through_their_string_form() {
        let pointers = [
            Pointer {
                container: "entities".into(),
                blob: "orders/42/ab".into(),
                etag: Etag::new("\"0x8DCCB1A2B3C4D5E\""),
                length: 5_000_000,
                sha256: [7; 32],
            },
            Pointer {
                container: "x-1".into(),
                blob: "we;ird %name ü\u{1F600}".into(),
                etag: Etag::new("W/\"odd;etag\""),
                length: 0,
                sha256: [0; 32],
            },
        ];
        for p in pointers {
            let text = p.to_string();
            assert_eq!(text.matches(';').count(), 5, "{text}");
            assert_eq!(text.parse::<Pointer>().unwrap(), p);
        }
        let text = "le1;entities;orders/42/ab;0x8DCCB1A2B3C4D5E;5000000;0707070707070707070707070707070707070707070707070707070707070707";
        assert_eq!(text.parse::<Pointer>().unwrap().to_string(), text);
    }

    #[test]
    fn malformed_pointers_are_refused() {
        for text in [
            "",
            "le2;c;b;e;1;00",
            "le1;c;b;e;1",
            "le1;c;b;e;x;0707070707070707070707070707070707070707070707070707070707070707",
            "le1;c;b;e;1;zz",
            "le1;c;b;e;1;07",
        ] {
            assert!(
                matches!(text.parse::<Pointer>(), Err(Error::InvalidPointer(_))),
                "{text}"
            );
        }
    }
}
