//! The crate's one error type.
//!
//! A refusal by the service keeps its HTTP status and its error code
//! ([`ServiceError`]), so callers match on "precondition failed" or "lease
//! already present" without parsing text. The patterns add their own
//! refusals (a stale or corrupted pointer, a lost lock) as variants here.

use std::fmt;

use crate::ErrorCode;

/// The result type of every fallible operation in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An answer of the service that is not a success (status ≥ 300).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// The HTTP status, e.g. 404, 409, 412, or 304 for an unmet read
    /// condition.
    pub status: u16,
    /// The service's error code, from `x-ms-error-code` or the XML body.
    pub code: ErrorCode,
    /// The message of the XML body, when there was one.
    pub message: Option<String>,
    /// The `x-ms-request-id` of the failed request, for support cases.
    pub request_id: Option<String>,
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.code)?;
        if let Some(message) = &self.message {
            // The service appends "RequestId:…" and "Time:…" lines.
            let first = message.lines().next().unwrap_or_default();
            write!(f, ": {first}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ServiceError {}

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with an error status.
    #[error("service error: {0}")]
    Service(#[from] ServiceError),
    /// The request could not be completed (connection refused or reset,
    /// timeout), after the retry policy gave up.
    #[error("transport error after {attempts} attempt(s): {source}")]
    Transport {
        /// How many times the request was sent.
        attempts: u32,
        /// The last failure.
        #[source]
        source: reqwest::Error,
    },
    /// A local file or reader failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The connection string could not be used.
    #[error("invalid connection string: {0}")]
    InvalidConnectionString(String),
    /// An argument was refused before anything was sent.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The service's answer did not have the expected shape.
    #[error("unexpected response: {0}")]
    InvalidResponse(String),
    /// A large-entity pointer names a blob that has been overwritten or
    /// deleted since the pointer was made.
    #[error("stale pointer to {container}/{blob}: the blob changed since the pointer was written")]
    StalePointer {
        /// The pointer's container.
        container: String,
        /// The pointer's blob.
        blob: String,
    },
    /// A large-entity pointer's blob has the pointer's ETag but not its
    /// length or SHA-256: the bytes are not the ones that were written.
    #[error("corrupted blob behind pointer {container}/{blob}: {reason}")]
    CorruptedPointer {
        /// The pointer's container.
        container: String,
        /// The pointer's blob.
        blob: String,
        /// Which check failed.
        reason: String,
    },
    /// A string is not a large-entity pointer.
    #[error("invalid pointer: {0}")]
    InvalidPointer(String),
    /// A table lock's lease was broken, expired or taken over.
    #[error("lost the lock on table {table}")]
    LockLost {
        /// The table.
        table: String,
    },
    /// A table lock stayed held by someone else until the wait ran out.
    #[error("timed out waiting for the lock on table {table}")]
    LockTimeout {
        /// The table.
        table: String,
    },
}

impl Error {
    /// The service's error, when this is one.
    pub fn service(&self) -> Option<&ServiceError> {
        match self {
            Error::Service(e) => Some(e),
            _ => None,
        }
    }

    /// The HTTP status of a service error.
    pub fn status(&self) -> Option<u16> {
        self.service().map(|e| e.status)
    }

    /// The error code of a service error.
    pub fn code(&self) -> Option<&ErrorCode> {
        self.service().map(|e| &e.code)
    }

    /// Whether the service answered with this error code.
    pub fn has_code(&self, code: &ErrorCode) -> bool {
        self.code() == Some(code)
    }

    /// 404: the container, blob or snapshot does not exist.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// 409: the resource is in a state that refuses the operation (already
    /// exists, lease present, snapshots present, …).
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// 412: a condition or a lease check failed.
    pub fn is_precondition_failed(&self) -> bool {
        self.status() == Some(412)
    }

    /// 304: a read condition was not met (`If-None-Match`,
    /// `If-Modified-Since`).
    pub fn is_not_modified(&self) -> bool {
        self.status() == Some(304)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_expose_status_and_code() {
        let e = Error::from(ServiceError {
            status: 409,
            code: ErrorCode::LeaseAlreadyPresent,
            message: Some("There is already a lease present.\nRequestId:x\nTime:y".into()),
            request_id: Some("x".into()),
        });
        assert!(e.is_conflict());
        assert!(e.has_code(&ErrorCode::LeaseAlreadyPresent));
        assert_eq!(e.status(), Some(409));
        assert_eq!(
            e.to_string(),
            "service error: 409 LeaseAlreadyPresent: There is already a lease present."
        );
        assert!(!Error::InvalidInput("x".into()).is_not_found());
    }
}
