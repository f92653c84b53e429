//! A review round of a task: the gates and the perimeter gate on every path the story changed,
//! then the reviewers' verdicts.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_perimeter::{Review, Task};

use crate::error::StoryError;
use epic_agents::{Role, SeatError};
use epic_chat::Chat;
use epic_events::Event;
use epic_gates::GateResult;
use epic_protocol::prompts;
use epic_protocol::replies::parse_verdict;

use super::context::Run;

impl Run<'_> {
    pub(super) fn review_round(&self, task: &str, round: u32, review: &Review) {
        self.emit(Event::ReviewRound {
            story: self.story_id(),
            task: task.to_owned(),
            round,
            clean: review.clean,
            issues: review.issues.len(),
            summary: review.summary.clone(),
        });
    }

    /// The gates and the perimeter gate over every path changed against the epic branch,
    /// committed or not, the symbolic links among them judged by where they point.
    pub(super) async fn gate(&self) -> Result<Review, StoryError> {
        let story = self.story_id();
        let events = Arc::clone(&self.parts.events);
        let on_result = move |result: &GateResult| {
            let duration_ms = u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX);
            events(if result.passed {
                Event::GatePassed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms,
                }
            } else {
                Event::GateFailed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms,
                    status: result.status.clone(),
                }
            });
            if let Some(event) = result.flaky_event(Some(&story)) {
                events(event);
            }
            if let Some(event) = result.tests_event(Some(&story)) {
                events(event);
            }
            if let Some(event) = result.leftovers_event(Some(&story)) {
                events(event);
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), self.job.epic.clone()),
            ("EPIC_STORY".to_owned(), self.job.story.id.clone()),
            (
                "EPIC_WORKTREE".to_owned(),
                self.job.worktree.display().to_string(),
            ),
            ("EPIC_SLOT".to_owned(), self.job.slot.to_string()),
        ];
        let gates = self
            .parts
            .gates
            .run(&self.job.worktree, &env, &self.cancel, &on_result)
            .await
            .map_err(|_| StoryError::Cancelled)?;
        let changed = self
            .paths_changed_since(self.job.epic_branch.clone())
            .await?;
        let links = self
            .git("read the symbolic links the story changed", {
                let changed = changed.clone();
                move |git, worktree| {
                    let paths: Vec<&str> = changed.iter().map(String::as_str).collect();
                    git.symlinks_in_worktree(worktree, &paths)
                }
            })
            .await?;
        let story = &self.job.story;
        let perimeter = epic_perimeter::check(&changed, story)
            .with_links(
                links.iter().map(|link| (&link.path, &link.target)),
                story,
                &self.job.plan,
            )
            .into_review(story);
        Ok(gates.combine(perimeter))
    }

    /// The reviewers' verdicts on the task's changes since `start`, merged; clean without
    /// reviewers. A reviewer turn that fails is reported and left out.
    pub(super) async fn review(&self, task: &Task, start: &CommitId) -> Result<Review, StoryError> {
        let reviewers = &self.parts.seats.reviewers;
        if reviewers.is_empty() {
            return Ok(Review::clean("no reviewers"));
        }
        let paths = self.paths_changed_since(start.to_hex()).await?;
        let since = *start;
        let diff = self
            .git(
                "diff the task's changes for its reviewers",
                move |git, worktree| git.worktree_patch(worktree, &since),
            )
            .await?;
        let prompt = prompts::review(
            task,
            &start.to_hex(),
            &paths,
            &String::from_utf8_lossy(&diff),
        );
        let before = self
            .git(
                "take the worktree's state before the reviewers' turns",
                |git, worktree| git.worktree_state(worktree),
            )
            .await?;
        let mut set = tokio::task::JoinSet::new();
        for (n, seat) in reviewers.iter().enumerate() {
            let mut chat = Chat::new(
                seat.clone(),
                Role::Reviewer,
                prompts::reviewer_rules(self.prompt_context()),
                self.context(Some(&task.title)),
                Arc::clone(&self.recorder),
            );
            let prompt = prompt.clone();
            let name = seat.to_string();
            set.spawn(async move { (n, name, chat.ask(prompt).await) });
        }
        let (mut verdicts, mut stop) = (Vec::new(), None);
        // Every reviewer ends before the worktree is put back, whatever one of them did.
        while let Some(joined) = set.join_next().await {
            let Ok((n, name, result)) = joined else {
                continue;
            };
            match result {
                Ok(reply) => verdicts.push((n, parse_verdict(&reply.text))),
                Err(SeatError::Cancelled) => stop = Some(StoryError::Cancelled),
                // A reviewer that changed epic's files fails the story like any other turn.
                Err(source @ SeatError::GuardedFiles(_)) => {
                    stop.get_or_insert(StoryError::Agent {
                        role: Role::Reviewer,
                        task: Some(task.title.clone()),
                        source,
                    });
                }
                Err(error) => self.recorder.note(format!(
                    "reviewer {name} failed and is left out of this round: {error}"
                )),
            }
        }
        let changed = self
            .git(
                "put back what the reviewers' turns changed",
                move |git, worktree| git.put_back(worktree, &before),
            )
            .await?;
        if let Some(files) = changed {
            self.recorder
                .note(epic_chat::discarded(Role::Reviewer, &files));
        }
        if let Some(stop) = stop {
            return Err(stop);
        }
        verdicts.sort_by_key(|(n, _)| *n);
        Ok(verdicts
            .into_iter()
            .map(|(_, verdict)| verdict)
            .fold(Review::clean(""), Review::combine))
    }
}
