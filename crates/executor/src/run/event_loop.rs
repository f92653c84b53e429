//! The scheduler loop of a run: a thin async loop around the synchronous [`Schedule`]. It
//! starts the ready stories in free concurrency slots, records each story's end (outcome, board,
//! report, events), spawns the removal of a merged story's worktree, carries out fail-fast and
//! interrupts (the schedule records them and says why), and writes the final report.

mod people;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, UsageMeter, UsageTotals};
use epic_story_plan::ValidPlan;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::flakes::Flakes;
use super::report::{History, build_report};
use crate::config::RunOutcome;
use crate::failure::Failure;
use crate::shared::Shared;
use crate::story::{self, Ending, StoryEnd};
use epic_chat::SeatStop;
use epic_events::{Board, Column, Move};
use epic_events::{Event, ReportDocument};
use epic_process::offload;
use epic_schedule::Schedule;

/// The scheduler loop's state.
pub(super) struct Loop {
    shared: Arc<Shared>,
    plan: ValidPlan,
    schedule: Schedule,
    outcomes: Vec<Option<StoryOutcome>>,
    usage: UsageMeter,
    /// The earlier runs' report and this run's number: what the report keeps across runs.
    history: History,
    board: Board,
    free_slots: BTreeSet<usize>,
    /// Worktrees of stories merged in this run, waiting for their cleanup task: (story, path).
    removals: Vec<(String, PathBuf)>,
    /// The stories' flaky gates, for their outcomes.
    flakes: Flakes,
    /// Each running story's own cancellation (`epic stop`), by plan index.
    tokens: HashMap<usize, CancellationToken>,
    /// The stops that wait for their running story to end, by plan index.
    stopping: HashMap<usize, epic_state_store::inbox::Sent>,
    /// The question each story waiting for an answer asked, by plan index.
    questions: HashMap<usize, String>,
    /// Waits for an answer begun so far, to tell a wait from the one before it.
    wait_count: u64,
    /// Waits begun whose timers the loop has not started yet.
    waits_due: Vec<people::Wait>,
    /// The latest wait of each story.
    waits_due_count: HashMap<usize, u64>,
    /// The commands people gave each story that this run took, for its outcome.
    given: HashMap<usize, Vec<epic_report::GivenCommand>>,
    /// Stories merged whose notes no coder turn read the loop has yet to drop.
    unread: Vec<usize>,
}

impl fmt::Debug for Loop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loop")
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

impl Loop {
    /// The loop over `plan`, where `merged` (plan index and branch) are the stories an earlier
    /// run merged, and `history` holds the last run's report: a merged story keeps its outcome
    /// there, and its durations weigh the critical path.
    pub(super) fn new(
        shared: Arc<Shared>,
        plan: &ValidPlan,
        merged: &[(usize, String)],
        history: History,
        flakes: Flakes,
    ) -> Self {
        let n = plan.plan().stories.len();
        let mut outcomes = vec![None; n];
        let mut merged_ids = HashSet::new();
        for (i, branch) in merged {
            let story = &plan.plan().stories[*i];
            merged_ids.insert(story.id.clone());
            (shared.events)(Event::StoryAlreadyMerged {
                story: story.id.clone(),
                branch: branch.clone(),
            });
            outcomes[*i] = Some(history.merged_before(story, branch));
        }
        let weights = weights(plan, history.previous());
        let schedule = Schedule::new(
            plan,
            shared.config.schedule,
            |story| {
                plan.index_of(&story.id)
                    .and_then(|i| weights.get(i).copied())
                    .unwrap_or(1)
            },
            &merged_ids,
            shared.config.concurrency.max(1),
        );
        if schedule.plan_order_is_faster() {
            (shared.events)(Event::RunNote {
                message: "critical-path: plan order finishes sooner with these stories' expected \
                          durations, so stories start in plan order"
                    .to_owned(),
            });
        }
        let hook = shared
            .config
            .board_hook
            .clone()
            .map(|command| (command, shared.config.hook_timeout));
        let mut board = Board::new(
            &shared.dir,
            plan,
            hook,
            shared.epic_worktree.clone(),
            Arc::clone(&shared.events),
        );
        for (i, outcome) in outcomes.iter().enumerate() {
            if let Some(outcome) = outcome {
                board.set(
                    i,
                    Column::Done,
                    Move {
                        branch: outcome.branch.clone(),
                        detail: Some("merged on a previous run".to_owned()),
                        ..Move::default()
                    },
                );
            }
        }
        board.publish_all();
        let concurrency = shared.config.concurrency.max(1);
        Self {
            usage: UsageMeter::new(shared.config.prices.clone()),
            history,
            shared,
            plan: plan.clone(),
            schedule,
            outcomes,
            board,
            free_slots: (0..concurrency).collect(),
            removals: Vec::new(),
            flakes,
            tokens: HashMap::new(),
            stopping: HashMap::new(),
            questions: HashMap::new(),
            unread: Vec::new(),
            wait_count: 0,
            waits_due: Vec::new(),
            waits_due_count: HashMap::new(),
            given: HashMap::new(),
        }
    }

    fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    /// Runs the stories to the end (or the interrupt, `cancel`), then writes the final report.
    pub(super) async fn run(mut self, cancel: CancellationToken) -> RunOutcome {
        let stories = cancel.child_token();
        let mut set: JoinSet<StoryEnd> = JoinSet::new();
        // The removals of merged stories' worktrees, off the stories' path; each returns the
        // worktree it left in place when the interrupt came first.
        let mut cleanups: JoinSet<Option<(String, PathBuf)>> = JoinSet::new();
        let mut left: Vec<(String, PathBuf)> = Vec::new();
        let mut running: Vec<(tokio::task::Id, usize, usize)> = Vec::new();
        // Set when a story ended: the report is rewritten once the freed slots are filled, in
        // the background, so its writes (and their fsyncs) never hold up the loop; ends that
        // come while a write is under way, or before `report_at`, are in the next one. The
        // report holds every story, so it is written at most once every `RENDER_EVERY` (and a
        // twentieth of the time: `pace`), not once a story: on an epic of thousands of stories
        // a write a story would cost each story more the more stories there are.
        let mut report_due = false;
        let mut report_writer: Option<tokio::task::JoinHandle<Result<(), String>>> = None;
        let mut report_at = tokio::time::Instant::now();
        let mut report_started = report_at;
        // Set once a seat stopped the run (a pause past --max-wait, a seat not logged in).
        let mut seat_stopped = false;
        let pauses = Arc::clone(&self.shared.pauses);
        let mut inbox = self.open_inbox(&stories).await;
        // The waits for an answer, each ending at `--max-wait` on the run's clock.
        let mut waits: JoinSet<people::Wait> = JoinSet::new();
        loop {
            self.check_budget();
            if !self.schedule.is_halted() {
                self.launch_ready(&mut set, &mut running, &stories);
            }
            // After the launches: each removal waits for the stories just started to have
            // their worktrees.
            self.spawn_removals(&mut cleanups, &cancel);
            self.board.flush();
            if report_writer.is_none() && report_due && tokio::time::Instant::now() >= report_at {
                report_due = false;
                report_started = tokio::time::Instant::now();
                report_writer = Some(self.spawn_report_write());
            }
            self.time_waits(&mut waits);
            let held = self.schedule.held() > 0 && !self.schedule.is_interrupted();
            if set.is_empty() && cleanups.is_empty() && !held {
                break;
            }
            tokio::select! {
                // The interrupt first: a story that ended because of it must be recorded as
                // interrupted, not as the last story of a finished run.
                biased;
                () = cancel.cancelled(), if !self.schedule.is_interrupted() => {
                    self.schedule.interrupt();
                    stories.cancel();
                    self.emit(Event::RunNote {
                        message: "interrupted: stopping every running story; their state is kept and a rerun resumes them".to_owned(),
                    });
                }
                // Before the stories' ends: the story whose turn stopped the run ends cancelled,
                // and must be recorded with the reason.
                () = pauses.stopped(), if !seat_stopped => {
                    seat_stopped = true;
                    self.seat_stopped(&stories);
                }
                Some(joined) = set.join_next_with_id() => {
                    if let Some((index, outcome)) = self.joined(joined, &mut running, &stories) {
                        self.settle_stop(index, outcome).await;
                    }
                    self.settle_late_stops().await;
                    self.drop_unread_notes().await;
                    report_due = true;
                }
                taken = inbox.next() => {
                    self.take(taken, &stories).await;
                    report_due = true;
                }
                Some(Ok(wait)) = waits.join_next(), if !waits.is_empty() => {
                    self.wait_ended(wait).await;
                    report_due = true;
                }
                written = async {
                    match report_writer.as_mut() {
                        Some(writer) => writer.await,
                        None => std::future::pending().await,
                    }
                }, if report_writer.is_some() => {
                    report_writer = None;
                    let now = tokio::time::Instant::now();
                    report_at = now + epic_events::pace(now - report_started);
                    self.report_written(written.unwrap_or_else(|error| Err(error.to_string())));
                }
                () = tokio::time::sleep_until(report_at), if report_due && report_writer.is_none() => {}
                Some(cleaned) = cleanups.join_next(), if !cleanups.is_empty() => {
                    // A panicked removal left its worktree too; `epic clean` removes it.
                    if let Ok(Some(kept)) = cleaned {
                        left.push(kept);
                    }
                }
            }
        }
        if let Some(writer) = report_writer {
            self.report_written(writer.await.unwrap_or_else(|error| Err(error.to_string())));
        }
        self.wind_up(left).await
    }

    /// Everything after the last story: the notes, the epic head checked, the last sweeps, the
    /// final report and the run's end.
    async fn wind_up(mut self, left: Vec<(String, PathBuf)>) -> RunOutcome {
        self.note_left(left);
        self.note_config_changes().await;
        let reason = self
            .schedule
            .halt_reason()
            .map(|why| format!("not started: {why}"));
        if let Some(reason) = reason {
            for index in 0..self.outcomes.len() {
                if self.outcomes[index].is_none() {
                    self.skip(index, &reason);
                }
            }
        }
        self.restore_epic_head().await;
        self.last_guard_sweep().await;
        let stopped = self.shared.pauses.stop();
        let interrupted =
            self.schedule.is_interrupted() || stopped.as_ref().is_some_and(SeatStop::interrupts);
        // Stories sweep at their end; this catches what the baseline's gates left.
        self.shared.sweep_orphans(None).await;
        let report = self.write_report().await;
        let done = report.count(OutcomeStatus::Done);
        let failed = report.count(OutcomeStatus::Failed);
        self.emit(Event::RunFinished {
            done,
            failed,
            skipped: report.stories.len() - done - failed,
            interrupted,
        });
        let Self { board, shared, .. } = self;
        board.close().await;
        RunOutcome {
            report,
            interrupted,
            epic_worktree: shared.epic_worktree.clone(),
            state_dir: shared.dir.root().to_path_buf(),
            stopped,
        }
    }

    /// A seat stopped the run: nothing more starts; on a pause past `--max-wait` the running
    /// stories are cancelled too (the run ends as an interrupted one), while on a seat that is
    /// not logged in they go on (their turns on that seat are refused, and end them cancelled).
    fn seat_stopped(&mut self, stories: &CancellationToken) {
        let Some(stop) = self.shared.pauses.stop() else {
            return;
        };
        let why = match &stop {
            SeatStop::NotLoggedIn { seat, message, fix } => {
                format!("`{seat}` is not logged in ({message}): {fix}")
            }
            other => other.to_string(),
        };
        if stop.interrupts() {
            self.schedule.cancel_running(why.clone());
            stories.cancel();
        } else {
            self.schedule.halt(why.clone());
        }
        self.emit(Event::RunNote {
            message: format!("stopped launching stories: {why}"),
        });
    }

    /// Every story has ended: whatever moved the epic branch since the last merge (a process an
    /// agent left, a judge's `git update-ref`) is undone before the run reports, with a note.
    async fn restore_epic_head(&self) {
        match self.shared.restore_epic_head().await {
            Ok(None) => {}
            Ok(Some(moved_to)) => {
                let message = self
                    .shared
                    .note_restored_epic_head(moved_to, "found when the run ended");
                self.emit(Event::RunNote { message });
            }
            Err(error) => self.emit(Event::RunNote {
                message: format!(
                    "could not check that the epic branch is at its proven head {}: {}",
                    self.shared.proven(),
                    epic_process::chain(&error)
                ),
            }),
        }
    }

    /// Stops launching once the budget is reached (the first time it is found so): the stories
    /// not started end with the reason, the event says so.
    fn check_budget(&mut self) {
        if self.schedule.is_halted() {
            return;
        }
        if let Some(reached) = self.shared.budget.reached() {
            self.schedule.halt(reached.to_string());
            self.emit(Event::BudgetReached {
                spent_usd: reached.spent,
                budget_usd: reached.limit,
                message: reached.to_string(),
            });
        }
    }

    /// Starts the stories the schedule has ready, one per free slot.
    fn launch_ready(
        &mut self,
        set: &mut JoinSet<StoryEnd>,
        running: &mut Vec<(tokio::task::Id, usize, usize)>,
        stories: &CancellationToken,
    ) {
        for index in self.schedule.start_ready(self.free_slots.len()) {
            let Some(slot) = self.free_slots.pop_first() else {
                break;
            };
            let story = &self.plan.plan().stories[index];
            self.emit(Event::StoryStarted {
                story: story.id.clone(),
                slot,
            });
            self.board.set(index, Column::Active, Move::default());
            // Its own token, under the run's: `epic stop` ends this story alone.
            let token = stories.child_token();
            self.tokens.insert(index, token.clone());
            let handle = set.spawn(story::run_story(
                Arc::clone(&self.shared),
                index,
                slot,
                self.shared.preparing.enter(),
                token,
                stories.clone(),
            ));
            running.push((handle.id(), index, slot));
        }
    }

    /// Spawns the removal of each merged story's worktree queued by [`joined`](Self::joined).
    fn spawn_removals(
        &mut self,
        cleanups: &mut JoinSet<Option<(String, PathBuf)>>,
        cancel: &CancellationToken,
    ) {
        for (story, worktree) in self.removals.drain(..) {
            cleanups.spawn(story::remove_merged_worktree(
                Arc::clone(&self.shared),
                story,
                worktree,
                cancel.clone(),
            ));
        }
    }

    /// Names the merged stories' worktrees an interrupt left in place, if any.
    fn note_left(&self, mut left: Vec<(String, PathBuf)>) {
        if left.is_empty() {
            return;
        }
        left.sort();
        self.emit(Event::RunNote {
            message: format!(
                "interrupted before removing the worktrees of merged stories: {}; `epic clean` \
                 removes them",
                left.iter()
                    .map(|(story, worktree)| format!("{story} ({})", worktree.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }

    /// Names the git configuration keys that changed since the run pinned them (an agent's
    /// `git config`, a planted include): epic's own git kept the start values all along (see
    /// `epic_git_ops::Git::config_changes`), but the next run starts from what is there now.
    async fn note_config_changes(&self) {
        let changed = offload::git(
            &self.shared.git,
            "compare the git configuration with the run's start",
            |git| git.config_changes(),
        )
        .await;
        let message = match changed {
            Ok(keys) if keys.is_empty() => return,
            Ok(keys) => format!(
                "the git configuration changed during the run: {}; epic's own git kept the \
                 values it started with, but the next run takes them as they are now (see \
                 `git config --list --show-origin`)",
                keys.join(", ")
            ),
            Err(error) => format!("{error}: {}", error.source),
        };
        self.emit(Event::RunNote { message });
    }

    /// Records a story task that ended (a panic or abort is the story's failure) and queues the
    /// removal of its worktree when it merged; the caller rewrites the report and spawns the
    /// removal. A story a person stopped is the caller's to record: its index and outcome so
    /// far.
    fn joined(
        &mut self,
        joined: Result<(tokio::task::Id, StoryEnd), tokio::task::JoinError>,
        running: &mut Vec<(tokio::task::Id, usize, usize)>,
        stories: &CancellationToken,
    ) -> Option<(usize, StoryOutcome)> {
        let (id, end) = match joined {
            Ok((id, end)) => (id, Ok(end)),
            Err(error) => (error.id(), Err(error)),
        };
        let at = running.iter().position(|(task, _, _)| *task == id)?;
        let (_, index, slot) = running.swap_remove(at);
        self.free_slots.insert(slot);
        self.tokens.remove(&index);
        let mut end = end.unwrap_or_else(|error| StoryEnd {
            ending: Ending::Failed(if error.is_panic() {
                Failure::Panicked
            } else {
                Failure::TaskLost(error.to_string())
            }),
            branch: None,
            merged_worktree: None,
            usage: UsageMeter::new(self.shared.config.prices.clone()),
            revisions: 0,
            started_at: epic_report::Timestamp::now(),
            finished_at: epic_report::Timestamp::now(),
        });
        if let Some(worktree) = end.merged_worktree.take() {
            let story = self.plan.plan().stories[index].id.clone();
            self.removals.push((story, worktree));
        }
        self.finish(index, end, stories)
            .map(|outcome| (index, outcome))
    }

    fn skip(&mut self, index: usize, reason: &str) {
        let story = &self.plan.plan().stories[index];
        self.emit(Event::StorySkipped {
            story: story.id.clone(),
            reason: reason.to_owned(),
        });
        self.outcomes[index] = Some(
            StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Skipped)
                .with_reason(reason)
                .in_run(self.history.number()),
        );
        self.board.set(
            index,
            Column::Skipped,
            Move {
                detail: Some(reason.to_owned()),
                ..Move::default()
            },
        );
    }

    /// The outcome of story `index` as `end` leaves it, before its ending says how it ended:
    /// its times, its run, its flaky gates and ended turns, its merge revisions, its usage (`totals`)
    /// and its branch.
    fn outcome_of(&self, index: usize, end: &StoryEnd, totals: &UsageTotals) -> StoryOutcome {
        let story = &self.plan.plan().stories[index];
        let troubles = self.flakes.take(&story.id);
        let mut outcome = StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Done)
            .started(end.started_at)
            .finished(end.finished_at)
            .in_run(self.history.number())
            .with_inherited_tests(troubles.inherited_tests())
            .with_flaky_gates(troubles.flaky_gates)
            .with_ended_turns(troubles.stalled_turns, troubles.looping_turns)
            .with_permission_rejections(troubles.permission_rejections)
            .with_merge_revisions(end.revisions);
        if totals.turns > 0 {
            outcome = outcome
                .with_usage(totals)
                .with_seats(end.usage.seat_usage());
        }
        if let Some(branch) = &end.branch {
            outcome = outcome.on_branch(branch);
        }
        outcome
    }

    /// Records how story `index` ended and what that changes for the others; a story a person
    /// stopped, cancelled, is left to the caller with its outcome so far.
    fn finish(
        &mut self,
        index: usize,
        end: StoryEnd,
        stories: &CancellationToken,
    ) -> Option<StoryOutcome> {
        self.usage.absorb(&end.usage);
        let story = &self.plan.plan().stories[index];
        let totals = end.usage.totals();
        let mut outcome = self
            .outcome_of(index, &end, &totals)
            .with_commands(self.given_to(index));
        let change = Move {
            branch: end.branch.clone(),
            estimated_tokens: (totals.turns > 0).then_some(totals.usage.total),
            estimated_cost_usd: (totals.turns > 0).then(|| totals.cost_usd()).flatten(),
            detail: None,
        };
        match end.ending {
            Ending::Merged {
                judge,
                proven_with,
                in_place,
            } => {
                self.schedule.done(index);
                self.unread.push(index);
                if let Some(judge) = &judge {
                    outcome = outcome.with_judge(judge);
                }
                let detail = merged_detail(judge, &proven_with, in_place.as_ref());
                if let Some(in_place) = in_place {
                    outcome = outcome.already_in_place(in_place);
                }
                self.outcomes[index] = Some(outcome.proven_with(proven_with));
                self.board
                    .set(index, Column::Done, Move { detail, ..change });
            }
            Ending::Cancelled if self.is_stopping(index) => return Some(outcome),
            Ending::Waiting { question } => self.waiting(index, question),
            Ending::Cancelled => {
                self.schedule.cancelled(index);
                let interrupted = self.schedule.is_interrupted();
                let reason = match (self.schedule.cancel_reason(), self.shared.budget.reached()) {
                    (Some(why), _) => format!("cancelled: {why}; a rerun resumes it"),
                    // Its next turn was refused: the budget stopped it, not an interrupt (the
                    // budget's halt says the same in other words).
                    (None, Some(reached)) if !interrupted => {
                        format!("not finished: {reached}; a rerun resumes it")
                    }
                    // A story whose turn a stopped seat refused ends cancelled under a halt.
                    (None, _) => match self.schedule.halt_reason().filter(|_| !interrupted) {
                        Some(why) => format!("cancelled: {why}; a rerun resumes it"),
                        None => "interrupted; a rerun resumes it".to_owned(),
                    },
                };
                self.emit(Event::StorySkipped {
                    story: story.id.clone(),
                    reason: reason.clone(),
                });
                outcome.status = OutcomeStatus::Skipped;
                self.outcomes[index] = Some(outcome.with_reason(&reason));
                self.board.set(
                    index,
                    Column::Skipped,
                    Move {
                        detail: Some(reason),
                        ..change
                    },
                );
            }
            Ending::Failed(failure) => {
                let reason = failure.reason();
                self.emit(Event::StoryFailed {
                    story: story.id.clone(),
                    reason: reason.clone(),
                });
                outcome.status = OutcomeStatus::Failed;
                self.outcomes[index] = Some(outcome.with_reason(&reason));
                self.board.set(
                    index,
                    Column::Failed,
                    Move {
                        detail: Some(reason.clone()),
                        ..change
                    },
                );
                let id = story.id.clone();
                let skipped = self.schedule.fail(index);
                for dependent in skipped {
                    self.skip(dependent, &format!("blocked by {id}"));
                }
                if failure.halts() {
                    self.schedule.halt(reason.clone());
                    self.emit(Event::RunNote {
                        message: format!("stopped launching stories: {reason}"),
                    });
                }
                if self.shared.config.fail_fast && self.schedule.cancel_reason().is_none() {
                    let why = format!("--fail-fast stopped the run after story '{id}' failed");
                    self.schedule.cancel_running(why.clone());
                    stories.cancel();
                    self.emit(Event::RunNote { message: why });
                }
            }
        }
        None
    }

    /// The guard's last check of the run, reading every guarded path: a change no turn's check
    /// read (one that raised no event, made after the last sweep) is undone and noted.
    async fn last_guard_sweep(&self) {
        let guard = Arc::clone(&self.shared.guard);
        if let Ok(Err(tampered)) = offload::blocking(move || guard.sweep()).await {
            self.emit(Event::RunNote {
                message: format!(
                    "files epic guards changed after the last turn's check and were put back: {}",
                    tampered.paths()
                ),
            });
        }
    }

    /// Rewrites `report.json` and `report.md` with the outcomes so far; returns the report.
    async fn write_report(&self) -> EpicReport {
        let report = self.report(Some(epic_report::Timestamp::now()));
        let (dir, document) = (self.shared.dir.clone(), ReportDocument(report));
        // The report goes to the blocking thread and back, not copied; only a thread that died
        // writing it loses it, and then it is built again.
        let joined = offload::blocking(move || {
            let written = epic_events::write_report(&dir, &document);
            (document, written)
        })
        .await;
        match joined {
            Ok((document, written)) => {
                self.report_written(written);
                document.0
            }
            Err(died) => {
                self.report_written(Err(died.to_string()));
                self.report(Some(epic_report::Timestamp::now()))
            }
        }
    }

    /// The report of the outcomes so far; `finished` when the run is over.
    fn report(&self, finished: Option<epic_report::Timestamp>) -> EpicReport {
        build_report(
            &self.plan,
            &self.shared.epic_branch,
            &self.outcomes,
            &self.usage,
            &self.history,
            finished,
        )
    }

    /// Starts rewriting the report with the outcomes so far, in the background.
    fn spawn_report_write(&self) -> tokio::task::JoinHandle<Result<(), String>> {
        let report = self.report(None);
        let dir = self.shared.dir.clone();
        offload::spawn(move || epic_events::write_report(&dir, &ReportDocument(report)))
    }

    /// Notes a report that could not be written.
    fn report_written(&self, written: Result<(), String>) {
        if let Err(error) = written {
            self.emit(Event::RunNote {
                message: format!("the report could not be written: {error}"),
            });
        }
    }
}

/// Each story's weight for the critical-path order, in milliseconds (whole seconds would make
/// every story under two seconds weigh the same): its duration in the previous run's report,
/// else its plan entry's `estimated_time`, else the mean of the known ones, else 1.
fn weights(plan: &ValidPlan, previous: Option<&EpicReport>) -> Vec<u64> {
    plan.weights_by(|story| {
        previous
            .and_then(|report| report.story(&story.id))
            .and_then(StoryOutcome::duration)
            .or_else(|| story.estimated_duration())
    })
    .0
}

/// The board's detail of a merged story: `already in place (evidence: …)` for a story whose
/// work was already there, the judge's note, then the stories proven together with it by one
/// gate run (`proven together: a, b`).
fn merged_detail(
    judge: Option<String>,
    proven_with: &[String],
    in_place: Option<&epic_report::InPlace>,
) -> Option<String> {
    let in_place =
        in_place.map(|in_place| format!("already in place (evidence: {})", in_place.paths()));
    let together =
        (!proven_with.is_empty()).then(|| format!("proven together: {}", proven_with.join(", ")));
    let parts: Vec<String> = [in_place, judge, together].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, Timestamp};
    use epic_story_plan::{Story, StoryPlan};

    use super::weights;

    #[test]
    fn weights_are_the_previous_durations_in_milliseconds() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]),
                Story::new("b", "B", ["b"]),
                Story::new("c", "C", ["c"]),
            ],
        }
        .validate()
        .unwrap();
        assert_eq!(weights(&plan, None), [1, 1, 1], "nothing known: all equal");
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        let ran = |id: &str, finish: &str| {
            StoryOutcome::new(id, id, OutcomeStatus::Done)
                .started(at("2026-01-01T00:00:00Z"))
                .finished(at(finish))
        };
        let previous = EpicReport::new("e", "epic/e")
            .with_story(ran("a", "2026-01-01T00:00:00.300Z"))
            .with_story(ran("b", "2026-01-01T00:00:01.900Z"));
        // Sub-second differences count (whole seconds would give 1 and 1); the unknown story
        // gets the mean of the known ones.
        assert_eq!(weights(&plan, Some(&previous)), [300, 1900, 1100]);
    }

    #[test]
    fn estimated_times_weigh_what_no_run_has_measured() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]).estimated("2s"),
                Story::new("b", "B", ["b"]).estimated("1m"),
                Story::new("c", "C", ["c"]),
            ],
        }
        .validate()
        .unwrap();
        assert_eq!(weights(&plan, None), [2000, 60_000, 31_000]);
        let previous = EpicReport::new("e", "epic/e").with_story(
            StoryOutcome::new("b", "b", OutcomeStatus::Done)
                .started("2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap())
                .finished("2026-01-01T00:00:05Z".parse::<Timestamp>().unwrap()),
        );
        // A measured duration wins over the estimate.
        assert_eq!(weights(&plan, Some(&previous)), [2000, 5000, 3500]);
    }
}
