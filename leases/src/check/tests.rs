//! Every cell of docs/wire/leases.md#writes-to-a-leased-blob, docs/wire/leases.md#reads-of-a-leased-blob and docs/wire/leases.md#leased-containers, transcribed table by
//! table. "allowed" is `Keep`, "allowed; lease forgotten" is `Clear`.

use super::*;
use crate::fixtures::{A, B, Start, secs};
use crate::{Clock, LeaseAction, apply};
use Start::{Available, Breaking, BrokenElapsed, BrokenNow, Expired, LeasedFixed, LeasedInfinite};

type Row = (Start, Option<LeaseId>, Result<CheckOutcome>);

const KEEP: Result<CheckOutcome> = Ok(CheckOutcome::Keep);
const CLEAR: Result<CheckOutcome> = Ok(CheckOutcome::Clear);

fn run(access: Access, resource: Resource, table: &[Row]) {
    // Every (start, presented) pair appears exactly once.
    assert_eq!(table.len(), Start::ALL.len() * 3);
    for &(start, presented, expected) in table {
        let (clock, record) = start.build();
        let before = record.clone();
        let got = check(&record, presented.as_ref(), access, resource, clock.now());
        assert_eq!(
            got, expected,
            "{access:?} {resource:?} {start:?} presenting {presented:?}"
        );
        assert_eq!(record, before);
    }
}

#[test]
fn blob_write_rule_5_1() {
    let missing = Err(Error::LeaseIdMissing(Resource::Blob));
    let not_present = Err(Error::LeaseNotPresentWithBlobOperation);
    let mismatch = Err(Error::LeaseIdMismatchWithBlobOperation);
    let lost = Err(Error::LeaseLost(Resource::Blob));
    #[rustfmt::skip]
    run(Access::Write, Resource::Blob, &[
        (Available, None, KEEP),
        (LeasedFixed, None, missing),
        (LeasedInfinite, None, missing),
        (Breaking, None, missing),
        (BrokenNow, None, CLEAR),
        (BrokenElapsed, None, CLEAR),
        (Expired, None, CLEAR),

        (Available, Some(A), not_present),
        (LeasedFixed, Some(A), KEEP),
        (LeasedInfinite, Some(A), KEEP),
        (Breaking, Some(A), KEEP),
        (BrokenNow, Some(A), lost),
        (BrokenElapsed, Some(A), lost),
        (Expired, Some(A), lost),

        (Available, Some(B), not_present),
        (LeasedFixed, Some(B), mismatch),
        (LeasedInfinite, Some(B), mismatch),
        (Breaking, Some(B), mismatch),
        (BrokenNow, Some(B), lost),
        (BrokenElapsed, Some(B), lost),
        (Expired, Some(B), lost),
    ]);
}

#[test]
fn blob_read_rule_5_2() {
    let not_present = Err(Error::LeaseNotPresentWithBlobOperation);
    let mismatch = Err(Error::LeaseIdMismatchWithBlobOperation);
    let lost = Err(Error::LeaseLost(Resource::Blob));
    #[rustfmt::skip]
    run(Access::Read, Resource::Blob, &[
        (Available, None, KEEP),
        (LeasedFixed, None, KEEP),
        (LeasedInfinite, None, KEEP),
        (Breaking, None, KEEP),
        (BrokenNow, None, KEEP),
        (BrokenElapsed, None, KEEP),
        (Expired, None, KEEP),

        (Available, Some(A), not_present),
        (LeasedFixed, Some(A), KEEP),
        (LeasedInfinite, Some(A), KEEP),
        (Breaking, Some(A), KEEP),
        (BrokenNow, Some(A), lost),
        (BrokenElapsed, Some(A), lost),
        (Expired, Some(A), lost),

        (Available, Some(B), not_present),
        (LeasedFixed, Some(B), mismatch),
        (LeasedInfinite, Some(B), mismatch),
        (Breaking, Some(B), mismatch),
        (BrokenNow, Some(B), lost),
        (BrokenElapsed, Some(B), lost),
        (Expired, Some(B), lost),
    ]);
}

/// docs/wire/leases.md#leased-containers says "allowed" (not "lease forgotten") for Delete Container on a
/// broken or expired lease; the container and its record go away anyway, so
/// the write rule's `Clear` is the same answer.
#[test]
fn delete_container_rule_6() {
    let missing = Err(Error::LeaseIdMissing(Resource::Container));
    let not_present = Err(Error::LeaseNotPresentWithContainerOperation);
    let mismatch = Err(Error::LeaseIdMismatchWithContainerOperation);
    let lost = Err(Error::LeaseLost(Resource::Container));
    #[rustfmt::skip]
    run(Access::Write, Resource::Container, &[
        (Available, None, KEEP),
        (LeasedFixed, None, missing),
        (LeasedInfinite, None, missing),
        (Breaking, None, missing),
        (BrokenNow, None, CLEAR),
        (BrokenElapsed, None, CLEAR),
        (Expired, None, CLEAR),

        (Available, Some(A), not_present),
        (LeasedFixed, Some(A), KEEP),
        (LeasedInfinite, Some(A), KEEP),
        (Breaking, Some(A), KEEP),
        (BrokenNow, Some(A), lost),
        (BrokenElapsed, Some(A), lost),
        (Expired, Some(A), lost),

        (Available, Some(B), not_present),
        (LeasedFixed, Some(B), mismatch),
        (LeasedInfinite, Some(B), mismatch),
        (Breaking, Some(B), mismatch),
        (BrokenNow, Some(B), lost),
        (BrokenElapsed, Some(B), lost),
        (Expired, Some(B), lost),
    ]);
}

#[test]
fn other_container_operations_rule_6() {
    let not_present = Err(Error::LeaseNotPresentWithContainerOperation);
    let mismatch = Err(Error::LeaseIdMismatchWithContainerOperation);
    let lost = Err(Error::LeaseLost(Resource::Container));
    #[rustfmt::skip]
    run(Access::Read, Resource::Container, &[
        (Available, None, KEEP),
        (LeasedFixed, None, KEEP),
        (LeasedInfinite, None, KEEP),
        (Breaking, None, KEEP),
        (BrokenNow, None, KEEP),
        (BrokenElapsed, None, KEEP),
        (Expired, None, KEEP),

        (Available, Some(A), not_present),
        (LeasedFixed, Some(A), KEEP),
        (LeasedInfinite, Some(A), KEEP),
        (Breaking, Some(A), KEEP),
        (BrokenNow, Some(A), lost),
        (BrokenElapsed, Some(A), lost),
        (Expired, Some(A), lost),

        (Available, Some(B), not_present),
        (LeasedFixed, Some(B), mismatch),
        (LeasedInfinite, Some(B), mismatch),
        (Breaking, Some(B), mismatch),
        (BrokenNow, Some(B), lost),
        (BrokenElapsed, Some(B), lost),
        (Expired, Some(B), lost),
    ]);
}

#[test]
fn a_presented_id_matches_in_any_text_form() {
    let (clock, record) = Start::LeasedInfinite.build();
    let upper_braced = LeaseId::parse(&format!("{{{}}}", A.to_string().to_uppercase()))
        .expect("braced uppercase GUID");
    assert_eq!(
        check(
            &record,
            Some(&upper_braced),
            Access::Write,
            Resource::Blob,
            clock.now()
        ),
        KEEP
    );
}

#[test]
fn a_write_that_clears_leaves_a_blob_anyone_can_lease() {
    let (clock, record) = Start::BrokenNow.build();
    assert_eq!(
        check(&record, None, Access::Write, Resource::Blob, clock.now()),
        CLEAR
    );
    let cleared = LeaseRecord::default();
    assert_eq!(cleared.state(clock.now()), LeaseState::Available);
    let acquire = LeaseAction::Acquire {
        duration: crate::LeaseDuration::Infinite,
        proposed_id: Some(B),
    };
    assert!(apply(&cleared, &acquire, clock.now(), B, Resource::Blob).is_ok());
}

#[test]
fn the_holder_loses_write_access_exactly_at_expiry() {
    let (clock, record) = Start::LeasedFixed.build();
    let at = |d| clock.now() + d;
    let write = |presented: Option<&LeaseId>, now| {
        check(&record, presented, Access::Write, Resource::Blob, now)
    };
    let just_before = at(secs(20)) - std::time::Duration::from_millis(1);
    assert_eq!(write(Some(&A), just_before), KEEP);
    assert_eq!(
        write(None, just_before),
        Err(Error::LeaseIdMissing(Resource::Blob))
    );
    assert_eq!(
        write(Some(&A), at(secs(20))),
        Err(Error::LeaseLost(Resource::Blob))
    );
    assert_eq!(write(None, at(secs(20))), CLEAR);
}
