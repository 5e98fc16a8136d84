//! The one place where failures become HTTP answers: status, `x-ms-error-code`
//! and the XML error body (docs/wire/errors.md#the-error-answer).

use actix_web::http::StatusCode;
use stowage_blobstore::{
    ConditionFailure, Error as StoreError, LeaseError, MetadataError, NameError, TagError,
    conditions::AppendConditionFailure,
};

/// Everything a request can fail with: request-shape errors found by the
/// HTTP layer, and the engine's errors.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The engine refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A header value that does not parse.
    #[error("invalid value for header {name}")]
    InvalidHeaderValue {
        /// Header name.
        name: String,
        /// The value sent.
        value: String,
    },
    /// A required header is missing.
    #[error("missing header {0}")]
    MissingRequiredHeader(&'static str),
    /// A header Stowage does not support on this request.
    #[error("unsupported header {0}")]
    UnsupportedHeader(String),
    /// A query parameter value that does not parse or is not allowed.
    #[error("invalid value for query parameter {name}")]
    InvalidQueryParameterValue {
        /// Parameter name.
        name: String,
        /// The value sent.
        value: String,
    },
    /// A query parameter outside its range.
    #[error("query parameter {name} out of range")]
    OutOfRangeQueryParameterValue {
        /// Parameter name.
        name: String,
        /// The value sent.
        value: String,
    },
    /// A Find Blobs by Tags `where` that does not parse.
    #[error("invalid where expression: {reason}")]
    InvalidWhere {
        /// The value sent.
        value: String,
        /// Why it does not parse (the message of the answer).
        reason: String,
    },
    /// A required query parameter is missing.
    #[error("missing query parameter {0}")]
    MissingRequiredQueryParameter(&'static str),
    /// A body-carrying PUT without `Content-Length`.
    #[error("missing Content-Length")]
    MissingContentLength,
    /// `Content-Length` over the operation's limit.
    #[error("request body too large")]
    RequestBodyTooLarge {
        /// The limit in bytes.
        max: u64,
    },
    /// A URL that addresses nothing.
    #[error("invalid URI")]
    InvalidUri,
    /// A method the addressed resource does not support.
    #[error("unsupported HTTP verb")]
    UnsupportedHttpVerb,
    /// An operation of the service that Stowage does not implement.
    #[error("not implemented")]
    NotImplemented,
    /// An unknown account, or an anonymous request that may not see the resource.
    #[error("resource not found")]
    ResourceNotFound,
    /// Authentication failed; the detail goes in `<AuthenticationErrorDetail>`.
    #[error("authentication failed: {0}")]
    AuthenticationFailed(String),
    /// A SAS that does not grant the operation.
    #[error("SAS permission mismatch")]
    AuthorizationPermissionMismatch,
    /// An account SAS whose `srt` does not cover the operation.
    #[error("SAS resource type mismatch")]
    AuthorizationResourceTypeMismatch,
    /// A SAS used from outside its `sip` range.
    #[error("SAS source IP mismatch")]
    AuthorizationSourceIpMismatch(String),
    /// A SAS requiring HTTPS used over HTTP.
    #[error("SAS protocol mismatch")]
    AuthorizationProtocolMismatch,
    /// An account SAS without the blob service.
    #[error("SAS service mismatch")]
    AuthorizationServiceMismatch,
    /// A malformed `Authorization` header.
    #[error("invalid authentication information")]
    InvalidAuthenticationInfo,
    /// A refused OAuth bearer token: `401 InvalidAuthenticationInfo` with a
    /// `WWW-Authenticate` challenge, or, without a challenge (requests
    /// older than 2019-12-12, or a token sent over HTTP), `403
    /// AuthenticationFailed`. The detail goes in `<AuthenticationErrorDetail>`.
    #[error("bearer token refused: {detail}")]
    InvalidBearerToken {
        /// Why, for `<AuthenticationErrorDetail>`.
        detail: String,
        /// The `WWW-Authenticate` value, when the answer is a 401.
        challenge: Option<String>,
    },
    /// A request body that is not well-formed XML.
    #[error("invalid XML document")]
    InvalidXmlDocument,
    /// An XML element whose value is wrong.
    #[error("invalid XML node value")]
    InvalidXmlNodeValue,
    /// A request body that ended early or other malformed input.
    #[error("invalid input")]
    InvalidInput,
    /// A Put Block List body with more than 50,000 entries.
    #[error("block list too long")]
    BlockListTooLong,
    /// A Blob Batch with more than 256 sub-requests.
    #[error("too many batch sub-requests")]
    ExceedsMaxBatchRequestCount,
    /// A Blob Batch mixing Delete Blob and Set Blob Tier sub-requests.
    #[error("batch sub-requests of different operations")]
    AllBatchSubRequestsShouldBeSameApi,
    /// A stored MD5 value that is not 16 bytes of base64.
    #[error("invalid MD5")]
    InvalidMd5,
    /// Both `Content-MD5` and `x-ms-content-crc64` on one request.
    #[error("both CRC64 and MD5 headers present")]
    BothCrc64AndMd5HeaderPresent,
    /// Both `x-ms-range-get-content-crc64` and `x-ms-range-get-content-md5`.
    #[error("both range CRC64 and MD5 headers present")]
    BothCrc64AndMd5RangeHeaderPresent,
    /// A write sent to the read-only secondary endpoint.
    #[error("write to the secondary endpoint")]
    WriteToSecondary,
    /// A preflight `OPTIONS` that no CORS rule allows.
    #[error("CORS preflight refused")]
    CorsPreflightFailure,
    /// A preflight `OPTIONS` without `Origin` or
    /// `Access-Control-Request-Method`.
    #[error("missing CORS header {0}")]
    MissingCorsHeader(&'static str),
    /// The source of a copy may not be read: `status` is the source's own
    /// answer (401 no credentials, 403 refused credentials, 404 missing),
    /// `code` its error code.
    #[error("cannot verify copy source ({status} {code})")]
    CannotVerifyCopySource {
        /// The source's status.
        status: u16,
        /// The source's error code.
        code: &'static str,
    },
    /// A copy source on another host answered the read with `source_status`
    /// (and its `x-ms-error-code`, if any); the request is answered with
    /// `status` (the source's own, or 400 for a redirect).
    #[error("copy source answered {source_status}")]
    CopySourceAnswered {
        /// The status of the answer.
        status: u16,
        /// The source's status.
        source_status: u16,
        /// The source's error code.
        code: Option<String>,
        /// The message (the source's reason phrase, or why it is refused).
        message: String,
    },
}

impl From<ConditionFailure> for ApiError {
    fn from(f: ConditionFailure) -> Self {
        ApiError::Store(StoreError::Condition(f))
    }
}

/// How an error is answered.
#[derive(Debug, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// HTTP status.
    pub status: StatusCode,
    /// `x-ms-error-code` and `<Code>`.
    pub code: &'static str,
    /// `<Message>` first line.
    pub message: String,
    /// Extra child elements of `<Error>` (name, text).
    pub details: Vec<(&'static str, String)>,
}

fn answer(status: u16, code: &'static str, message: impl Into<String>) -> ErrorAnswer {
    ErrorAnswer {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        code,
        message: message.into(),
        details: Vec::new(),
    }
}

impl ErrorAnswer {
    fn with(mut self, name: &'static str, value: impl Into<String>) -> ErrorAnswer {
        self.details.push((name, value.into()));
        self
    }
}

/// The message the copy source's own error `code` comes with.
fn copy_source_message(code: &str) -> &'static str {
    match code {
        "NoAuthenticationInformation" => {
            "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."
        }
        "AuthenticationFailed" => {
            "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."
        }
        "AuthorizationPermissionMismatch" => {
            "This request is not authorized to perform this operation using this permission."
        }
        "AuthorizationResourceTypeMismatch" => {
            "This request is not authorized to perform this operation using this resource type."
        }
        "AuthorizationSourceIPMismatch" => {
            "This request is not authorized to perform this operation using this source IP."
        }
        "AuthorizationProtocolMismatch" => {
            "This request is not authorized to perform this operation using this protocol."
        }
        "AuthorizationServiceMismatch" => {
            "This request is not authorized to perform this operation using this service."
        }
        "BlobNotFound" => "The specified blob does not exist.",
        "BlobArchived" => "This operation is not permitted on an archived blob.",
        "ContainerNotFound" => "The specified container does not exist.",
        _ => "The specified resource does not exist.",
    }
}

const CONDITION_NOT_MET: &str =
    "The condition specified using HTTP conditional header(s) is not met.";

impl ApiError {
    /// The answer for this error. One exhaustive match per error type, with no
    /// catch-all arm: a new variant does not compile until it has an answer.
    pub fn answer(&self) -> ErrorAnswer {
        match self {
            ApiError::Store(e) => store_answer(e),
            ApiError::InvalidHeaderValue { name, value } => answer(
                400,
                "InvalidHeaderValue",
                "The value for one of the HTTP headers is not in the correct format.",
            )
            .with("HeaderName", name.clone())
            .with("HeaderValue", value.clone()),
            ApiError::MissingRequiredHeader(name) => answer(
                400,
                "MissingRequiredHeader",
                "A required HTTP header was not specified.",
            )
            .with("HeaderName", *name),
            ApiError::UnsupportedHeader(name) => answer(
                400,
                "UnsupportedHeader",
                "One of the HTTP headers specified in the request is not supported.",
            )
            .with("HeaderName", name.clone()),
            ApiError::InvalidQueryParameterValue { name, value } => answer(
                400,
                "InvalidQueryParameterValue",
                "An invalid value was specified for one of the query parameters in the request URI.",
            )
            .with("QueryParameterName", name.clone())
            .with("QueryParameterValue", value.clone()),
            ApiError::OutOfRangeQueryParameterValue { name, value } => answer(
                400,
                "OutOfRangeQueryParameterValue",
                "A query parameter specified in the request URI is outside the permissible range.",
            )
            .with("QueryParameterName", name.clone())
            .with("QueryParameterValue", value.clone()),
            ApiError::InvalidWhere { value, reason } => {
                answer(400, "InvalidQueryParameterValue", reason.clone())
                    .with("QueryParameterName", "where")
                    .with("QueryParameterValue", value.clone())
            }
            ApiError::MissingRequiredQueryParameter(name) => answer(
                400,
                "MissingRequiredQueryParameter",
                "A required query parameter was not specified for this request.",
            )
            .with("QueryParameterName", *name),
            ApiError::MissingContentLength => answer(
                411,
                "MissingContentLengthHeader",
                "The Content-Length header was not specified.",
            ),
            ApiError::RequestBodyTooLarge { max } => request_body_too_large(*max),
            ApiError::InvalidUri => answer(
                400,
                "InvalidUri",
                "The requested URI does not represent any resource on the server.",
            ),
            ApiError::UnsupportedHttpVerb => answer(
                405,
                "UnsupportedHttpVerb",
                "The resource doesn't support the specified HTTP verb.",
            ),
            ApiError::NotImplemented => answer(
                501,
                "NotImplemented",
                "The requested operation is not implemented by this server.",
            ),
            ApiError::ResourceNotFound => answer(
                404,
                "ResourceNotFound",
                "The specified resource does not exist.",
            ),
            ApiError::AuthenticationFailed(detail) => answer(
                403,
                "AuthenticationFailed",
                "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
            )
            .with("AuthenticationErrorDetail", detail.clone()),
            ApiError::AuthorizationPermissionMismatch => answer(
                403,
                "AuthorizationPermissionMismatch",
                "This request is not authorized to perform this operation using this permission.",
            ),
            ApiError::AuthorizationResourceTypeMismatch => answer(
                403,
                "AuthorizationResourceTypeMismatch",
                "This request is not authorized to perform this operation using this resource type.",
            ),
            ApiError::AuthorizationSourceIpMismatch(ip) => answer(
                403,
                "AuthorizationSourceIPMismatch",
                format!("This request is not authorized to perform this operation using this source IP {ip}."),
            ),
            ApiError::AuthorizationProtocolMismatch => answer(
                403,
                "AuthorizationProtocolMismatch",
                "This request is not authorized to perform this operation using this protocol.",
            ),
            ApiError::AuthorizationServiceMismatch => answer(
                403,
                "AuthorizationServiceMismatch",
                "This request is not authorized to perform this operation using this service.",
            ),
            ApiError::InvalidBearerToken { detail, challenge } => match challenge {
                Some(_) => answer(
                    401,
                    "InvalidAuthenticationInfo",
                    "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
                ),
                None => answer(
                    403,
                    "AuthenticationFailed",
                    "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
                ),
            }
            .with("AuthenticationErrorDetail", detail.clone()),
            ApiError::InvalidAuthenticationInfo => answer(
                400,
                "InvalidAuthenticationInfo",
                "The authentication information was not provided in the correct format. Verify the value of Authorization header.",
            ),
            ApiError::InvalidXmlDocument => answer(
                400,
                "InvalidXmlDocument",
                "The specified XML is not syntactically valid.",
            ),
            ApiError::InvalidXmlNodeValue => answer(
                400,
                "InvalidXmlNodeValue",
                "The value provided for one of the XML nodes in the request body was not in the correct format.",
            ),
            ApiError::InvalidInput => {
                answer(400, "InvalidInput", "One of the request inputs is not valid.")
            }
            ApiError::BlockListTooLong => answer(
                400,
                "BlockListTooLong",
                "The block list may not contain more than 50,000 blocks.",
            ),
            ApiError::BothCrc64AndMd5HeaderPresent => answer(
                400,
                "BothCrc64AndMd5HeaderPresent",
                "Both x-ms-content-crc64 header and Content-MD5 header are present.",
            ),
            ApiError::BothCrc64AndMd5RangeHeaderPresent => answer(
                400,
                "BothCrc64AndMd5RangeHeaderPresent",
                "Both x-ms-range-get-content-crc64 header and x-ms-range-get-content-md5 header are present.",
            ),
            ApiError::ExceedsMaxBatchRequestCount => answer(
                400,
                "ExceedsMaxBatchRequestCount",
                "The batch operation exceeds maximum number of allowed subrequests.",
            ),
            ApiError::AllBatchSubRequestsShouldBeSameApi => answer(
                400,
                "AllBatchSubRequestsShouldBeSameApi",
                "All batch subrequests should be the same api.",
            ),
            ApiError::InvalidMd5 => answer(
                400,
                "InvalidMd5",
                "The MD5 value specified in the request is invalid. The MD5 value must be 128 bits and Base64-encoded.",
            ),
            ApiError::WriteToSecondary => answer(
                403,
                "InsufficientAccountPermissions",
                "Write operations to the secondary location are not allowed.",
            ),
            ApiError::CorsPreflightFailure => answer(
                403,
                "CorsPreflightFailure",
                "CORS not enabled or no matching rule found for this request.",
            ),
            // The emulator's answer; the reference names only the status.
            ApiError::MissingCorsHeader(name) => answer(
                400,
                "InvalidHeaderValue",
                "A required CORS header is not present.",
            )
            .with("HeaderName", *name),
            ApiError::CannotVerifyCopySource { status, code } => {
                let message = copy_source_message(code);
                answer(*status, "CannotVerifyCopySource", message)
                    .with("CopySourceStatusCode", status.to_string())
                    .with("CopySourceErrorCode", *code)
                    .with("CopySourceErrorMessage", message)
            }
            ApiError::CopySourceAnswered {
                status,
                source_status,
                code,
                message,
            } => {
                let mut a = answer(*status, "CannotVerifyCopySource", message.clone())
                    .with("CopySourceStatusCode", source_status.to_string());
                if let Some(code) = code {
                    a = a.with("CopySourceErrorCode", code.clone());
                }
                a.with("CopySourceErrorMessage", message.clone())
            }
        }
    }
}

fn request_body_too_large(max: u64) -> ErrorAnswer {
    answer(
        413,
        "RequestBodyTooLarge",
        "The request body is too large and exceeds the maximum permissible limit.",
    )
    .with("MaxLimit", max.to_string())
}

fn store_answer(e: &StoreError) -> ErrorAnswer {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    match e {
        StoreError::ContainerNotFound => answer(
            404,
            "ContainerNotFound",
            "The specified container does not exist.",
        ),
        StoreError::ContainerAlreadyExists => answer(
            409,
            "ContainerAlreadyExists",
            "The specified container already exists.",
        ),
        StoreError::BlobNotFound => {
            answer(404, "BlobNotFound", "The specified blob does not exist.")
        }
        StoreError::InvalidExpiryTime => answer(
            400,
            "InvalidHeaderValue",
            "The value for one of the HTTP headers is not in the correct format.",
        )
        .with("HeaderName", "x-ms-expiry-time"),
        StoreError::InvalidBlobType => answer(
            409,
            "InvalidBlobType",
            "The blob type is invalid for this operation.",
        ),
        StoreError::SnapshotsPresent => answer(
            409,
            "SnapshotsPresent",
            "This operation is not permitted because the blob has snapshots.",
        ),
        StoreError::InvalidBlockList => answer(
            400,
            "InvalidBlockList",
            "The specified block list is invalid.",
        ),
        StoreError::InvalidBlobOrBlock => answer(
            400,
            "InvalidBlobOrBlock",
            "The specified blob or block content is invalid.",
        ),
        StoreError::BlockCountExceedsLimit { uncommitted } => answer(
            409,
            "BlockCountExceedsLimit",
            if *uncommitted {
                "The uncommitted block count cannot exceed the maximum limit of 100,000 blocks."
            } else {
                "The committed block count cannot exceed the maximum limit of 50,000 blocks."
            },
        ),
        StoreError::PendingCopyOperation => answer(
            409,
            "PendingCopyOperation",
            "There is currently a pending copy operation.",
        ),
        StoreError::NoPendingCopyOperation => answer(
            409,
            "NoPendingCopyOperation",
            "There is currently no pending copy operation.",
        ),
        StoreError::CopyIdMismatch => answer(
            409,
            "CopyIdMismatch",
            "The specified copy ID did not match the copy ID for the pending copy operation.",
        ),
        StoreError::CannotVerifyCopySource => answer(
            404,
            "CannotVerifyCopySource",
            "The specified resource does not exist.",
        ),
        StoreError::InfiniteLeaseDurationRequired => answer(
            412,
            "InfiniteLeaseDurationRequired",
            "The lease ID matched, but the specified lease must be an infinite-duration lease.",
        ),
        StoreError::Condition(f) => condition_answer(*f),
        StoreError::AppendCondition(f) => match f {
            AppendConditionFailure::AppendPositionConditionNotMet => answer(
                412,
                "AppendPositionConditionNotMet",
                "The append position condition specified was not met.",
            ),
            AppendConditionFailure::MaxBlobSizeConditionNotMet => answer(
                412,
                "MaxBlobSizeConditionNotMet",
                "The max blob size condition specified was not met.",
            ),
        },
        StoreError::Lease(l) => lease_answer(l),
        StoreError::Name(n) => match n {
            NameError::OutOfRange => answer(
                400,
                "OutOfRangeInput",
                "The specified resource name length is not within the permissible limits.",
            ),
            NameError::Invalid => answer(
                400,
                "InvalidResourceName",
                "The specified resource name contains invalid characters.",
            ),
        },
        StoreError::Tag(t) => {
            let code = match t {
                TagError::TagsTooLarge => "TagsTooLarge",
                TagError::EmptyTagName => "EmptyTagName",
                TagError::DuplicateTagNames => "DuplicateTagNames",
                TagError::InvalidTag => "InvalidTag",
            };
            answer(400, code, t.to_string())
        }
        StoreError::Metadata(m) => match m {
            MetadataError::EmptyKey => answer(
                400,
                "EmptyMetadataKey",
                "The key for one of the metadata key-value pairs is empty.",
            ),
            MetadataError::Invalid(name) => answer(
                400,
                "InvalidMetadata",
                "The specified metadata is invalid. It includes characters that are not permitted.",
            )
            .with("MetadataName", name.clone()),
            MetadataError::TooLarge => answer(
                400,
                "MetadataTooLarge",
                "The size of the specified metadata exceeds the maximum size permitted.",
            ),
        },
        StoreError::Md5Mismatch { expected, computed } => answer(
            400,
            "Md5Mismatch",
            "The MD5 value specified in the request did not match the MD5 value calculated by the server.",
        )
        .with("UserSpecifiedMd5", b64(expected))
        .with("ServerCalculatedMd5", b64(computed)),
        StoreError::Crc64Mismatch { expected, computed } => {
            let mut a = answer(
                400,
                "Crc64Mismatch",
                "The CRC64 value specified in the request did not match with the CRC64 value calculated by the server.",
            );
            // Both values as the service names them, in the header's own
            // encoding (base64 of the CRC's eight bytes).
            if let (Some(expected), Some(computed)) = (expected, computed) {
                a = a
                    .with("UserSpecifiedCrc", b64(&stowage_blobstore::Crc64::to_bytes(*expected)))
                    .with("ServerCalculatedCrc", b64(&stowage_blobstore::Crc64::to_bytes(*computed)));
            }
            a
        }
        StoreError::BlobArchived => answer(
            409,
            "BlobArchived",
            "This operation is not permitted on an archived blob.",
        ),
        StoreError::BlobBeingRehydrated => answer(
            409,
            "BlobBeingRehydrated",
            "This operation is not permitted because the blob is being rehydrated.",
        ),
        StoreError::AccessTierNotSupportedForBlobType => answer(
            400,
            "AccessTierNotSupportedForBlobType",
            "The access tier is not supported for this blob type.",
        ),
        StoreError::BlobIsSealed => answer(
            409,
            "BlobIsSealed",
            "The specified blob is sealed, and its contents can't be modified unless the blob is re-created after a delete.",
        ),
        StoreError::InvalidRange { .. } => answer(
            416,
            "InvalidRange",
            "The range specified is invalid for the current size of the resource.",
        ),
        StoreError::RequestBodyTooLarge { max } => request_body_too_large(*max),
        StoreError::BodyLengthMismatch { .. } | StoreError::Body(_) => {
            answer(400, "InvalidInput", "One of the request inputs is not valid.")
        }
        // 409 as the Delete Blob reference says; (unverified) the code, for
        // a policy without AllowPermanentDelete or no snapshot or version.
        StoreError::PermanentDeleteNotAllowed => answer(
            409,
            "OperationNotAllowed",
            "Permanent delete is not allowed for this blob or by the account's delete retention policy.",
        ),
        // The code answered for a version that is not soft-deleted, as
        // recorded against the service in public scripts.
        StoreError::NotSoftDeleted => answer(
            409,
            "BlobSnapshotNotSoftDeleted",
            "The specified snapshot or version is not soft-deleted.",
        ),
        // As recorded in the Azure SDK for JavaScript's versioning tests.
        StoreError::OperationNotAllowedOnRootBlob => answer(
            403,
            "OperationNotAllowedOnRootBlob",
            "The specified operation is not allowed on root blob.",
        ),
        StoreError::InvalidPageRange => answer(
            416,
            "InvalidPageRange",
            "The page range specified is invalid.",
        ),
        StoreError::SequenceNumberConditionNotMet => answer(
            412,
            "SequenceNumberConditionNotMet",
            "The sequence number condition specified was not met.",
        ),
        StoreError::SequenceNumberIncrementTooLarge => answer(
            409,
            "SequenceNumberIncrementTooLarge",
            "The sequence number increment cannot be performed because it would result in overflow of the sequence number.",
        ),
        StoreError::PreviousSnapshotNotFound => answer(
            409,
            "PreviousSnapshotNotFound",
            "The previous snapshot is not found.",
        ),
        StoreError::IncrementalCopySourceMustBeSnapshot => answer(
            409,
            "IncrementalCopySourceMustBeSnapshot",
            "The source for incremental copy request must be a snapshot.",
        ),
        StoreError::InvalidSourceBlobType => answer(
            409,
            "InvalidSourceBlobType",
            "The source blob type is invalid for this operation.",
        ),
        StoreError::IncrementalCopyBlobMismatch => answer(
            409,
            "IncrementalCopyBlobMismatch",
            "The specified source blob is different than the copy source of the existing incremental copy blob.",
        ),
        StoreError::IncrementalCopyOfEarlierVersionSnapshotNotAllowed => answer(
            409,
            "IncrementalCopyOfEarlierVersionSnapshotNotAllowed",
            "The specified snapshot is earlier than the last snapshot copied into the incremental copy blob.",
        ),
        StoreError::OperationNotAllowedOnIncrementalCopyBlob => answer(
            409,
            "OperationNotAllowedOnIncrementalCopyBlob",
            "The specified operation is not allowed on an incremental copy blob.",
        ),
        StoreError::SnapshotOperation => answer(
            400,
            "InvalidOperation",
            "Invalid operation against a blob snapshot.",
        ),
        // The service has no answer for a full disk (its capacity is not
        // the client's to exhaust); 503 ServerBusy says "not now, retry",
        // which SDK retry policies back off on, and is not a 500 (a server
        // fault). Deletes still work, and writes are accepted again once
        // space comes back.
        StoreError::DiskFull => answer(
            503,
            "ServerBusy",
            "The server is currently unable to receive requests: the disk of its data directory is full. Please retry your request.",
        ),
        // The cluster's metadata database unreachable, restarting or out of
        // time: "not now, retry" (docs/cluster.md#faults).
        e if e.is_unavailable() => answer(
            503,
            "ServerBusy",
            "The server is currently unable to receive requests. Please retry your request.",
        ),
        StoreError::Db(_)
        | StoreError::Unavailable(_)
        | StoreError::Postgres(_)
        | StoreError::ObjectStore(_)
        | StoreError::Io(_)
        | StoreError::Task(_)
        | StoreError::Internal(_)
        | StoreError::Corrupt(_) => internal_error(),
    }
}

/// `500 InternalError`: the body never shows a path or SQL.
pub fn internal_error() -> ErrorAnswer {
    answer(
        500,
        "InternalError",
        "The server encountered an internal error. Please retry the request.",
    )
}

fn condition_answer(f: ConditionFailure) -> ErrorAnswer {
    match f {
        ConditionFailure::NotModified => answer(304, "ConditionNotMet", CONDITION_NOT_MET),
        ConditionFailure::ConditionNotMet => answer(412, "ConditionNotMet", CONDITION_NOT_MET),
        ConditionFailure::SourceConditionNotMet => answer(
            412,
            "SourceConditionNotMet",
            "The source condition specified using HTTP conditional header(s) is not met.",
        ),
        ConditionFailure::BlobAlreadyExists => answer(
            409,
            "BlobAlreadyExists",
            "The specified blob already exists.",
        ),
        ConditionFailure::UnsatisfiableCondition => answer(
            400,
            "UnsatisfiableCondition",
            "The request includes an unsatisfiable condition for this operation.",
        ),
        ConditionFailure::MultipleConditionHeadersNotSupported => answer(
            400,
            "MultipleConditionHeadersNotSupported",
            "Multiple condition headers are not supported.",
        ),
    }
}

fn on(resource: stowage_blobstore::LeaseResource) -> &'static str {
    match resource {
        stowage_blobstore::LeaseResource::Blob => "blob",
        stowage_blobstore::LeaseResource::Container => "container",
    }
}

fn lease_answer(e: &LeaseError) -> ErrorAnswer {
    match e {
        LeaseError::LeaseAlreadyPresent => answer(
            409,
            "LeaseAlreadyPresent",
            "There is already a lease present.",
        ),
        LeaseError::LeaseIdMismatchWithLeaseOperation(r) => answer(
            409,
            "LeaseIdMismatchWithLeaseOperation",
            format!(
                "The lease ID specified did not match the lease ID for the {}.",
                on(*r)
            ),
        ),
        LeaseError::LeaseIsBrokenAndCannotBeRenewed => answer(
            409,
            "LeaseIsBrokenAndCannotBeRenewed",
            "The lease ID matched, but the lease has been broken explicitly and cannot be renewed.",
        ),
        LeaseError::LeaseIsBreakingAndCannotBeAcquired => answer(
            409,
            "LeaseIsBreakingAndCannotBeAcquired",
            "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken.",
        ),
        LeaseError::LeaseIsBreakingAndCannotBeChanged => answer(
            409,
            "LeaseIsBreakingAndCannotBeChanged",
            "The lease ID matched, but the lease is currently in breaking state and cannot be changed.",
        ),
        LeaseError::LeaseNotPresentWithLeaseOperation(r) => answer(
            409,
            "LeaseNotPresentWithLeaseOperation",
            format!("There is currently no lease on the {}.", on(*r)),
        ),
        LeaseError::LeaseIdMissing(r) => answer(
            412,
            "LeaseIdMissing",
            format!(
                "There is currently a lease on the {} and no lease ID was specified in the request.",
                on(*r)
            ),
        ),
        LeaseError::LeaseIdMismatchWithBlobOperation => answer(
            412,
            "LeaseIdMismatchWithBlobOperation",
            "The lease ID specified did not match the lease ID for the blob.",
        ),
        LeaseError::LeaseIdMismatchWithContainerOperation => answer(
            412,
            "LeaseIdMismatchWithContainerOperation",
            "The lease ID specified did not match the lease ID for the container.",
        ),
        LeaseError::LeaseNotPresentWithBlobOperation => answer(
            412,
            "LeaseNotPresentWithBlobOperation",
            "There is currently no lease on the blob.",
        ),
        LeaseError::LeaseNotPresentWithContainerOperation => answer(
            412,
            "LeaseNotPresentWithContainerOperation",
            "There is currently no lease on the container.",
        ),
        LeaseError::LeaseLost(r) => answer(
            412,
            "LeaseLost",
            format!(
                "A lease ID was specified, but the lease for the {} has expired.",
                on(*r)
            ),
        ),
        LeaseError::InvalidLeaseDuration => answer(
            400,
            "InvalidHeaderValue",
            "The value for one of the HTTP headers is not in the correct format.",
        )
        .with("HeaderName", "x-ms-lease-duration"),
        LeaseError::InvalidBreakPeriod => answer(
            400,
            "InvalidHeaderValue",
            "The value for one of the HTTP headers is not in the correct format.",
        )
        .with("HeaderName", "x-ms-lease-break-period"),
        LeaseError::InvalidLeaseId => answer(
            400,
            "InvalidHeaderValue",
            "The value for one of the HTTP headers is not in the correct format.",
        )
        .with("HeaderName", "x-ms-lease-id"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_uses_a_code_of_the_master_table() {
        let cases: Vec<(ApiError, u16, &str)> = vec![
            (
                StoreError::ContainerNotFound.into(),
                404,
                "ContainerNotFound",
            ),
            (StoreError::BlobNotFound.into(), 404, "BlobNotFound"),
            (
                StoreError::ContainerAlreadyExists.into(),
                409,
                "ContainerAlreadyExists",
            ),
            (
                StoreError::InvalidRange { size: 0 }.into(),
                416,
                "InvalidRange",
            ),
            (
                StoreError::Name(NameError::OutOfRange).into(),
                400,
                "OutOfRangeInput",
            ),
            (
                StoreError::Name(NameError::Invalid).into(),
                400,
                "InvalidResourceName",
            ),
            (
                StoreError::Condition(ConditionFailure::NotModified).into(),
                304,
                "ConditionNotMet",
            ),
            (
                StoreError::Condition(ConditionFailure::ConditionNotMet).into(),
                412,
                "ConditionNotMet",
            ),
            (
                StoreError::Condition(ConditionFailure::BlobAlreadyExists).into(),
                409,
                "BlobAlreadyExists",
            ),
            (
                StoreError::Lease(LeaseError::LeaseAlreadyPresent).into(),
                409,
                "LeaseAlreadyPresent",
            ),
            (
                StoreError::Lease(LeaseError::LeaseIdMismatchWithBlobOperation).into(),
                412,
                "LeaseIdMismatchWithBlobOperation",
            ),
            (
                StoreError::Lease(LeaseError::LeaseIdMissing(
                    stowage_blobstore::LeaseResource::Blob,
                ))
                .into(),
                412,
                "LeaseIdMissing",
            ),
            (
                StoreError::Lease(LeaseError::LeaseLost(
                    stowage_blobstore::LeaseResource::Container,
                ))
                .into(),
                412,
                "LeaseLost",
            ),
            (StoreError::Corrupt("x".into()).into(), 500, "InternalError"),
            (StoreError::DiskFull.into(), 503, "ServerBusy"),
            (
                StoreError::Unavailable("x".into()).into(),
                503,
                "ServerBusy",
            ),
            (
                ApiError::MissingContentLength,
                411,
                "MissingContentLengthHeader",
            ),
            (
                ApiError::RequestBodyTooLarge { max: 1 },
                413,
                "RequestBodyTooLarge",
            ),
            (ApiError::UnsupportedHttpVerb, 405, "UnsupportedHttpVerb"),
            (
                StoreError::Crc64Mismatch {
                    expected: Some(1),
                    computed: Some(2),
                }
                .into(),
                400,
                "Crc64Mismatch",
            ),
            (StoreError::BlobIsSealed.into(), 409, "BlobIsSealed"),
            (StoreError::BlobArchived.into(), 409, "BlobArchived"),
            (
                StoreError::BlobBeingRehydrated.into(),
                409,
                "BlobBeingRehydrated",
            ),
            (
                StoreError::AccessTierNotSupportedForBlobType.into(),
                400,
                "AccessTierNotSupportedForBlobType",
            ),
            (
                ApiError::BothCrc64AndMd5HeaderPresent,
                400,
                "BothCrc64AndMd5HeaderPresent",
            ),
            (
                ApiError::BothCrc64AndMd5RangeHeaderPresent,
                400,
                "BothCrc64AndMd5RangeHeaderPresent",
            ),
            (ApiError::NotImplemented, 501, "NotImplemented"),
            (ApiError::CorsPreflightFailure, 403, "CorsPreflightFailure"),
            (
                ApiError::MissingCorsHeader("Origin"),
                400,
                "InvalidHeaderValue",
            ),
            (
                ApiError::ExceedsMaxBatchRequestCount,
                400,
                "ExceedsMaxBatchRequestCount",
            ),
            (
                ApiError::AllBatchSubRequestsShouldBeSameApi,
                400,
                "AllBatchSubRequestsShouldBeSameApi",
            ),
            (
                ApiError::AuthenticationFailed(String::new()),
                403,
                "AuthenticationFailed",
            ),
        ];
        for (error, status, code) in cases {
            let a = error.answer();
            assert_eq!((a.status.as_u16(), a.code), (status, code), "{error:?}");
        }
    }

    #[test]
    fn internal_errors_never_show_their_source() {
        let e: ApiError = StoreError::Corrupt("/secret/path SELECT".into()).into();
        let a = e.answer();
        assert!(!a.message.contains("secret") && a.details.is_empty());
    }
}
