//! The tier state machine, one row per (state, request) cell.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::AccessTier::{Archive, Cold, Cool, Hot};
use super::RehydratePriority::{High, Standard};
use super::*;

const DELAY: Duration = Duration::from_secs(5);

fn t(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_000_000 + secs)
}

fn online(tier: Option<AccessTier>) -> TierRecord {
    TierRecord {
        tier,
        changed_at: tier.map(|_| t(0)),
        rehydration: None,
    }
}

fn rehydrating(to: AccessTier, priority: RehydratePriority) -> TierRecord {
    TierRecord {
        tier: Some(Archive),
        changed_at: Some(t(0)),
        rehydration: Some(Rehydration {
            to,
            priority,
            done_at: t(10),
        }),
    }
}

fn req(tier: AccessTier, priority: Option<RehydratePriority>) -> SetTier {
    SetTier {
        tier,
        priority,
        blob_type: BlobType::BlockBlob,
        snapshot: false,
    }
}

/// What a cell should give: the new record's reported tier, archive status
/// and priority, and the outcome; or the error code.
type Expected = std::result::Result<
    (
        AccessTier,
        Option<AccessTier>,
        Option<RehydratePriority>,
        SetTierOutcome,
    ),
    &'static str,
>;

fn code(e: &Error) -> &'static str {
    match e {
        Error::BlobArchived => "BlobArchived",
        Error::BlobBeingRehydrated => "BlobBeingRehydrated",
        Error::AccessTierNotSupportedForBlobType => "AccessTierNotSupportedForBlobType",
        _ => "other",
    }
}

#[test]
fn set_blob_tier_transitions() {
    use SetTierOutcome::{Done, Pending};
    let now = t(3);
    let cases: Vec<(&str, TierRecord, SetTier, Expected)> = vec![
        (
            "inferred to cool",
            online(None),
            req(Cool, None),
            Ok((Cool, None, None, Done)),
        ),
        (
            "inferred to hot",
            online(None),
            req(Hot, None),
            Ok((Hot, None, None, Done)),
        ),
        (
            "hot to cold",
            online(Some(Hot)),
            req(Cold, None),
            Ok((Cold, None, None, Done)),
        ),
        (
            "cool to archive",
            online(Some(Cool)),
            req(Archive, None),
            Ok((Archive, None, None, Done)),
        ),
        (
            "priority ignored online",
            online(Some(Cool)),
            req(Hot, Some(High)),
            Ok((Hot, None, None, Done)),
        ),
        (
            "archive to archive",
            online(Some(Archive)),
            req(Archive, None),
            Ok((Archive, None, None, Done)),
        ),
        (
            "archive to hot",
            online(Some(Archive)),
            req(Hot, None),
            Ok((Archive, Some(Hot), Some(Standard), Pending)),
        ),
        (
            "archive to cool, high",
            online(Some(Archive)),
            req(Cool, Some(High)),
            Ok((Archive, Some(Cool), Some(High), Pending)),
        ),
        (
            "archive to cold",
            online(Some(Archive)),
            req(Cold, Some(Standard)),
            Ok((Archive, Some(Cold), Some(Standard), Pending)),
        ),
        (
            "pending, same target",
            rehydrating(Hot, Standard),
            req(Hot, None),
            Ok((Archive, Some(Hot), Some(Standard), Pending)),
        ),
        (
            "pending, raised to high",
            rehydrating(Hot, Standard),
            req(Hot, Some(High)),
            Ok((Archive, Some(Hot), Some(High), Pending)),
        ),
        (
            "pending, never lowered",
            rehydrating(Hot, High),
            req(Hot, Some(Standard)),
            Ok((Archive, Some(Hot), Some(High), Pending)),
        ),
        (
            "pending, other target",
            rehydrating(Hot, Standard),
            req(Cool, None),
            Err("BlobBeingRehydrated"),
        ),
        (
            "pending, back to archive",
            rehydrating(Cool, Standard),
            req(Archive, None),
            Err("BlobBeingRehydrated"),
        ),
        (
            "archived snapshot online",
            online(Some(Archive)),
            SetTier {
                snapshot: true,
                ..req(Hot, None)
            },
            Err("BlobArchived"),
        ),
        (
            "snapshot to archive",
            online(None),
            SetTier {
                snapshot: true,
                ..req(Archive, None)
            },
            Ok((Archive, None, None, Done)),
        ),
        (
            "append blob",
            online(None),
            SetTier {
                blob_type: BlobType::AppendBlob,
                ..req(Hot, None)
            },
            Err("AccessTierNotSupportedForBlobType"),
        ),
    ];
    for (name, record, request, expected) in cases {
        let got = record.set(request, now, DELAY).map(|(r, outcome)| {
            let p = r.properties(now);
            (p.tier, p.rehydrating_to, p.rehydrate_priority, outcome)
        });
        assert_eq!(got.map_err(|e| code(&e)), expected, "{name}");
    }
}

#[test]
fn change_time_moves_only_when_the_tier_does() {
    let (r, _) = online(None).set(req(Cool, None), t(3), DELAY).unwrap();
    assert_eq!(r.changed_at, Some(t(3)));
    let (again, _) = r.set(req(Cool, None), t(4), DELAY).unwrap();
    assert_eq!(again.changed_at, Some(t(3)));
    // A rehydration keeps the archive time until it completes.
    let (pending, _) = online(Some(Archive))
        .set(req(Hot, None), t(3), DELAY)
        .unwrap();
    assert_eq!(pending.properties(t(4)).changed_at, Some(t(0)));
    assert_eq!(pending.properties(t(8)).changed_at, Some(t(8)));
}

#[test]
fn rehydration_ends_when_its_time_comes() {
    let (r, _) = online(Some(Archive))
        .set(req(Cool, Some(High)), t(0), DELAY)
        .unwrap();
    let cases = [
        (t(0), Archive, Some(Cool), Err("BlobBeingRehydrated")),
        (t(4), Archive, Some(Cool), Err("BlobBeingRehydrated")),
        (t(5), Cool, None, Ok(())),
        (t(500), Cool, None, Ok(())),
    ];
    for (now, tier, to, online) in cases {
        let p = r.properties(now);
        assert_eq!((p.tier, p.rehydrating_to), (tier, to), "{now:?}");
        assert!(!p.inferred);
        assert_eq!(r.check_online(now).map_err(|e| code(&e)), online, "{now:?}");
    }
    assert_eq!(
        r.properties(t(1)).archive_status().as_deref(),
        Some("rehydrate-pending-to-cool")
    );
    assert_eq!(r.properties(t(5)).archive_status(), None);
    // Once complete, a new Set Blob Tier starts from the new tier.
    let (after, outcome) = r.set(req(Archive, None), t(6), DELAY).unwrap();
    assert_eq!(outcome, SetTierOutcome::Done);
    assert_eq!(after.properties(t(6)).tier, Archive);
}

#[test]
fn online_check_table() {
    let cases = [
        (online(None), Ok(())),
        (online(Some(Hot)), Ok(())),
        (online(Some(Cold)), Ok(())),
        (online(Some(Archive)), Err("BlobArchived")),
        (rehydrating(Hot, Standard), Err("BlobBeingRehydrated")),
    ];
    for (record, expected) in cases {
        assert_eq!(
            record.check_online(t(3)).map_err(|e| code(&e)),
            expected,
            "{record:?}"
        );
    }
}

#[test]
fn names_parse_as_the_service_spells_them() {
    assert_eq!(AccessTier::parse("Hot"), Some(Hot));
    assert_eq!(AccessTier::parse("Archive"), Some(Archive));
    assert_eq!(AccessTier::parse("hot"), None);
    assert_eq!(AccessTier::parse("P10"), None);
    assert_eq!(AccessTier::parse(""), None);
    assert_eq!(RehydratePriority::parse("High"), Some(High));
    assert_eq!(RehydratePriority::parse("Urgent"), None);
    assert_eq!(online(None).properties(t(0)).tier, Hot);
    assert!(online(None).properties(t(0)).inferred);
}
