//! The refusals of the lease state machine, one variant per refusal in
//! docs/wire/leases.md, each named after the service's error code.
//!
//! Messages are the service's own texts (docs/wire/errors.md#error-codes). HTTP
//! status codes are not known here: the server maps each variant to its
//! status in one exhaustive `match`.

/// The kind of thing a lease is on.
///
/// Blob and container leases share one state machine (docs/wire/leases.md);
/// the resource only picks the error variant or the wording of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A base blob.
    Blob,
    /// A container.
    Container,
}

impl Resource {
    /// The noun the service's messages use: `"blob"` or `"container"`.
    pub fn noun(self) -> &'static str {
        match self {
            Resource::Blob => "blob",
            Resource::Container => "container",
        }
    }
}

/// A lease refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Acquire on a leased or breaking resource with another (or no) id.
    #[error("There is already a lease present.")]
    LeaseAlreadyPresent,
    /// Renew, change or release with an id that is not the lease's.
    #[error("The lease ID specified did not match the lease ID for the {}.", .0.noun())]
    LeaseIdMismatchWithLeaseOperation(Resource),
    /// Renew of a breaking or broken lease.
    #[error(
        "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."
    )]
    LeaseIsBrokenAndCannotBeRenewed,
    /// Acquire of a breaking lease with its own id.
    #[error(
        "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken."
    )]
    LeaseIsBreakingAndCannotBeAcquired,
    /// Change of a breaking lease with its own id.
    #[error(
        "The lease ID matched, but the lease is currently in breaking state and cannot be changed."
    )]
    LeaseIsBreakingAndCannotBeChanged,
    /// A lease action that needs a lease, on a resource that has none
    /// (change on available, broken or expired; break on available).
    #[error("There is currently no lease on the {}.", .0.noun())]
    LeaseNotPresentWithLeaseOperation(Resource),
    /// A guarded write without an id on a leased or breaking resource.
    #[error(
        "There is currently a lease on the {} and no lease ID was specified in the request.",
        .0.noun()
    )]
    LeaseIdMissing(Resource),
    /// A blob operation with an id that is not the lease's.
    #[error("The lease ID specified did not match the lease ID for the blob.")]
    LeaseIdMismatchWithBlobOperation,
    /// A container operation with an id that is not the lease's.
    #[error("The lease ID specified did not match the lease ID for the container.")]
    LeaseIdMismatchWithContainerOperation,
    /// A blob operation with an id, on a blob that has no lease.
    #[error("There is currently no lease on the blob.")]
    LeaseNotPresentWithBlobOperation,
    /// A container operation with an id, on a container that has no lease.
    #[error("There is currently no lease on the container.")]
    LeaseNotPresentWithContainerOperation,
    /// An operation with an id, on a resource whose lease expired or was broken.
    #[error("A lease ID was specified, but the lease for the {} has expired.", .0.noun())]
    LeaseLost(Resource),
    /// A lease duration other than -1 or 15…60 seconds.
    #[error("The value for one of the HTTP headers is not in the correct format.")]
    InvalidLeaseDuration,
    /// A break period outside 0…60 seconds.
    #[error("The value for one of the HTTP headers is not in the correct format.")]
    InvalidBreakPeriod,
    /// A lease id that is not a GUID in one of the accepted text forms.
    #[error("The value for one of the HTTP headers is not in the correct format.")]
    InvalidLeaseId,
}

impl Error {
    /// The service's error code for this refusal (`x-ms-error-code`).
    ///
    /// The three `Invalid*` variants are all the service's
    /// `InvalidHeaderValue`: they are refused while parsing the request,
    /// before any state is read (docs/wire/leases.md#request-headers); the server adds the
    /// name of the header it was parsing.
    pub fn code(&self) -> &'static str {
        match self {
            Error::LeaseAlreadyPresent => "LeaseAlreadyPresent",
            Error::LeaseIdMismatchWithLeaseOperation(_) => "LeaseIdMismatchWithLeaseOperation",
            Error::LeaseIsBrokenAndCannotBeRenewed => "LeaseIsBrokenAndCannotBeRenewed",
            Error::LeaseIsBreakingAndCannotBeAcquired => "LeaseIsBreakingAndCannotBeAcquired",
            Error::LeaseIsBreakingAndCannotBeChanged => "LeaseIsBreakingAndCannotBeChanged",
            Error::LeaseNotPresentWithLeaseOperation(_) => "LeaseNotPresentWithLeaseOperation",
            Error::LeaseIdMissing(_) => "LeaseIdMissing",
            Error::LeaseIdMismatchWithBlobOperation => "LeaseIdMismatchWithBlobOperation",
            Error::LeaseIdMismatchWithContainerOperation => "LeaseIdMismatchWithContainerOperation",
            Error::LeaseNotPresentWithBlobOperation => "LeaseNotPresentWithBlobOperation",
            Error::LeaseNotPresentWithContainerOperation => "LeaseNotPresentWithContainerOperation",
            Error::LeaseLost(_) => "LeaseLost",
            Error::InvalidLeaseDuration | Error::InvalidBreakPeriod | Error::InvalidLeaseId => {
                "InvalidHeaderValue"
            }
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use Resource::{Blob, Container};

    #[test]
    fn codes_and_messages_are_the_services() {
        let cases: &[(Error, &str, &str)] = &[
            (
                Error::LeaseAlreadyPresent,
                "LeaseAlreadyPresent",
                "There is already a lease present.",
            ),
            (
                Error::LeaseIdMismatchWithLeaseOperation(Blob),
                "LeaseIdMismatchWithLeaseOperation",
                "The lease ID specified did not match the lease ID for the blob.",
            ),
            (
                Error::LeaseIdMismatchWithLeaseOperation(Container),
                "LeaseIdMismatchWithLeaseOperation",
                "The lease ID specified did not match the lease ID for the container.",
            ),
            (
                Error::LeaseIsBrokenAndCannotBeRenewed,
                "LeaseIsBrokenAndCannotBeRenewed",
                "The lease ID matched, but the lease has been broken explicitly and cannot be renewed.",
            ),
            (
                Error::LeaseIsBreakingAndCannotBeAcquired,
                "LeaseIsBreakingAndCannotBeAcquired",
                "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken.",
            ),
            (
                Error::LeaseIsBreakingAndCannotBeChanged,
                "LeaseIsBreakingAndCannotBeChanged",
                "The lease ID matched, but the lease is currently in breaking state and cannot be changed.",
            ),
            (
                Error::LeaseNotPresentWithLeaseOperation(Blob),
                "LeaseNotPresentWithLeaseOperation",
                "There is currently no lease on the blob.",
            ),
            (
                Error::LeaseNotPresentWithLeaseOperation(Container),
                "LeaseNotPresentWithLeaseOperation",
                "There is currently no lease on the container.",
            ),
            (
                Error::LeaseIdMissing(Blob),
                "LeaseIdMissing",
                "There is currently a lease on the blob and no lease ID was specified in the request.",
            ),
            (
                Error::LeaseIdMissing(Container),
                "LeaseIdMissing",
                "There is currently a lease on the container and no lease ID was specified in the request.",
            ),
            (
                Error::LeaseIdMismatchWithBlobOperation,
                "LeaseIdMismatchWithBlobOperation",
                "The lease ID specified did not match the lease ID for the blob.",
            ),
            (
                Error::LeaseIdMismatchWithContainerOperation,
                "LeaseIdMismatchWithContainerOperation",
                "The lease ID specified did not match the lease ID for the container.",
            ),
            (
                Error::LeaseNotPresentWithBlobOperation,
                "LeaseNotPresentWithBlobOperation",
                "There is currently no lease on the blob.",
            ),
            (
                Error::LeaseNotPresentWithContainerOperation,
                "LeaseNotPresentWithContainerOperation",
                "There is currently no lease on the container.",
            ),
            (
                Error::LeaseLost(Blob),
                "LeaseLost",
                "A lease ID was specified, but the lease for the blob has expired.",
            ),
            (
                Error::LeaseLost(Container),
                "LeaseLost",
                "A lease ID was specified, but the lease for the container has expired.",
            ),
        ];
        for (error, code, message) in cases {
            assert_eq!(error.code(), *code, "{error:?}");
            assert_eq!(error.to_string(), *message, "{error:?}");
        }
    }

    #[test]
    fn malformed_values_are_invalid_header_value() {
        for error in [
            Error::InvalidLeaseDuration,
            Error::InvalidBreakPeriod,
            Error::InvalidLeaseId,
        ] {
            assert_eq!(error.code(), "InvalidHeaderValue");
            assert_eq!(
                error.to_string(),
                "The value for one of the HTTP headers is not in the correct format."
            );
        }
    }
}
