//! What people do to a running epic, as the loop carries it out: each command of the inbox
//! (`epic answer`, `tell`, `stop`, `retry`) applied to the schedule and the story's state, then
//! its file removed (or, for a note or an answer, held for the coder); a story that waits for an
//! answer, and its wait bounded by `--max-wait`; the stories a person held on an earlier run.
//!
//! Every effect is recorded before its command's file goes: a crash in between applies the
//! command again on the next run, and each applies once: a stopped story stays stopped, a
//! retried one runs, a held note is no longer in the inbox.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use epic_events::{Column, Event, Move};
use epic_process::offload;
use epic_report::{GivenCommand, OutcomeStatus, StoryOutcome};
use epic_schedule::Standing;
use epic_state_store::inbox::{self, Action, Sent};
use epic_state_store::{Hold, StoryStage, StoryState};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::Loop;
use crate::failure::Failure;
use crate::run::inbox::{self as inbox_reader, InboxReader, Taken};
use crate::story;

/// A wait for an answer under way: the story and the count of its waits, so a timer that
/// outlived an answer finds a newer wait (or none) and does nothing.
pub(super) type Wait = (usize, u64);

impl Loop {
    /// Carries out what the inbox gave: a command, or a file that is none (refused, removed).
    pub(super) async fn take(&mut self, taken: Taken, stories: &CancellationToken) {
        match taken {
            Taken::Command(sent) => self.apply(sent, stories).await,
            Taken::Unreadable(unreadable) => {
                self.emit(Event::CommandRefused {
                    command: unreadable
                        .path
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    reason: format!(
                        "{}: {}; it was removed, give the command again",
                        unreadable,
                        epic_process::chain(&unreadable.source)
                    ),
                });
                discard(unreadable.path).await;
            }
        }
    }

    /// Applies one command, in the order the commands were given.
    async fn apply(&mut self, sent: Sent, stories: &CancellationToken) {
        if sent.command.action == Action::StopAll {
            self.emit(Event::Stopped {
                story: None,
                command: sent.id.clone(),
                uid: sent.command.uid,
                given_at: sent.command.at.clone(),
            });
            if !self.schedule.is_interrupted() {
                self.schedule.interrupt();
                stories.cancel();
                self.emit(Event::RunNote {
                    message: format!(
                        "stopped by `epic stop --all` (uid {}): stopping every running story; \
                         their state is kept and a rerun resumes them",
                        sent.command.uid
                    ),
                });
            }
            discard(sent.path).await;
            return;
        }
        let story = sent.command.story.clone().unwrap_or_default();
        let Some(index) = self.plan.index_of(&story) else {
            return self
                .refuse(sent, format!("the plan has no story `{story}`"))
                .await;
        };
        self.given.entry(index).or_default().push(GivenCommand {
            id: sent.id.clone(),
            action: sent.command.action.as_str().to_owned(),
            uid: sent.command.uid,
            at: sent.command.at.clone(),
        });
        match sent.command.action.clone() {
            Action::Tell { .. } => self.tell(index, sent).await,
            Action::Answer { .. } => self.answer(index, sent).await,
            Action::Stop => self.stop(index, sent).await,
            Action::Retry { fresh } => self.retry(index, sent, fresh).await,
            Action::StopAll => {}
        }
    }

    /// `epic tell`: the note held for the story's next coder turn.
    async fn tell(&mut self, index: usize, sent: Sent) {
        if self.is_done(index) {
            let story = self.id(index);
            return self
                .refuse(
                    sent,
                    format!("story `{story}` is done: no coder turn of it is left to read a note"),
                )
                .await;
        }
        if self.hold_note(&sent).await {
            self.emit(Event::Told {
                story: self.id(index),
                command: sent.id,
                uid: sent.command.uid,
                given_at: sent.command.at,
            });
        }
    }

    /// `epic answer`: the answer held for the coder, and the story, waiting, runs again; an
    /// answer that finds the story not waiting (the wait ran out, or it was answered already)
    /// is kept as a note for its next coder turn all the same: a person's words are not lost.
    async fn answer(&mut self, index: usize, sent: Sent) {
        if self.is_done(index) {
            let story = self.id(index);
            return self
                .refuse(
                    sent,
                    format!("story `{story}` is done: nothing waits for an answer"),
                )
                .await;
        }
        if !self.hold_note(&sent).await {
            return;
        }
        let story = self.id(index);
        self.emit(Event::Answered {
            story: story.clone(),
            command: sent.id,
            uid: sent.command.uid,
            given_at: sent.command.at,
        });
        if *self.schedule.standing(index) == Standing::Held {
            self.questions.remove(&index);
            self.record_hold(index, None).await;
            self.schedule.retry(index);
            self.board.set(index, Column::Planned, Move::default());
        } else {
            self.emit(Event::RunNote {
                message: format!(
                    "story `{story}` was not waiting for an answer when it came: its next coder \
                     turn reads it as a note"
                ),
            });
        }
    }

    /// `epic stop`: a running story's turn ended now (its token cancelled; it is recorded
    /// stopped when it ends), any other not finished stopped at once.
    async fn stop(&mut self, index: usize, sent: Sent) {
        let story = self.id(index);
        let refused = match self.schedule.standing(index) {
            Standing::Done => Some(format!("story `{story}` is done: nothing to stop")),
            _ if self.is_stopped(index) => Some(format!("story `{story}` is stopped already")),
            _ => None,
        };
        if let Some(reason) = refused {
            return self.refuse(sent, reason).await;
        }
        self.emit(Event::Stopped {
            story: Some(story),
            command: sent.id.clone(),
            uid: sent.command.uid,
            given_at: sent.command.at.clone(),
        });
        if *self.schedule.standing(index) == Standing::Running {
            if let Some(token) = self.tokens.get(&index) {
                token.cancel();
            }
            self.stopping.insert(index, sent);
            return;
        }
        self.questions.remove(&index);
        self.stopped(index, None, &sent).await;
        discard(sent.path).await;
    }

    /// `epic retry`: a failed or stopped story (or one skipped or waiting) runs again, its
    /// dependents with it; `fresh`, from the epic head.
    async fn retry(&mut self, index: usize, sent: Sent, fresh: bool) {
        let story = self.id(index);
        let can = match self.schedule.standing(index) {
            Standing::Failed | Standing::Cancelled | Standing::Held | Standing::Skipped { .. } => {
                true
            }
            // Not started in this run: one that failed on an earlier run (it would run again
            // anyway; `--fresh` starts it over).
            Standing::Waiting => self.failed_before(index).await,
            Standing::Running | Standing::Done => false,
        };
        if !can {
            let doing = match self.schedule.standing(index) {
                Standing::Running => "running",
                Standing::Done => "done",
                _ => "not started yet, and it did not fail before",
            };
            return self
                .refuse(
                    sent,
                    format!("story `{story}` is {doing}: there is nothing to retry"),
                )
                .await;
        }
        self.questions.remove(&index);
        if let Ok(path) = self.shared.dir.story_state(&story) {
            let shared = &self.shared;
            story::record_retry(shared, path, fresh).await;
        }
        self.emit(Event::Retried {
            story,
            fresh,
            command: sent.id.clone(),
            uid: sent.command.uid,
            given_at: sent.command.at.clone(),
        });
        self.outcomes[index] = None;
        self.board.set(index, Column::Planned, Move::default());
        for freed in self.schedule.retry(index) {
            self.outcomes[freed] = None;
            self.board.set(freed, Column::Planned, Move::default());
        }
        discard(sent.path).await;
    }

    /// Story `index` stopped by `sent`: its outcome, its dependents skipped, its state saying
    /// so (it runs again only after `epic retry`). `outcome` is its outcome so far, when it ran.
    pub(super) async fn stopped(
        &mut self,
        index: usize,
        outcome: Option<StoryOutcome>,
        sent: &Sent,
    ) {
        let story = self.plan.plan().stories[index].clone();
        // The state first: a person who reads the event may `epic retry` at once.
        let hold = Hold::Stopped {
            uid: sent.command.uid,
            at: sent.command.at.clone(),
        };
        self.record_stop(index, hold).await;
        self.emit(Event::StoryStopped {
            story: story.id.clone(),
        });
        let outcome = outcome
            .unwrap_or_else(|| StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Stopped))
            .with_commands(self.given_to(index));
        self.held_stopped(index, outcome, sent.command.uid, &sent.command.at);
    }

    /// Story `index`, stopped by user `uid` at `at`, as it stands in this run: its outcome
    /// (`outcome` so far, made `stopped` with the reason), its card, its dependents skipped.
    fn held_stopped(&mut self, index: usize, outcome: StoryOutcome, uid: u32, at: &str) {
        let story = self.id(index);
        let reason =
            format!("stopped by a person (uid {uid}, {at}); `epic retry {story}` runs it again");
        let mut outcome = outcome.in_run(self.history.number()).with_reason(&reason);
        outcome.status = OutcomeStatus::Stopped;
        self.outcomes[index] = Some(outcome);
        self.board.set(
            index,
            Column::Failed,
            Move {
                detail: Some(reason),
                ..Move::default()
            },
        );
        for dependent in self.schedule.fail(index) {
            self.skip(dependent, &format!("blocked by {story} (stopped)"));
        }
    }

    /// The stories a person held on an earlier run: stopped ones stay stopped, waiting ones
    /// wait again (a new `--max-wait`).
    pub(super) async fn restore_holds(&mut self) {
        let paths: Vec<(usize, PathBuf)> = (0..self.outcomes.len())
            .filter(|&index| self.outcomes[index].is_none())
            .filter_map(|index| Some((index, self.shared.dir.story_state(&self.id(index)).ok()?)))
            .collect();
        let holds: Vec<(usize, Hold)> = offload::blocking(move || {
            paths
                .into_iter()
                .filter_map(|(index, path)| {
                    let state = epic_state_store::load::<StoryState>(&path).ok()??;
                    (state.status != StoryStage::Merged).then_some((index, state.hold?))
                })
                .collect()
        })
        .await
        .unwrap_or_default();
        for (index, hold) in holds {
            match hold {
                Hold::Stopped { uid, at } => {
                    let story = &self.plan.plan().stories[index];
                    let outcome =
                        StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Stopped);
                    self.held_stopped(index, outcome, uid, &at);
                }
                Hold::Waiting { question, .. } => self.waiting(index, question),
            }
        }
    }

    /// Story `index` waits for an answer to `question`: held in the schedule, its wait timed.
    pub(super) fn waiting(&mut self, index: usize, question: String) {
        self.schedule.hold(index);
        self.emit(Event::StoryWaiting {
            story: self.id(index),
            question: question.clone(),
        });
        self.board.set(
            index,
            Column::Active,
            Move {
                detail: Some(format!("waiting for an answer: {question}")),
                ..Move::default()
            },
        );
        self.questions.insert(index, question);
        self.wait_count += 1;
        self.waits_due.push((index, self.wait_count));
    }

    /// A wait's time ran out: the story, still waiting on that wait, fails.
    pub(super) async fn wait_ended(&mut self, (index, count): Wait) {
        let current = self
            .waits_due_count
            .get(&index)
            .is_some_and(|latest| *latest == count);
        if !current || *self.schedule.standing(index) != Standing::Held {
            return;
        }
        let Some(question) = self.questions.remove(&index) else {
            return;
        };
        let failure = Failure::Unanswered {
            story: self.id(index),
            question,
            waited: self.shared.config.max_wait,
        };
        let reason = failure.reason();
        let story = self.plan.plan().stories[index].clone();
        // The state first: a person who reads the event may `epic retry` at once.
        if let Ok(path) = self.shared.dir.story_state(&story.id) {
            story::record_failed(&self.shared, path).await;
        }
        self.emit(Event::StoryFailed {
            story: story.id.clone(),
            reason: reason.clone(),
        });
        self.outcomes[index] = Some(
            StoryOutcome::new(&story.id, &story.title, OutcomeStatus::Failed)
                .in_run(self.history.number())
                .with_reason(&reason)
                .with_commands(self.given_to(index)),
        );
        self.board.set(
            index,
            Column::Failed,
            Move {
                detail: Some(reason),
                ..Move::default()
            },
        );
        for dependent in self.schedule.fail(index) {
            self.skip(dependent, &format!("blocked by {}", story.id));
        }
    }

    /// What people did before this run (the holds of earlier runs), then what they gave
    /// while no run was going, applied before any story starts; then the reader that hands on
    /// each command as it comes.
    pub(super) async fn open_inbox(&mut self, stories: &CancellationToken) -> InboxReader {
        self.restore_holds().await;
        let dir = self.shared.dir.clone();
        let given = offload::blocking(move || {
            let mut seen = HashSet::new();
            let taken = inbox_reader::new_commands(&dir, &mut seen);
            (taken, seen)
        })
        .await;
        let mut seen = HashSet::new();
        if let Ok((taken, ids)) = given {
            seen = ids;
            for taken in taken {
                self.take(taken, stories).await;
            }
        }
        InboxReader::start(self.shared.dir.clone(), seen)
    }

    /// Starts the timer of each wait begun since the last call: `--max-wait` on the run's
    /// clock.
    pub(super) fn time_waits(&mut self, waits: &mut JoinSet<Wait>) {
        let limit: Duration = self.shared.config.max_wait;
        for wait in std::mem::take(&mut self.waits_due) {
            self.waits_due_count.insert(wait.0, wait.1);
            let clock = self.shared.config.clock.clone();
            waits.spawn(async move {
                let until = clock.now() + limit;
                clock.wait_until(until).await;
                wait
            });
        }
    }

    /// A stop that waited for its story's end: the story recorded stopped, the command gone.
    pub(super) async fn settle_stop(&mut self, index: usize, outcome: StoryOutcome) {
        if let Some(sent) = self.stopping.remove(&index) {
            self.stopped(index, Some(outcome), &sent).await;
            discard(sent.path).await;
        }
    }

    /// The notes and answers held for stories that merged before a coder turn read them
    /// (given while their last turn ran): removed, and said so, rather than left held for a
    /// turn that never comes. The loop refuses notes for a merged story from then on.
    pub(super) async fn drop_unread_notes(&mut self) {
        for index in std::mem::take(&mut self.unread) {
            let story = self.id(index);
            let (dir, id) = (self.shared.dir.clone(), story.clone());
            let dropped = offload::blocking(move || {
                inbox::held(&dir, &id)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|sent| inbox::discard(&sent.path).is_ok())
                    .map(|sent| sent.id)
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            if !dropped.is_empty() {
                self.emit(Event::Note {
                    story,
                    message: format!(
                        "merged before a coder turn read what people gave it (command {}): \
                         no turn of it is left to read it",
                        dropped.join(", ")
                    ),
                });
            }
        }
    }

    /// The stops whose story ended before they could end its turn: a story waiting on an
    /// answer is stopped now; one that merged (its merge proven by a batch another story's task
    /// drove, which the stop does not cancel) or failed meanwhile keeps its end, and the stop
    /// is refused, its file removed rather than left for the next run.
    pub(super) async fn settle_late_stops(&mut self) {
        let late: Vec<usize> = self
            .stopping
            .keys()
            .copied()
            .filter(|&index| *self.schedule.standing(index) != Standing::Running)
            .collect();
        for index in late {
            let Some(sent) = self.stopping.remove(&index) else {
                continue;
            };
            let story = self.id(index);
            let reason = match self.schedule.standing(index) {
                Standing::Held => {
                    self.questions.remove(&index);
                    self.stopped(index, None, &sent).await;
                    discard(sent.path).await;
                    continue;
                }
                Standing::Done => {
                    format!("story `{story}` merged before the stop could end it: nothing to stop")
                }
                _ => format!(
                    "story `{story}` ended before the stop could end it (see its outcome); \
                     `epic retry {story}` runs it again"
                ),
            };
            self.refuse(sent, reason).await;
        }
    }

    /// Whether a stop waits for story `index` to end.
    pub(super) fn is_stopping(&self, index: usize) -> bool {
        self.stopping.contains_key(&index)
    }

    /// Whether story `index`'s state says it failed (on an earlier run).
    async fn failed_before(&self, index: usize) -> bool {
        let Ok(path) = self.shared.dir.story_state(&self.id(index)) else {
            return false;
        };
        offload::blocking(move || epic_state_store::load::<StoryState>(&path))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .is_some_and(|state| state.status == StoryStage::Failed)
    }

    /// The commands people gave story `index` that this run took, in order.
    pub(super) fn given_to(&self, index: usize) -> Vec<GivenCommand> {
        self.given.get(&index).cloned().unwrap_or_default()
    }

    fn id(&self, index: usize) -> String {
        self.plan.plan().stories[index].id.clone()
    }

    fn is_done(&self, index: usize) -> bool {
        *self.schedule.standing(index) == Standing::Done
    }

    fn is_stopped(&self, index: usize) -> bool {
        self.stopping.contains_key(&index)
            || self.outcomes[index]
                .as_ref()
                .is_some_and(|outcome| outcome.status == OutcomeStatus::Stopped)
    }

    /// A command the run cannot apply: said so, its file removed.
    async fn refuse(&mut self, sent: Sent, reason: String) {
        self.emit(Event::CommandRefused {
            command: sent.id,
            reason,
        });
        discard(sent.path).await;
    }

    /// Moves a note or an answer aside for the story's next coder turn; whether it could.
    async fn hold_note(&mut self, sent: &Sent) -> bool {
        let (dir, held) = (self.shared.dir.clone(), sent.clone());
        match offload::blocking(move || inbox::hold(&dir, &held)).await {
            Ok(Ok(_)) => true,
            Ok(Err(error)) => {
                self.emit(Event::CommandRefused {
                    command: sent.id.clone(),
                    reason: format!(
                        "could not keep it for the coder ({error}); it stays in the inbox for \
                         the next run"
                    ),
                });
                false
            }
            Err(_) => false,
        }
    }

    async fn record_hold(&self, index: usize, hold: Option<Hold>) {
        if let Ok(path) = self.shared.dir.story_state(&self.id(index)) {
            story::record_hold(&self.shared, path, hold).await;
        }
    }

    /// Records a stop in the story's state, making one for a story that never started (so that
    /// the next run keeps it stopped; its branch, not there, starts it afresh once retried).
    async fn record_stop(&self, index: usize, hold: Hold) {
        let story = &self.plan.plan().stories[index];
        let Ok(path) = self.shared.dir.story_state(&story.id) else {
            return;
        };
        let state = StoryState {
            id: story.id.clone(),
            hash: epic_story_plan::story_hash(story),
            branch: format!("story/{}/{}", self.shared.dir.epic_id(), story.id),
            worktree: self.shared.worktree_root.join(&story.id),
            status: StoryStage::Failed,
            merge: None,
            hold: Some(hold),
        };
        story::record_stop(&self.shared, path, state).await;
    }
}

/// Removes a command's file, best effort: one left behind is taken again by the next run, and
/// each command applies once.
async fn discard(path: PathBuf) {
    offload::blocking(move || inbox::discard(&path).ok())
        .await
        .ok();
}
