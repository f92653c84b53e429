//! One task of the story: the coder's turns, the review rounds, the strays put back in the
//! last round, and the commit that settles it.

use std::sync::Arc;

use epic_git_ops::{CommitId, CommitOutcome};

use crate::error::StoryError;
use epic_agents::NOOP_TOKEN;
use epic_agents::Role;
use epic_chat::Chat;
use epic_events::Event;
use epic_protocol::TaskPlan;
use epic_protocol::prompts;

use super::context::Run;
use super::job::NoopPolicy;

/// How one task ended.
pub(super) enum TaskEnd {
    Committed(Option<CommitId>),
    Noop,
    /// Changed nothing, unconfirmed, ticked by the no-op policy `complete`.
    NoopUnconfirmed,
}

impl Run<'_> {
    /// One task, started on the story branch at `start`. `interrupted`: the first open task of
    /// a resumed run, which may already hold the work of the turn a crashed run was in.
    pub(super) async fn task(
        &self,
        plan: &TaskPlan,
        index: usize,
        interrupted: bool,
        start: &CommitId,
    ) -> Result<TaskEnd, StoryError> {
        let task = &plan.tasks[index];
        let title = task.title.as_str();
        let start = *start;
        // Its first turn, on a worktree a killed run left changes in, and every turn run again
        // are told what the worktree holds uncommitted: what they reply on is committed.
        let mut chat = Chat::new(
            self.parts.seats.coder.clone(),
            Role::Coder,
            format!("{}\n{}", self.rules(), prompts::plan_so_far(plan, index)),
            self.context(Some(title)),
            Arc::clone(&self.recorder),
        )
        .telling_leftovers(Arc::clone(&self.parts.git));
        if let Some(dir) = &self.job.notes {
            chat = chat.reading_notes(dir.clone());
        }
        self.ask_coder(
            &mut chat,
            title,
            prompts::task(task, index, plan.tasks.len()),
        )
        .await?;
        if !self.changed_since(&start).await? {
            let reply = self
                .ask_coder(&mut chat, title, prompts::noop(title))
                .await?;
            if !self.changed_since(&start).await? {
                if reply.text.contains(NOOP_TOKEN) {
                    // "Already satisfied" holds only while the gates agree: a resumed story's
                    // branch can carry earlier work (committed as work in progress by a
                    // catch-up of an older epic) that is still red. Then the claim is wrong and
                    // the review rounds below, which start with the gates, take over.
                    if self.gate().await?.clean {
                        return Ok(TaskEnd::Noop);
                    }
                } else if !interrupted {
                    match self.parts.config.noop {
                        NoopPolicy::Fail => {
                            return Err(StoryError::NoopNotConfirmed {
                                task: title.to_owned(),
                            });
                        }
                        // A prose "already done": ticked while the gates agree; on red gates
                        // the review rounds below take over, as for a confirmed claim.
                        NoopPolicy::Complete => {
                            if self.gate().await?.clean {
                                return Ok(TaskEnd::NoopUnconfirmed);
                            }
                        }
                    }
                }
                // The task an interrupted run was in: its work may already be here (committed
                // as work in progress by a catch-up of an older epic; what the killed turn left
                // uncommitted counts as a change, and its first turn was told of it), so an
                // agent redoing it changes nothing. The review rounds, gates first, decide.
            }
        }

        let max_rounds = self.parts.config.max_rounds.max(1);
        let mut round = 0;
        loop {
            round += 1;
            self.check_cancel()?;
            let mut gate = self.gate().await?;
            if !gate.clean && round >= max_rounds && self.put_strays_back(&start).await? {
                gate = self.gate().await?;
            }
            if !gate.clean {
                self.review_round(title, round, &gate);
                if round >= max_rounds {
                    return Err(StoryError::GateNeverGreen {
                        task: title.to_owned(),
                        gate: gate
                            .issues
                            .first()
                            .map_or_else(|| gate.summary.clone(), |issue| issue.title.clone()),
                        rounds: round,
                        issues: gate.issues,
                    });
                }
                self.ask_coder(&mut chat, title, prompts::fix(&gate))
                    .await?;
                continue;
            }
            let verdict = self.review(task, &start).await?;
            self.review_round(title, round, &verdict);
            if verdict.clean || round >= max_rounds {
                break;
            }
            self.ask_coder(&mut chat, title, prompts::fix(&verdict))
                .await?;
        }

        self.check_branch().await?;
        let message = format!("{}: {}", self.job.story.id, title);
        let outcome = self
            .git("commit the task", move |git, worktree| {
                git.commit_all(worktree, &message)
            })
            .await?;
        Ok(TaskEnd::Committed(match outcome {
            CommitOutcome::Committed(id) => Some(id),
            CommitOutcome::NothingToCommit => None,
        }))
    }

    /// In the last round, puts paths changed outside the story's owned paths back as they were
    /// when the task started (then they equal the epic branch's: no task commits a stray), so a
    /// coder that ignored the perimeter feedback loses only its strays, not the task. A change
    /// to a shared read-only path is never put back: it fails the story. Whether anything was
    /// put back (the caller gates again).
    pub(super) async fn put_strays_back(&self, start: &CommitId) -> Result<bool, StoryError> {
        let changed = self
            .paths_changed_since(self.job.epic_branch.clone())
            .await?;
        let check = epic_perimeter::check(&changed, &self.job.story);
        if !check.shared_read_only.is_empty() || check.outside.is_empty() {
            return Ok(false);
        }
        let (source, stray) = (start.to_hex(), check.outside.clone());
        self.git(
            "put paths outside the perimeter back",
            move |git, worktree| {
                let paths: Vec<&str> = stray.iter().map(String::as_str).collect();
                git.restore_paths(worktree, &source, &paths)
            },
        )
        .await?;
        self.recorder.note(format!(
            "put {} path(s) outside the perimeter back after the last round: {}",
            check.outside.len(),
            check.outside.join(", ")
        ));
        self.emit(Event::PerimeterRestored {
            story: self.story_id(),
            paths: check.outside,
        });
        Ok(true)
    }
}
