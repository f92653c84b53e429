//! The reports the tests share.

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, Timestamp};

/// A timestamp from RFC 3339 text.
pub(crate) fn at(text: &str) -> Timestamp {
    text.parse().expect("an RFC 3339 timestamp")
}

/// `2026-03-01T09:MM:SSZ`, a minute and second into the reference run's hour.
pub(crate) fn nine(minute: u32, second: u32) -> Timestamp {
    at(&format!("2026-03-01T09:{minute:02}:{second:02}Z"))
}

/// A done story of the diamond epic as the reference's example has it: 120 tokens, $0.01.
pub(crate) fn done(id: &str) -> StoryOutcome {
    StoryOutcome::new(id, format!("Story {id}"), OutcomeStatus::Done)
        .on_branch(format!("story/diamond/{id}"))
        .with_judge("judge cleared (round 1)")
        .with_estimate(120, Some(0.01))
}

/// The reference's diamond epic, all done: a, then b and c in parallel, then d.
pub(crate) fn diamond() -> EpicReport {
    EpicReport::new("diamond", "epic/diamond")
        .with_story(done("a").started(nine(0, 0)).finished(nine(4, 0)))
        .with_story(done("b").started(nine(4, 10)).finished(nine(10, 40)))
        .with_story(done("c").started(nine(4, 12)).finished(nine(8, 0)))
        .with_story(done("d").started(nine(10, 50)).finished(nine(14, 0)))
        .with_critical_path(["a", "b", "d"])
}

/// The diamond epic where `b` failed: `d` is skipped, `c` carries on.
pub(crate) fn diamond_with_failure() -> EpicReport {
    EpicReport::new("diamond", "epic/diamond")
        .with_story(done("a").started(nine(0, 0)).finished(nine(4, 0)))
        .with_story(
            StoryOutcome::new("b", "Story b", OutcomeStatus::Failed)
                .on_branch("story/diamond/b")
                .with_reason("gate `cargo test` failed on the epic head after merge; merge undone")
                .with_judge("judge cleared (round 2)")
                .with_estimate(2_345, Some(0.125))
                .started(nine(4, 10))
                .finished(nine(21, 5)),
        )
        .with_story(done("c").started(nine(4, 12)).finished(nine(8, 0)))
        .with_story(
            StoryOutcome::new("d", "Story d", OutcomeStatus::Skipped)
                .with_reason("depends on b, which failed"),
        )
        .with_critical_path(["a", "b", "d"])
}
