use super::*;

fn run(start: u64, end: u64, extent: &str, at: u64) -> Run {
    Run {
        start,
        end,
        extent: extent.into(),
        at,
    }
}

#[test]
fn overwrite_table() {
    // (stored runs, range, new run?, removed starts, added runs)
    type Case = (Vec<Run>, Range<u64>, Option<Run>, Vec<u64>, Vec<Run>);
    let cases: Vec<Case> = vec![
        // Into nothing.
        (
            vec![],
            0..512,
            Some(run(0, 512, "n", 0)),
            vec![],
            vec![run(0, 512, "n", 0)],
        ),
        // Exactly over one run.
        (
            vec![run(0, 512, "a", 0)],
            0..512,
            Some(run(0, 512, "n", 0)),
            vec![0],
            vec![run(0, 512, "n", 0)],
        ),
        // In the middle of one run: split in two.
        (
            vec![run(0, 2048, "a", 0)],
            512..1024,
            Some(run(512, 1024, "n", 0)),
            vec![0],
            vec![
                run(0, 512, "a", 0),
                run(512, 1024, "n", 0),
                run(1024, 2048, "a", 1024),
            ],
        ),
        // Over the tail of one and the head of the next.
        (
            vec![run(0, 1024, "a", 0), run(1024, 2048, "b", 4096)],
            512..1536,
            Some(run(512, 1536, "n", 0)),
            vec![0, 1024],
            vec![
                run(0, 512, "a", 0),
                run(512, 1536, "n", 0),
                run(1536, 2048, "b", 4608),
            ],
        ),
        // A clear over three runs, keeping the outer remnants.
        (
            vec![
                run(0, 1024, "a", 0),
                run(1024, 1536, "b", 0),
                run(1536, 3072, "c", 512),
            ],
            512..2048,
            None,
            vec![0, 1024, 1536],
            vec![run(0, 512, "a", 0), run(2048, 3072, "c", 1024)],
        ),
        // A clear of nothing written.
        (vec![], 0..4096, None, vec![], vec![]),
        // Runs that only touch the range are not changed.
        (
            vec![run(0, 512, "a", 0), run(1024, 1536, "b", 0)],
            512..1024,
            None,
            vec![],
            vec![],
        ),
    ];
    for (i, (stored, range, new, removed, added)) in cases.into_iter().enumerate() {
        let edit = overwrite(&stored, range, new);
        assert_eq!(edit.removed, removed, "case {i}");
        assert_eq!(edit.added, added, "case {i}");
    }
}

#[test]
fn overwrite_releases_each_extent_once() {
    let stored = vec![run(0, 512, "a", 0), run(512, 1024, "a", 512)];
    let edit = overwrite(&stored, 0..1024, None);
    assert_eq!(edit.released, vec!["a".to_owned()]);
}

#[test]
fn diff_table() {
    use Change::*;
    type Case = (Vec<Run>, Vec<Run>, Vec<(Range<u64>, Change)>);
    let cases: Vec<Case> = vec![
        (vec![], vec![], vec![]),
        // Everything new is written.
        (
            vec![],
            vec![run(0, 512, "a", 0), run(1024, 1536, "b", 0)],
            vec![(0..512, Written), (1024..1536, Written)],
        ),
        // Everything gone is cleared.
        (vec![run(0, 1024, "a", 0)], vec![], vec![(0..1024, Cleared)]),
        // Shared content is unchanged, even when split into other runs.
        (
            vec![run(0, 2048, "a", 0)],
            vec![run(0, 1024, "a", 0), run(1024, 2048, "a", 1024)],
            vec![],
        ),
        // A write inside shared content.
        (
            vec![run(0, 2048, "a", 0)],
            vec![
                run(0, 512, "a", 0),
                run(512, 1024, "n", 0),
                run(1024, 2048, "a", 1024),
            ],
            vec![(512..1024, Written)],
        ),
        // A clear inside shared content, and a write past it.
        (
            vec![run(0, 2048, "a", 0)],
            vec![
                run(0, 512, "a", 0),
                run(1536, 2048, "a", 1536),
                run(4096, 4608, "n", 0),
            ],
            vec![(512..1536, Cleared), (4096..4608, Written)],
        ),
        // The same extent at another offset is different content.
        (
            vec![run(0, 512, "a", 0)],
            vec![run(0, 512, "a", 512)],
            vec![(0..512, Written)],
        ),
        // Touching stretches of one kind merge.
        (
            vec![run(0, 512, "a", 0), run(512, 1024, "b", 0)],
            vec![run(0, 512, "c", 0), run(512, 1024, "d", 0)],
            vec![(0..1024, Written)],
        ),
        // Pages cleared since are cleared even where nothing was before
        // (the service's recorded diff: written 0..1536, cleared 512..1024).
        (
            vec![],
            vec![
                run(0, 512, "a", 0),
                Run::cleared(512..1024, 7),
                run(1024, 1536, "a", 1024),
            ],
            vec![
                (0..512, Written),
                (512..1024, Cleared),
                (1024..1536, Written),
            ],
        ),
        // A clear both maps share (made before the snapshot) is unchanged,
        // even split by a later write; another clear over it is not.
        (
            vec![Run::cleared(0..2048, 7)],
            vec![
                Run::cleared(0..512, 7),
                run(512, 1024, "n", 0),
                Run {
                    start: 1024,
                    end: 1536,
                    extent: String::new(),
                    at: 1024 + 7,
                },
                Run::cleared(1536..2048, 9),
            ],
            vec![(512..1024, Written), (1536..2048, Cleared)],
        ),
        // A clear run that is gone (the blob shrank) is no change.
        (vec![Run::cleared(0..512, 7)], vec![], vec![]),
    ];
    for (i, (old, new, want)) in cases.into_iter().enumerate() {
        assert_eq!(diff(&old, &new), want, "case {i}");
    }
}

#[test]
fn a_clear_run_reads_as_zeros_and_keeps_its_id_when_split() {
    let runs = vec![run(0, 512, "a", 0), Run::cleared(512..2048, 7)];
    assert_eq!(
        layout(&runs, &(0..2048)),
        vec![
            Stretch::Data {
                extent: "a".into(),
                range: 0..512
            },
            Stretch::Zeros(1536),
        ]
    );
    // A write into the middle of the clear run leaves two clear runs that
    // a snapshot holding the whole one reads as the same clear.
    let edit = overwrite(
        &[Run::cleared(512..2048, 7)],
        1024..1536,
        Some(run(1024, 1536, "n", 0)),
    );
    assert_eq!(
        diff(&[Run::cleared(512..2048, 7)], &edit.added),
        vec![(1024..1536, Change::Written)]
    );
    assert!(edit.added[0].is_clear() && edit.added[2].is_clear());
}

#[test]
fn layout_fills_gaps_with_zeros() {
    let runs = vec![run(512, 1024, "a", 100), run(2048, 4096, "b", 0)];
    assert_eq!(
        layout(&runs, &(0..5000)),
        vec![
            Stretch::Zeros(512),
            Stretch::Data {
                extent: "a".into(),
                range: 100..612
            },
            Stretch::Zeros(1024),
            Stretch::Data {
                extent: "b".into(),
                range: 0..2048
            },
            Stretch::Zeros(904),
        ]
    );
    // A window inside runs reads the right offsets.
    assert_eq!(
        layout(&runs, &(700..2100)),
        vec![
            Stretch::Data {
                extent: "a".into(),
                range: 288..612
            },
            Stretch::Zeros(1024),
            Stretch::Data {
                extent: "b".into(),
                range: 0..52
            },
        ]
    );
    assert_eq!(layout(&[], &(0..10)), vec![Stretch::Zeros(10)]);
}
