//! `import-azurite`: reads an Azurite 3.x data directory and loads it into
//! a Stowage store (docs/operations.md#moving-from-azurite).
//!
//! What the directory holds, as Azurite 3.x writes it: two LokiJS
//! databases saved as JSON, `__azurite_db_blob__.json` (collections
//! `$CONTAINERS_COLLECTION$`, `$BLOBS_COLLECTION$` with one document per
//! blob version, snapshots included, and `$BLOCKS_COLLECTION$` with the
//! uncommitted blocks) and `__azurite_db_blob_extent__.json`
//! (`$EXTENTS_COLLECTION$`: extent id to file), and the extent files in
//! `__blobstorage__`. A blob's bytes are ranges of extent files
//! (`persistency`: extent id, offset, count): one range for a blob written
//! whole, one per block in `committedBlocksInOrder` for blobs built from
//! blocks and for append blobs.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use futures::StreamExt as _;
use serde_json::Value;
use stowage_blobstore::admin::Progress;
use stowage_blobstore::{
    AccessPolicy, AccessTier, BlobName, BlobType, ContainerName, ContentProperties,
    ImportBlobInput, ImportContainerInput, ImportPart, LeaseDuration, LeaseId, LeaseRecord,
    Metadata, PublicAccess, Store, Tags,
};

const BLOB_DB: &str = "__azurite_db_blob__.json";
const EXTENT_DB: &str = "__azurite_db_blob_extent__.json";
const EXTENT_DIR: &str = "__blobstorage__";
/// Blobs written at once.
const BLOBS_AT_ONCE: usize = 16;
/// Bytes read from an extent file at a time.
const CHUNK: usize = 1024 * 1024;

/// What an import loaded.
#[derive(Debug, Default)]
pub(crate) struct ImportReport {
    pub containers: u64,
    pub blobs: u64,
    pub snapshots: u64,
    pub uncommitted_blocks: u64,
    pub bytes: u64,
    /// Page blobs, which Stowage does not serve yet.
    pub skipped: Vec<String>,
}

/// The documents of collection `name` of a LokiJS database.
fn collection<'a>(db: &'a Value, name: &str) -> &'a [Value] {
    db["collections"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .and_then(|c| c["data"].as_array())
        .map_or(&[], Vec::as_slice)
}

fn read_db(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "reading {} (is this an Azurite data directory?)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn str_field<'a>(doc: &'a Value, key: &str) -> Option<&'a str> {
    doc[key].as_str()
}

fn owned(doc: &Value, key: &str) -> Option<String> {
    str_field(doc, key).map(str::to_owned)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, as Azurite writes dates.
pub(crate) fn parse_iso8601(s: &str) -> Option<SystemTime> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<u64>().ok());
    let (h, min, sec) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    if !frac.chars().all(|c| c.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let nanos: u32 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    // Days since 1970-01-01 of a proleptic Gregorian date.
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + min * 60 + sec;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

fn time_field(doc: &Value, key: &str) -> Option<SystemTime> {
    str_field(doc, key).and_then(parse_iso8601)
}

/// Metadata as Azurite stores it: a JSON object.
fn metadata(doc: &Value) -> anyhow::Result<Metadata> {
    let pairs: Vec<(String, String)> = doc["metadata"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    Metadata::from_pairs(pairs).map_err(|e| anyhow::anyhow!("metadata: {e}"))
}

/// Blob index tags as Azurite stores them: `blobTags.blobTagSet`, a list
/// of `{key, value}`.
fn tags(doc: &Value) -> anyhow::Result<Tags> {
    let pairs: Vec<(String, String)> = doc["blobTags"]["blobTagSet"]
        .as_array()
        .map(|set| {
            set.iter()
                .filter_map(|t| Some((owned(t, "key")?, owned(t, "value")?)))
                .collect()
        })
        .unwrap_or_default();
    Tags::new(pairs).map_err(|e| anyhow::anyhow!("tags: {e}"))
}

/// Content-MD5 as Azurite stores it: a serialized byte array (an object
/// keyed "0".."15", or an array), or base64.
fn md5_field(v: &Value) -> Option<Vec<u8>> {
    use base64::Engine as _;
    match v {
        Value::Object(map) => {
            let mut out = vec![0u8; map.len()];
            for (k, b) in map {
                let i: usize = k.parse().ok()?;
                *out.get_mut(i)? = u8::try_from(b.as_u64()?).ok()?;
            }
            Some(out)
        }
        Value::Array(items) => items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect(),
        Value::String(s) => base64::engine::general_purpose::STANDARD.decode(s).ok(),
        _ => None,
    }
}

/// The lease of a container or blob document: `leaseId` and the
/// `leaseExpireTime`, `leaseBreakTime`, `leaseDurationSeconds` beside it,
/// with state and duration kind in `properties`.
fn lease(doc: &Value) -> LeaseRecord {
    let props = &doc["properties"];
    let Some(id) = str_field(doc, "leaseId").and_then(|s| LeaseId::parse(s).ok()) else {
        return LeaseRecord::default();
    };
    let duration = if props["leaseDuration"] == "infinite" {
        LeaseDuration::Infinite
    } else {
        let secs = doc["leaseDurationSeconds"].as_i64().unwrap_or(60);
        LeaseDuration::from_seconds(secs).unwrap_or(LeaseDuration::Fixed(60))
    };
    let mut record = LeaseRecord {
        id: Some(id),
        duration: Some(duration),
        ..LeaseRecord::default()
    };
    match str_field(props, "leaseState") {
        Some("leased") | Some("expired") => {
            if duration != LeaseDuration::Infinite {
                record.expires_at = time_field(doc, "leaseExpireTime");
            }
        }
        Some("breaking") => record.break_at = time_field(doc, "leaseBreakTime"),
        Some("broken") => record.broken = true,
        _ => return LeaseRecord::default(),
    }
    record
}

/// Extent id to file, from the extent database.
fn extent_files(dir: &Path) -> anyhow::Result<HashMap<String, PathBuf>> {
    let db = read_db(&dir.join(EXTENT_DB))?;
    let mut out = HashMap::new();
    for doc in collection(&db, "$EXTENTS_COLLECTION$") {
        let (Some(id), Some(path)) = (str_field(doc, "id"), str_field(doc, "path")) else {
            continue;
        };
        let path = Path::new(path);
        let file = if path.is_absolute() {
            path.to_path_buf()
        } else {
            dir.join(EXTENT_DIR).join(path)
        };
        out.insert(id.to_owned(), file);
    }
    Ok(out)
}

/// Streams `count` bytes at `offset` of `file`.
fn range_stream(
    file: PathBuf,
    offset: u64,
    count: u64,
) -> futures::stream::BoxStream<'static, std::io::Result<Bytes>> {
    let state = (None::<File>, offset, offset + count);
    futures::stream::try_unfold(state, move |(f, pos, end)| {
        let file = file.clone();
        async move {
            if pos >= end {
                return Ok(None);
            }
            let mut f = match f {
                Some(f) => f,
                None => {
                    let mut f = File::open(&file)?;
                    f.seek(SeekFrom::Start(pos))?;
                    f
                }
            };
            let want = usize::try_from(end - pos).unwrap_or(CHUNK).min(CHUNK);
            let mut buf = vec![0u8; want];
            f.read_exact(&mut buf)?;
            Ok(Some((Bytes::from(buf), (Some(f), pos + want as u64, end))))
        }
    })
    .boxed()
}

/// The part a `persistency` object describes.
fn part(
    persistency: &Value,
    block_id: Option<String>,
    files: &HashMap<String, PathBuf>,
) -> anyhow::Result<ImportPart> {
    let count = persistency["count"].as_u64().unwrap_or(0);
    if count == 0 {
        return Ok(ImportPart {
            block_id,
            len: 0,
            body: futures::stream::empty().boxed(),
        });
    }
    let id = str_field(persistency, "id").context("a range without an extent id")?;
    let offset = persistency["offset"].as_u64().unwrap_or(0);
    let file = files
        .get(id)
        .with_context(|| format!("extent {id} is not in {EXTENT_DB}"))?;
    let len = std::fs::metadata(file)
        .with_context(|| format!("extent file {}", file.display()))?
        .len();
    if offset + count > len {
        bail!(
            "extent file {} has {len} bytes, a blob needs {count} at {offset}",
            file.display()
        );
    }
    Ok(ImportPart {
        block_id,
        len: count,
        body: range_stream(file.clone(), offset, count),
    })
}

/// `(account, container, blob)`.
type BlobKey = (String, String, String);

fn blob_key(doc: &Value, name_key: &str) -> Option<BlobKey> {
    Some((
        owned(doc, "accountName")?,
        owned(doc, "containerName")?,
        owned(doc, name_key)?,
    ))
}

/// Refuses a directory without Azurite's blob database, before anything
/// is created on the Stowage side.
pub(crate) fn require_azurite_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.join(BLOB_DB).is_file() {
        bail!(
            "{} is not an Azurite data directory (it has no {BLOB_DB}); stop Azurite first, it \
             writes the file when it stops",
            dir.display()
        );
    }
    Ok(())
}

/// Loads the Azurite data directory `dir` into `store`.
pub(crate) async fn import(
    dir: &Path,
    store: &Store,
    progress: &dyn Progress,
) -> anyhow::Result<ImportReport> {
    let db = read_db(&dir.join(BLOB_DB))?;
    let files = extent_files(dir)?;
    let mut report = ImportReport::default();

    let containers = collection(&db, "$CONTAINERS_COLLECTION$");
    progress.begin("importing containers", containers.len() as u64);
    for doc in containers {
        let (Some(account), Some(name)) = (owned(doc, "accountName"), owned(doc, "name")) else {
            continue;
        };
        let props = &doc["properties"];
        let container = ContainerName::parse(&name)
            .map_err(|e| anyhow::anyhow!("container name {name:?}: {e}"))?;
        let policies = doc["containerAcl"]
            .as_array()
            .map(|acl| {
                acl.iter()
                    .filter_map(|p| {
                        let policy = &p["accessPolicy"];
                        Some(AccessPolicy {
                            id: owned(p, "id")?,
                            start: time_field(policy, "start"),
                            expiry: time_field(policy, "expiry"),
                            permission: owned(policy, "permission"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        store
            .import_container(ImportContainerInput {
                account,
                container,
                etag: owned(props, "etag"),
                last_modified: time_field(props, "lastModified").unwrap_or_else(SystemTime::now),
                metadata: metadata(doc).with_context(|| format!("container {name}"))?,
                public_access: str_field(props, "publicAccess").and_then(PublicAccess::parse),
                policies,
                lease: lease(doc),
            })
            .await
            .with_context(|| format!("importing container {name}"))?;
        report.containers += 1;
        progress.advance(1);
    }
    progress.end();

    // Uncommitted blocks, by blob.
    let mut staged: HashMap<BlobKey, Vec<&Value>> = HashMap::new();
    for doc in collection(&db, "$BLOCKS_COLLECTION$") {
        if doc["isCommitted"] == true {
            continue;
        }
        if let Some(key) = blob_key(doc, "blobName") {
            staged.entry(key).or_default().push(doc);
        }
    }

    let blobs: Vec<&Value> = collection(&db, "$BLOBS_COLLECTION$")
        .iter()
        .filter(|d| d["deleted"] != true)
        .collect();
    progress.begin("importing blobs", blobs.len() as u64);
    // Read one after the other (their bytes stream later), written several
    // at a time: the database commits their rows in groups.
    let mut pending = Vec::with_capacity(blobs.len());
    for doc in blobs {
        let Some(key) = blob_key(doc, "name") else {
            progress.advance(1);
            continue;
        };
        let props = &doc["properties"];
        let snapshot = str_field(doc, "snapshot")
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let label = format!("{}/{}/{}", key.0, key.1, key.2);
        let blob_type = match str_field(props, "blobType").and_then(BlobType::parse) {
            Some(BlobType::PageBlob) | None => {
                report.skipped.push(label);
                progress.advance(1);
                continue;
            }
            Some(t) => t,
        };
        let committed = doc["isCommitted"] != false;
        let mut parts = Vec::new();
        if committed {
            match doc["committedBlocksInOrder"].as_array() {
                Some(blocks) => {
                    for b in blocks {
                        let id = match blob_type {
                            BlobType::BlockBlob => owned(b, "name"),
                            _ => None,
                        };
                        parts.push(part(&b["persistency"], id, &files)?);
                    }
                }
                None if doc["persistency"].is_object() => {
                    let p = part(&doc["persistency"], None, &files)?;
                    if p.len > 0 {
                        parts.push(p);
                    }
                }
                None => {}
            }
        }
        let mut uncommitted = Vec::new();
        if snapshot.is_none()
            && let Some(blocks) = staged.remove(&key)
        {
            for b in blocks {
                uncommitted.push(part(&b["persistency"], owned(b, "name"), &files)?);
            }
        }
        let bytes: u64 = parts.iter().map(|p| p.len).sum();
        let n_uncommitted = uncommitted.len() as u64;
        let tier = if props["accessTierInferred"] == true {
            None
        } else {
            str_field(props, "accessTier").and_then(AccessTier::parse)
        };
        let now = SystemTime::now();
        let input = ImportBlobInput {
            account: key.0.clone(),
            container: ContainerName::parse(&key.1)
                .map_err(|e| anyhow::anyhow!("container name {:?}: {e}", key.1))?,
            name: BlobName::parse(&key.2)
                .map_err(|e| anyhow::anyhow!("blob name {:?}: {e}", key.2))?,
            snapshot: snapshot.clone(),
            blob_type,
            committed,
            etag: owned(props, "etag"),
            last_modified: time_field(props, "lastModified").unwrap_or(now),
            creation_time: time_field(props, "creationTime")
                .or_else(|| time_field(props, "lastModified"))
                .unwrap_or(now),
            content: ContentProperties {
                content_type: owned(props, "contentType"),
                content_encoding: owned(props, "contentEncoding"),
                content_language: owned(props, "contentLanguage"),
                content_md5: md5_field(&props["contentMD5"]),
                cache_control: owned(props, "cacheControl"),
                content_disposition: owned(props, "contentDisposition"),
            },
            metadata: metadata(doc).with_context(|| format!("blob {label}"))?,
            tier,
            lease: if snapshot.is_some() {
                LeaseRecord::default()
            } else {
                lease(doc)
            },
            sealed: props["isSealed"] == true,
            tags: tags(doc).with_context(|| format!("blob {label}"))?,
            parts,
            uncommitted,
        };
        pending.push((label, snapshot.is_some(), bytes, n_uncommitted, input));
    }
    let mut done = futures::stream::iter(pending)
        .map(
            |(label, is_snapshot, bytes, n_uncommitted, input)| async move {
                store
                    .import_blob(input)
                    .await
                    .with_context(|| format!("importing blob {label}"))?;
                anyhow::Ok((is_snapshot, bytes, n_uncommitted))
            },
        )
        .buffer_unordered(BLOBS_AT_ONCE);
    while let Some(outcome) = done.next().await {
        let (is_snapshot, bytes, n_uncommitted) = outcome?;
        if is_snapshot {
            report.snapshots += 1;
        } else {
            report.blobs += 1;
        }
        report.bytes += bytes;
        report.uncommitted_blocks += n_uncommitted;
        progress.advance(1);
    }
    drop(done);
    progress.end();

    // Blocks staged for a blob Azurite has no document of.
    for (key, blocks) in staged {
        let label = format!("{}/{}/{}", key.0, key.1, key.2);
        let mut uncommitted = Vec::new();
        for b in &blocks {
            uncommitted.push(part(&b["persistency"], owned(b, "name"), &files)?);
        }
        let now = SystemTime::now();
        store
            .import_blob(ImportBlobInput {
                account: key.0.clone(),
                container: ContainerName::parse(&key.1)
                    .map_err(|e| anyhow::anyhow!("container name {:?}: {e}", key.1))?,
                name: BlobName::parse(&key.2)
                    .map_err(|e| anyhow::anyhow!("blob name {:?}: {e}", key.2))?,
                snapshot: None,
                blob_type: BlobType::BlockBlob,
                committed: false,
                etag: None,
                last_modified: now,
                creation_time: now,
                content: ContentProperties::default(),
                metadata: Metadata::default(),
                tier: None,
                lease: LeaseRecord::default(),
                sealed: false,
                tags: Tags::default(),
                parts: Vec::new(),
                uncommitted,
            })
            .await
            .with_context(|| format!("importing the uncommitted blocks of {label}"))?;
        report.uncommitted_blocks += blocks.len() as u64;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azurite_dates_parse_to_the_instant_they_name() {
        let cases = [
            ("1970-01-01T00:00:00Z", Some(UNIX_EPOCH)),
            (
                "2026-11-27T10:23:02.211Z",
                Some(UNIX_EPOCH + Duration::new(1_795_774_982, 211_000_000)),
            ),
            (
                "2024-02-29T23:59:59.1234567Z",
                Some(UNIX_EPOCH + Duration::new(1_709_251_199, 123_456_700)),
            ),
            ("2026-13-01T00:00:00Z", None),
            ("2026-11-27 10:23:02Z", None),
            ("2026-11-27T10:23:02", None),
            ("2026-11-27T10:23:02.x1Z", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_iso8601(text), want, "{text}");
        }
    }

    #[test]
    fn content_md5_reads_in_each_form_azurite_writes() {
        let want: Vec<u8> = (0..16).collect();
        let object: Value = serde_json::from_str(
            r#"{"0":0,"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15}"#,
        )
        .unwrap();
        assert_eq!(md5_field(&object), Some(want.clone()));
        let array = Value::Array((0..16).map(Value::from).collect());
        assert_eq!(md5_field(&array), Some(want.clone()));
        let text = Value::String("AAECAwQFBgcICQoLDA0ODw==".into());
        assert_eq!(md5_field(&text), Some(want));
        assert_eq!(md5_field(&Value::Null), None);
    }

    #[test]
    fn leases_keep_their_state() {
        let id = "11111111-1111-1111-1111-111111111111";
        let doc = |state: &str, duration: &str| -> Value {
            serde_json::json!({
                "leaseId": id,
                "leaseDurationSeconds": 30,
                "leaseExpireTime": "2026-01-01T00:00:30Z",
                "leaseBreakTime": "2026-01-01T00:00:10Z",
                "properties": {"leaseState": state, "leaseDuration": duration},
            })
        };
        let infinite = lease(&doc("leased", "infinite"));
        assert_eq!(infinite.duration, Some(LeaseDuration::Infinite));
        assert_eq!(infinite.expires_at, None);
        let fixed = lease(&doc("leased", "fixed"));
        assert_eq!(fixed.duration, Some(LeaseDuration::Fixed(30)));
        assert_eq!(fixed.expires_at, parse_iso8601("2026-01-01T00:00:30Z"));
        let breaking = lease(&doc("breaking", "fixed"));
        assert_eq!(breaking.break_at, parse_iso8601("2026-01-01T00:00:10Z"));
        assert!(lease(&doc("broken", "infinite")).broken);
        assert_eq!(lease(&doc("available", "")), LeaseRecord::default());
        assert_eq!(lease(&serde_json::json!({})), LeaseRecord::default());
    }
}
