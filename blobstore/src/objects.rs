//! Where the extents live: in the data directory (the default), in a
//! directory that several nodes share (`file:///shared/dir`), or in an
//! S3-compatible bucket (`s3://BUCKET/PREFIX?endpoint=http://HOST:PORT`).
//! See docs/cluster.md#object-stores.
//!
//! Parsing is pure and table-tested; [`ObjectsLocation::build`] makes the
//! `object_store` client.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::prefix::PrefixStore;

use crate::{Error, Result};

/// Where a store keeps its extents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ObjectsLocation {
    /// `objects/` in the data directory (or memory for an in-memory store).
    #[default]
    DataDir,
    /// A directory, possibly shared by several nodes (`file:///path`).
    Shared(PathBuf),
    /// A bucket of an S3-compatible service. Credentials and region come
    /// from the usual `AWS_*` environment variables.
    S3 {
        /// The bucket's name.
        bucket: String,
        /// Objects are kept under this prefix in the bucket ("" for none).
        prefix: String,
        /// The service's URL (`http://host:port`); `None` for AWS itself.
        endpoint: Option<String>,
    },
}

/// Why an `--objects` value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectsUrlError(pub String);

impl fmt::Display for ObjectsUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ObjectsUrlError {}

fn refuse(msg: impl Into<String>) -> ObjectsUrlError {
    ObjectsUrlError(msg.into())
}

impl FromStr for ObjectsLocation {
    type Err = ObjectsUrlError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        if let Some(path) = s.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(refuse(format!(
                    "{s}: a file URL needs an absolute path (file:///shared/dir)"
                )));
            }
            if path.contains('?') {
                return Err(refuse(format!("{s}: a file URL takes no options")));
            }
            return Ok(ObjectsLocation::Shared(PathBuf::from(path)));
        }
        let Some(rest) = s.strip_prefix("s3://") else {
            return Err(refuse(format!(
                "{s}: expected s3://BUCKET?endpoint=http://HOST:PORT or file:///shared/dir"
            )));
        };
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
        if bucket.is_empty() {
            return Err(refuse(format!("{s}: the bucket name is missing")));
        }
        let mut endpoint = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("endpoint", url)) if !url.is_empty() => {
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(refuse(format!(
                            "{s}: the endpoint must be an http:// or https:// URL"
                        )));
                    }
                    endpoint = Some(url.trim_end_matches('/').to_owned());
                }
                _ => return Err(refuse(format!("{s}: unknown option {pair:?}"))),
            }
        }
        Ok(ObjectsLocation::S3 {
            bucket: bucket.to_owned(),
            prefix: prefix.trim_matches('/').to_owned(),
            endpoint,
        })
    }
}

impl fmt::Display for ObjectsLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectsLocation::DataDir => f.write_str("the data directory"),
            ObjectsLocation::Shared(dir) => write!(f, "file://{}", dir.display()),
            ObjectsLocation::S3 {
                bucket,
                prefix,
                endpoint,
            } => {
                write!(f, "s3://{bucket}")?;
                if !prefix.is_empty() {
                    write!(f, "/{prefix}")?;
                }
                if let Some(e) = endpoint {
                    write!(f, "?endpoint={e}")?;
                }
                Ok(())
            }
        }
    }
}

impl ObjectsLocation {
    /// True when the extents are outside the data directory.
    pub fn is_remote(&self) -> bool {
        !matches!(self, ObjectsLocation::DataDir)
    }

    /// The same location with `more` appended to its prefix (a shared
    /// directory's subdirectory); tests give each server its own.
    pub fn with_prefix(&self, more: &str) -> ObjectsLocation {
        match self {
            ObjectsLocation::DataDir => ObjectsLocation::DataDir,
            ObjectsLocation::Shared(dir) => ObjectsLocation::Shared(dir.join(more)),
            ObjectsLocation::S3 {
                bucket,
                prefix,
                endpoint,
            } => ObjectsLocation::S3 {
                bucket: bucket.clone(),
                prefix: if prefix.is_empty() {
                    more.to_owned()
                } else {
                    format!("{prefix}/{more}")
                },
                endpoint: endpoint.clone(),
            },
        }
    }

    /// The object store of a remote location (`None` for
    /// [`ObjectsLocation::DataDir`], which the store opens itself). A shared
    /// directory is created if missing and fsyncs when `fsync`.
    ///
    /// # Errors
    /// The directory cannot be created, or the S3 client cannot be built
    /// from the URL and the `AWS_*` environment variables.
    pub fn build(&self, fsync: bool) -> Result<Option<Arc<dyn ObjectStore>>> {
        Ok(match self {
            ObjectsLocation::DataDir => None,
            ObjectsLocation::Shared(dir) => {
                std::fs::create_dir_all(dir)?;
                Some(Arc::new(
                    LocalFileSystem::new_with_prefix(dir)?.with_fsync(fsync),
                ))
            }
            ObjectsLocation::S3 {
                bucket,
                prefix,
                endpoint,
            } => {
                let mut builder = AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_retry(s3_retries());
                if let Some(url) = endpoint {
                    // Path-style requests (the default) suit S3-compatible
                    // services reached by address, such as Garage.
                    builder = builder
                        .with_endpoint(url)
                        .with_allow_http(url.starts_with("http://"));
                }
                let s3 = builder.build().map_err(Error::from)?;
                if prefix.is_empty() {
                    Some(Arc::new(s3))
                } else {
                    Some(Arc::new(PrefixStore::new(s3, prefix.as_str())))
                }
            }
        })
    }
}

/// How often and how long a failing S3 request is retried: 3 retries
/// within 15 s, instead of the backend's 10 within 3 minutes, so that a
/// store that keeps failing is answered `500 InternalError` within the
/// service's 30-second operation timeout (docs/cluster.md#the-object-store-failing).
fn s3_retries() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig::default(),
        max_retries: 3,
        retry_timeout: std::time::Duration::from_secs(15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(bucket: &str, prefix: &str, endpoint: Option<&str>) -> ObjectsLocation {
        ObjectsLocation::S3 {
            bucket: bucket.into(),
            prefix: prefix.into(),
            endpoint: endpoint.map(Into::into),
        }
    }

    #[test]
    fn parses_the_documented_forms() {
        let table: &[(&str, ObjectsLocation)] = &[
            (
                "file:///shared/dir",
                ObjectsLocation::Shared("/shared/dir".into()),
            ),
            ("s3://bucket", s3("bucket", "", None)),
            (
                "s3://bucket?endpoint=http://127.0.0.1:3900",
                s3("bucket", "", Some("http://127.0.0.1:3900")),
            ),
            (
                "s3://bucket/a/b/?endpoint=https://s3.example/",
                s3("bucket", "a/b", Some("https://s3.example")),
            ),
        ];
        for (text, want) in table {
            assert_eq!(&text.parse::<ObjectsLocation>().unwrap(), want, "{text}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        for bad in [
            "",
            "/shared/dir",
            "file://relative/dir",
            "file:///dir?x=1",
            "s3://",
            "s3:///prefix",
            "s3://b?endpoint=",
            "s3://b?endpoint=ftp://h",
            "s3://b?region=x",
            "gs://bucket",
        ] {
            assert!(bad.parse::<ObjectsLocation>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "file:///shared/dir",
            "s3://b",
            "s3://b/p?endpoint=http://h:1",
        ] {
            let loc: ObjectsLocation = text.parse().unwrap();
            assert_eq!(loc.to_string(), text);
            assert_eq!(loc.to_string().parse::<ObjectsLocation>().unwrap(), loc);
        }
    }

    #[test]
    fn prefixes_nest() {
        let loc: ObjectsLocation = "s3://b/p".parse().unwrap();
        assert_eq!(loc.with_prefix("t1"), s3("b", "p/t1", None));
        let loc: ObjectsLocation = "s3://b".parse().unwrap();
        assert_eq!(loc.with_prefix("t1"), s3("b", "t1", None));
        let loc: ObjectsLocation = "file:///d".parse().unwrap();
        assert_eq!(
            loc.with_prefix("t1"),
            ObjectsLocation::Shared("/d/t1".into())
        );
    }
}
