//! Pruning `read_first` anchors.

use epic_story_plan::path::UnsafePath;
use epic_story_plan::{PruneReason, Story};

use crate::support::plan;

#[test]
fn keeps_existing_anchors_and_drops_the_rest() {
    let mut story = Story::new(
        "conto-overview",
        "Overview",
        ["src/features/conto/overview"],
    );
    story.read_first = [
        "src/features/exemplar",
        "./src/contracts/accounts.ts",
        "src/nowhere",
        "docs/missing.md",
        "../shared/kit",
        "/abs/src/x.ts",
        ".",
        "",
        "src/ok/../ok",
        "src/ok",
        "src/features/exemplar/page", // a file name prefix, not a directory: missing
    ]
    .map(String::from)
    .to_vec();
    let mut p = plan("bank", vec![story]);
    let dropped = p.prune_read_first(&[
        "src/features/exemplar/page.tsx",
        "src/contracts/accounts.ts",
        "src/ok/mod.rs",
    ]);
    assert_eq!(
        p.stories[0].read_first,
        [
            "src/features/exemplar",
            "./src/contracts/accounts.ts",
            "src/ok"
        ]
    );
    let reasons: Vec<(&str, PruneReason)> = dropped
        .iter()
        .map(|d| (d.path.as_str(), d.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("src/nowhere", PruneReason::Missing),
            ("docs/missing.md", PruneReason::Missing),
            (
                "../shared/kit",
                PruneReason::Unsafe(UnsafePath::ParentSegment)
            ),
            ("/abs/src/x.ts", PruneReason::Unsafe(UnsafePath::Absolute)),
            (".", PruneReason::Unsafe(UnsafePath::Empty)),
            ("", PruneReason::Unsafe(UnsafePath::Empty)),
            (
                "src/ok/../ok",
                PruneReason::Unsafe(UnsafePath::ParentSegment)
            ),
            ("src/features/exemplar/page", PruneReason::Missing),
        ]
    );
    assert!(dropped.iter().all(|d| d.story == "conto-overview"));
}
