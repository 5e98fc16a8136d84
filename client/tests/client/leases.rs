//! Lease handles on blobs (docs/wire/leases.md).

use std::time::Duration;

use stowage_client::{
    Conditions, ErrorCode, LeaseDuration, LeaseDurationType, LeaseId, LeaseState, Metadata,
    UploadOptions,
};

use super::support::Env;

#[tokio::test]
async fn a_lease_handle_acquires_renews_changes_and_releases() {
    let env = Env::start().await;
    let container = env.container("leases").await;
    let blob = container.blob("locked");
    blob.upload(&b"x"[..], &UploadOptions::default())
        .await
        .unwrap();

    let mut lease = blob.lease(None);
    let granted = lease
        .acquire(LeaseDuration::Fixed(Duration::from_secs(15)))
        .await
        .unwrap();
    assert_eq!(granted, lease.id());
    // Acquiring again with the same id (a retry) succeeds.
    lease
        .acquire(LeaseDuration::Fixed(Duration::from_secs(15)))
        .await
        .unwrap();
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Leased));
    assert_eq!(props.lease.duration, Some(LeaseDurationType::Fixed));

    // Another holder is refused with a code callers can match.
    let other = blob.lease(None);
    let err = other.acquire(LeaseDuration::Infinite).await.unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert!(err.has_code(&ErrorCode::LeaseAlreadyPresent), "{err}");

    // Writes need the id.
    let err = blob
        .set_metadata(&Metadata::new(), &Conditions::new())
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::LeaseIdMissing), "{err}");
    let wrong = Conditions::new().with_lease(LeaseId::new_random());
    let err = blob
        .set_metadata(&Metadata::new(), &wrong)
        .await
        .unwrap_err();
    assert!(
        err.has_code(&ErrorCode::LeaseIdMismatchWithBlobOperation),
        "{err}"
    );
    blob.set_metadata(&Metadata::new(), &Conditions::new().with_lease(lease.id()))
        .await
        .unwrap();

    // Renewing keeps it past its original expiry.
    env.advance(Duration::from_secs(10));
    lease.renew().await.unwrap();
    env.advance(Duration::from_secs(10));
    let err = other.acquire(LeaseDuration::Infinite).await.unwrap_err();
    assert!(err.has_code(&ErrorCode::LeaseAlreadyPresent));

    // Change the id: the handle follows, the old id no longer works.
    let old = lease.id();
    let new = LeaseId::new_random();
    lease.change(new).await.unwrap();
    assert_eq!(lease.id(), new);
    let err = blob.lease(Some(old)).renew().await.unwrap_err();
    assert!(
        err.has_code(&ErrorCode::LeaseIdMismatchWithLeaseOperation),
        "{err}"
    );

    lease.release().await.unwrap();
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Available));
    other.acquire(LeaseDuration::Infinite).await.unwrap();
}

#[tokio::test]
async fn a_fixed_lease_expires_with_the_clock_and_a_break_ends_any_lease() {
    let env = Env::start().await;
    let container = env.container("expiry").await;
    let blob = container.blob("locked");
    blob.upload(&b"x"[..], &UploadOptions::default())
        .await
        .unwrap();

    let first = blob.lease(None);
    first
        .acquire(LeaseDuration::Fixed(Duration::from_secs(15)))
        .await
        .unwrap();
    env.advance(Duration::from_secs(14));
    let second = blob.lease(None);
    assert!(second.acquire(LeaseDuration::Infinite).await.is_err());
    env.advance(Duration::from_secs(1));
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Expired));
    second.acquire(LeaseDuration::Infinite).await.unwrap();

    // Break with a period: breaking, then broken.
    let left = second
        .break_lease(Some(Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(left, Duration::from_secs(10));
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Breaking));
    let err = second.renew().await.unwrap_err();
    assert!(
        err.has_code(&ErrorCode::LeaseIsBrokenAndCannotBeRenewed),
        "{err}"
    );
    env.advance(Duration::from_secs(10));
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Broken));
    first.acquire(LeaseDuration::Infinite).await.unwrap();

    // Break at once; nothing left to break afterwards but a broken lease.
    assert_eq!(
        first.break_lease(Some(Duration::ZERO)).await.unwrap(),
        Duration::ZERO
    );
    first.release().await.unwrap();
    let err = first.break_lease(None).await.unwrap_err();
    assert!(
        err.has_code(&ErrorCode::LeaseNotPresentWithLeaseOperation),
        "{err}"
    );
}

#[tokio::test]
async fn lease_actions_carry_the_handle_s_conditions() {
    let env = Env::start().await;
    let container = env.container("leasecond").await;
    let blob = container.blob("x");
    let written = blob
        .upload(&b"x"[..], &UploadOptions::default())
        .await
        .unwrap();
    blob.upload(&b"y"[..], &UploadOptions::default())
        .await
        .unwrap();

    let stale = blob
        .lease(None)
        .with_conditions(Conditions::new().with_if_match(written.etag));
    let err = stale.acquire(LeaseDuration::Infinite).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    assert!(err.has_code(&ErrorCode::ConditionNotMet));

    let current = blob.properties(&Conditions::new()).await.unwrap().etag;
    let fresh = blob
        .lease(None)
        .with_conditions(Conditions::new().with_if_match(current));
    fresh.acquire(LeaseDuration::Infinite).await.unwrap();
    fresh.release().await.unwrap();
}
