//! Step 6 of a story, when a judge is configured: the judge rounds. Each round shows the judge
//! the story's diff against the proven epic head; a verdict that does not clear it is sent to a
//! coder round (the turn, strays put back, the gates green again, a commit, the perimeter
//! enforced), except after the last round, which fails the story.
//!
//! A story whose tasks changed nothing (an empty diff) ends done with nothing to merge only when
//! a judge, asked whether the story's work is already on the epic branch, clears it; without a
//! judge it fails ([`Failure::NothingChanged`]): an agent's word alone that the work is there
//! merges nothing.

use std::sync::Arc;

use epic_git_ops::{CommitId, WorktreeState};
use epic_perimeter::Review;
use epic_story_plan::Story;

use super::{Failure, Stop, Work, millis, turn_failed};
use crate::blocked::{self, Claim};
use crate::chat::Recorder;
use crate::event::Event;
use crate::gates::GateResult;
use crate::prompts;
use crate::read_only;
use crate::replies::parse_verdict;
use crate::seat::Role;

impl Work {
    /// The judge rounds on commit `checked` (the one the perimeter passed): the judge's note
    /// when it cleared the story (`None` without a judge), and the commit it cleared (after a
    /// coder round on its findings, the one that round's perimeter check passed).
    pub(super) async fn judge(
        &mut self,
        checked: CommitId,
    ) -> Result<(Option<String>, CommitId), Stop> {
        if self.shared.config.judge.is_none() {
            let (worktree, base, head) =
                (self.worktree.clone(), self.base.clone(), checked.to_hex());
            let changed = self
                .git("list the paths the story changed", move |git| {
                    git.changed_paths_vs_base(&worktree, &base, &head)
                })
                .await?;
            if changed.is_empty() {
                return Err(Failure::NothingChanged {
                    epic_branch: self.shared.epic_branch.clone(),
                }
                .into());
            }
            return Ok((None, checked));
        }
        let transcripts = self
            .shared
            .dir
            .transcripts(self.id())
            .map_err(Failure::UnsafeId)?;
        let recorder = Arc::new(
            Recorder::new(
                self.id().to_owned(),
                transcripts,
                self.shared.config.prices.clone(),
                Arc::clone(&self.shared.events),
            )
            .with_guard(Some(Arc::clone(&self.shared.guard)))
            .with_budget(Some(Arc::clone(&self.shared.budget)))
            .with_pauses(Some(Arc::clone(&self.shared.pauses))),
        );
        let result = self.judge_rounds(checked, &recorder).await;
        self.usage.absorb(&recorder.usage());
        result.map(|(note, cleared)| (Some(note), cleared))
    }

    async fn judge_rounds(
        &self,
        mut checked: CommitId,
        recorder: &Arc<Recorder>,
    ) -> Result<(String, CommitId), Stop> {
        let rounds = self.shared.config.judge_rounds.max(1);
        for round in 1..=rounds {
            self.check_cancel()?;
            let (worktree, base, head) =
                (self.worktree.clone(), self.base.clone(), checked.to_hex());
            let diff = self
                .git("diff the story against the epic branch", move |git| {
                    git.diff_vs_base(&worktree, &base, &head)
                })
                .await?;
            // Nothing changed: the judge is asked whether the work is already there.
            let empty = diff.paths.is_empty();
            let mut chat = self.chat(
                Role::Judge,
                prompts::judge_rules(self.prompt_context()),
                None,
                recorder,
            );
            let request = if empty {
                already_there(&self.story, round)
            } else {
                prompts::judge(&diff.text, round)
            };
            let worktree = self.worktree.clone();
            let before = self
                .git(
                    "take the worktree's state before the judge's turn",
                    move |git| git.worktree_state(&worktree),
                )
                .await?;
            let reply = chat.ask(request).await;
            self.discard_changes(Role::Judge, before).await?;
            let reply = reply.map_err(|error| turn_failed(Role::Judge, error))?;
            let verdict = parse_verdict(&reply.text);
            self.emit(Event::StoryJudged {
                story: self.id().to_owned(),
                round,
                cleared: verdict.clean,
                issues: verdict
                    .issues
                    .iter()
                    .map(|issue| issue.title.clone())
                    .collect(),
            });
            if verdict.clean && empty {
                self.note(format!(
                    "the story changed nothing, and the judge confirmed its work is already on \
                     {}: nothing to merge",
                    self.shared.epic_branch
                ));
                return Ok((
                    format!(
                        "judge confirmed the work is already on the epic branch (round \
                         {round}): nothing to merge"
                    ),
                    checked,
                ));
            }
            if verdict.clean {
                return Ok((format!("judge cleared (round {round})"), checked));
            }
            if round == rounds {
                return Err(Failure::JudgeNotCleared { rounds, verdict }.into());
            }
            checked = self.address(&verdict, recorder).await?;
        }
        Err(Failure::JudgeNeverRan.into())
    }

    /// Puts the worktree back to `before` if a `role` turn changed it (files, commits, the
    /// branch checked out), with a warning naming what it changed ([`read_only`]).
    async fn discard_changes(&self, role: Role, before: WorktreeState) -> Result<(), Stop> {
        let worktree = self.worktree.clone();
        let changed = self
            .git("put back what a read-only turn changed", move |git| {
                git.put_back(&worktree, &before)
            })
            .await?;
        if let Some(files) = changed {
            self.emit(Event::Note {
                story: self.id().to_owned(),
                message: read_only::discarded(role, &files),
            });
        }
        Ok(())
    }

    /// One coder round on the judge's findings: the turn, strays put back, the gates (which
    /// must stay green), a commit, the perimeter enforced; the commit checked.
    async fn address(&self, verdict: &Review, recorder: &Arc<Recorder>) -> Result<CommitId, Stop> {
        let task = "address judge feedback";
        let rules = prompts::story_rules(self.prompt_context());
        let mut chat = self.chat(Role::Coder, rules, Some(task), recorder);
        let reply = chat
            .ask(prompts::judge_feedback(&self.story, verdict))
            .await
            .map_err(|error| turn_failed(Role::Coder, error))?;
        let claim = Claim {
            plan: &self.shared.plan,
            story: &self.story,
            task: Some(task),
            verifier: self.shared.config.verifier.as_ref(),
            context: self.chat_context(None),
            recorder,
            pushed_back: &self.pushed_back,
        };
        blocked::checked(claim, &mut chat, reply).await?;
        self.repair_perimeter().await?;
        let story = self.id().to_owned();
        let events = Arc::clone(&self.shared.events);
        let on_result = move |result: &GateResult| {
            events(if result.passed {
                Event::GatePassed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms: millis(result),
                }
            } else {
                Event::GateFailed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms: millis(result),
                    status: result.status.clone(),
                }
            });
            if let Some(event) = result.leftovers_event(Some(&story)) {
                events(event);
            }
        };
        let gates = self
            .shared
            .story_gates
            .run(&self.worktree, &self.env(), &self.cancel, &on_result)
            .await
            .map_err(|_| Stop::Cancelled)?;
        if !gates.clean {
            return Err(Failure::GatesBroke(gates).into());
        }
        self.commit(format!("{}: address judge feedback", self.id()))
            .await?;
        self.enforce_perimeter().await
    }
}

/// The judge's request when the story's tasks changed nothing: is its work already on the epic
/// branch?
fn already_there(story: &Story, round: u32) -> String {
    let mut out = format!(
        "Judge round {round}. The story's branch has no changes against the epic branch: its \
         coder changed nothing, saying the work is already there. Check the files in your \
         working directory, which holds the epic branch as it is, above all the story's owned \
         paths ({}). Clear the story only if everything it must do is already there: every \
         acceptance criterion holds and everything it must provide exists. Otherwise name what \
         is missing as issues a coder can act on.\n",
        if story.owned.is_empty() {
            "none".to_owned()
        } else {
            story.owned.join(", ")
        }
    );
    out.push_str(
        "\nReply with only this JSON, bare or in one fenced block; clean means the work is \
         already there:\n{\"clean\":true|false,\"issues\":[{\"severity\":\"critical|major|minor\",\
         \"title\":\"…\",\"description\":\"…\"}]}\n",
    );
    out
}
