//! End-to-end tests: blob and container leases over HTTP (docs/wire/leases.md,
//! docs/wire/blobs.md and docs/wire/containers.md).
//!
//! Most rules are tables run against both a blob and a container. Every row
//! gets a fresh resource, put into the row's lease state with lease id `A`.
//! Time moves only through the server's manual clock.

use std::fmt::Debug;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use stowage_tests::{Client, Request, Response, TestServer, unique};
use tokio::sync::Notify;

use Granted::{Absent, Generated, Id};
use Outcome::{Allowed, Refused};
use State::{Available, Breaking, Broken, Expired, LeasedFixed, LeasedInfinite};

/// The id every fixture's lease is acquired with.
const A: &str = "a1a1a1a1-0000-4000-8000-00000000000a";
/// Another id, never held unless a row says so.
const B: &str = "b2b2b2b2-0000-4000-8000-00000000000b";
/// A third id.
const C: &str = "c3c3c3c3-0000-4000-8000-00000000000c";

/// The blob a blob fixture leases.
const BLOB: &str = "leased.txt";
/// Its content.
const CONTENT: &[u8] = b"leased content";

/// One request header, for the tables.
type Header = (&'static str, &'static str);

const ACQUIRE: Header = ("x-ms-lease-action", "acquire");
const RENEW: Header = ("x-ms-lease-action", "renew");
const CHANGE: Header = ("x-ms-lease-action", "change");
const RELEASE: Header = ("x-ms-lease-action", "release");
const BREAK: Header = ("x-ms-lease-action", "break");
const FOR_15: Header = ("x-ms-lease-duration", "15");
const FOR_60: Header = ("x-ms-lease-duration", "60");
const FOREVER: Header = ("x-ms-lease-duration", "-1");
const ID_A: Header = ("x-ms-lease-id", A);
const ID_B: Header = ("x-ms-lease-id", B);
const PROPOSE_A: Header = ("x-ms-proposed-lease-id", A);
const PROPOSE_B: Header = ("x-ms-proposed-lease-id", B);
const PROPOSE_C: Header = ("x-ms-proposed-lease-id", C);

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

/// What is leased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Blob,
    Container,
}

const KINDS: [Kind; 2] = [Kind::Blob, Kind::Container];

/// A lease state a fixture is put into, always with id `A` (spec docs/wire/leases.md#states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Never leased.
    Available,
    /// Acquired for 60 s.
    LeasedFixed,
    /// Acquired with duration -1.
    LeasedInfinite,
    /// Infinite lease broken with a 30 s period, just now.
    Breaking,
    /// Infinite lease broken without a period.
    Broken,
    /// 15 s lease, clock advanced 15 s.
    Expired,
}

const STATES: [State; 6] = [
    Available,
    LeasedFixed,
    LeasedInfinite,
    Breaking,
    Broken,
    Expired,
];

impl State {
    /// The lease properties a resource in this state reports (spec docs/wire/leases.md#states).
    fn view(self) -> LeaseView {
        match self {
            Available => LeaseView::new("available", "unlocked", None),
            LeasedFixed => LeaseView::new("leased", "locked", Some("fixed")),
            LeasedInfinite => LeaseView::new("leased", "locked", Some("infinite")),
            Breaking => LeaseView::new("breaking", "locked", None),
            Broken => LeaseView::new("broken", "unlocked", None),
            Expired => LeaseView::new("expired", "unlocked", None),
        }
    }
}

/// `x-ms-lease-state`, `x-ms-lease-status`, `x-ms-lease-duration`.
#[derive(Debug, PartialEq, Eq)]
struct LeaseView {
    state: String,
    status: String,
    duration: Option<String>,
}

impl LeaseView {
    fn new(state: &str, status: &str, duration: Option<&str>) -> LeaseView {
        LeaseView {
            state: state.to_owned(),
            status: status.to_owned(),
            duration: duration.map(str::to_owned),
        }
    }

    /// From the response headers of Get Blob, Get Blob Properties or Get
    /// Container Properties.
    fn of(r: &Response) -> LeaseView {
        LeaseView {
            state: r.header("x-ms-lease-state").expect("x-ms-lease-state"),
            status: r.header("x-ms-lease-status").expect("x-ms-lease-status"),
            duration: r.header("x-ms-lease-duration"),
        }
    }

    /// From one `<Blob>` or `<Container>` entry of a listing.
    fn of_xml(entry: &str) -> LeaseView {
        LeaseView {
            state: element(entry, "LeaseState").expect("LeaseState").to_owned(),
            status: element(entry, "LeaseStatus")
                .expect("LeaseStatus")
                .to_owned(),
            duration: element(entry, "LeaseDuration").map(str::to_owned),
        }
    }
}

/// A leasable resource: a blob (in its own container) or a container.
struct Target {
    c: Client,
    kind: Kind,
    container: String,
}

impl Target {
    /// A fresh container, holding `BLOB` for a blob target.
    async fn new(server: &TestServer, kind: Kind) -> Target {
        let c = server.client();
        let container = unique("lease");
        c.create_container(&container).await;
        if kind == Kind::Blob {
            c.put_blob(&container, BLOB, CONTENT).await;
        }
        Target { c, kind, container }
    }

    /// A fresh target in `state`.
    async fn in_state(server: &TestServer, kind: Kind, state: State) -> Target {
        let t = Target::new(server, kind).await;
        t.enter(server, state).await;
        t
    }

    /// Puts a fresh target into `state` with id `A`, and checks it got there.
    async fn enter(&self, server: &TestServer, state: State) {
        let expect = |r: Response, status: u16| {
            assert_eq!(r.status, status, "entering {state:?}: {}", r.text());
        };
        match state {
            Available => {}
            LeasedFixed => expect(self.acquire("60", Some(A)).await, 201),
            LeasedInfinite => expect(self.acquire("-1", Some(A)).await, 201),
            Breaking => {
                expect(self.acquire("-1", Some(A)).await, 201);
                expect(self.break_lease(Some("30")).await, 202);
            }
            Broken => {
                expect(self.acquire("-1", Some(A)).await, 201);
                expect(self.break_lease(None).await, 202);
            }
            Expired => {
                expect(self.acquire("15", Some(A)).await, 201);
                server.clock.advance(Duration::from_secs(15));
            }
        }
        assert_eq!(self.view().await, state.view(), "entering {state:?}");
    }

    /// The resource: `/{c}/{b}` or `/{c}?restype=container`.
    fn path(&self) -> String {
        match self.kind {
            Kind::Blob => format!("/{}/{BLOB}", self.container),
            Kind::Container => format!("/{}?restype=container", self.container),
        }
    }

    /// Lease Blob or Lease Container.
    fn lease_path(&self) -> String {
        match self.kind {
            Kind::Blob => format!("/{}/{BLOB}?comp=lease", self.container),
            Kind::Container => format!("/{}?comp=lease&restype=container", self.container),
        }
    }

    /// A lease request with exactly these headers.
    async fn lease(&self, headers: &[(&str, &str)]) -> Response {
        let mut req = self.c.put(&self.lease_path());
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req.send().await
    }

    async fn acquire(&self, duration: &str, proposed: Option<&str>) -> Response {
        let mut headers = vec![
            ("x-ms-lease-action", "acquire"),
            ("x-ms-lease-duration", duration),
        ];
        if let Some(p) = proposed {
            headers.push(("x-ms-proposed-lease-id", p));
        }
        self.lease(&headers).await
    }

    async fn renew(&self, id: &str) -> Response {
        self.lease(&[("x-ms-lease-action", "renew"), ("x-ms-lease-id", id)])
            .await
    }

    async fn change(&self, id: &str, proposed: &str) -> Response {
        self.lease(&[
            ("x-ms-lease-action", "change"),
            ("x-ms-lease-id", id),
            ("x-ms-proposed-lease-id", proposed),
        ])
        .await
    }

    async fn release(&self, id: &str) -> Response {
        self.lease(&[("x-ms-lease-action", "release"), ("x-ms-lease-id", id)])
            .await
    }

    async fn break_lease(&self, period: Option<&str>) -> Response {
        let mut headers = vec![("x-ms-lease-action", "break")];
        if let Some(p) = period {
            headers.push(("x-ms-lease-break-period", p));
        }
        self.lease(&headers).await
    }

    /// HEAD of the resource (Get Blob Properties / Get Container Properties).
    async fn properties(&self) -> Response {
        let r = self.c.head(&self.path()).send().await;
        assert_eq!(r.status, 200, "HEAD {}", self.path());
        r
    }

    /// The lease as HEAD reports it.
    async fn view(&self) -> LeaseView {
        LeaseView::of(&self.properties().await)
    }
}

/// Adds `x-ms-lease-id` when `id` is given.
fn with_lease_id(req: Request, id: Option<&str>) -> Request {
    match id {
        Some(id) => req.header("x-ms-lease-id", id),
        None => req,
    }
}

/// Status first, then the error code, with the table row in the message.
fn assert_refused(r: &Response, status: u16, code: &str, context: &dyn Debug) {
    assert_eq!(r.status, status, "{context:?}: {}", r.text());
    assert_eq!(r.code().as_deref(), Some(code), "{context:?}: {}", r.text());
    r.assert_error(status, code);
}

/// A success status, with the table row in the message.
fn assert_status(r: &Response, status: u16, context: &dyn Debug) {
    assert_eq!(r.status, status, "{context:?}: {}", r.text());
}

/// True if `id` is a server-generated id: a lowercase hyphenated UUID v4.
fn is_generated_id(id: &str) -> bool {
    let parsed = uuid::Uuid::parse_str(id);
    id.len() == 36
        && id == id.to_ascii_lowercase()
        && parsed.is_ok_and(|u| u.get_version_num() == 4)
}

/// Whether two GUID texts denote the same value.
fn same_guid(a: &str, b: &str) -> bool {
    let digits = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_hexdigit)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    digits(a) == digits(b)
}

/// The text of the first `<name>` element in `xml`.
fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&format!("</{name}>"))?;
    Some(&xml[start..start + len])
}

/// The `<tag>` entries of a listing whose `<Name>` is `name`.
fn entries<'a>(xml: &'a str, tag: &str, name: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let wanted = format!("<Name>{name}</Name>");
    xml.split(open.as_str())
        .skip(1)
        .map(|s| s.split(close.as_str()).next().unwrap_or(s))
        .filter(|s| s.contains(&wanted))
        .collect()
}

/// The single `<tag>` entry named `name`.
fn entry<'a>(xml: &'a str, tag: &str, name: &str) -> &'a str {
    let found = entries(xml, tag, name);
    assert_eq!(found.len(), 1, "one <{tag}> named {name} in {xml}");
    found[0]
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#actions: every action, both resources
// ---------------------------------------------------------------------------

#[tokio::test]
async fn acquire_is_201_with_a_generated_lowercase_v4_lease_id() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        let r = t.acquire("15", None).await;
        assert_status(&r, 201, &kind);
        let id = r.header("x-ms-lease-id").expect("x-ms-lease-id");
        assert!(is_generated_id(&id), "{kind:?}: generated id {id}");
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?}");
        assert_status(&t.renew(&id).await, 200, &kind);

        let other = Target::new(&server, kind).await;
        let second = other.acquire("15", None).await;
        assert_status(&second, 201, &kind);
        assert_ne!(second.header("x-ms-lease-id"), Some(id), "ids are random");
    }
}

#[tokio::test]
async fn acquire_with_a_proposed_id_grants_that_id() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        let r = t.acquire("-1", Some(A)).await;
        assert_status(&r, 201, &kind);
        assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(A), "{kind:?}");
        assert_eq!(t.view().await, LeasedInfinite.view(), "{kind:?}");
        assert_status(&t.renew(A).await, 200, &kind);
    }
}

#[tokio::test]
async fn renew_is_200_with_the_lease_id_and_restarts_a_fixed_lease_from_now() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        assert_status(&t.acquire("15", Some(A)).await, 201, &kind);
        server.clock.advance(Duration::from_secs(10));
        let r = t.renew(A).await;
        assert_status(&r, 200, &kind);
        assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(A), "{kind:?}");
        // 20 s after acquire, 10 s after renew: still held for 15 s from renew.
        server.clock.advance(Duration::from_secs(10));
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?}");
        server.clock.advance(Duration::from_secs(5));
        assert_eq!(t.view().await, Expired.view(), "{kind:?}");
    }
}

#[tokio::test]
async fn change_is_200_with_the_new_id_and_keeps_the_duration_and_expiry() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        assert_status(&t.acquire("15", Some(A)).await, 201, &kind);
        server.clock.advance(Duration::from_secs(10));
        let r = t.change(A, B).await;
        assert_status(&r, 200, &kind);
        assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(B), "{kind:?}");
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?}");
        // The old id is gone.
        assert_refused(
            &t.renew(A).await,
            409,
            "LeaseIdMismatchWithLeaseOperation",
            &kind,
        );
        // The expiry did not move: acquired at 0, expires at 15.
        server.clock.advance(Duration::from_secs(5));
        assert_eq!(t.view().await, Expired.view(), "{kind:?}");
        assert_status(&t.renew(B).await, 200, &kind);
    }
}

#[tokio::test]
async fn release_is_200_without_a_lease_id_and_leaves_the_resource_available() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedFixed).await;
        let r = t.release(A).await;
        assert_status(&r, 200, &kind);
        assert_eq!(r.header("x-ms-lease-id"), None, "{kind:?}");
        assert_eq!(t.view().await, Available.view(), "{kind:?}");
        // Anyone may acquire now.
        assert_status(&t.acquire("15", Some(B)).await, 201, &kind);
    }
}

#[tokio::test]
async fn break_is_202_with_lease_time_and_needs_no_lease_id() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        let r = t.break_lease(Some("10")).await;
        assert_status(&r, 202, &kind);
        assert_eq!(
            r.header("x-ms-lease-time").as_deref(),
            Some("10"),
            "{kind:?}"
        );
        assert_eq!(r.header("x-ms-lease-id"), None, "{kind:?}");
        assert_eq!(t.view().await, Breaking.view(), "{kind:?}");

        // A lease id sent with break is not used, even a wrong one.
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        let r = t.lease(&[BREAK, ID_B]).await;
        assert_status(&r, 202, &kind);
        assert_eq!(
            r.header("x-ms-lease-time").as_deref(),
            Some("0"),
            "{kind:?}"
        );
        assert_eq!(t.view().await, Broken.view(), "{kind:?}");
    }
}

/// What a successful lease action answers in `x-ms-lease-id`.
#[derive(Clone, Copy, Debug)]
enum Granted {
    /// This id.
    Id(&'static str),
    /// A fresh server-generated id.
    Generated,
    /// No `x-ms-lease-id` header.
    Absent,
}

/// (state before, request, status, `x-ms-lease-id`, state after).
type SuccessRow = (State, &'static [Header], u16, Granted, State);

/// The success cells of docs/wire/leases.md#actions (break has its own table).
#[rustfmt::skip]
const SUCCESSES: &[SuccessRow] = &[
    // docs/wire/leases.md#actions acquire
    (Available,      &[ACQUIRE, FOR_15],             201, Generated, LeasedFixed),
    (Available,      &[ACQUIRE, FOREVER, PROPOSE_A], 201, Id(A),     LeasedInfinite),
    (Available,      &[ACQUIRE, FOR_60, PROPOSE_B],  201, Id(B),     LeasedFixed),
    (LeasedFixed,    &[ACQUIRE, FOREVER, PROPOSE_A], 201, Id(A),     LeasedInfinite),
    (LeasedInfinite, &[ACQUIRE, FOR_15, PROPOSE_A],  201, Id(A),     LeasedFixed),
    (Broken,         &[ACQUIRE, FOR_15],             201, Generated, LeasedFixed),
    (Broken,         &[ACQUIRE, FOR_15, PROPOSE_A],  201, Id(A),     LeasedFixed),
    (Broken,         &[ACQUIRE, FOREVER, PROPOSE_B], 201, Id(B),     LeasedInfinite),
    (Expired,        &[ACQUIRE, FOR_60],             201, Generated, LeasedFixed),
    (Expired,        &[ACQUIRE, FOR_15, PROPOSE_A],  201, Id(A),     LeasedFixed),
    (Expired,        &[ACQUIRE, FOR_15, PROPOSE_B],  201, Id(B),     LeasedFixed),
    // docs/wire/leases.md#actions renew
    (LeasedFixed,    &[RENEW, ID_A],                 200, Id(A),     LeasedFixed),
    (LeasedInfinite, &[RENEW, ID_A],                 200, Id(A),     LeasedInfinite),
    (Expired,        &[RENEW, ID_A],                 200, Id(A),     LeasedFixed),
    // docs/wire/leases.md#actions change; the last row retries a change that already happened
    (LeasedFixed,    &[CHANGE, ID_A, PROPOSE_B],     200, Id(B),     LeasedFixed),
    (LeasedInfinite, &[CHANGE, ID_A, PROPOSE_B],     200, Id(B),     LeasedInfinite),
    (LeasedFixed,    &[CHANGE, ID_B, PROPOSE_A],     200, Id(A),     LeasedFixed),
    // docs/wire/leases.md#actions release
    (LeasedFixed,    &[RELEASE, ID_A],               200, Absent,    Available),
    (LeasedInfinite, &[RELEASE, ID_A],               200, Absent,    Available),
    (Breaking,       &[RELEASE, ID_A],               200, Absent,    Available),
    (Broken,         &[RELEASE, ID_A],               200, Absent,    Available),
    (Expired,        &[RELEASE, ID_A],               200, Absent,    Available),
];

#[tokio::test]
async fn lease_actions_succeed_from_every_state_the_tables_allow() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for &(from, headers, status, granted, to) in SUCCESSES {
            let context = (kind, from, headers);
            let t = Target::in_state(&server, kind, from).await;
            let r = t.lease(headers).await;
            assert_status(&r, status, &context);
            let returned = r.header("x-ms-lease-id");
            let holder = match granted {
                Id(id) => {
                    assert_eq!(returned.as_deref(), Some(id), "{context:?}");
                    Some(id.to_owned())
                }
                Generated => {
                    let id = returned.expect("x-ms-lease-id");
                    assert!(is_generated_id(&id) && !same_guid(&id, A), "{context:?}");
                    Some(id)
                }
                Absent => {
                    assert_eq!(returned, None, "{context:?}");
                    None
                }
            };
            assert_eq!(t.view().await, to.view(), "{context:?}");
            match holder {
                // The holder's id works, and `A`, if replaced, no longer does.
                Some(id) => {
                    if !same_guid(&id, A) {
                        assert_refused(
                            &t.renew(A).await,
                            409,
                            "LeaseIdMismatchWithLeaseOperation",
                            &context,
                        );
                    }
                    assert_status(&t.renew(&id).await, 200, &context);
                }
                // Released: a second release finds nothing.
                None => assert_refused(
                    &t.release(A).await,
                    409,
                    "LeaseIdMismatchWithLeaseOperation",
                    &context,
                ),
            }
        }
    }
}

/// (state, request, 409 code).
type RefusalRow = (State, &'static [Header], &'static str);

/// A representative set of the 409 cells of docs/wire/leases.md#actions.
#[rustfmt::skip]
const REFUSALS: &[RefusalRow] = &[
    // docs/wire/leases.md#actions acquire
    (LeasedFixed,    &[ACQUIRE, FOR_15],            "LeaseAlreadyPresent"),
    (LeasedInfinite, &[ACQUIRE, FOR_15, PROPOSE_B], "LeaseAlreadyPresent"),
    (Breaking,       &[ACQUIRE, FOR_15],            "LeaseAlreadyPresent"),
    (Breaking,       &[ACQUIRE, FOR_15, PROPOSE_B], "LeaseAlreadyPresent"),
    (Breaking,       &[ACQUIRE, FOR_15, PROPOSE_A], "LeaseIsBreakingAndCannotBeAcquired"),
    // docs/wire/leases.md#actions renew
    (Available,      &[RENEW, ID_A],                "LeaseIdMismatchWithLeaseOperation"),
    (LeasedFixed,    &[RENEW, ID_B],                "LeaseIdMismatchWithLeaseOperation"),
    (Breaking,       &[RENEW, ID_A],                "LeaseIsBrokenAndCannotBeRenewed"),
    (Breaking,       &[RENEW, ID_B],                "LeaseIdMismatchWithLeaseOperation"),
    (Broken,         &[RENEW, ID_A],                "LeaseIsBrokenAndCannotBeRenewed"),
    (Broken,         &[RENEW, ID_B],                "LeaseIdMismatchWithLeaseOperation"),
    (Expired,        &[RENEW, ID_B],                "LeaseIdMismatchWithLeaseOperation"),
    // docs/wire/leases.md#actions change
    (Available,      &[CHANGE, ID_A, PROPOSE_B],    "LeaseNotPresentWithLeaseOperation"),
    (LeasedFixed,    &[CHANGE, ID_B, PROPOSE_C],    "LeaseIdMismatchWithLeaseOperation"),
    (Breaking,       &[CHANGE, ID_A, PROPOSE_B],    "LeaseIsBreakingAndCannotBeChanged"),
    (Breaking,       &[CHANGE, ID_B, PROPOSE_A],    "LeaseIdMismatchWithLeaseOperation"),
    (Broken,         &[CHANGE, ID_A, PROPOSE_B],    "LeaseNotPresentWithLeaseOperation"),
    (Expired,        &[CHANGE, ID_A, PROPOSE_B],    "LeaseNotPresentWithLeaseOperation"),
    // docs/wire/leases.md#actions release
    (Available,      &[RELEASE, ID_A],              "LeaseIdMismatchWithLeaseOperation"),
    (LeasedInfinite, &[RELEASE, ID_B],              "LeaseIdMismatchWithLeaseOperation"),
    (Breaking,       &[RELEASE, ID_B],              "LeaseIdMismatchWithLeaseOperation"),
    (Expired,        &[RELEASE, ID_B],              "LeaseIdMismatchWithLeaseOperation"),
    // docs/wire/leases.md#actions break
    (Available,      &[BREAK],                      "LeaseNotPresentWithLeaseOperation"),
    (Available,      &[BREAK, ("x-ms-lease-break-period", "0")],
                                                    "LeaseNotPresentWithLeaseOperation"),
];

#[tokio::test]
async fn lease_actions_refused_by_the_state_are_409_with_the_exact_code_and_change_nothing() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for &(state, headers, code) in REFUSALS {
            let context = (kind, state, headers);
            let t = Target::in_state(&server, kind, state).await;
            assert_refused(&t.lease(headers).await, 409, code, &context);
            assert_eq!(t.view().await, state.view(), "{context:?}");
            // The record still names `A`.
            match state {
                Available => {}
                LeasedFixed | LeasedInfinite | Expired => {
                    assert_status(&t.renew(A).await, 200, &context);
                }
                Breaking | Broken => {
                    assert_status(&t.release(A).await, 200, &context);
                }
            }
        }
    }
}

#[tokio::test]
async fn renew_after_break_is_409_lease_is_broken_and_cannot_be_renewed() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedFixed).await;
        assert_status(&t.break_lease(Some("0")).await, 202, &kind);
        assert_refused(
            &t.renew(A).await,
            409,
            "LeaseIsBrokenAndCannotBeRenewed",
            &kind,
        );
        assert_eq!(t.view().await, Broken.view(), "{kind:?}");
    }
}

#[tokio::test]
async fn acquire_with_the_holders_id_restarts_the_clock_with_the_new_duration() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        assert_status(&t.acquire("15", Some(A)).await, 201, &kind);
        server.clock.advance(Duration::from_secs(10));
        assert_status(&t.acquire("30", Some(A)).await, 201, &kind);
        // 29 s after the second acquire (39 s after the first): still held.
        server.clock.advance(Duration::from_secs(29));
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?}");
        server.clock.advance(Duration::from_secs(1));
        assert_eq!(t.view().await, Expired.view(), "{kind:?}");
    }
}

/// (state, seconds the clock moves before the break, break period,
/// expected `x-ms-lease-time`; 0 means broken at once).
type BreakRow = (State, u64, Option<&'static str>, u64);

/// docs/wire/leases.md#actions. Fixed fixtures are 60 s leases; a breaking fixture has q = 30 s.
#[rustfmt::skip]
const BREAKS: &[BreakRow] = &[
    (LeasedInfinite, 0,  None,       0),
    (LeasedInfinite, 0,  Some("0"),  0),
    (LeasedInfinite, 0,  Some("10"), 10),
    (LeasedInfinite, 0,  Some("60"), 60),
    // A fixed lease breaks at its expiry unless a shorter period is given.
    (LeasedFixed,    0,  None,       60),
    (LeasedFixed,    50, None,       10),
    (LeasedFixed,    0,  Some("30"), 30),
    (LeasedFixed,    50, Some("30"), 10),
    (LeasedFixed,    10, Some("0"),  0),
    // Breaking again: a shorter period shortens the break, a longer one
    // does not lengthen it.
    (Breaking,       10, None,       20),
    (Breaking,       10, Some("5"),  5),
    (Breaking,       10, Some("50"), 20),
    (Breaking,       10, Some("0"),  0),
    (Broken,         0,  None,       0),
    (Broken,         0,  Some("30"), 0),
    (Expired,        0,  None,       0),
    (Expired,        0,  Some("30"), 0),
];

#[tokio::test]
async fn break_answers_the_time_left_and_the_lease_is_broken_exactly_then() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for &(state, elapsed, period, time) in BREAKS {
            let context = (kind, state, elapsed, period);
            let t = Target::in_state(&server, kind, state).await;
            server.clock.advance(Duration::from_secs(elapsed));
            let r = t.break_lease(period).await;
            assert_status(&r, 202, &context);
            let expected = time.to_string();
            assert_eq!(
                r.header("x-ms-lease-time").as_deref(),
                Some(expected.as_str()),
                "{context:?}"
            );
            if time > 0 {
                assert_eq!(t.view().await, Breaking.view(), "{context:?}");
                server.clock.advance(Duration::from_millis(time * 1000 - 1));
                assert_eq!(t.view().await, Breaking.view(), "{context:?}");
                server.clock.advance(Duration::from_millis(1));
            }
            assert_eq!(t.view().await, Broken.view(), "{context:?}");
            // A broken lease can be taken by anyone.
            assert_status(&t.acquire("15", Some(C)).await, 201, &context);
        }
    }
}

#[tokio::test]
async fn break_lease_time_is_rounded_to_the_nearest_second() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for (elapsed_ms, time) in [(10_400, "50"), (10_600, "49")] {
            let t = Target::in_state(&server, kind, LeasedFixed).await;
            server.clock.advance(Duration::from_millis(elapsed_ms));
            let r = t.break_lease(None).await;
            assert_status(&r, 202, &(kind, elapsed_ms));
            assert_eq!(
                r.header("x-ms-lease-time").as_deref(),
                Some(time),
                "{kind:?} after {elapsed_ms} ms"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#actions: time passing
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_15_second_lease_is_leased_at_14_999_seconds_and_expired_at_15() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        assert_status(&t.acquire("15", Some(A)).await, 201, &kind);
        server.clock.advance(Duration::from_secs(14));
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?} +14 s");
        server.clock.advance(Duration::from_millis(999));
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?} +14.999 s");
        server.clock.advance(Duration::from_millis(1));
        assert_eq!(t.view().await, Expired.view(), "{kind:?} +15 s");
        // Still expired much later, and the id is remembered until a write.
        server.clock.advance(Duration::from_secs(3600));
        assert_eq!(t.view().await, Expired.view(), "{kind:?} +1 h");
        assert_status(&t.renew(A).await, 200, &kind);
        assert_eq!(t.view().await, LeasedFixed.view(), "{kind:?}");
    }
}

#[tokio::test]
async fn a_10_second_break_is_breaking_at_9_999_seconds_and_broken_at_10() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        assert_status(&t.break_lease(Some("10")).await, 202, &kind);
        server.clock.advance(Duration::from_millis(9_999));
        assert_eq!(t.view().await, Breaking.view(), "{kind:?}");
        server.clock.advance(Duration::from_millis(1));
        assert_eq!(t.view().await, Broken.view(), "{kind:?}");
    }
}

#[tokio::test]
async fn an_infinite_lease_never_expires() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        server.clock.advance(Duration::from_secs(400 * 24 * 3600));
        assert_eq!(t.view().await, LeasedInfinite.view(), "{kind:?}");
        assert_status(&t.renew(A).await, 200, &kind);
    }
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#request-headers: header validation
// ---------------------------------------------------------------------------

/// (request, 400 code, `HeaderName`).
type BadRow = (&'static [Header], &'static str, &'static str);

#[rustfmt::skip]
const BAD_HEADERS: &[BadRow] = &[
    (&[FOR_15],                                   "MissingRequiredHeader", "x-ms-lease-action"),
    (&[("x-ms-lease-action", "Acquire"), FOR_15], "InvalidHeaderValue",    "x-ms-lease-action"),
    (&[("x-ms-lease-action", "BREAK")],           "InvalidHeaderValue",    "x-ms-lease-action"),
    (&[("x-ms-lease-action", "steal"), FOR_15],   "InvalidHeaderValue",    "x-ms-lease-action"),
    (&[ACQUIRE],                                  "MissingRequiredHeader", "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "14")],   "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "61")],   "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "0")],    "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "-2")],   "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "ten")],  "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[ACQUIRE, ("x-ms-lease-duration", "15.5")], "InvalidHeaderValue",    "x-ms-lease-duration"),
    (&[BREAK, ("x-ms-lease-break-period", "-1")], "InvalidHeaderValue",    "x-ms-lease-break-period"),
    (&[BREAK, ("x-ms-lease-break-period", "61")], "InvalidHeaderValue",    "x-ms-lease-break-period"),
    (&[BREAK, ("x-ms-lease-break-period", "x")],  "InvalidHeaderValue",    "x-ms-lease-break-period"),
    (&[RENEW],                                    "MissingRequiredHeader", "x-ms-lease-id"),
    (&[RELEASE],                                  "MissingRequiredHeader", "x-ms-lease-id"),
    (&[CHANGE, PROPOSE_B],                        "MissingRequiredHeader", "x-ms-lease-id"),
    (&[CHANGE, ID_A],                             "MissingRequiredHeader", "x-ms-proposed-lease-id"),
    (&[RENEW, ("x-ms-lease-id", "not-a-guid")],   "InvalidHeaderValue",    "x-ms-lease-id"),
    // 31 hex digits; a non-hex digit; too short.
    (&[RENEW, ("x-ms-lease-id", "a1a1a1a100004000800000000000000")],
                                                  "InvalidHeaderValue",    "x-ms-lease-id"),
    (&[RELEASE, ("x-ms-lease-id", "g1a1a1a1-0000-4000-8000-00000000000a")],
                                                  "InvalidHeaderValue",    "x-ms-lease-id"),
    (&[CHANGE, ("x-ms-lease-id", "12345"), PROPOSE_B],
                                                  "InvalidHeaderValue",    "x-ms-lease-id"),
    // An unclosed brace.
    (&[CHANGE, ID_A, ("x-ms-proposed-lease-id", "{b2b2b2b2-0000-4000-8000-00000000000b")],
                                                  "InvalidHeaderValue",    "x-ms-proposed-lease-id"),
    (&[ACQUIRE, FOR_15, ("x-ms-proposed-lease-id", "proposed")],
                                                  "InvalidHeaderValue",    "x-ms-proposed-lease-id"),
];

#[tokio::test]
async fn malformed_lease_requests_are_400_naming_the_header_and_read_no_state() {
    let server = TestServer::start().await;
    for kind in KINDS {
        // Leased by A: without validation first, several rows would be 409.
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        for &(headers, code, header) in BAD_HEADERS {
            let context = (kind, headers);
            let r = t.lease(headers).await;
            assert_refused(&r, 400, code, &context);
            let name = format!("<HeaderName>{header}</HeaderName>");
            assert!(r.text().contains(&name), "{context:?}: {}", r.text());
        }
        assert_eq!(t.view().await, LeasedInfinite.view(), "{kind:?}");
        assert_status(&t.renew(A).await, 200, &kind);
    }
}

#[tokio::test]
async fn malformed_lease_requests_are_400_even_when_the_target_is_missing() {
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("lease");
    c.create_container(&container).await;
    let paths = [
        format!("/{container}/missing-blob?comp=lease"),
        format!("/{}/blob?comp=lease", unique("missing")),
        format!("/{}?comp=lease&restype=container", unique("missing")),
    ];
    for path in &paths {
        for &(headers, code, _) in BAD_HEADERS {
            let mut req = c.put(path);
            for (name, value) in headers {
                req = req.header(name, value);
            }
            assert_refused(&req.send().await, 400, code, &(path, headers));
        }
    }
}

#[tokio::test]
async fn lease_duration_and_break_period_bounds_are_accepted() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for (duration, state) in [
            ("15", LeasedFixed),
            ("60", LeasedFixed),
            ("-1", LeasedInfinite),
        ] {
            let t = Target::new(&server, kind).await;
            assert_status(&t.acquire(duration, None).await, 201, &(kind, duration));
            assert_eq!(t.view().await, state.view(), "{kind:?} {duration}");
        }
        for (period, time) in [("0", "0"), ("60", "60")] {
            let t = Target::in_state(&server, kind, LeasedInfinite).await;
            let r = t.break_lease(Some(period)).await;
            assert_status(&r, 202, &(kind, period));
            assert_eq!(r.header("x-ms-lease-time").as_deref(), Some(time));
        }
    }
}

#[tokio::test]
async fn headers_of_other_actions_are_ignored() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        // A duration and a proposed id on renew change neither.
        let r = t
            .lease(&[
                RENEW,
                ID_A,
                FOR_15,
                PROPOSE_B,
                ("x-ms-lease-break-period", "5"),
            ])
            .await;
        assert_status(&r, 200, &kind);
        assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(A), "{kind:?}");
        assert_eq!(t.view().await, LeasedInfinite.view(), "{kind:?}");
        // A break period on release.
        let r = t
            .lease(&[RELEASE, ID_A, ("x-ms-lease-break-period", "5")])
            .await;
        assert_status(&r, 200, &kind);
        assert_eq!(t.view().await, Available.view(), "{kind:?}");
    }
}

#[tokio::test]
async fn lease_ids_are_equal_in_any_guid_text_form() {
    const FORMS: [&str; 5] = [
        "A1A1A1A1-0000-4000-8000-00000000000A",
        "a1a1a1a100004000800000000000000a",
        "{a1a1a1a1-0000-4000-8000-00000000000a}",
        "(A1A1A1A1-0000-4000-8000-00000000000A)",
        A,
    ];
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::in_state(&server, kind, LeasedInfinite).await;
        for form in FORMS {
            let r = t.renew(form).await;
            assert_status(&r, 200, &(kind, form));
            let id = r.header("x-ms-lease-id").expect("x-ms-lease-id");
            assert!(same_guid(&id, A), "{kind:?} {form}: answered {id}");
        }
        // A proposed id in another form names the same lease.
        let t = Target::new(&server, kind).await;
        let r = t.acquire("-1", Some(FORMS[2])).await;
        assert_status(&r, 201, &kind);
        let id = r.header("x-ms-lease-id").expect("x-ms-lease-id");
        assert!(same_guid(&id, A), "{kind:?}: answered {id}");
        assert_status(&t.release(FORMS[0]).await, 200, &kind);
    }
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#lease-blob: targets
// ---------------------------------------------------------------------------

#[tokio::test]
async fn leasing_a_missing_blob_or_container_is_404() {
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("lease");
    c.create_container(&container).await;
    let acquire = |path: String| {
        c.put(&path)
            .header("x-ms-lease-action", "acquire")
            .header("x-ms-lease-duration", "15")
            .send()
    };
    acquire(format!("/{container}/missing?comp=lease"))
        .await
        .assert_error(404, "BlobNotFound");
    acquire(format!("/{}/blob?comp=lease", unique("missing")))
        .await
        .assert_error(404, "ContainerNotFound");
    acquire(format!(
        "/{}?comp=lease&restype=container",
        unique("missing")
    ))
    .await
    .assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn leasing_a_snapshot_is_400_invalid_operation() {
    let server = TestServer::start().await;
    let t = Target::new(&server, Kind::Blob).await;
    let r = t.c.put(&format!("{}?comp=snapshot", t.path())).send().await;
    assert_eq!(r.status, 201, "snapshot: {}", r.text());
    let snapshot = r.header("x-ms-snapshot").expect("x-ms-snapshot");
    for action in [&[ACQUIRE, FOR_15][..], &[BREAK]] {
        let mut req =
            t.c.put(&format!("{}?comp=lease&snapshot={snapshot}", t.path()));
        for (name, value) in action {
            req = req.header(name, value);
        }
        assert_refused(&req.send().await, 400, "InvalidOperation", &action);
    }
    assert_eq!(t.view().await, Available.view());
}

#[tokio::test]
async fn a_snapshot_of_a_leased_blob_is_never_leased() {
    let server = TestServer::start().await;
    let t = Target::in_state(&server, Kind::Blob, LeasedInfinite).await;
    let r = t.c.put(&format!("{}?comp=snapshot", t.path())).send().await;
    assert_eq!(r.status, 201, "snapshot: {}", r.text());
    let snapshot = r.header("x-ms-snapshot").expect("x-ms-snapshot");
    let r =
        t.c.head(&format!("{}?snapshot={snapshot}", t.path()))
            .send()
            .await;
    assert_eq!(r.status, 200);
    assert_eq!(LeaseView::of(&r), Available.view());
    assert_eq!(t.view().await, LeasedInfinite.view(), "base kept");

    let r =
        t.c.get(&format!(
            "/{}?restype=container&comp=list&include=snapshots",
            t.container
        ))
        .send()
        .await;
    assert_eq!(r.status, 200);
    let xml = r.text();
    let blobs = entries(&xml, "Blob", BLOB);
    assert_eq!(blobs.len(), 2, "{xml}");
    for b in blobs {
        if b.contains("<Snapshot>") {
            assert_eq!(element(b, "LeaseState"), None, "{b}");
            assert_eq!(element(b, "LeaseStatus"), None, "{b}");
        } else {
            assert_eq!(LeaseView::of_xml(b), LeasedInfinite.view(), "{b}");
        }
    }
}

#[tokio::test]
async fn blob_lease_conditions_are_checked_before_the_action() {
    let server = TestServer::start().await;
    let t = Target::new(&server, Kind::Blob).await;
    let etag = t.properties().await.etag();
    let r = t.lease(&[ACQUIRE, FOR_15, ("if-match", "\"0x0\"")]).await;
    r.assert_error(412, "ConditionNotMet");
    assert_eq!(t.view().await, Available.view());
    let r = t.lease(&[ACQUIRE, FOR_15, ("if-match", &etag)]).await;
    assert_eq!(r.status, 201, "{}", r.text());

    let t = Target::new(&server, Kind::Container).await;
    let modified = t
        .properties()
        .await
        .header("last-modified")
        .expect("Last-Modified");
    let modified = httpdate::parse_http_date(&modified).expect("an HTTP date");
    let before = httpdate::fmt_http_date(modified - Duration::from_secs(3600));
    let r = t
        .lease(&[ACQUIRE, FOR_15, ("if-unmodified-since", &before)])
        .await;
    r.assert_error(412, "ConditionNotMet");
    assert_eq!(t.view().await, Available.view());
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#actions: lease actions never touch the resource's version
// ---------------------------------------------------------------------------

#[tokio::test]
async fn lease_actions_never_change_etag_or_last_modified() {
    let server = TestServer::start().await;
    for kind in KINDS {
        let t = Target::new(&server, kind).await;
        let before = t.properties().await;
        let version = |r: &Response| (r.header("etag"), r.header("last-modified"));
        let expected = version(&before);
        assert!(expected.0.is_some() && expected.1.is_some(), "{kind:?}");
        #[rustfmt::skip]
        let steps: [&[Header]; 7] = [
            &[ACQUIRE, FOR_15, PROPOSE_A],
            &[RENEW, ID_A],
            &[CHANGE, ID_A, PROPOSE_B],
            &[BREAK, ("x-ms-lease-break-period", "5")],
            &[BREAK, ("x-ms-lease-break-period", "0")],
            &[ACQUIRE, FOREVER, PROPOSE_C],
            &[RELEASE, ("x-ms-lease-id", C)],
        ];
        for step in steps {
            server.clock.advance(Duration::from_secs(2));
            let r = t.lease(step).await;
            assert!(
                matches!(r.status, 200..=202),
                "{kind:?} {step:?}: {}",
                r.text()
            );
            assert_eq!(version(&r), expected, "{kind:?} response to {step:?}");
            assert_eq!(
                version(&t.properties().await),
                expected,
                "{kind:?} after {step:?}"
            );
        }
        if kind == Kind::Blob {
            let r = t.c.get(&t.path()).send().await;
            assert_eq!(&r.body[..], CONTENT);
        }
    }
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#states: lease properties in every place they appear
// ---------------------------------------------------------------------------

#[tokio::test]
async fn get_and_head_report_lease_state_status_and_duration() {
    let server = TestServer::start().await;
    for kind in KINDS {
        for state in STATES {
            let t = Target::in_state(&server, kind, state).await;
            let get = t.c.get(&t.path()).send().await;
            assert_eq!(get.status, 200, "{kind:?} {state:?}");
            assert_eq!(LeaseView::of(&get), state.view(), "GET {kind:?} {state:?}");
            let head = t.properties().await;
            assert_eq!(
                LeaseView::of(&head),
                state.view(),
                "HEAD {kind:?} {state:?}"
            );
        }
    }
}

/// Names of fixtures in one listing, one per state.
fn state_name(state: State) -> &'static str {
    match state {
        Available => "available",
        LeasedFixed => "leased-fixed",
        LeasedInfinite => "leased-infinite",
        Breaking => "breaking",
        Broken => "broken",
        Expired => "expired",
    }
}

/// (resource, lease request) putting one resource per state into it with a
/// single clock: the 15 s lease first, which the loop then lets expire.
type SetupRow = (State, &'static [Header]);

#[rustfmt::skip]
const ONE_PER_STATE: &[SetupRow] = &[
    (Expired,        &[ACQUIRE, FOR_15]),
    (LeasedFixed,    &[ACQUIRE, FOR_60]),
    (LeasedInfinite, &[ACQUIRE, FOREVER]),
    (Breaking,       &[ACQUIRE, FOREVER]),
    (Breaking,       &[BREAK, ("x-ms-lease-break-period", "30")]),
    (Broken,         &[ACQUIRE, FOREVER]),
    (Broken,         &[BREAK]),
];

/// Sends `headers` to `path` and asserts a lease success.
async fn lease_ok(c: &Client, path: &str, headers: &[Header]) {
    let mut req = c.put(path);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let r = req.send().await;
    assert!(matches!(r.status, 201 | 202), "{path}: {}", r.text());
}

#[tokio::test]
async fn list_blobs_reports_each_blobs_lease() {
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("lease-list");
    c.create_container(&container).await;
    for state in STATES {
        c.put_blob(&container, state_name(state), b"x").await;
    }
    for &(state, headers) in ONE_PER_STATE {
        let path = format!("/{container}/{}?comp=lease", state_name(state));
        lease_ok(&c, &path, headers).await;
        if state == Expired {
            server.clock.advance(Duration::from_secs(15));
        }
    }
    let r = c
        .get(&format!("/{container}?restype=container&comp=list"))
        .send()
        .await;
    assert_eq!(r.status, 200);
    let xml = r.text();
    for state in STATES {
        let blob = entry(&xml, "Blob", state_name(state));
        assert_eq!(LeaseView::of_xml(blob), state.view(), "{state:?}: {blob}");
    }
}

#[tokio::test]
async fn list_containers_reports_each_containers_lease() {
    let server = TestServer::start().await;
    let c = server.client();
    let prefix = unique("lease-list");
    let name = |state: State| format!("{prefix}-{}", state_name(state));
    for state in STATES {
        c.create_container(&name(state)).await;
    }
    for &(state, headers) in ONE_PER_STATE {
        let path = format!("/{}?comp=lease&restype=container", name(state));
        lease_ok(&c, &path, headers).await;
        if state == Expired {
            server.clock.advance(Duration::from_secs(15));
        }
    }
    let r = c.get(&format!("/?comp=list&prefix={prefix}")).send().await;
    assert_eq!(r.status, 200);
    let xml = r.text();
    for state in STATES {
        let container = entry(&xml, "Container", &name(state));
        assert_eq!(
            LeaseView::of_xml(container),
            state.view(),
            "{state:?}: {container}"
        );
    }
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#writes-to-a-leased-blob: enforcement on blobs
// ---------------------------------------------------------------------------

/// What a guarded operation does in a given lease state.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// Succeeds; the lease is then in this state.
    Allowed(State),
    /// 412 with this code.
    Refused(&'static str),
}

/// (state, `x-ms-lease-id` sent, outcome).
type RuleRow = (State, Option<&'static str>, Outcome);

/// docs/wire/leases.md#writes-to-a-leased-blob, LEASE-W.
#[rustfmt::skip]
const WRITE_RULE: &[RuleRow] = &[
    (Available,      None,    Allowed(Available)),
    (LeasedFixed,    None,    Refused("LeaseIdMissing")),
    (LeasedInfinite, None,    Refused("LeaseIdMissing")),
    (Breaking,       None,    Refused("LeaseIdMissing")),
    (Broken,         None,    Allowed(Available)),
    (Expired,        None,    Allowed(Available)),

    (Available,      Some(A), Refused("LeaseNotPresentWithBlobOperation")),
    (LeasedFixed,    Some(A), Allowed(LeasedFixed)),
    (LeasedInfinite, Some(A), Allowed(LeasedInfinite)),
    (Breaking,       Some(A), Allowed(Breaking)),
    (Broken,         Some(A), Refused("LeaseLost")),
    (Expired,        Some(A), Refused("LeaseLost")),

    (Available,      Some(B), Refused("LeaseNotPresentWithBlobOperation")),
    (LeasedFixed,    Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (LeasedInfinite, Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (Breaking,       Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (Broken,         Some(B), Refused("LeaseLost")),
    (Expired,        Some(B), Refused("LeaseLost")),
];

/// docs/wire/leases.md#reads-of-a-leased-blob, LEASE-R: without an id always allowed, and the record never changes.
#[rustfmt::skip]
const READ_RULE: &[RuleRow] = &[
    (Available,      None,    Allowed(Available)),
    (LeasedFixed,    None,    Allowed(LeasedFixed)),
    (LeasedInfinite, None,    Allowed(LeasedInfinite)),
    (Breaking,       None,    Allowed(Breaking)),
    (Broken,         None,    Allowed(Broken)),
    (Expired,        None,    Allowed(Expired)),

    (Available,      Some(A), Refused("LeaseNotPresentWithBlobOperation")),
    (LeasedFixed,    Some(A), Allowed(LeasedFixed)),
    (LeasedInfinite, Some(A), Allowed(LeasedInfinite)),
    (Breaking,       Some(A), Allowed(Breaking)),
    (Broken,         Some(A), Refused("LeaseLost")),
    (Expired,        Some(A), Refused("LeaseLost")),

    (Available,      Some(B), Refused("LeaseNotPresentWithBlobOperation")),
    (LeasedFixed,    Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (LeasedInfinite, Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (Breaking,       Some(B), Refused("LeaseIdMismatchWithBlobOperation")),
    (Broken,         Some(B), Refused("LeaseLost")),
    (Expired,        Some(B), Refused("LeaseLost")),
];

/// The blob writes of docs/wire/leases.md#writes-to-a-leased-blob tested here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlobWrite {
    PutBlob,
    SetBlobProperties,
    SetBlobMetadata,
    DeleteBlob,
}

impl BlobWrite {
    const ALL: [BlobWrite; 4] = [
        BlobWrite::PutBlob,
        BlobWrite::SetBlobProperties,
        BlobWrite::SetBlobMetadata,
        BlobWrite::DeleteBlob,
    ];

    fn request(self, t: &Target) -> Request {
        let path = t.path();
        match self {
            BlobWrite::PutBlob => {
                t.c.put(&path)
                    .header("x-ms-blob-type", "BlockBlob")
                    .body(b"new content".to_vec())
            }
            BlobWrite::SetBlobProperties => {
                t.c.put(&format!("{path}?comp=properties"))
                    .header("x-ms-blob-content-type", "text/plain")
            }
            BlobWrite::SetBlobMetadata => {
                t.c.put(&format!("{path}?comp=metadata"))
                    .header("x-ms-meta-owner", "tests")
            }
            BlobWrite::DeleteBlob => t.c.delete(&path),
        }
    }

    fn success(self) -> u16 {
        match self {
            BlobWrite::PutBlob => 201,
            BlobWrite::SetBlobProperties | BlobWrite::SetBlobMetadata => 200,
            BlobWrite::DeleteBlob => 202,
        }
    }
}

#[tokio::test]
async fn blob_writes_follow_the_lease_write_rule() {
    let server = TestServer::start().await;
    for op in BlobWrite::ALL {
        for &(state, presented, outcome) in WRITE_RULE {
            let context = (op, state, presented);
            let t = Target::in_state(&server, Kind::Blob, state).await;
            let before = t.properties().await.etag();
            let r = with_lease_id(op.request(&t), presented).send().await;
            match outcome {
                Allowed(after) => {
                    assert_status(&r, op.success(), &context);
                    if op == BlobWrite::DeleteBlob {
                        let gone = t.c.head(&t.path()).send().await;
                        assert_eq!(gone.status, 404, "{context:?}");
                    } else {
                        assert_eq!(t.view().await, after.view(), "{context:?}");
                    }
                }
                Refused(code) => {
                    assert_refused(&r, 412, code, &context);
                    // Nothing was written and the lease is as it was.
                    assert_eq!(t.properties().await.etag(), before, "{context:?}");
                    assert_eq!(t.view().await, state.view(), "{context:?}");
                }
            }
        }
    }
}

/// The blob reads of docs/wire/leases.md#reads-of-a-leased-blob tested here.
#[derive(Clone, Copy, Debug)]
enum BlobRead {
    /// Get Blob.
    Get,
    /// Get Blob Properties.
    Head,
    /// Get Blob Metadata.
    GetMetadata,
}

#[tokio::test]
async fn blob_reads_follow_the_lease_read_rule() {
    let server = TestServer::start().await;
    for op in [BlobRead::Get, BlobRead::Head, BlobRead::GetMetadata] {
        for &(state, presented, outcome) in READ_RULE {
            let context = (op, state, presented);
            let t = Target::in_state(&server, Kind::Blob, state).await;
            let path = t.path();
            let req = match op {
                BlobRead::Get => t.c.get(&path),
                BlobRead::Head => t.c.head(&path),
                BlobRead::GetMetadata => t.c.get(&format!("{path}?comp=metadata")),
            };
            let r = with_lease_id(req, presented).send().await;
            match outcome {
                Allowed(_) => {
                    assert_status(&r, 200, &context);
                    if let BlobRead::Get = op {
                        assert_eq!(&r.body[..], CONTENT, "{context:?}");
                    }
                }
                Refused(code) => assert_refused(&r, 412, code, &context),
            }
            // Reads never change the lease record.
            assert_eq!(t.view().await, state.view(), "{context:?}");
        }
    }
}

#[tokio::test]
async fn put_blob_with_a_lease_id_creating_a_new_blob_is_412_lease_not_present() {
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("lease");
    c.create_container(&container).await;
    let path = format!("/{container}/new.txt");
    let r = c
        .put(&path)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-lease-id", A)
        .body(b"new".to_vec())
        .send()
        .await;
    r.assert_error(412, "LeaseNotPresentWithBlobOperation");
    assert_eq!(c.head(&path).send().await.status, 404, "nothing created");
}

#[tokio::test]
async fn overwriting_a_leased_blob_with_its_id_keeps_the_lease() {
    let server = TestServer::start().await;
    let t = Target::in_state(&server, Kind::Blob, LeasedFixed).await;
    server.clock.advance(Duration::from_secs(10));
    let r =
        t.c.put(&t.path())
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-lease-id", A)
            .body(b"second version".to_vec())
            .send()
            .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(t.view().await, LeasedFixed.view());
    // Same expiry: acquired at 0 for 60 s.
    server.clock.advance(Duration::from_secs(49));
    assert_eq!(t.view().await, LeasedFixed.view());
    server.clock.advance(Duration::from_secs(1));
    assert_eq!(t.view().await, Expired.view());
    // Same id.
    let r = t.renew(A).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(A));
    let r = t.c.get(&t.path()).send().await;
    assert_eq!(&r.body[..], b"second version");
}

#[tokio::test]
async fn a_write_with_an_expired_leases_id_is_412_lease_lost() {
    let server = TestServer::start().await;
    for op in BlobWrite::ALL {
        let t = Target::in_state(&server, Kind::Blob, Expired).await;
        let r = with_lease_id(op.request(&t), Some(A)).send().await;
        assert_refused(&r, 412, "LeaseLost", &op);
    }
}

#[tokio::test]
async fn a_write_without_id_on_an_expired_lease_clears_it_so_renew_is_409() {
    let server = TestServer::start().await;
    for state in [Expired, Broken] {
        let t = Target::in_state(&server, Kind::Blob, state).await;
        let r =
            t.c.put(&format!("{}?comp=metadata", t.path()))
                .header("x-ms-meta-k", "v")
                .send()
                .await;
        assert_eq!(r.status, 200, "{state:?}: {}", r.text());
        assert_eq!(t.view().await, Available.view(), "{state:?}");
        assert_refused(
            &t.renew(A).await,
            409,
            "LeaseIdMismatchWithLeaseOperation",
            &state,
        );
        assert_refused(
            &t.release(A).await,
            409,
            "LeaseIdMismatchWithLeaseOperation",
            &state,
        );
        // The old id is not remembered by writes either.
        let r =
            t.c.put(&format!("{}?comp=metadata", t.path()))
                .header("x-ms-lease-id", A)
                .send()
                .await;
        assert_refused(&r, 412, "LeaseNotPresentWithBlobOperation", &state);
    }
}

#[tokio::test]
async fn deleting_a_leased_blob_removes_its_lease() {
    let server = TestServer::start().await;
    let t = Target::in_state(&server, Kind::Blob, LeasedInfinite).await;
    let r =
        t.c.delete(&t.path())
            .header("x-ms-lease-id", A)
            .send()
            .await;
    assert_eq!(r.status, 202, "{}", r.text());
    t.c.put_blob(&t.container, BLOB, b"reborn").await;
    assert_eq!(t.view().await, Available.view());
    assert_refused(
        &t.renew(A).await,
        409,
        "LeaseIdMismatchWithLeaseOperation",
        &"renew after delete",
    );
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#leased-containers: enforcement on containers
// ---------------------------------------------------------------------------

/// Delete Container (docs/wire/leases.md#leased-containers, first table).
#[rustfmt::skip]
const DELETE_CONTAINER_RULE: &[RuleRow] = &[
    (Available,      None,    Allowed(Available)),
    (LeasedFixed,    None,    Refused("LeaseIdMissing")),
    (LeasedInfinite, None,    Refused("LeaseIdMissing")),
    (Breaking,       None,    Refused("LeaseIdMissing")),
    (Broken,         None,    Allowed(Available)),
    (Expired,        None,    Allowed(Available)),

    (Available,      Some(A), Refused("LeaseNotPresentWithContainerOperation")),
    (LeasedFixed,    Some(A), Allowed(Available)),
    (LeasedInfinite, Some(A), Allowed(Available)),
    (Breaking,       Some(A), Allowed(Available)),
    (Broken,         Some(A), Refused("LeaseLost")),
    (Expired,        Some(A), Refused("LeaseLost")),

    (Available,      Some(B), Refused("LeaseNotPresentWithContainerOperation")),
    (LeasedFixed,    Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (LeasedInfinite, Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (Breaking,       Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (Broken,         Some(B), Refused("LeaseLost")),
    (Expired,        Some(B), Refused("LeaseLost")),
];

#[tokio::test]
async fn delete_container_follows_the_container_lease_rule() {
    let server = TestServer::start().await;
    for &(state, presented, outcome) in DELETE_CONTAINER_RULE {
        let context = (state, presented);
        let t = Target::in_state(&server, Kind::Container, state).await;
        let r = with_lease_id(t.c.delete(&t.path()), presented).send().await;
        match outcome {
            Allowed(_) => {
                assert_status(&r, 202, &context);
                let gone = t.c.head(&t.path()).send().await;
                assert_eq!(gone.status, 404, "{context:?}");
            }
            Refused(code) => {
                assert_refused(&r, 412, code, &context);
                assert_eq!(t.view().await, state.view(), "{context:?}");
            }
        }
    }
}

/// Other container operations that accept `x-ms-lease-id` (docs/wire/leases.md#leased-containers, second table).
#[rustfmt::skip]
const CONTAINER_READ_RULE: &[RuleRow] = &[
    (Available,      None,    Allowed(Available)),
    (LeasedFixed,    None,    Allowed(LeasedFixed)),
    (LeasedInfinite, None,    Allowed(LeasedInfinite)),
    (Breaking,       None,    Allowed(Breaking)),
    (Broken,         None,    Allowed(Broken)),
    (Expired,        None,    Allowed(Expired)),

    (Available,      Some(A), Refused("LeaseNotPresentWithContainerOperation")),
    (LeasedFixed,    Some(A), Allowed(LeasedFixed)),
    (LeasedInfinite, Some(A), Allowed(LeasedInfinite)),
    (Breaking,       Some(A), Allowed(Breaking)),
    (Broken,         Some(A), Refused("LeaseLost")),
    (Expired,        Some(A), Refused("LeaseLost")),

    (Available,      Some(B), Refused("LeaseNotPresentWithContainerOperation")),
    (LeasedFixed,    Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (LeasedInfinite, Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (Breaking,       Some(B), Refused("LeaseIdMismatchWithContainerOperation")),
    (Broken,         Some(B), Refused("LeaseLost")),
    (Expired,        Some(B), Refused("LeaseLost")),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ContainerOp {
    GetContainerProperties,
    GetContainerMetadata,
    SetContainerMetadata,
    GetContainerAcl,
    SetContainerAcl,
}

impl ContainerOp {
    const ALL: [ContainerOp; 5] = [
        ContainerOp::GetContainerProperties,
        ContainerOp::GetContainerMetadata,
        ContainerOp::SetContainerMetadata,
        ContainerOp::GetContainerAcl,
        ContainerOp::SetContainerAcl,
    ];

    fn request(self, t: &Target) -> Request {
        let base = format!("/{}?restype=container", t.container);
        match self {
            ContainerOp::GetContainerProperties => t.c.get(&base),
            ContainerOp::GetContainerMetadata => t.c.get(&format!("{base}&comp=metadata")),
            ContainerOp::SetContainerMetadata => {
                t.c.put(&format!("{base}&comp=metadata"))
                    .header("x-ms-meta-owner", "tests")
            }
            ContainerOp::GetContainerAcl => t.c.get(&format!("{base}&comp=acl")),
            ContainerOp::SetContainerAcl => t.c.put(&format!("{base}&comp=acl")),
        }
    }

    fn writes(self) -> bool {
        matches!(
            self,
            ContainerOp::SetContainerMetadata | ContainerOp::SetContainerAcl
        )
    }
}

#[tokio::test]
async fn other_container_operations_check_a_lease_id_only_when_sent() {
    let server = TestServer::start().await;
    for op in ContainerOp::ALL {
        for &(state, presented, outcome) in CONTAINER_READ_RULE {
            let context = (op, state, presented);
            let t = Target::in_state(&server, Kind::Container, state).await;
            let r = with_lease_id(op.request(&t), presented).send().await;
            match outcome {
                Allowed(after) => {
                    assert_status(&r, 200, &context);
                    if !op.writes() {
                        assert_eq!(t.view().await, after.view(), "{context:?}");
                    }
                }
                Refused(code) => {
                    assert_refused(&r, 412, code, &context);
                    assert_eq!(t.view().await, state.view(), "{context:?}");
                }
            }
        }
    }
}

#[tokio::test]
async fn a_leased_container_accepts_blob_writes_and_listing_without_its_id() {
    let server = TestServer::start().await;
    let t = Target::in_state(&server, Kind::Container, LeasedInfinite).await;
    t.c.put_blob(&t.container, "inside.txt", b"x").await;
    let r =
        t.c.put(&format!("/{}/inside.txt?comp=metadata", t.container))
            .header("x-ms-meta-k", "v")
            .send()
            .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r =
        t.c.get(&format!("/{}?restype=container&comp=list", t.container))
            .send()
            .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r =
        t.c.delete(&format!("/{}/inside.txt", t.container))
            .send()
            .await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(t.view().await, LeasedInfinite.view());
}

#[tokio::test]
async fn blob_leases_do_not_block_delete_container() {
    let server = TestServer::start().await;
    let t = Target::in_state(&server, Kind::Blob, LeasedInfinite).await;
    let r =
        t.c.delete(&format!("/{}?restype=container", t.container))
            .send()
            .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

// ---------------------------------------------------------------------------
// docs/wire/leases.md#time-and-concurrency: concurrency
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_acquires_on_one_blob_grant_exactly_one_lease() {
    let server = TestServer::start().await;
    let t = Target::new(&server, Kind::Blob).await;
    let path = t.lease_path();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let c = server.client();
            let path = path.clone();
            tokio::spawn(async move {
                c.put(&path)
                    .header("x-ms-lease-action", "acquire")
                    .header("x-ms-lease-duration", "-1")
                    .send()
                    .await
            })
        })
        .collect();
    let mut granted = Vec::new();
    for task in tasks {
        let r = task.await.expect("acquire task");
        if r.status == 201 {
            granted.push(r.header("x-ms-lease-id").expect("x-ms-lease-id"));
        } else {
            r.assert_error(409, "LeaseAlreadyPresent");
        }
    }
    assert_eq!(granted.len(), 1, "granted: {granted:?}");
    assert_eq!(t.release(&granted[0]).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_clients_incrementing_a_counter_under_a_lease_lose_no_update() {
    const CLIENTS: u64 = 16;
    const ROUNDS: u64 = 20;
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("lease-counter");
    c.create_container(&container).await;
    c.put_blob(&container, "counter", b"0").await;
    let blob = format!("/{container}/counter");
    // All 16 start racing for the lease. A refused client then waits for a
    // release instead of spinning (15 spinning losers would flood the
    // server): each release wakes one waiter, which races the releasing
    // client's own next acquire.
    let released = Arc::new(Notify::new());
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let c = server.client();
            let blob = blob.clone();
            let released = released.clone();
            tokio::spawn(async move {
                let lease = format!("{blob}?comp=lease");
                for round in 0..ROUNDS {
                    let id = loop {
                        // Registered before trying: a release between the
                        // refusal and the wait still wakes this client.
                        let mut next_release = pin!(released.notified());
                        next_release.as_mut().enable();
                        let r = c
                            .put(&lease)
                            .header("x-ms-lease-action", "acquire")
                            .header("x-ms-lease-duration", "15")
                            .send()
                            .await;
                        if r.status == 201 {
                            break r.header("x-ms-lease-id").expect("x-ms-lease-id");
                        }
                        r.assert_error(409, "LeaseAlreadyPresent");
                        next_release.await;
                    };
                    let r = c.get(&blob).header("x-ms-lease-id", &id).send().await;
                    assert_eq!(r.status, 200, "client {client} round {round}: {}", r.text());
                    let n: u64 = r.text().parse().expect("a counter");
                    let r = c
                        .put(&blob)
                        .header("x-ms-blob-type", "BlockBlob")
                        .header("x-ms-lease-id", &id)
                        .body((n + 1).to_string())
                        .send()
                        .await;
                    assert_eq!(r.status, 201, "client {client} round {round}: {}", r.text());
                    let r = c
                        .put(&lease)
                        .header("x-ms-lease-action", "release")
                        .header("x-ms-lease-id", &id)
                        .send()
                        .await;
                    assert_eq!(r.status, 200, "client {client} round {round}: {}", r.text());
                    released.notify_one();
                }
            })
        })
        .collect();
    // The first client to panic fails the test at once: it may hold the
    // lease, and the others would wait for its release forever.
    if let Err(e) = futures::future::try_join_all(tasks).await {
        std::panic::resume_unwind(e.into_panic());
    }
    let r = c.get(&blob).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), (CLIENTS * ROUNDS).to_string());
    assert_eq!(LeaseView::of(&c.head(&blob).send().await), Available.view());
}
