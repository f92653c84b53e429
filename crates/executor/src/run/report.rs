//! The epic's report as this run leaves it: each story's outcome in plan order (from this run,
//! or kept from the run that settled it), the critical path, the usage by seat over the runs and
//! the runs themselves ([`build_report`], [`History`]), the stories that never started marked
//! skipped, and the report of a run interrupted before any story.

use std::collections::BTreeMap;

use epic_report::{
    EpicReport, OutcomeStatus, RunRecord, SeatUsage, StoryOutcome, Timestamp, UsageMeter,
};
use epic_state_store::EpicDir;
use epic_story_plan::{Story, ValidPlan};

use crate::config::RunConfig;
use epic_events::{Event, EventSink, ReportDocument};

use epic_process::offload;

/// What the report knows beyond this run: the report the last run left (its stories' outcomes,
/// seats and runs) and this run's own number and start.
#[derive(Debug, Clone)]
pub(super) struct History {
    /// The report the last run left, if one could be read.
    previous: Option<EpicReport>,
    /// This run.
    run: RunRecord,
}

impl History {
    /// The history after `previous`, this run starting now: its number is one more than the
    /// last run `previous` lists (2 after a report that lists none, written before runs were
    /// numbered; 1 without a previous report).
    pub(super) fn new(previous: Option<EpicReport>) -> Self {
        let number = previous.as_ref().map_or(1, |report| {
            report.latest_run().map_or(2, |last| last.saturating_add(1))
        });
        Self {
            previous,
            run: RunRecord::new(number, Timestamp::now()),
        }
    }

    /// The report the last run left.
    pub(super) fn previous(&self) -> Option<&EpicReport> {
        self.previous.as_ref()
    }

    /// This run's number.
    pub(super) fn number(&self) -> u32 {
        self.run.number
    }

    /// The outcome of `story`, merged on `branch` by an earlier run: the previous report's,
    /// with its times, usage, judge note and run, when it has the story done; else a bare
    /// outcome whose reason says so.
    pub(super) fn merged_before(&self, story: &Story, branch: &str) -> StoryOutcome {
        self.previous
            .as_ref()
            .and_then(|report| report.story(&story.id))
            .filter(|outcome| outcome.status == OutcomeStatus::Done)
            .map_or_else(
                || {
                    StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Done)
                        .with_reason("merged on a previous run")
                },
                |outcome| {
                    let mut outcome = outcome.clone();
                    outcome.title.clone_from(&story.title);
                    outcome
                },
            )
            .on_branch(branch)
    }

    /// The runs so far, this one last (with `finished` as its finish, if given).
    fn runs(&self, finished: Option<Timestamp>) -> Vec<RunRecord> {
        let mut runs: Vec<RunRecord> = self
            .previous
            .iter()
            .flat_map(|report| report.runs.iter().cloned())
            .collect();
        let mut run = self.run.clone();
        if let Some(at) = finished {
            run = run.finished(at);
        }
        runs.push(run);
        runs
    }

    /// The usage by seat over the earlier runs and `usage` (this run's), in seat-name order.
    fn seats(&self, usage: &UsageMeter) -> Vec<SeatUsage> {
        let mut seats: BTreeMap<String, SeatUsage> = BTreeMap::new();
        let earlier = self
            .previous
            .iter()
            .flat_map(|report| report.seats.iter().cloned());
        for seat in earlier.chain(usage.seat_usage()) {
            let seat = match seats.remove(&seat.seat) {
                Some(before) => before.plus(&seat),
                None => seat,
            };
            seats.insert(seat.seat.clone(), seat);
        }
        seats.into_values().collect()
    }
}

/// The report of a run interrupted before any story started, written: the stories an earlier
/// run merged keep their outcomes (`merged`: plan index and branch), the others are skipped.
pub(super) async fn report_unstarted(
    plan: &ValidPlan,
    epic_branch: &str,
    dir: &EpicDir,
    config: &RunConfig,
    (history, merged): (&History, &[(usize, String)]),
    events: &EventSink,
) -> EpicReport {
    let mut outcomes = vec![None; plan.plan().stories.len()];
    for (index, branch) in merged {
        if let (Some(story), Some(outcome)) =
            (plan.plan().stories.get(*index), outcomes.get_mut(*index))
        {
            *outcome = Some(history.merged_before(story, branch));
        }
    }
    let number = history.number();
    skip_unfinished(
        plan,
        &mut outcomes,
        "not started: the run was interrupted",
        number,
        events,
    );
    let report = build_report(
        plan,
        epic_branch,
        &outcomes,
        &UsageMeter::new(config.prices.clone()),
        history,
        Some(Timestamp::now()),
    );
    let written = {
        let (dir, report) = (dir.clone(), report.clone());
        offload::blocking(move || epic_events::write_report(&dir, &ReportDocument(report)))
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

/// Marks every story without an outcome skipped with `reason` by run `number`.
fn skip_unfinished(
    plan: &ValidPlan,
    outcomes: &mut [Option<StoryOutcome>],
    reason: &str,
    number: u32,
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
                    .with_reason(reason)
                    .in_run(number),
            );
        }
    }
}

/// The report of the outcomes known so far, in plan order, with the usage by seat over the
/// runs (`usage` is this run's) and the runs, this one last, `finished` at its end.
pub(super) fn build_report(
    plan: &ValidPlan,
    epic_branch: &str,
    outcomes: &[Option<StoryOutcome>],
    usage: &UsageMeter,
    history: &History,
    finished: Option<Timestamp>,
) -> EpicReport {
    let mut report = EpicReport::new(&plan.plan().epic_id, epic_branch);
    for outcome in outcomes.iter().flatten() {
        report = report.with_story(outcome.clone());
    }
    let mut report = report
        .with_critical_path(plan.critical_path().stories)
        .with_seats(history.seats(usage));
    report.runs = history.runs(finished);
    // A landing (`epic land`) stays in the report across the runs after it.
    report.landing = history
        .previous()
        .and_then(|previous| previous.landing.clone());
    report
}
