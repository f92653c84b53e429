//! Step 6 of a story, when a judge is configured: the judge rounds. Each round shows the judge
//! the story's diff against the proven epic head; a verdict that does not clear it is sent to a
//! coder round (the turn, strays put back, the gates green again, a commit, the perimeter
//! enforced), except after the last round, which fails the story.
//!
//! A story whose tasks changed nothing (an empty diff) ends done with nothing to merge, "already
//! in place", only when a judge, asked whether the story's work is already on the epic branch,
//! confirms it with evidence that holds on the proven epic head ([`epic_claims::check`]): the files
//! inside the story's owned paths that hold its work, and for each name the story provides, the
//! file that provides it. A confirmation without evidence, or with evidence that does not hold,
//! clears nothing: the next judge round is told what did not hold (no coder round: there is
//! nothing for a coder to fix in the judge's evidence), and in the last round it fails the
//! story ([`Failure::InPlaceUnproven`]). Without a judge such a story fails
//! ([`Failure::NothingChanged`]): an agent's word alone that the work is there merges nothing.

use std::fmt::Write as _;
use std::sync::Arc;

use epic_git_ops::{CommitId, WorktreeState};
use epic_perimeter::Review;
use epic_report::{Evidence, InPlace};
use epic_story_plan::Story;

use super::work::{Work, turn_failed};
use crate::failure::{Failure, Stop};
use epic_agents::Role;
use epic_chat::Recorder;
use epic_claims::Claim;
use epic_claims::Problem;
use epic_events::Event;
use epic_gates::GateResult;
use epic_gates::millis;
use epic_protocol::prompts;
use epic_protocol::replies::parse_judged;

/// What the judge step leaves for the merge.
#[derive(Debug)]
pub(super) struct Judgement {
    /// The judge's note when it cleared the story (`None` without a judge).
    pub(super) note: Option<String>,
    /// The commit it cleared (after a coder round on its findings, the one that round's
    /// perimeter check passed).
    pub(super) cleared: CommitId,
    /// The checked evidence of a story that changed nothing and was found already in place.
    pub(super) in_place: Option<InPlace>,
    /// The seat that cleared it, of the judge's roster (`None` without a judge).
    pub(super) seat: Option<String>,
}

impl Work {
    /// The judge rounds on commit `checked` (the one the perimeter passed).
    pub(super) async fn judge(&mut self, checked: CommitId) -> Result<Judgement, Stop> {
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
            return Ok(Judgement {
                note: None,
                cleared: checked,
                in_place: None,
                seat: None,
            });
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
        result
    }

    async fn judge_rounds(
        &self,
        mut checked: CommitId,
        recorder: &Arc<Recorder>,
    ) -> Result<Judgement, Stop> {
        let rounds = self.shared.config.judge_rounds.max(1);
        // What did not hold in the last round's confirmation, told to the next round's judge.
        let mut unheld: Vec<Problem> = Vec::new();
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
                already_there(&self.story, round, &unheld)
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
            let judged = parse_judged(&reply.text);
            let verdict = judged.review;
            // A confirmation that the work is already there clears only with its evidence.
            let shown = if verdict.clean && empty {
                Some(self.check_evidence(judged.evidence).await?)
            } else {
                None
            };
            self.emit_judged(round, &verdict, shown.as_ref());
            match shown {
                Some(Ok(evidence)) => {
                    let seat = chat.seat_name().to_owned();
                    return Ok(self.found_in_place(round, checked, evidence, seat));
                }
                Some(Err(problems)) if round == rounds => {
                    return Err(Failure::InPlaceUnproven {
                        epic_branch: self.shared.epic_branch.clone(),
                        head: self.base.clone(),
                        round,
                        problems,
                    }
                    .into());
                }
                Some(Err(problems)) => {
                    unheld = problems;
                    continue;
                }
                None => unheld.clear(),
            }
            if verdict.clean {
                return Ok(Judgement {
                    note: Some(format!("judge cleared (round {round})")),
                    cleared: checked,
                    in_place: None,
                    seat: Some(chat.seat_name().to_owned()),
                });
            }
            if round == rounds {
                return Err(Failure::JudgeNotCleared { rounds, verdict }.into());
            }
            checked = self.address(&verdict, recorder).await?;
        }
        Err(Failure::JudgeNeverRan.into())
    }

    /// The `story_judged` event of `round`: cleared when the verdict is clean and, for a story
    /// that changed nothing, its evidence (`shown`) holds; the issues, or what did not hold.
    fn emit_judged(
        &self,
        round: u32,
        verdict: &Review,
        shown: Option<&Result<Vec<Evidence>, Vec<Problem>>>,
    ) {
        let issues = match shown {
            Some(Err(problems)) => problems.iter().map(ToString::to_string).collect(),
            _ => verdict
                .issues
                .iter()
                .map(|issue| issue.title.clone())
                .collect(),
        };
        self.emit(Event::StoryJudged {
            story: self.id().to_owned(),
            round,
            cleared: verdict.clean && !matches!(shown, Some(Err(_))),
            issues,
        });
    }

    /// The story found already in place in `round`, on `evidence` that held, by the judge's
    /// `seat`: nothing to merge.
    fn found_in_place(
        &self,
        round: u32,
        checked: CommitId,
        evidence: Vec<Evidence>,
        seat: String,
    ) -> Judgement {
        let in_place = InPlace::new(self.base.clone(), evidence);
        self.note(format!(
            "the story changed nothing, and the judge showed its work is already on {} \
             (evidence epic checked: {}): nothing to merge",
            self.shared.epic_branch,
            in_place.paths()
        ));
        Judgement {
            note: Some(format!(
                "judge confirmed the work is already on the epic branch, with evidence epic \
                 checked (round {round}): nothing to merge"
            )),
            cleared: checked,
            in_place: Some(in_place),
            seat: Some(seat),
        }
    }

    /// The judge's `evidence` checked on the proven epic head the story was judged against
    /// (its base): the evidence as checked when it holds, else what did not hold.
    async fn check_evidence(
        &self,
        claimed: Result<Vec<Evidence>, String>,
    ) -> Result<Result<Vec<Evidence>, Vec<Problem>>, Stop> {
        let (story, worktree, head) = (
            Arc::clone(&self.story),
            self.worktree.clone(),
            self.base.clone(),
        );
        self.git("read the judge's evidence on the epic head", move |git| {
            epic_claims::check(&story, claimed.as_deref().map_err(String::as_str), |path| {
                git.tree_file(&worktree, &head, path)
            })
        })
        .await
    }

    /// Puts the worktree back to `before` if a `role` turn changed it (files, commits, the
    /// branch checked out), with a warning naming what it changed ([`epic_chat::discarded`]).
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
                message: epic_chat::discarded(role, &files),
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
        epic_claims::checked(claim, &mut chat, reply)
            .await
            .map_err(crate::error::StoryError::from)?;
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
/// branch, and where? `unheld`: what did not hold in the last round's confirmation.
fn already_there(story: &Story, round: u32, unheld: &[Problem]) -> String {
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    let mut out = format!(
        "Judge round {round}. The story's branch has no changes against the epic branch: its \
         coder changed nothing, saying the work is already there. Check the files in your \
         working directory, which holds the epic branch as it is, above all the story's owned \
         paths ({}). Clear the story only if everything it must do is already there: every \
         acceptance criterion holds and everything it must provide exists. Otherwise name what \
         is missing as issues a coder can act on.\n",
        list(&story.owned)
    );
    write!(
        out,
        "\nTo clear it, show where the work is: `evidence` lists the files on the epic branch \
         that hold the story's work (at least one; each a file, not a directory, inside the \
         story's owned paths), and for each name the story provides, the file that provides it, \
         in that file's `provides`. epic checks it on the epic branch: a name counts as provided \
         when the first word of its last part (after the last `::`, `.`, `/` or `#`) appears in \
         the file as a whole word. The story provides: {}. A clean verdict without evidence that \
         holds clears nothing.\n",
        list(&story.provides)
    )
    .ok();
    if !unheld.is_empty() {
        out.push_str("\nYour confirmation in the last round did not hold:\n");
        for problem in unheld {
            writeln!(out, "- {problem}").ok();
        }
        out.push_str(
            "Check again: clear the story only with evidence that holds, or name what is \
             missing.\n",
        );
    }
    out.push_str(
        "\nReply with only this JSON, bare or in one fenced block; clean means the work is \
         already there:\n{\"clean\":true|false,\"issues\":[{\"severity\":\"critical|major|minor\",\
         \"title\":\"…\",\"description\":\"…\"}],\"evidence\":[{\"path\":\"<file>\",\
         \"provides\":[\"<name>\"]}]}\n",
    );
    out
}
