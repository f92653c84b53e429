//! [`run_epic`]: a whole epic run, from its preflight to its last story, and what it sets up
//! between them: the gates' baseline judged, the guard, the task loop, the budget, the pauses.

use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_report::EpicReport;
use epic_state_store::EpicDir;
use epic_story_plan::ValidPlan;
use tokio::sync::Mutex;
#[cfg(doc)]
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::event_loop::Loop;
use super::flakes::Flakes;
use super::preflight::{Ready, check_baseline, preflight};
use super::report::{History, report_unstarted};
use crate::config::{RunConfig, RunOutcome};
use crate::queue::MergeQueue;
use crate::shared::{EpicHead, Preparing, Shared};
use crate::task_loop::{LoopConfig, Seats, TaskLoop};
use epic_branch::RunError;
use epic_chat::Budget;
use epic_chat::SeatPauses;
use epic_events::ReportDocument;
use epic_events::{Event, EventSink};
use epic_gates::GateBaseline;
use epic_gates::Gates;
use epic_guard::TurnGuard;
use epic_process::offload;
use epic_process::sandbox::Sandbox;
#[cfg(doc)]
use epic_schedule::Schedule;

/// Runs the epic: every story of `plan`, in parallel up to `config.concurrency`, each merged
/// into the epic branch only when proven good. Events go to `events` and to `events.jsonl`.
///
/// # Design
///
/// A thin async loop around the synchronous [`Schedule`]: the schedule decides which stories
/// may start ([`Schedule::start_ready`]) and what a finished one changes; the loop spawns each
/// started story into a [`JoinSet`] with a free concurrency slot (`EPIC_SLOT`) and a child
/// cancellation token, then waits in `select!` for the next story to end or for `cancel`. When
/// a story ends the loop records its outcome (board, report, events), frees its slot, and asks
/// the schedule again: completion of any story wakes it, there is no wave barrier (unless the
/// `waves` policy asks for one). A panic in a story task becomes that story's failure.
///
/// A story's task ends as soon as its merge is recorded; the removal of its worktree (unless
/// `keep_worktrees`) is a cleanup task in a second [`JoinSet`], spawned after the stories the
/// merge made ready, and it waits until none of them is still adding its worktree (worktree
/// administration is serialized). The run waits for every cleanup before its final report; an
/// interrupt skips the removals not yet begun (a note names the worktrees left; `epic clean`
/// removes them).
///
/// Story tasks are never aborted: fail-fast and cancellation cancel their tokens and the loop
/// drains the set, so each story kills its agent, undoes a merge whose gates had not finished,
/// and leaves its state resumable. The schedule records why
/// ([`Schedule::halt`], [`Schedule::cancel_running`], [`Schedule::interrupt`]) and each story
/// that ended cancelled ([`Schedule::cancelled`]); the loop asks it for the reasons it reports. Merges are serialized by one merge lock; stories are cut
/// from, and catch up with, the last *proven* epic head, never a merge still being gated.
///
/// Before any story: the epic's lock (held to the end), stale worktree registrations pruned
/// (once per run, not per story), the epic branch (created from `base` when absent) in its own
/// worktree `<repo-parent>/<repo-name>.worktrees/<epic>/_epic`, a merge left unproven by a run
/// that died (undone), a clean epic worktree, and the gates' baseline on the epic head (cached
/// per commit in `gates/baseline.json`).
///
/// # Cancel safety
///
/// Cancel `cancel` rather than dropping the future: the run then stops launching, cancels every
/// running story, waits for them (and for worktree removals under way) to wind down, writes the
/// report and returns with
/// [`RunOutcome::interrupted`] set. Dropping the future aborts the story tasks where they are;
/// their states stay resumable, and an unproven merge is undone by the next run.
pub async fn run_epic(
    git: Arc<dyn Git>,
    plan: ValidPlan,
    config: RunConfig,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let Ready {
        dir,
        lock,
        events,
        epic_branch,
        worktree_root,
        epic_worktree,
        sandbox,
        head,
        merged,
    } = preflight(&git, &plan, &config, events).await?;
    // Every sink of the run's stories is made from this one: their flaky gates reach the report.
    let flakes = Flakes::default();
    let events = flakes.recording(events);
    let history = History::new(previous_report(&dir).await);
    let all_gates = Gates::new(config.gates.iter().cloned(), config.gate_timeout)
        .with_reruns(config.gate_reruns)
        .with_junit(config.gate_junit.clone())
        .with_sandbox(sandbox.clone())
        .with_tidying(Arc::clone(&git));
    let Some(baseline) =
        check_baseline(&dir, &all_gates, &epic_worktree, head, &events, &cancel).await
    else {
        // Interrupted while the baseline ran: nothing started.
        let report = report_unstarted(
            &plan,
            &epic_branch,
            &dir,
            &config,
            (&history, &merged),
            &events,
        )
        .await;
        drop(lock);
        return Ok(RunOutcome {
            report,
            interrupted: true,
            epic_worktree,
            state_dir: dir.root().to_path_buf(),
            stopped: None,
        });
    };
    if let Some(error) = red_baseline(&baseline, head, config.allow_red_baseline, &events) {
        return Err(error);
    }
    // The guard's snapshot is taken once everything before the stories is written; from here
    // on, epic's own writes to guarded files go through it, and every gate and setup command is
    // checked like an agent turn.
    let guard = take_guard(git.as_ref(), &dir, &worktree_root, &config).await?;
    let all_gates = all_gates.with_guard(Arc::clone(&guard));
    let (green, inherited) = (baseline.passed(), baseline.inherited());
    let story_gates = story_gates(&all_gates, &baseline, config.allow_red_baseline);
    let tasks = task_loop(&git, story_gates.clone(), &config, &sandbox, &events);
    // The budget counts the earlier runs' spend, from their report's usage by seat.
    let budget = Arc::new(Budget::new(
        config.budget_usd,
        history.previous().map_or(0.0, EpicReport::spent_usd),
    ));
    let pauses = Arc::new(
        SeatPauses::new(
            config.max_wait,
            config.outage_wait,
            Arc::clone(&events),
            config.clock.clone(),
        )
        .with_stall_timeout(config.stall_timeout),
    );
    let tasks = tasks
        .with_guard(Arc::clone(&guard))
        .with_budget(Arc::clone(&budget))
        .with_pauses(Arc::clone(&pauses));
    let shared = Arc::new(Shared {
        git,
        dir,
        plan: Arc::new(plan.plan().clone()),
        config,
        epic_branch,
        epic_worktree,
        worktree_root,
        sandbox,
        tasks,
        story_gates,
        epic_gates: all_gates,
        merge: Mutex::new(EpicHead { green, inherited }),
        queue: MergeQueue::default(),
        proven: std::sync::Mutex::new(head),
        preparing: Preparing::new(),
        events,
        guard,
        budget,
        pauses,
        run: history.number(),
    });
    let outcome = Loop::new(Arc::clone(&shared), &plan, &merged, history, flakes)
        .run(cancel)
        .await;
    if !outcome.interrupted {
        maintain(&shared).await;
    }
    drop(lock);
    Ok(outcome)
}

/// Git's automatic maintenance, once, now that no turn of this run runs (`Git::maintain`): the
/// loose objects the run's commits, merges and notes added are packed once past the
/// repository's threshold. A failure is a note: the epic's work is done and proven either way.
/// Skipped on an interrupted run, whose user wants it to stop.
async fn maintain(shared: &Shared) {
    let git = Arc::clone(&shared.git);
    let message = match offload::blocking(move || git.maintain()).await {
        Ok(Ok(Some(packed))) if packed.loose_after < packed.loose_before => format!(
            "git's automatic maintenance packed the repository: {} loose objects, {} after",
            packed.loose_before, packed.loose_after
        ),
        Ok(Ok(_)) => return,
        Ok(Err(error)) => format!(
            "git's automatic maintenance (`git gc --auto`) failed; the user's own git will try \
             again: {}",
            epic_process::chain(&error)
        ),
        Err(error) => format!(
            "git's automatic maintenance (`git gc --auto`) could not run: {}",
            epic_process::chain(&error)
        ),
    };
    (shared.events)(Event::RunNote { message });
}

/// The task loop of the run's stories: its seats, gates and limits from `config`.
fn task_loop(
    git: &Arc<dyn Git>,
    story_gates: Gates,
    config: &RunConfig,
    sandbox: &Sandbox,
    events: &EventSink,
) -> TaskLoop {
    TaskLoop::new(
        Arc::clone(git),
        story_gates,
        Seats {
            coder: config.coder.clone(),
            reviewers: config.reviewers.clone(),
            verifier: config.verifier.clone(),
        },
        LoopConfig::of_run(config, sandbox.clone()),
        Arc::clone(events),
    )
}

/// The gates stories are held to: all of them, or with a red baseline allowed, those green on
/// it and those whose failing tests it named there, judged per test (a story is charged only
/// with the tests it turns red); a command red without names is dropped, as before.
fn story_gates(all_gates: &Gates, baseline: &GateBaseline, allow_red: bool) -> Gates {
    if !allow_red {
        return all_gates.clone();
    }
    let (green, inherited) = (baseline.passed(), baseline.inherited());
    all_gates
        .only(|command| green.contains(command) || inherited.contains_key(command))
        .with_inherited(inherited)
}

/// The error of a red baseline, unless `allow_red` (then a run note says which gates fail
/// already and the run goes on).
fn red_baseline(
    baseline: &GateBaseline,
    head: CommitId,
    allow_red: bool,
    events: &EventSink,
) -> Option<RunError> {
    let failed = baseline.failed();
    if failed.is_empty() {
        return None;
    }
    if !allow_red {
        return Some(RunError::RedBaseline {
            commit: head.to_hex(),
            failing: failed
                .iter()
                .map(|command| format!("- {command}"))
                .collect(),
        });
    }
    events(Event::RunNote {
        message: format!(
            "the gates {} fail on the epic head already; stories are held to the others, and a \
             merge is undone only if a gate that passed before it fails",
            failed.join(", ")
        ),
    });
    None
}

/// The guard on epic's files ([`TurnGuard`]), its snapshot taken now.
async fn take_guard(
    git: &dyn Git,
    dir: &EpicDir,
    worktree_root: &std::path::Path,
    config: &RunConfig,
) -> Result<Arc<TurnGuard>, RunError> {
    let (common, dir, root, extra) = (
        git.common_dir().to_path_buf(),
        dir.clone(),
        worktree_root.to_path_buf(),
        config.guarded_files.clone(),
    );
    let fail = |source: offload::BoxError| RunError::State {
        action: "read the files epic guards".to_owned(),
        source,
    };
    match offload::blocking(move || TurnGuard::new(&common, &dir, &root, &extra)).await {
        Ok(Ok(guard)) => Ok(Arc::new(guard)),
        Ok(Err(error)) => Err(fail(Box::new(error))),
        Err(error) => Err(fail(Box::new(error))),
    }
}

/// The last run's report, if there is one that can be read: the stories merged before keep their
/// outcomes from it, and its durations weigh the critical-path order.
async fn previous_report(dir: &EpicDir) -> Option<EpicReport> {
    let path = dir.report_json();
    offload::blocking(move || epic_state_store::load::<ReportDocument>(path))
        .await
        .ok()
        .and_then(Result::ok)
        .flatten()
        .map(|document| document.0)
}
