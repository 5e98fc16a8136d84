//! Blob index tags: Set Blob Tags, Get Blob Tags, Find Blobs by Tags, and
//! the `x-ms-if-tags` check every conditional blob operation runs inside its
//! transaction (docs/wire/tags.md).

use crate::meta::sql::Sql;
use stowage_leases::{Access, LeaseId, Resource};

use super::Store;
use crate::conditions::{self, ConditionKind, Conditions};
use crate::meta::{self, TagCursor};
use crate::tags::Tags;
use crate::tags::expr::{Filter, TagCondition};
use crate::{BlobName, ContainerName, Result};

/// Input of Set Blob Tags.
#[derive(Clone, Debug)]
pub struct SetBlobTagsInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id, to tag that snapshot.
    pub snapshot: Option<String>,
    /// A version id, to tag that version.
    pub version_id: Option<String>,
    /// The new tag set (replaces the old one; empty removes all).
    pub tags: Tags,
    /// `x-ms-if-tags`.
    pub if_tags: Option<TagCondition>,
    /// `x-ms-lease-id`: required while the blob is leased.
    pub lease_id: Option<LeaseId>,
}

/// Input of Get Blob Tags.
#[derive(Clone, Debug)]
pub struct GetBlobTagsInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id, to read that snapshot's tags.
    pub snapshot: Option<String>,
    /// A version id, to read that version's tags.
    pub version_id: Option<String>,
    /// `x-ms-if-tags`.
    pub if_tags: Option<TagCondition>,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
}

/// Input of Find Blobs by Tags (account or container scope).
#[derive(Clone, Debug)]
pub struct FindBlobsByTagsInput {
    /// The account.
    pub account: String,
    /// The container of a container-scoped request; an account-scoped one
    /// may name it with `@container` in the filter instead.
    pub container: Option<ContainerName>,
    /// The parsed `where`.
    pub filter: Filter,
    /// Where the previous page ended (from [`FindBlobsByTagsOutput::next_marker`]).
    pub marker: Option<String>,
    /// Page size, 1..=5000.
    pub max_results: usize,
}

/// One blob found by its tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaggedBlob {
    /// Its container.
    pub container: String,
    /// Its name.
    pub name: String,
    /// The tags of the blob that the filter names.
    pub tags: Vec<(String, String)>,
}

/// One page of Find Blobs by Tags.
#[derive(Clone, Debug)]
pub struct FindBlobsByTagsOutput {
    /// Matches in (driving value, container, name) order.
    pub blobs: Vec<TaggedBlob>,
    /// Opaque token for the next page, when more may remain.
    pub next_marker: Option<String>,
}

/// Checks `x-ms-if-tags` of `conditions` against the tags of blob version
/// `blob_id` (no blob: no tags). Reads the tags only when the header was
/// sent, so operations without it pay nothing.
pub(super) fn check_if_tags(
    conn: &dyn Sql,
    conditions: &Conditions,
    blob_id: Option<i64>,
    kind: ConditionKind,
) -> Result<()> {
    if conditions.if_tags.is_none() {
        return Ok(());
    }
    let tags = match blob_id {
        Some(id) => meta::get_tags(conn, id)?,
        None => Tags::default(),
    };
    conditions::evaluate_tags(conditions, &tags, kind)?;
    Ok(())
}

fn if_tags_only(if_tags: &Option<TagCondition>) -> Conditions {
    Conditions {
        if_tags: if_tags.clone(),
        ..Conditions::default()
    }
}

/// A marker: the cursor's three fields joined by NUL (none of them holds
/// one: tag values and container names have no control characters, and
/// the name comes last), base64url.
fn encode_marker(c: &TagCursor) -> String {
    use base64::Engine as _;
    let raw = format!("{}\0{}\0{}", c.value, c.container, c.name);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// Whether `token` is a Find Blobs by Tags marker this store made (the HTTP
/// layer refuses any other before the search).
pub fn is_find_marker(token: &str) -> bool {
    decode_marker(token).is_some()
}

fn decode_marker(token: &str) -> Option<TagCursor> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()?;
    let raw = String::from_utf8(bytes).ok()?;
    let mut parts = raw.splitn(3, '\0');
    Some(TagCursor {
        value: parts.next()?.to_owned(),
        container: parts.next()?.to_owned(),
        name: parts.next()?.to_owned(),
    })
}

impl Store {
    /// Set Blob Tags: replaces the tag set of a blob or snapshot. The ETag
    /// and Last-Modified do not change.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, `ConditionNotMet`, lease refusals.
    pub async fn set_blob_tags(&self, input: SetBlobTagsInput) -> Result<()> {
        let now = self.now();
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let row = super::blobs::require_version(
                tx,
                cid,
                &input.blob,
                input.snapshot.as_deref(),
                input.version_id.as_deref(),
                now,
            )?;
            check_if_tags(
                tx,
                &if_tags_only(&input.if_tags),
                Some(row.id),
                ConditionKind::Write,
            )?;
            if row.is_base() {
                // A leased blob's tags change only with its lease id
                // (the reference: required if the blob has an active
                // lease): `LeaseIdMissing` without one.
                stowage_leases::check(
                    &row.lease,
                    input.lease_id.as_ref(),
                    Access::Write,
                    Resource::Blob,
                    now,
                )?;
            }
            meta::set_tags(tx, row.id, &input.tags)
        })
        .await
    }

    /// Get Blob Tags.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, `ConditionNotMet`, lease refusals.
    pub async fn get_blob_tags(&self, input: GetBlobTagsInput) -> Result<Tags> {
        let now = self.now();
        self.inner
            .db
            .read_now(move |conn| {
                let cid = meta::container_id(conn, &input.account, input.container.as_str())?;
                let row = super::blobs::require_version(
                    conn,
                    cid,
                    &input.blob,
                    input.snapshot.as_deref(),
                    input.version_id.as_deref(),
                    now,
                )?;
                let tags = meta::get_tags(conn, row.id)?;
                conditions::evaluate_tags(
                    &if_tags_only(&input.if_tags),
                    &tags,
                    ConditionKind::Read,
                )?;
                if row.is_base() {
                    stowage_leases::check(
                        &row.lease,
                        input.lease_id.as_ref(),
                        Access::Read,
                        Resource::Blob,
                        now,
                    )?;
                }
                Ok(tags)
            })
            .await
    }

    /// Find Blobs by Tags: the base blobs whose tags meet the filter, one
    /// page at a time. The index is read from the filter's driving
    /// comparison (its first equality, else its first range); the other
    /// comparisons are checked on the blobs found that way.
    ///
    /// # Errors
    /// `ContainerNotFound` (container scope), database failures.
    pub async fn find_blobs_by_tags(
        &self,
        input: FindBlobsByTagsInput,
    ) -> Result<FindBlobsByTagsOutput> {
        self.inner.db.read_now(move |conn| find(conn, &input)).await
    }
}

fn find(conn: &dyn Sql, input: &FindBlobsByTagsInput) -> Result<FindBlobsByTagsOutput> {
    let container = match &input.container {
        Some(c) => {
            meta::container_id(conn, &input.account, c.as_str())?;
            Some(c.as_str())
        }
        None => input.filter.container.as_deref(),
    };
    let max = input.max_results.clamp(1, crate::listing::MAX_RESULTS);
    let term = input.filter.driving_term();
    let mut after = input.marker.as_deref().and_then(decode_marker);
    let mut blobs = Vec::new();
    let mut last = None;
    loop {
        let batch = (max - blobs.len() + 1).max(64);
        let rows = meta::find_by_tag(conn, &input.account, container, term, after.as_ref(), batch)?;
        let exhausted = rows.len() < batch;
        for row in rows {
            if blobs.len() == max {
                // One more match follows: the page ends at the last one kept.
                let next_marker = last.as_ref().map(encode_marker);
                return Ok(FindBlobsByTagsOutput { blobs, next_marker });
            }
            // With one comparison the index row already decided the match
            // and holds the one tag to return: the blob's tags are read only
            // when other comparisons need them.
            let named = if input.filter.terms.len() == 1 {
                Some(vec![(term.key.clone(), row.cursor.value.clone())])
            } else {
                let tags = meta::get_tags(conn, row.blob_id)?;
                input
                    .filter
                    .matches(&tags)
                    .then(|| input.filter.named_tags(&tags))
            };
            if let Some(tags) = named {
                blobs.push(TaggedBlob {
                    container: row.cursor.container.clone(),
                    name: row.cursor.name.clone(),
                    tags,
                });
                last = Some(row.cursor.clone());
            }
            after = Some(row.cursor);
        }
        if exhausted {
            return Ok(FindBlobsByTagsOutput {
                blobs,
                next_marker: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip() {
        for c in [("", "c", "n"), ("v 1", "photos", "a/b\0c"), ("x", "c", "")] {
            let cursor = TagCursor {
                value: c.0.into(),
                container: c.1.into(),
                name: c.2.into(),
            };
            assert_eq!(decode_marker(&encode_marker(&cursor)), Some(cursor));
        }
        assert_eq!(decode_marker("not base64!"), None);
    }
}
