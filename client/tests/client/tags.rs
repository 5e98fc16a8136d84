//! Blob index tags: set and get, tags on upload, the if-tags condition, and
//! Find Blobs by Tags page by page at both scopes.

use stowage_client::{Conditions, ErrorCode, Tags, UploadOptions};

use super::support::Env;

#[tokio::test]
async fn tags_round_trip_and_guard_writes() {
    let env = Env::start().await;
    let container = env.container("tags").await;
    let blob = container.blob("b");
    let options =
        UploadOptions::default().with_tags(Tags::from([("state", "new"), ("p", "a/b c")]));
    let written = blob.upload(&b"x"[..], &options).await.unwrap();
    let tags = blob.get_tags(&Conditions::new()).await.unwrap();
    assert_eq!(tags, Tags::from([("state", "new"), ("p", "a/b c")]));

    blob.set_tags(&Tags::from([("state", "ready")]), &Conditions::new())
        .await
        .unwrap();
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.etag, written.etag, "tags leave the ETag alone");

    let refused = blob
        .upload(
            &b"y"[..],
            &UploadOptions::default()
                .with_conditions(Conditions::new().with_if_tags("\"state\" = 'done'")),
        )
        .await
        .unwrap_err();
    assert!(refused.has_code(&ErrorCode::ConditionNotMet), "{refused}");
    let err = blob
        .set_tags(&Tags::from([("bad!", "v")]), &Conditions::new())
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::InvalidTag), "{err}");
    blob.upload(
        &b"y"[..],
        &UploadOptions::default()
            .with_conditions(Conditions::new().with_if_tags("\"state\" = 'ready'")),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn find_blobs_by_tags_pages_at_both_scopes() {
    let env = Env::start().await;
    let container = env.container("find").await;
    for i in 0..5 {
        let tags = Tags::from([("kind", if i % 2 == 0 { "even" } else { "odd" })]);
        container
            .blob(&format!("b{i}"))
            .upload(&b"x"[..], &UploadOptions::default().with_tags(tags))
            .await
            .unwrap();
    }
    let expr = "\"kind\" = 'even'";
    let mut names = Vec::new();
    let mut marker = None;
    loop {
        let page = env
            .service
            .find_blobs_by_tags(expr, marker.as_deref(), Some(2))
            .await
            .unwrap();
        assert!(page.blobs.len() <= 2);
        names.extend(page.blobs.into_iter().map(|b| b.name));
        marker = page.next_marker;
        if marker.is_none() {
            break;
        }
    }
    names.sort();
    assert_eq!(names, ["b0", "b2", "b4"]);
    let page = container
        .find_blobs_by_tags("\"kind\" = 'odd'", None, None)
        .await
        .unwrap();
    assert_eq!(page.blobs.len(), 2);
    assert_eq!(page.blobs[0].tags.get("kind"), Some("odd"));
}
