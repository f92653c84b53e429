//! The timeline: spans, makespan, parallelism.

use std::time::Duration;

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, Timeline};

use crate::support::{diamond, diamond_with_failure, nine};

#[test]
fn diamond_timeline() {
    let report = diamond();
    let timeline = report.timeline().unwrap();
    let ids: Vec<&str> = timeline
        .spans()
        .iter()
        .map(|s| s.story.id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d"], "plan order");
    assert_eq!(timeline.start(), nine(0, 0));
    assert_eq!(timeline.finish(), nine(14, 0));
    assert_eq!(timeline.makespan(), Duration::from_mins(14));
    assert_eq!(timeline.busy(), Duration::from_secs(17 * 60 + 28));
    let parallelism = timeline.parallelism().unwrap();
    assert!((parallelism - 1048.0 / 840.0).abs() < 1e-12);
}

#[test]
fn stories_without_both_times_are_left_out() {
    let report = diamond_with_failure();
    let timeline = Timeline::of(&report).unwrap();
    assert_eq!(timeline.spans().len(), 3, "d never ran");
    assert_eq!(timeline.finish(), nine(21, 5));
}

#[test]
fn no_times_no_timeline() {
    let report = EpicReport::new("e", "epic/e")
        .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).started(nine(0, 0)))
        .with_story(
            StoryOutcome::new("b", "B", OutcomeStatus::Done)
                .started(nine(1, 0))
                .finished(nine(0, 0)),
        );
    assert!(report.timeline().is_none());
    assert!(EpicReport::new("e", "epic/e").timeline().is_none());
}

#[test]
fn one_at_a_time_is_parallelism_one() {
    let report = EpicReport::new("e", "epic/e")
        .with_story(
            StoryOutcome::new("a", "A", OutcomeStatus::Done)
                .started(nine(0, 0))
                .finished(nine(5, 0)),
        )
        .with_story(
            StoryOutcome::new("b", "B", OutcomeStatus::Done)
                .started(nine(5, 0))
                .finished(nine(10, 0)),
        );
    assert_eq!(report.timeline().unwrap().parallelism(), Some(1.0));
}
