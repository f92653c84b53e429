//! Step 6 of a story, when a judge is configured: the judge rounds. Each round shows the judge
//! the story's diff against the proven epic head; a verdict that does not clear it is sent to a
//! coder round (the turn, strays put back, the gates green again, a commit, the perimeter
//! enforced), except after the last round, which fails the story.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_perimeter::Review;

use super::{Failure, Stop, Work, millis, turn_failed};
use crate::chat::Recorder;
use crate::error::StoryError;
use crate::event::Event;
use crate::gates::GateResult;
use crate::prompts;
use crate::replies::{blocked_on, parse_verdict};
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
            if diff.paths.is_empty() {
                return Err(Failure::NothingToJudge {
                    epic_branch: self.shared.epic_branch.clone(),
                }
                .into());
            }
            let mut chat = self.chat(
                Role::Judge,
                prompts::judge_rules(&self.story),
                None,
                recorder,
            );
            let reply = chat
                .ask(prompts::judge(&diff.text, round))
                .await
                .map_err(|error| turn_failed(Role::Judge, error))?;
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

    /// One coder round on the judge's findings: the turn, strays put back, the gates (which
    /// must stay green), a commit, the perimeter enforced; the commit checked.
    async fn address(&self, verdict: &Review, recorder: &Arc<Recorder>) -> Result<CommitId, Stop> {
        let task = "address judge feedback";
        let rules = prompts::story_rules(
            &self.shared.plan,
            &self.story,
            &self.worktree,
            &self.shared.config.extra_rules,
        );
        let mut chat = self.chat(Role::Coder, rules, Some(task), recorder);
        let reply = chat
            .ask(prompts::judge_feedback(&self.story, verdict))
            .await
            .map_err(|error| turn_failed(Role::Coder, error))?;
        if let Some(need) = blocked_on(&reply.text) {
            self.emit(Event::Blocked {
                story: self.id().to_owned(),
                need: need.clone(),
            });
            return Err(StoryError::Blocked {
                story: self.id().to_owned(),
                need,
            }
            .into());
        }
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
