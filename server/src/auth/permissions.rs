//! What a shared access signature must grant for each operation
//! (docs/wire/auth.md#sas-permissions, docs/wire/auth.md#account-sas). Pure; table-tested.

use crate::ops::Operation;

/// The account SAS resource type an operation belongs to (`srt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResourceType {
    Service,
    Container,
    Object,
}

/// Which service SAS resources (`sr`) may perform an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServiceScope {
    /// No service SAS (container operations other than List Blobs, service
    /// operations).
    None,
    /// Only a container SAS (`sr=c`): List Blobs.
    Container,
    /// A container or a blob SAS: blob operations.
    Any,
}

/// What an operation needs from a SAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SasNeed {
    pub resource_type: ResourceType,
    /// Any one of these permission letters suffices.
    pub letters: &'static str,
    pub service_scope: ServiceScope,
    /// Put Blob / Copy Blob: `c` suffices only while the destination does
    /// not exist; over an existing blob `w` is needed.
    pub create_only_needs_absent: bool,
}

/// Every SAS permission letter: "any permission at all".
const ANY_PERMISSION: &str = "racwdxyltmeopi";

const fn need(
    resource_type: ResourceType,
    letters: &'static str,
    service_scope: ServiceScope,
) -> SasNeed {
    SasNeed {
        resource_type,
        letters,
        service_scope,
        create_only_needs_absent: false,
    }
}

/// The requirement of `op`; `None` when no SAS may perform it (Get/Set
/// Container ACL). `lease_break` selects the Lease Blob/Container break row.
pub(crate) fn sas_need(op: Operation, lease_break: bool) -> Option<SasNeed> {
    use Operation::*;
    use ResourceType::{Container as C, Object as O, Service as S};
    let lease = if lease_break { "wd" } else { "w" };
    Some(match op {
        ListContainers => need(S, "l", ServiceScope::None),
        GetBlobServiceProperties | GetBlobServiceStats => need(S, "r", ServiceScope::None),
        // Get Account Information is also addressed at a container or a
        // blob so that a service SAS for that resource can authorize it;
        // the service asks no particular permission of such a SAS, and the
        // resource need not exist.
        GetAccountInformation => need(S, ANY_PERMISSION, ServiceScope::Any),
        SetBlobServiceProperties => need(S, "w", ServiceScope::None),
        CreateContainer => need(C, "cw", ServiceScope::None),
        GetContainerProperties | GetContainerMetadata => need(C, "r", ServiceScope::None),
        SetContainerMetadata => need(C, "w", ServiceScope::None),
        DeleteContainer => need(C, "d", ServiceScope::None),
        // The reference names account SAS only for Restore Container.
        RestoreContainer => need(C, "w", ServiceScope::None),
        LeaseContainer => need(C, lease, ServiceScope::None),
        GetContainerAcl | SetContainerAcl | GetUserDelegationKey => return None,
        ListBlobs => need(C, "l", ServiceScope::Container),
        PutBlob | CopyBlob | PutBlobFromUrl | IncrementalCopyBlob => SasNeed {
            create_only_needs_absent: true,
            ..need(O, "cw", ServiceScope::Any)
        },
        GetBlob | GetBlobProperties | GetBlobMetadata | GetBlockList | GetPageRanges => {
            need(O, "r", ServiceScope::Any)
        }
        SetBlobProperties | SetBlobMetadata | PutBlock | PutBlockFromUrl | PutBlockList
        | PutPage | UploadPagesFromUrl | AbortCopyBlob | SealAppendBlob | SetBlobTier
        | SetBlobExpiry => need(O, "w", ServiceScope::Any),
        AppendBlock | AppendBlockFromUrl => need(O, "aw", ServiceScope::Any),
        SnapshotBlob => need(O, "cw", ServiceScope::Any),
        LeaseBlob => need(O, lease, ServiceScope::Any),
        // A version or a permanent delete asks other letters
        // ([`delete_blob_letters`]).
        DeleteBlob => need(O, "d", ServiceScope::Any),
        // The reference: a SAS "who has permission to write to this blob or
        // its container".
        UndeleteBlob => need(O, "w", ServiceScope::Any),
        SetBlobTags | GetBlobTags => need(O, "t", ServiceScope::Any),
        // `f`: filter by tags. Across the account only an account SAS
        // serves; in one container a container SAS does too.
        FindBlobsByTags => need(S, "f", ServiceScope::None),
        FindBlobsByTagsInContainer => need(C, "f", ServiceScope::Container),
        // A SAS that verifies for the batch's URL lets the batch in without
        // a permission of its own (the authorizer does not ask here); each
        // sub-request is then authorized on its own credentials.
        BlobBatch | CorsPreflight => return None,
    })
}

/// The letters Delete Blob asks of a SAS: `y` (permanent delete) with
/// `deletetype=permanent`, `x` (delete version) with `versionid=`, else `d`
/// (https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas#permissions-for-a-directory-container-or-blob,
/// https://learn.microsoft.com/en-us/azure/storage/blobs/versioning-overview#shared-access-signature-sas-parameters).
pub(crate) fn delete_blob_letters(version: bool, permanent: bool) -> &'static str {
    match (version, permanent) {
        (_, true) => "y",
        (true, false) => "x",
        (false, false) => "d",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Operation::*;

    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    #[test]
    fn requirement_table() {
        let cases: &[(Operation, bool, Option<(ResourceType, &str, ServiceScope)>)] = &[
            (
                ListContainers,
                false,
                Some((ResourceType::Service, "l", ServiceScope::None)),
            ),
            (
                CreateContainer,
                false,
                Some((ResourceType::Container, "cw", ServiceScope::None)),
            ),
            (
                DeleteContainer,
                false,
                Some((ResourceType::Container, "d", ServiceScope::None)),
            ),
            (
                LeaseContainer,
                true,
                Some((ResourceType::Container, "wd", ServiceScope::None)),
            ),
            (
                ListBlobs,
                false,
                Some((ResourceType::Container, "l", ServiceScope::Container)),
            ),
            (
                GetBlob,
                false,
                Some((ResourceType::Object, "r", ServiceScope::Any)),
            ),
            (
                PutBlob,
                false,
                Some((ResourceType::Object, "cw", ServiceScope::Any)),
            ),
            (
                PutBlockList,
                false,
                Some((ResourceType::Object, "w", ServiceScope::Any)),
            ),
            (
                AppendBlock,
                false,
                Some((ResourceType::Object, "aw", ServiceScope::Any)),
            ),
            (
                SnapshotBlob,
                false,
                Some((ResourceType::Object, "cw", ServiceScope::Any)),
            ),
            (
                LeaseBlob,
                false,
                Some((ResourceType::Object, "w", ServiceScope::Any)),
            ),
            (
                LeaseBlob,
                true,
                Some((ResourceType::Object, "wd", ServiceScope::Any)),
            ),
            (
                DeleteBlob,
                false,
                Some((ResourceType::Object, "d", ServiceScope::Any)),
            ),
            (
                GetBlobTags,
                false,
                Some((ResourceType::Object, "t", ServiceScope::Any)),
            ),
            (
                FindBlobsByTags,
                false,
                Some((ResourceType::Service, "f", ServiceScope::None)),
            ),
            (
                FindBlobsByTagsInContainer,
                false,
                Some((ResourceType::Container, "f", ServiceScope::Container)),
            ),
            (GetContainerAcl, false, None),
            (SetContainerAcl, false, None),
        ];
        for (op, brk, expected) in cases {
            let got = sas_need(*op, *brk).map(|n| (n.resource_type, n.letters, n.service_scope));
            assert_eq!(got, *expected, "{op:?} break={brk}");
        }
        assert!(sas_need(PutBlob, false).unwrap().create_only_needs_absent);
        assert!(
            !sas_need(SnapshotBlob, false)
                .unwrap()
                .create_only_needs_absent
        );
    }

    #[test]
    fn delete_blob_letters_table() {
        // (versionid=, deletetype=permanent, letters)
        let cases = [
            (false, false, "d"),
            (true, false, "x"),
            (false, true, "y"),
            (true, true, "y"),
        ];
        for (version, permanent, want) in cases {
            assert_eq!(
                delete_blob_letters(version, permanent),
                want,
                "{version} {permanent}"
            );
        }
    }
}
