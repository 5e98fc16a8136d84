//! Copy Blob through the client: start a copy, follow its status, wait for
//! it, abort it; from the same server, from a second Stowage server and
//! from a source that stalls.

use std::sync::Arc;
use std::time::Duration;

use stowage_client::{
    Clock, Conditions, CopyOptions, CopyStatus, ErrorCode, Metadata, PublicAccess, UploadOptions,
};
use stowage_tests::TestServer;
use stowage_tests::sources::stalling_source;

use super::support::{Env, client_for, pattern};

#[tokio::test]
async fn a_copy_within_the_server_ends_at_once() {
    let env = Env::start().await;
    let container = env.container("copy").await;
    let source = container.blob("src");
    source
        .upload(&b"copied"[..], &UploadOptions::default())
        .await
        .unwrap();
    let dest = container.blob("dst");
    let info = dest
        .start_copy_from_url(
            &source.url(),
            &CopyOptions::default().with_metadata(Metadata::new().with("k", "v")),
        )
        .await
        .unwrap();
    assert_eq!(info.status, CopyStatus::Success);
    assert_eq!(info.version_id, None, "versioning is off");
    let status = dest.copy_status().await.unwrap().expect("copy properties");
    assert_eq!(status.id, info.copy_id);
    assert_eq!(status.status, CopyStatus::Success);
    assert_eq!(status.progress.as_deref(), Some("6/6"));
    let done = dest
        .wait_for_copy(&info.copy_id, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(done.status, CopyStatus::Success);
    assert_eq!(&dest.download_bytes().await.unwrap()[..], b"copied");
    // Nothing left to abort.
    let err = dest
        .abort_copy(&info.copy_id, &Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&ErrorCode::NoPendingCopyOperation),
        "{err:?}"
    );
    // A blob that was never a copy destination has no copy status.
    assert_eq!(source.copy_status().await.unwrap(), None);
}

#[tokio::test]
async fn a_copy_from_another_server_is_polled_until_it_succeeds() {
    let source_server = TestServer::start().await;
    let source_env = Env::on(source_server).await;
    let public = source_env.service.container("public");
    public
        .create(&Metadata::new(), Some(PublicAccess::Blob))
        .await
        .unwrap();
    let data = pattern(300_000);
    let source = public.blob("big");
    source
        .upload(data.clone(), &UploadOptions::default())
        .await
        .unwrap();

    let env = Env::start().await;
    let container = env.container("remote").await;
    let dest = container.blob("dst");
    let info = dest
        .start_copy_from_url(&source.url(), &CopyOptions::default())
        .await
        .unwrap();
    // A copy from another host always answers pending.
    assert_eq!(info.status, CopyStatus::Pending);
    // The wait sleeps on the client's clock: a ticker moves it (and only
    // it) while the fetch runs in real time.
    let clock = env.clock.clone();
    let ticker = tokio::spawn(async move {
        loop {
            // Twice real time: far from the 15 minutes of skew the server
            // accepts in `x-ms-date`, however slow the machine.
            tokio::time::sleep(Duration::from_millis(5)).await;
            clock.advance(Duration::from_millis(10));
        }
    });
    let done = dest
        .wait_for_copy(&info.copy_id, Duration::from_millis(10))
        .await
        .unwrap();
    ticker.abort();
    assert_eq!(done.status, CopyStatus::Success, "{done:?}");
    assert_eq!(done.source.as_deref(), Some(source.url().as_str()));
    assert_eq!(&dest.download_bytes().await.unwrap()[..], &data[..]);
}

#[tokio::test]
async fn a_pending_copy_is_aborted() {
    let env = Env::start().await;
    let container = env.container("abort").await;
    let dest = container.blob("dst");
    let info = dest
        .start_copy_from_url(&stalling_source("src/blob").await, &CopyOptions::default())
        .await
        .unwrap();
    assert_eq!(info.status, CopyStatus::Pending);
    let status = dest.copy_status().await.unwrap().unwrap();
    assert_eq!(status.status, CopyStatus::Pending);

    let err = dest
        .abort_copy("00000000-0000-0000-0000-000000000000", &Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(&ErrorCode::CopyIdMismatch), "{err:?}");
    dest.abort_copy(&info.copy_id, &Conditions::new())
        .await
        .unwrap();
    let done = dest
        .wait_for_copy(&info.copy_id, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(done.status, CopyStatus::Aborted);
    // A copy id that is not the blob's last copy is an error, not a wait.
    let other = client_for(
        &env.server.base,
        Arc::new(stowage_client::ManualClock::new(env.clock.now())),
    );
    let err = other
        .container(container.name())
        .blob("dst")
        .wait_for_copy("another", Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, stowage_client::Error::InvalidResponse(_)),
        "{err:?}"
    );
}
