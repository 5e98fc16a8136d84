//! The service's error codes (docs/wire/errors.md#error-codes), as an enum that
//! callers can match on, with the raw string kept for codes it does not know.
//!
//! The list was written out by hand from the master error table, plus the
//! codes the real service sends under load (`ServerBusy`,
//! `OperationTimedOut`) and `SequenceNumberConditionNotMet` (docs/wire/conditions.md#sequence-number-conditions).

use std::fmt;

/// An `x-ms-error-code` value.
///
/// Every code of the master error table has a variant named exactly like the
/// code, so a grep from the spec finds it; any other code arrives as
/// [`ErrorCode::Other`] with its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `AppendPositionConditionNotMet`.
    AppendPositionConditionNotMet,
    /// `AuthenticationFailed`.
    AuthenticationFailed,
    /// `AuthorizationFailure`.
    AuthorizationFailure,
    /// `AuthorizationPermissionMismatch`.
    AuthorizationPermissionMismatch,
    /// `AuthorizationProtocolMismatch`.
    AuthorizationProtocolMismatch,
    /// `AuthorizationResourceTypeMismatch`.
    AuthorizationResourceTypeMismatch,
    /// `AuthorizationServiceMismatch`.
    AuthorizationServiceMismatch,
    /// `AuthorizationSourceIPMismatch`.
    AuthorizationSourceIPMismatch,
    /// `BlobAlreadyExists`.
    BlobAlreadyExists,
    /// `BlobArchived`.
    BlobArchived,
    /// `BlobNotFound`.
    BlobNotFound,
    /// `BlockCountExceedsLimit`.
    BlockCountExceedsLimit,
    /// `BlockListTooLong`.
    BlockListTooLong,
    /// `CannotVerifyCopySource`.
    CannotVerifyCopySource,
    /// `ConditionNotMet`.
    ConditionNotMet,
    /// `ContainerAlreadyExists`.
    ContainerAlreadyExists,
    /// `ContainerBeingDeleted`.
    ContainerBeingDeleted,
    /// `ContainerNotFound`.
    ContainerNotFound,
    /// `CopyIdMismatch`.
    CopyIdMismatch,
    /// `CorsPreflightFailure`.
    CorsPreflightFailure,
    /// `Crc64Mismatch`.
    Crc64Mismatch,
    /// `DuplicateTagNames`.
    DuplicateTagNames,
    /// `EmptyMetadataKey`.
    EmptyMetadataKey,
    /// `EmptyTagName`.
    EmptyTagName,
    /// `InfiniteLeaseDurationRequired`.
    InfiniteLeaseDurationRequired,
    /// `InternalError`.
    InternalError,
    /// `InvalidAuthenticationInfo`.
    InvalidAuthenticationInfo,
    /// `InvalidBlobOrBlock`.
    InvalidBlobOrBlock,
    /// `InvalidBlobType`.
    InvalidBlobType,
    /// `InvalidBlockId`.
    InvalidBlockId,
    /// `InvalidBlockList`.
    InvalidBlockList,
    /// `InvalidHeaderValue`.
    InvalidHeaderValue,
    /// `InvalidInput`.
    InvalidInput,
    /// `InvalidMd5`.
    InvalidMd5,
    /// `InvalidMetadata`.
    InvalidMetadata,
    /// `InvalidOperation`.
    InvalidOperation,
    /// `InvalidPageRange`.
    InvalidPageRange,
    /// `InvalidQueryParameterValue`.
    InvalidQueryParameterValue,
    /// `InvalidRange`.
    InvalidRange,
    /// `InvalidResourceName`.
    InvalidResourceName,
    /// `InvalidTag`.
    InvalidTag,
    /// `InvalidUri`.
    InvalidUri,
    /// `InvalidXmlDocument`.
    InvalidXmlDocument,
    /// `InvalidXmlNodeValue`.
    InvalidXmlNodeValue,
    /// `LeaseAlreadyPresent`.
    LeaseAlreadyPresent,
    /// `LeaseIdMismatchWithBlobOperation`.
    LeaseIdMismatchWithBlobOperation,
    /// `LeaseIdMismatchWithContainerOperation`.
    LeaseIdMismatchWithContainerOperation,
    /// `LeaseIdMismatchWithLeaseOperation`.
    LeaseIdMismatchWithLeaseOperation,
    /// `LeaseIdMissing`.
    LeaseIdMissing,
    /// `LeaseIsBreakingAndCannotBeAcquired`.
    LeaseIsBreakingAndCannotBeAcquired,
    /// `LeaseIsBreakingAndCannotBeChanged`.
    LeaseIsBreakingAndCannotBeChanged,
    /// `LeaseIsBrokenAndCannotBeRenewed`.
    LeaseIsBrokenAndCannotBeRenewed,
    /// `LeaseLost`.
    LeaseLost,
    /// `LeaseNotPresentWithBlobOperation`.
    LeaseNotPresentWithBlobOperation,
    /// `LeaseNotPresentWithContainerOperation`.
    LeaseNotPresentWithContainerOperation,
    /// `LeaseNotPresentWithLeaseOperation`.
    LeaseNotPresentWithLeaseOperation,
    /// `MaxBlobSizeConditionNotMet`.
    MaxBlobSizeConditionNotMet,
    /// `Md5Mismatch`.
    Md5Mismatch,
    /// `MetadataTooLarge`.
    MetadataTooLarge,
    /// `MissingContentLengthHeader`.
    MissingContentLengthHeader,
    /// `MissingRequiredHeader`.
    MissingRequiredHeader,
    /// `MissingRequiredQueryParameter`.
    MissingRequiredQueryParameter,
    /// `MissingRequiredXmlNode`.
    MissingRequiredXmlNode,
    /// `MultipleConditionHeadersNotSupported`.
    MultipleConditionHeadersNotSupported,
    /// `NoAuthenticationInformation`.
    NoAuthenticationInformation,
    /// `NoPendingCopyOperation`.
    NoPendingCopyOperation,
    /// `NotImplemented`.
    NotImplemented,
    /// `OperationTimedOut`.
    OperationTimedOut,
    /// `OutOfRangeInput`.
    OutOfRangeInput,
    /// `OutOfRangeQueryParameterValue`.
    OutOfRangeQueryParameterValue,
    /// `PendingCopyOperation`.
    PendingCopyOperation,
    /// `RequestBodyTooLarge`.
    RequestBodyTooLarge,
    /// `ResourceNotFound`.
    ResourceNotFound,
    /// `SequenceNumberConditionNotMet`.
    SequenceNumberConditionNotMet,
    /// `ServerBusy`.
    ServerBusy,
    /// `SnapshotsPresent`.
    SnapshotsPresent,
    /// `SourceConditionNotMet`.
    SourceConditionNotMet,
    /// `TagsTooLarge`.
    TagsTooLarge,
    /// `TargetConditionNotMet`.
    TargetConditionNotMet,
    /// `UnsatisfiableCondition`.
    UnsatisfiableCondition,
    /// `UnsupportedHeader`.
    UnsupportedHeader,
    /// `UnsupportedHttpVerb`.
    UnsupportedHttpVerb,
    /// `UnsupportedQueryParameter`.
    UnsupportedQueryParameter,
    /// A code this client does not know, as the service sent it.
    Other(String),
}

impl ErrorCode {
    /// Parses a code; unknown codes become [`ErrorCode::Other`].
    pub fn parse(code: &str) -> ErrorCode {
        match code {
            "AppendPositionConditionNotMet" => ErrorCode::AppendPositionConditionNotMet,
            "AuthenticationFailed" => ErrorCode::AuthenticationFailed,
            "AuthorizationFailure" => ErrorCode::AuthorizationFailure,
            "AuthorizationPermissionMismatch" => ErrorCode::AuthorizationPermissionMismatch,
            "AuthorizationProtocolMismatch" => ErrorCode::AuthorizationProtocolMismatch,
            "AuthorizationResourceTypeMismatch" => ErrorCode::AuthorizationResourceTypeMismatch,
            "AuthorizationServiceMismatch" => ErrorCode::AuthorizationServiceMismatch,
            "AuthorizationSourceIPMismatch" => ErrorCode::AuthorizationSourceIPMismatch,
            "BlobAlreadyExists" => ErrorCode::BlobAlreadyExists,
            "BlobArchived" => ErrorCode::BlobArchived,
            "BlobNotFound" => ErrorCode::BlobNotFound,
            "BlockCountExceedsLimit" => ErrorCode::BlockCountExceedsLimit,
            "BlockListTooLong" => ErrorCode::BlockListTooLong,
            "CannotVerifyCopySource" => ErrorCode::CannotVerifyCopySource,
            "ConditionNotMet" => ErrorCode::ConditionNotMet,
            "ContainerAlreadyExists" => ErrorCode::ContainerAlreadyExists,
            "ContainerBeingDeleted" => ErrorCode::ContainerBeingDeleted,
            "ContainerNotFound" => ErrorCode::ContainerNotFound,
            "CopyIdMismatch" => ErrorCode::CopyIdMismatch,
            "CorsPreflightFailure" => ErrorCode::CorsPreflightFailure,
            "Crc64Mismatch" => ErrorCode::Crc64Mismatch,
            "DuplicateTagNames" => ErrorCode::DuplicateTagNames,
            "EmptyMetadataKey" => ErrorCode::EmptyMetadataKey,
            "EmptyTagName" => ErrorCode::EmptyTagName,
            "InfiniteLeaseDurationRequired" => ErrorCode::InfiniteLeaseDurationRequired,
            "InternalError" => ErrorCode::InternalError,
            "InvalidAuthenticationInfo" => ErrorCode::InvalidAuthenticationInfo,
            "InvalidBlobOrBlock" => ErrorCode::InvalidBlobOrBlock,
            "InvalidBlobType" => ErrorCode::InvalidBlobType,
            "InvalidBlockId" => ErrorCode::InvalidBlockId,
            "InvalidBlockList" => ErrorCode::InvalidBlockList,
            "InvalidHeaderValue" => ErrorCode::InvalidHeaderValue,
            "InvalidInput" => ErrorCode::InvalidInput,
            "InvalidMd5" => ErrorCode::InvalidMd5,
            "InvalidMetadata" => ErrorCode::InvalidMetadata,
            "InvalidOperation" => ErrorCode::InvalidOperation,
            "InvalidPageRange" => ErrorCode::InvalidPageRange,
            "InvalidQueryParameterValue" => ErrorCode::InvalidQueryParameterValue,
            "InvalidRange" => ErrorCode::InvalidRange,
            "InvalidResourceName" => ErrorCode::InvalidResourceName,
            "InvalidTag" => ErrorCode::InvalidTag,
            "InvalidUri" => ErrorCode::InvalidUri,
            "InvalidXmlDocument" => ErrorCode::InvalidXmlDocument,
            "InvalidXmlNodeValue" => ErrorCode::InvalidXmlNodeValue,
            "LeaseAlreadyPresent" => ErrorCode::LeaseAlreadyPresent,
            "LeaseIdMismatchWithBlobOperation" => ErrorCode::LeaseIdMismatchWithBlobOperation,
            "LeaseIdMismatchWithContainerOperation" => {
                ErrorCode::LeaseIdMismatchWithContainerOperation
            }
            "LeaseIdMismatchWithLeaseOperation" => ErrorCode::LeaseIdMismatchWithLeaseOperation,
            "LeaseIdMissing" => ErrorCode::LeaseIdMissing,
            "LeaseIsBreakingAndCannotBeAcquired" => ErrorCode::LeaseIsBreakingAndCannotBeAcquired,
            "LeaseIsBreakingAndCannotBeChanged" => ErrorCode::LeaseIsBreakingAndCannotBeChanged,
            "LeaseIsBrokenAndCannotBeRenewed" => ErrorCode::LeaseIsBrokenAndCannotBeRenewed,
            "LeaseLost" => ErrorCode::LeaseLost,
            "LeaseNotPresentWithBlobOperation" => ErrorCode::LeaseNotPresentWithBlobOperation,
            "LeaseNotPresentWithContainerOperation" => {
                ErrorCode::LeaseNotPresentWithContainerOperation
            }
            "LeaseNotPresentWithLeaseOperation" => ErrorCode::LeaseNotPresentWithLeaseOperation,
            "MaxBlobSizeConditionNotMet" => ErrorCode::MaxBlobSizeConditionNotMet,
            "Md5Mismatch" => ErrorCode::Md5Mismatch,
            "MetadataTooLarge" => ErrorCode::MetadataTooLarge,
            "MissingContentLengthHeader" => ErrorCode::MissingContentLengthHeader,
            "MissingRequiredHeader" => ErrorCode::MissingRequiredHeader,
            "MissingRequiredQueryParameter" => ErrorCode::MissingRequiredQueryParameter,
            "MissingRequiredXmlNode" => ErrorCode::MissingRequiredXmlNode,
            "MultipleConditionHeadersNotSupported" => {
                ErrorCode::MultipleConditionHeadersNotSupported
            }
            "NoAuthenticationInformation" => ErrorCode::NoAuthenticationInformation,
            "NoPendingCopyOperation" => ErrorCode::NoPendingCopyOperation,
            "NotImplemented" => ErrorCode::NotImplemented,
            "OperationTimedOut" => ErrorCode::OperationTimedOut,
            "OutOfRangeInput" => ErrorCode::OutOfRangeInput,
            "OutOfRangeQueryParameterValue" => ErrorCode::OutOfRangeQueryParameterValue,
            "PendingCopyOperation" => ErrorCode::PendingCopyOperation,
            "RequestBodyTooLarge" => ErrorCode::RequestBodyTooLarge,
            "ResourceNotFound" => ErrorCode::ResourceNotFound,
            "SequenceNumberConditionNotMet" => ErrorCode::SequenceNumberConditionNotMet,
            "ServerBusy" => ErrorCode::ServerBusy,
            "SnapshotsPresent" => ErrorCode::SnapshotsPresent,
            "SourceConditionNotMet" => ErrorCode::SourceConditionNotMet,
            "TagsTooLarge" => ErrorCode::TagsTooLarge,
            "TargetConditionNotMet" => ErrorCode::TargetConditionNotMet,
            "UnsatisfiableCondition" => ErrorCode::UnsatisfiableCondition,
            "UnsupportedHeader" => ErrorCode::UnsupportedHeader,
            "UnsupportedHttpVerb" => ErrorCode::UnsupportedHttpVerb,
            "UnsupportedQueryParameter" => ErrorCode::UnsupportedQueryParameter,
            other => ErrorCode::Other(other.to_owned()),
        }
    }

    /// The code as the service spells it.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::AppendPositionConditionNotMet => "AppendPositionConditionNotMet",
            ErrorCode::AuthenticationFailed => "AuthenticationFailed",
            ErrorCode::AuthorizationFailure => "AuthorizationFailure",
            ErrorCode::AuthorizationPermissionMismatch => "AuthorizationPermissionMismatch",
            ErrorCode::AuthorizationProtocolMismatch => "AuthorizationProtocolMismatch",
            ErrorCode::AuthorizationResourceTypeMismatch => "AuthorizationResourceTypeMismatch",
            ErrorCode::AuthorizationServiceMismatch => "AuthorizationServiceMismatch",
            ErrorCode::AuthorizationSourceIPMismatch => "AuthorizationSourceIPMismatch",
            ErrorCode::BlobAlreadyExists => "BlobAlreadyExists",
            ErrorCode::BlobArchived => "BlobArchived",
            ErrorCode::BlobNotFound => "BlobNotFound",
            ErrorCode::BlockCountExceedsLimit => "BlockCountExceedsLimit",
            ErrorCode::BlockListTooLong => "BlockListTooLong",
            ErrorCode::CannotVerifyCopySource => "CannotVerifyCopySource",
            ErrorCode::ConditionNotMet => "ConditionNotMet",
            ErrorCode::ContainerAlreadyExists => "ContainerAlreadyExists",
            ErrorCode::ContainerBeingDeleted => "ContainerBeingDeleted",
            ErrorCode::ContainerNotFound => "ContainerNotFound",
            ErrorCode::CopyIdMismatch => "CopyIdMismatch",
            ErrorCode::CorsPreflightFailure => "CorsPreflightFailure",
            ErrorCode::Crc64Mismatch => "Crc64Mismatch",
            ErrorCode::DuplicateTagNames => "DuplicateTagNames",
            ErrorCode::EmptyMetadataKey => "EmptyMetadataKey",
            ErrorCode::EmptyTagName => "EmptyTagName",
            ErrorCode::InfiniteLeaseDurationRequired => "InfiniteLeaseDurationRequired",
            ErrorCode::InternalError => "InternalError",
            ErrorCode::InvalidAuthenticationInfo => "InvalidAuthenticationInfo",
            ErrorCode::InvalidBlobOrBlock => "InvalidBlobOrBlock",
            ErrorCode::InvalidBlobType => "InvalidBlobType",
            ErrorCode::InvalidBlockId => "InvalidBlockId",
            ErrorCode::InvalidBlockList => "InvalidBlockList",
            ErrorCode::InvalidHeaderValue => "InvalidHeaderValue",
            ErrorCode::InvalidInput => "InvalidInput",
            ErrorCode::InvalidMd5 => "InvalidMd5",
            ErrorCode::InvalidMetadata => "InvalidMetadata",
            ErrorCode::InvalidOperation => "InvalidOperation",
            ErrorCode::InvalidPageRange => "InvalidPageRange",
            ErrorCode::InvalidQueryParameterValue => "InvalidQueryParameterValue",
            ErrorCode::InvalidRange => "InvalidRange",
            ErrorCode::InvalidResourceName => "InvalidResourceName",
            ErrorCode::InvalidTag => "InvalidTag",
            ErrorCode::InvalidUri => "InvalidUri",
            ErrorCode::InvalidXmlDocument => "InvalidXmlDocument",
            ErrorCode::InvalidXmlNodeValue => "InvalidXmlNodeValue",
            ErrorCode::LeaseAlreadyPresent => "LeaseAlreadyPresent",
            ErrorCode::LeaseIdMismatchWithBlobOperation => "LeaseIdMismatchWithBlobOperation",
            ErrorCode::LeaseIdMismatchWithContainerOperation => {
                "LeaseIdMismatchWithContainerOperation"
            }
            ErrorCode::LeaseIdMismatchWithLeaseOperation => "LeaseIdMismatchWithLeaseOperation",
            ErrorCode::LeaseIdMissing => "LeaseIdMissing",
            ErrorCode::LeaseIsBreakingAndCannotBeAcquired => "LeaseIsBreakingAndCannotBeAcquired",
            ErrorCode::LeaseIsBreakingAndCannotBeChanged => "LeaseIsBreakingAndCannotBeChanged",
            ErrorCode::LeaseIsBrokenAndCannotBeRenewed => "LeaseIsBrokenAndCannotBeRenewed",
            ErrorCode::LeaseLost => "LeaseLost",
            ErrorCode::LeaseNotPresentWithBlobOperation => "LeaseNotPresentWithBlobOperation",
            ErrorCode::LeaseNotPresentWithContainerOperation => {
                "LeaseNotPresentWithContainerOperation"
            }
            ErrorCode::LeaseNotPresentWithLeaseOperation => "LeaseNotPresentWithLeaseOperation",
            ErrorCode::MaxBlobSizeConditionNotMet => "MaxBlobSizeConditionNotMet",
            ErrorCode::Md5Mismatch => "Md5Mismatch",
            ErrorCode::MetadataTooLarge => "MetadataTooLarge",
            ErrorCode::MissingContentLengthHeader => "MissingContentLengthHeader",
            ErrorCode::MissingRequiredHeader => "MissingRequiredHeader",
            ErrorCode::MissingRequiredQueryParameter => "MissingRequiredQueryParameter",
            ErrorCode::MissingRequiredXmlNode => "MissingRequiredXmlNode",
            ErrorCode::MultipleConditionHeadersNotSupported => {
                "MultipleConditionHeadersNotSupported"
            }
            ErrorCode::NoAuthenticationInformation => "NoAuthenticationInformation",
            ErrorCode::NoPendingCopyOperation => "NoPendingCopyOperation",
            ErrorCode::NotImplemented => "NotImplemented",
            ErrorCode::OperationTimedOut => "OperationTimedOut",
            ErrorCode::OutOfRangeInput => "OutOfRangeInput",
            ErrorCode::OutOfRangeQueryParameterValue => "OutOfRangeQueryParameterValue",
            ErrorCode::PendingCopyOperation => "PendingCopyOperation",
            ErrorCode::RequestBodyTooLarge => "RequestBodyTooLarge",
            ErrorCode::ResourceNotFound => "ResourceNotFound",
            ErrorCode::SequenceNumberConditionNotMet => "SequenceNumberConditionNotMet",
            ErrorCode::ServerBusy => "ServerBusy",
            ErrorCode::SnapshotsPresent => "SnapshotsPresent",
            ErrorCode::SourceConditionNotMet => "SourceConditionNotMet",
            ErrorCode::TagsTooLarge => "TagsTooLarge",
            ErrorCode::TargetConditionNotMet => "TargetConditionNotMet",
            ErrorCode::UnsatisfiableCondition => "UnsatisfiableCondition",
            ErrorCode::UnsupportedHeader => "UnsupportedHeader",
            ErrorCode::UnsupportedHttpVerb => "UnsupportedHttpVerb",
            ErrorCode::UnsupportedQueryParameter => "UnsupportedQueryParameter",
            ErrorCode::Other(code) => code,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_round_trip_and_unknown_codes_keep_their_text() {
        for code in [
            "AppendPositionConditionNotMet",
            "AuthenticationFailed",
            "AuthorizationFailure",
            "AuthorizationPermissionMismatch",
            "AuthorizationProtocolMismatch",
            "AuthorizationResourceTypeMismatch",
            "AuthorizationServiceMismatch",
            "AuthorizationSourceIPMismatch",
            "BlobAlreadyExists",
            "BlobArchived",
            "BlobNotFound",
            "BlockCountExceedsLimit",
            "BlockListTooLong",
            "CannotVerifyCopySource",
            "ConditionNotMet",
            "ContainerAlreadyExists",
            "ContainerBeingDeleted",
            "ContainerNotFound",
            "CopyIdMismatch",
            "CorsPreflightFailure",
            "Crc64Mismatch",
            "DuplicateTagNames",
            "EmptyMetadataKey",
            "EmptyTagName",
            "InfiniteLeaseDurationRequired",
            "InternalError",
            "InvalidAuthenticationInfo",
            "InvalidBlobOrBlock",
            "InvalidBlobType",
            "InvalidBlockId",
            "InvalidBlockList",
            "InvalidHeaderValue",
            "InvalidInput",
            "InvalidMd5",
            "InvalidMetadata",
            "InvalidOperation",
            "InvalidPageRange",
            "InvalidQueryParameterValue",
            "InvalidRange",
            "InvalidResourceName",
            "InvalidTag",
            "InvalidUri",
            "InvalidXmlDocument",
            "InvalidXmlNodeValue",
            "LeaseAlreadyPresent",
            "LeaseIdMismatchWithBlobOperation",
            "LeaseIdMismatchWithContainerOperation",
            "LeaseIdMismatchWithLeaseOperation",
            "LeaseIdMissing",
            "LeaseIsBreakingAndCannotBeAcquired",
            "LeaseIsBreakingAndCannotBeChanged",
            "LeaseIsBrokenAndCannotBeRenewed",
            "LeaseLost",
            "LeaseNotPresentWithBlobOperation",
            "LeaseNotPresentWithContainerOperation",
            "LeaseNotPresentWithLeaseOperation",
            "MaxBlobSizeConditionNotMet",
            "Md5Mismatch",
            "MetadataTooLarge",
            "MissingContentLengthHeader",
            "MissingRequiredHeader",
            "MissingRequiredQueryParameter",
            "MissingRequiredXmlNode",
            "MultipleConditionHeadersNotSupported",
            "NoAuthenticationInformation",
            "NoPendingCopyOperation",
            "NotImplemented",
            "OperationTimedOut",
            "OutOfRangeInput",
            "OutOfRangeQueryParameterValue",
            "PendingCopyOperation",
            "RequestBodyTooLarge",
            "ResourceNotFound",
            "SequenceNumberConditionNotMet",
            "ServerBusy",
            "SnapshotsPresent",
            "SourceConditionNotMet",
            "TagsTooLarge",
            "TargetConditionNotMet",
            "UnsatisfiableCondition",
            "UnsupportedHeader",
            "UnsupportedHttpVerb",
            "UnsupportedQueryParameter",
        ] {
            let parsed = ErrorCode::parse(code);
            assert!(!matches!(parsed, ErrorCode::Other(_)), "{code} is known");
            assert_eq!(parsed.as_str(), code);
        }
        let other = ErrorCode::parse("SomethingNew");
        assert_eq!(other, ErrorCode::Other("SomethingNew".to_owned()));
        assert_eq!(other.to_string(), "SomethingNew");
    }
}
