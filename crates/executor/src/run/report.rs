//! The run's report as it stands: each story's outcome in plan order, the critical path and the
//! usage by seat ([`build_report`]), the stories that never started marked skipped, and the
//! report of a run interrupted before any story.

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, UsageMeter};
use epic_state_store::EpicDir;
use epic_story_plan::ValidPlan;

use super::config::RunConfig;
use crate::event::{Event, EventSink};
use crate::offload;
use crate::record;

/// The report of a run interrupted before any story started, written.
pub(super) async fn report_unstarted(
    plan: &ValidPlan,
    epic_branch: &str,
    dir: &EpicDir,
    config: &RunConfig,
    events: &EventSink,
) -> EpicReport {
    let mut outcomes = vec![None; plan.plan().stories.len()];
    skip_unfinished(
        plan,
        &mut outcomes,
        "not started: the run was interrupted",
        events,
    );
    let report = build_report(
        plan,
        epic_branch,
        &outcomes,
        &UsageMeter::new(config.prices.clone()),
    );
    let written = {
        let (dir, report) = (dir.clone(), report.clone());
        offload::blocking(move || record::write_report(&dir, &report))
            .await
            .unwrap_or_else(|error| Err(error.to_string()))
    };
    if let Err(error) = written {
        events(Event::RunNote {
            message: format!("the report could not be written: {error}"),
        });
    }
    report
}

/// Marks every story without an outcome skipped with `reason`.
fn skip_unfinished(
    plan: &ValidPlan,
    outcomes: &mut [Option<StoryOutcome>],
    reason: &str,
    events: &EventSink,
) {
    for (story, outcome) in plan.plan().stories.iter().zip(outcomes.iter_mut()) {
        if outcome.is_none() {
            events(Event::StorySkipped {
                story: story.id.clone(),
                reason: reason.to_owned(),
            });
            *outcome = Some(
                StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Skipped)
                    .with_reason(reason),
            );
        }
    }
}

/// The report of the outcomes known so far, in plan order.
pub(super) fn build_report(
    plan: &ValidPlan,
    epic_branch: &str,
    outcomes: &[Option<StoryOutcome>],
    usage: &UsageMeter,
) -> EpicReport {
    let mut report = EpicReport::new(&plan.plan().epic_id, epic_branch);
    for outcome in outcomes.iter().flatten() {
        report = report.with_story(outcome.clone());
    }
    report
        .with_critical_path(plan.critical_path().stories)
        .with_seats(usage.seat_usage())
}
