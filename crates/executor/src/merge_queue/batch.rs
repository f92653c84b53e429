//! One batch of the merge queue ([`Batch`]): its stories merged in turn into a candidate on the
//! epic worktree, the gates run once on it, and, red, the batch bisected down to its culprits;
//! the proven merges recorded and attested, the rest undone.

use std::sync::Arc;

use epic_git_ops::{CommitId, MergeFavor, MergeOutcome};
use epic_state_store::{StoryStage, StoryState};
use tokio_util::sync::CancellationToken;

use super::journal::{
    MergeJournal, ProvenCandidate, ProvenHead, ProvenMerge, names, remove_journal,
};
use crate::baseline::{GateBaseline, GateVerdict};
use crate::event::Event;
use crate::failure::{Failure, Stop, git_reason};
use crate::gates::GateResult;
use crate::gates::millis;
use crate::queue::{Merged, Request};
use crate::shared::{EpicHead, Shared};
use epic_attest::{Attestation, AttestedGate, AttestedKind, JudgeVerdict};
use epic_process::chain;
use epic_process::offload::{self, BoxError, GitFailed};

/// A story of a batch merged into the candidate: the head before and after its merge.
#[derive(Debug)]
struct Entry {
    request: Request,
    parent: CommitId,
    tip: CommitId,
    /// Its merge commit; `None` when the epic branch already had it all (then `tip == parent`).
    commit: Option<CommitId>,
}

impl Entry {
    fn id(&self) -> &str {
        &self.request.story.id
    }
}

/// One batch of the merge queue, integrated under the merge lock by whichever story took it.
pub(super) struct Batch<'a> {
    shared: &'a Arc<Shared>,
    /// The integrating story's token: the run's, so cancelled by an interrupt or fail-fast.
    cancel: &'a CancellationToken,
    head: &'a mut EpicHead,
    number: u64,
    /// More than one story: batch events are emitted.
    several: bool,
    /// The proven epic head: everything below it is proven.
    base: CommitId,
    /// The stories neither proven nor failed yet, in merge order (the journal's).
    pending: Vec<String>,
    /// Gate runs of this batch so far (the bisection step of the next).
    steps: u32,
}

impl<'a> Batch<'a> {
    pub(super) fn new(
        shared: &'a Arc<Shared>,
        cancel: &'a CancellationToken,
        head: &'a mut EpicHead,
        number: u64,
    ) -> Self {
        Self {
            shared,
            cancel,
            head,
            number,
            several: false,
            base: shared.proven(),
            pending: Vec::new(),
            steps: 0,
        }
    }

    fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    /// Integrates `requests` as one batch; answers every one of them.
    pub(super) async fn integrate(mut self, requests: Vec<Request>) {
        if self.cancel.is_cancelled() {
            for request in requests {
                request.reply.send(Err(Stop::Cancelled)).ok();
            }
            return;
        }
        self.several = requests.len() > 1;
        let Some(requests) = self.check_epic(requests).await else {
            return;
        };
        self.base = self.shared.proven();
        self.pending = requests
            .iter()
            .map(|request| request.story.id.clone())
            .collect();
        if let Err(error) = self.journal(None).await {
            for request in requests {
                let failure = Failure::JournalNotWritten(error.to_string().into());
                request.reply.send(Err(failure.into())).ok();
            }
            return;
        }
        if self.several {
            self.emit(Event::MergeBatch {
                batch: self.number,
                stories: self.pending.clone(),
                checkpoint: self.base.to_hex(),
            });
        }
        let mut checked = Vec::with_capacity(requests.len());
        for request in requests {
            match self.check_branch_unmoved(&request).await {
                Ok(()) => checked.push(request),
                Err(stop) => self.answer_failed(request, stop),
            }
        }
        let chain = self.build(checked).await;
        self.settle(chain).await;
        if self.pending.is_empty() {
            remove_journal(self.shared, self.shared.dir.merge_journal()).await;
        }
    }

    /// Proves the chain `chain` built on the proven head: gates it whole; red, bisects it.
    async fn settle(&mut self, chain: Vec<Entry>) {
        let mut todo: Vec<(Vec<Entry>, Option<Failure>)> = vec![(chain, None)];
        while let Some((segment, red)) = todo.pop() {
            if self.cancel.is_cancelled() {
                todo.push((segment, None));
                self.interrupted(todo.into_iter().flat_map(|(segment, _)| segment))
                    .await;
                return;
            }
            // Built on a head that is no longer the proven one (a culprit before it was
            // dropped): merged again on the proven head, together with every part still to
            // come (all built on it too), as one new candidate whose verdict is unknown.
            let (mut segment, red) = match segment.first() {
                Some(first) if first.parent != self.base => {
                    let mut requests: Vec<Request> =
                        segment.into_iter().map(|entry| entry.request).collect();
                    while let Some((later, _)) = todo.pop() {
                        requests.extend(later.into_iter().map(|entry| entry.request));
                    }
                    (self.build(requests).await, None)
                }
                _ => (segment, red),
            };
            if segment.is_empty() {
                continue;
            }
            let red = match red {
                Some(red) => red,
                None => match self.gate(&segment).await {
                    Ok(results) => {
                        self.accept(segment, &results).await;
                        continue;
                    }
                    Err(Stop::Cancelled) => {
                        todo.push((segment, None));
                        self.interrupted(todo.into_iter().flat_map(|(segment, _)| segment))
                            .await;
                        return;
                    }
                    Err(Stop::Failed(red)) => red,
                },
            };
            if segment.len() == 1 {
                if let Some(culprit) = segment.pop() {
                    self.pin(culprit, red).await;
                }
                continue;
            }
            // Bisect: the first half on the proven head, then the rest on top of what proved
            // green; if the first half proves green, the rest on it is the candidate just
            // seen red.
            let rest = segment.split_off(segment.len() / 2);
            todo.push((rest, Some(red)));
            todo.push((segment, None));
        }
    }

    /// Puts the epic branch back at the proven head if something other than epic moved it,
    /// and refuses a dirty epic worktree (failing every request); the requests, unless refused.
    async fn check_epic(&self, requests: Vec<Request>) -> Option<Vec<Request>> {
        let shared = self.shared;
        let restored = match shared.restore_epic_head().await {
            Ok(restored) => restored,
            Err(error) => {
                Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
                return None;
            }
        };
        if let Some(moved_to) = restored {
            let ids: Vec<String> = requests.iter().map(|r| r.story.id.clone()).collect();
            let message = shared.note_restored_epic_head(
                moved_to,
                &format!("found before merging {}", names(&ids)),
            );
            for request in &requests {
                self.emit(Event::Note {
                    story: request.story.id.clone(),
                    message: message.clone(),
                });
            }
        }
        let epic = shared.epic_worktree.clone();
        let dirty = offload::git(&shared.git, "read the status of the epic worktree", {
            let epic = epic.clone();
            move |git| git.status(&epic, &[])
        })
        .await;
        match dirty {
            Err(error) => {
                Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
                None
            }
            Ok(dirty) if dirty.is_dirty() => {
                Self::fail_all(requests, |request| Failure::EpicWorktreeDirty {
                    worktree: epic.clone(),
                    paths: dirty.paths.clone(),
                    story: request.story.id.clone(),
                });
                None
            }
            Ok(_) => Some(requests),
        }
    }

    /// Answers every one of `requests` with its `failure`.
    fn fail_all(requests: Vec<Request>, failure: impl Fn(&Request) -> Failure) {
        for request in requests {
            let failure = failure(&request);
            request.reply.send(Err(failure.into())).ok();
        }
    }

    /// Fails unless the story branch is still at the commit its checks passed on: whatever
    /// moved it since (a commit made during the judge turn, a process an agent left running)
    /// was never checked.
    async fn check_branch_unmoved(&self, request: &Request) -> Result<(), Stop> {
        let epic = self.shared.epic_worktree.clone();
        let branch = format!("refs/heads/{}", request.branch);
        let found = offload::git(&self.shared.git, "read the story branch", move |git| {
            git.rev_parse(&epic, &branch)
        })
        .await?;
        if found == request.checked {
            return Ok(());
        }
        Err(Failure::BranchMovedAfterChecks {
            branch: request.branch.clone(),
            checked: request.checked,
            found,
        }
        .into())
    }

    /// Merges `requests` in turn onto the proven head: the chain of those that merged; one that
    /// conflicts (or whose merge git refused) fails alone, the chain as it was before it. The
    /// merges are made in the object database where that is the whole of them (the stories
    /// changed separate files, the common case): the epic worktree stays at the proven head and
    /// is moved once, to the chain's end, before the gates run. A merge of stories that touched
    /// the same files is git's, in the epic worktree, brought to the chain so far first.
    async fn build(&mut self, requests: Vec<Request>) -> Vec<Entry> {
        let shared = self.shared;
        let epic = shared.epic_worktree.clone();
        let mut head = self.base;
        let back = format!("{}: back to the proven head", shared.dir.epic_id());
        if let Err(error) = self.reset_to(self.base, back).await {
            Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
            return Vec::new();
        }
        let mut chain = Vec::with_capacity(requests.len());
        for request in requests {
            self.emit(Event::MergeStarted {
                story: request.story.id.clone(),
                checkpoint: head.to_hex(),
            });
            let message = format!("{}: merge story {}", shared.dir.epic_id(), request.story.id);
            let merged = offload::git(&shared.git, "merge the story into the epic branch", {
                let (epic, checked, message) = (epic.clone(), request.checked, message.clone());
                move |git| git.merge_objects(&epic, &head, &checked, &message)
            })
            .await;
            let merged = match merged {
                Ok(Some(outcome)) => Ok(outcome),
                Ok(None) => self.merge_in_worktree(head, &request, message).await,
                Err(error) => Err(error),
            };
            let commit = match merged {
                Ok(MergeOutcome::Merged(commit)) => Some(commit),
                Ok(MergeOutcome::UpToDate) => None,
                Ok(MergeOutcome::Conflict { paths }) => {
                    self.emit(Event::MergeConflicted {
                        story: request.story.id.clone(),
                        paths: paths.clone(),
                    });
                    let failure = Failure::MergeConflict {
                        branch: request.branch.clone(),
                        epic_branch: shared.epic_branch.clone(),
                        paths,
                    };
                    self.answer_failed(request, failure.into());
                    continue;
                }
                Err(error) => {
                    self.answer_failed(request, error.into());
                    continue;
                }
            };
            let tip = commit.unwrap_or(head);
            chain.push(Entry {
                request,
                parent: head,
                tip,
                commit,
            });
            head = tip;
        }
        chain
    }

    /// Merges `request`'s story onto `head` with git in the epic worktree, brought to `head`
    /// first. A refused merge leaves the epic worktree as it was; made sure of.
    async fn merge_in_worktree(
        &self,
        head: CommitId,
        request: &Request,
        message: String,
    ) -> Result<MergeOutcome, GitFailed> {
        let shared = self.shared;
        let so_far = format!(
            "{}: the merges before story {}",
            shared.dir.epic_id(),
            request.story.id
        );
        self.reset_to(head, so_far).await?;
        let merged = offload::git(&shared.git, "merge the story into the epic branch", {
            let (epic, commit) = (shared.epic_worktree.clone(), request.checked.to_hex());
            move |git| git.merge(&epic, &commit, &message, MergeFavor::None)
        })
        .await;
        if merged.is_err() {
            let story = request.story.id.clone();
            self.rollback(head, &[story], "the merge failed").await;
        }
        merged
    }

    /// Runs the gates on the candidate `segment` ends in. Strict: every gate must pass. With a
    /// red baseline allowed: only a gate that passed on the proven head may not fail. Green, the
    /// gate results; the verdict becomes the new baseline.
    async fn gate(&mut self, segment: &[Entry]) -> Result<Vec<GateResult>, Stop> {
        let Some(last) = segment.last() else {
            return Ok(Vec::new());
        };
        let tip = last.tip;
        if tip == self.base {
            // Nothing to prove: every story of it was already on the proven head.
            return Ok(Vec::new());
        }
        let shared = self.shared;
        let stories: Vec<String> = segment.iter().map(|entry| entry.id().to_owned()).collect();
        let candidate = format!("{}: merge {}", shared.dir.epic_id(), names(&stories));
        self.reset_to(tip, candidate).await?;
        let story = last.id().to_owned();
        let results = Arc::new(std::sync::Mutex::new(Vec::new()));
        let events = Arc::clone(&shared.events);
        let on_result = {
            let results = Arc::clone(&results);
            let story = story.clone();
            move |result: &GateResult| {
                events(Event::EpicGate {
                    story: Some(story.clone()),
                    command: result.command.clone(),
                    passed: result.passed,
                    duration_ms: millis(result),
                    status: result.status.clone(),
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
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(result.clone());
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), shared.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), story.clone()),
            (
                "EPIC_WORKTREE".to_owned(),
                shared.epic_worktree.display().to_string(),
            ),
        ];
        let verdict = self.verdict(&env, &on_result, tip).await;
        if self.several {
            self.emit(Event::BatchGated {
                batch: self.number,
                step: self.steps,
                stories: segment.iter().map(|entry| entry.id().to_owned()).collect(),
                commit: tip.to_hex(),
                passed: verdict.is_ok(),
            });
            self.steps += 1;
        }
        verdict?;
        let results = std::mem::take(
            &mut *results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Ok(results)
    }

    /// The gates' verdict on the epic worktree at `tip`; green, cached as the baseline.
    async fn verdict(
        &mut self,
        env: &[(String, String)],
        on_result: &(dyn Fn(&GateResult) + Send + Sync),
        tip: CommitId,
    ) -> Result<(), Stop> {
        let shared = self.shared;
        let results = if shared.config.allow_red_baseline {
            // Not charged with the tests red on the proven head (`gate_tests.rs`).
            shared
                .epic_gates
                .clone()
                .with_inherited(self.head.inherited.clone())
                .run_each(&shared.epic_worktree, env, self.cancel, on_result)
                .await
                .map_err(|_| Stop::Cancelled)?
        } else {
            let review = shared
                .epic_gates
                .run(&shared.epic_worktree, env, self.cancel, on_result)
                .await
                .map_err(|_| Stop::Cancelled)?;
            if !review.clean {
                return Err(Failure::EpicGatesRed(review).into());
            }
            Vec::new()
        };
        // A command red on the proven head counts when its failing tests were named there: red
        // now, it named one more (or could not be read test by test).
        let regressions: Vec<_> = results
            .iter()
            .filter(|(result, _)| {
                !result.passed
                    && (self.head.green.contains(&result.command)
                        || self.head.inherited.contains_key(&result.command))
            })
            .filter_map(|(_, issue)| issue.clone())
            .collect();
        if !regressions.is_empty() {
            return Err(Failure::EpicGatesRegressed(regressions).into());
        }
        let baseline = GateBaseline {
            commit: tip.to_hex(),
            gates: shared
                .epic_gates
                .commands()
                .iter()
                .map(|command| {
                    let result = results
                        .iter()
                        .find(|(result, _)| result.command == *command);
                    match result {
                        Some((result, _)) => GateVerdict::of(result),
                        // Strict: every gate ran and passed.
                        None => GateVerdict {
                            command: command.clone(),
                            passed: !shared.config.allow_red_baseline,
                            failing: None,
                        },
                    }
                })
                .collect(),
        };
        self.head.green = baseline.passed();
        self.head.inherited = baseline.inherited();
        let dir = shared.dir.clone();
        let saved = shared
            .write(GateBaseline::path(&dir), move |_| {
                baseline.save(&dir).map_err(|error| chain(&error))
            })
            .await
            .unwrap_or_else(|error| Err(error.to_string()));
        if let Err(error) = saved {
            self.emit(Event::RunNote {
                message: format!("the gate baseline could not be cached: {error}"),
            });
        }
        Ok(())
    }

    /// The one place a story's merge is known proven: the candidate `segment` ends in passed
    /// the gates (`results`, run on its head, `segment`'s last `tip`), so every story of it is
    /// merged. The journal records the proven candidate first (a crash from here on finishes
    /// recording it), then each story's state, the proven head, and the journal moves on.
    async fn accept(&mut self, segment: Vec<Entry>, results: &[GateResult]) {
        let Some(tip) = segment.last().map(|entry| entry.tip) else {
            return;
        };
        // Attested before anything records the merges as proven (the journal's proven
        // candidate, the states): a merge is attested by the time any record of it is.
        self.attest(&segment, results, tip).await;
        let proven = ProvenCandidate {
            head: tip.to_hex(),
            merges: segment
                .iter()
                .map(|entry| ProvenMerge {
                    story: entry.id().to_owned(),
                    commit: entry.commit.unwrap_or(entry.tip).to_hex(),
                })
                .collect(),
        };
        let journaled = self.journal(Some(proven)).await;
        let mut saved = Vec::with_capacity(segment.len());
        for entry in &segment {
            saved.push(
                save_merged(
                    self.shared,
                    &entry.request,
                    entry.commit.unwrap_or(entry.tip),
                )
                .await,
            );
        }
        if tip != self.base {
            *self
                .shared
                .proven
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = tip;
            if let Err(error) =
                ProvenHead::record(&self.shared.dir, tip, Some(&self.shared.guard)).await
            {
                self.emit(Event::RunNote {
                    message: format!(
                        "the proven epic head could not be recorded: {}",
                        chain(error.as_ref())
                    ),
                });
            }
        }
        self.base = tip;
        let stories: Vec<String> = segment.iter().map(|entry| entry.id().to_owned()).collect();
        self.pending.retain(|story| !stories.contains(story));
        if journaled.is_ok() && !self.pending.is_empty() {
            self.journal(None).await.ok();
        }
        if self.several {
            self.emit(Event::BatchProven {
                batch: self.number,
                stories: stories.clone(),
                commit: tip.to_hex(),
            });
        }
        let together = if segment.len() > 1 {
            stories
        } else {
            Vec::new()
        };
        for (entry, saved) in segment.into_iter().zip(saved) {
            let answer = saved.map(|()| Merged {
                commit: entry.commit,
                together: together.clone(),
            });
            entry.request.reply.send(answer).ok();
        }
    }

    /// Records the attestation of each merge of `segment` ([`Attestation`]), proven by the
    /// gates `results` on `tip`: in the epic's state and as its git note. Best effort: a merge
    /// without it is proven all the same, and `epic verify` names it; a run note says why.
    async fn attest(&self, segment: &[Entry], results: &[GateResult], tip: CommitId) {
        let shared = self.shared;
        if tip == self.base {
            return;
        }
        // A gate that failed on a proven candidate is one the red baseline allowed, or one red
        // only with tests red before it (inherited).
        let gates: Vec<AttestedGate> = results
            .iter()
            .map(|result| result.attested(!result.passed || result.inherited_only()))
            .collect();
        let attestations: Vec<Attestation> = segment
            .iter()
            .filter_map(|entry| {
                let commit = entry.commit?;
                Some(Attestation {
                    kind: AttestedKind::Story,
                    epic: shared.dir.epic_id().to_owned(),
                    run: shared.run,
                    commit: commit.to_hex(),
                    story: Some(entry.id().to_owned()),
                    checked: Some(entry.request.checked.to_hex()),
                    perimeter: Some("passed".to_owned()),
                    test_guard: Some("passed".to_owned()),
                    judge: shared.config.judge.as_ref().map(|roster| JudgeVerdict {
                        seat: entry
                            .request
                            .judge_seat
                            .clone()
                            .unwrap_or_else(|| roster.to_string()),
                        verdict: "cleared".to_owned(),
                        note: entry.request.judge.clone(),
                    }),
                    gates: gates.clone(),
                    gated_commit: tip.to_hex(),
                    gated_tree: String::new(),
                    lander: None,
                })
            })
            .collect();
        let (git, dir, epic, guard, base) = (
            Arc::clone(&shared.git),
            shared.dir.clone(),
            shared.epic_worktree.clone(),
            Arc::clone(&shared.guard),
            self.base,
        );
        let recorded = offload::blocking(move || {
            let (line, _) = git
                .first_parent_line(&epic, Some(&base), &tip.to_hex())
                .map_err(|error| chain(&error))?;
            let tree = line
                .last()
                .map(|last| last.tree.clone())
                .unwrap_or_default();
            let attestations: Vec<Attestation> = attestations
                .into_iter()
                .map(|mut attestation| {
                    attestation.gated_tree.clone_from(&tree);
                    attestation
                })
                .collect();
            Attestation::record_all(&attestations, git.as_ref(), &dir, &epic, &guard)
        })
        .await;
        let failed = match recorded {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(error) => error.to_string(),
        };
        self.emit(Event::RunNote {
            message: format!("the merges proven at {tip} could not be attested: {failed}"),
        });
    }

    /// Fails `culprit`, alone on the proven head with red gates (`red`): its merge is undone.
    async fn pin(&mut self, culprit: Entry, red: Failure) {
        let story = culprit.id().to_owned();
        self.rollback(
            self.base,
            std::slice::from_ref(&story),
            "the gates turned red",
        )
        .await;
        let failure = if self.several {
            self.emit(Event::CulpritPinned {
                batch: self.number,
                story: story.clone(),
                commit: culprit.tip.to_hex(),
            });
            Failure::Culprit {
                batch: self.number,
                cause: Box::new(red),
            }
        } else {
            red
        };
        self.answer_failed(culprit.request, failure.into());
    }

    /// Interrupted before `unproven` were proven: their merges are undone and each ends
    /// cancelled.
    async fn interrupted(&mut self, unproven: impl Iterator<Item = Entry>) {
        let unproven: Vec<Entry> = unproven.collect();
        let stories: Vec<String> = unproven
            .iter()
            .filter(|entry| entry.commit.is_some())
            .map(|entry| entry.id().to_owned())
            .collect();
        self.rollback(
            self.base,
            &stories,
            "the run was interrupted before its gates finished",
        )
        .await;
        for entry in unproven {
            self.answer_failed(entry.request, Stop::Cancelled);
        }
    }

    fn answer_failed(&mut self, request: Request, stop: Stop) {
        self.pending.retain(|story| *story != request.story.id);
        request.reply.send(Err(stop)).ok();
    }

    /// Writes the journal: the pending stories on the proven head, and `proven` if given.
    async fn journal(&self, proven: Option<ProvenCandidate>) -> Result<(), BoxError> {
        let journal = MergeJournal {
            stories: self.pending.clone(),
            checkpoint: self.base.to_hex(),
            proven,
        };
        let saved = self
            .shared
            .write(self.shared.dir.merge_journal(), move |path| {
                epic_state_store::save(path, &journal)
            })
            .await;
        match saved {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Box::new(error)),
            Err(error) => Err(Box::new(error)),
        }
    }

    /// Moves the epic worktree (and branch) to `to`, unless it is there and clean: a clean one
    /// by rewriting only the files that differ ([`Git::advance_worktree`], the reflog saying
    /// `reason`), any other (or one whose move failed) by a hard reset.
    ///
    /// [`Git::advance_worktree`]: epic_git_ops::Git::advance_worktree
    async fn reset_to(&self, to: CommitId, reason: String) -> Result<(), GitFailed> {
        let epic = self.shared.epic_worktree.clone();
        offload::git(
            &self.shared.git,
            "move the epic branch to a candidate",
            move |git| {
                let head = git.checkpoint(&epic).map_err(BoxError::from)?;
                let clean = git
                    .status(&epic, &[])
                    .is_ok_and(|status| !status.is_dirty());
                if clean {
                    if head == to {
                        return Ok::<_, BoxError>(());
                    }
                    // Refused or failed, the reset below puts everything in its place.
                    if git.advance_worktree(&epic, &head, &to, &reason).is_ok() {
                        return Ok(());
                    }
                }
                git.rollback(&epic, &to).map_err(BoxError::from)
            },
        )
        .await
    }

    /// Resets the epic worktree to `to`, undoing the merges of `stories` (each told so).
    async fn rollback(&self, to: CommitId, stories: &[String], why: &str) {
        let epic = self.shared.epic_worktree.clone();
        let result = offload::git(&self.shared.git, "undo the merge", move |git| {
            let head = git.checkpoint(&epic).map_err(|error| error.to_string());
            let status = git
                .status(&epic, &[])
                .map_or(true, |status| status.is_dirty());
            if head.as_ref().is_ok_and(|head| *head == to) && !status {
                return Ok(false);
            }
            git.rollback(&epic, &to).map(|()| true)
        })
        .await;
        for story in stories {
            match &result {
                Ok(true) => self.emit(Event::StoryRolledBack {
                    story: story.clone(),
                    to: to.to_hex(),
                    reason: why.to_owned(),
                }),
                Ok(false) => {}
                Err(error) => self.emit(Event::RunNote {
                    message: format!(
                        "the merge of story '{story}' could not be undone ({}); reset the epic                          worktree `{}` to {to} by hand",
                        git_reason(error),
                        self.shared.epic_worktree.display()
                    ),
                }),
            }
        }
    }
}

/// Records `request`'s story merged, its merge held by `holds`.
async fn save_merged(shared: &Shared, request: &Request, holds: CommitId) -> Result<(), Stop> {
    let path = shared
        .dir
        .story_state(&request.story.id)
        .map_err(Failure::UnsafeId)?;
    let state = StoryState {
        id: request.story.id.clone(),
        hash: epic_story_plan::story_hash(&request.story),
        branch: request.branch.clone(),
        worktree: request.worktree.clone(),
        status: StoryStage::Merged,
        merge: Some(holds.to_hex()),
    };
    let saved = shared
        .write(path, move |path| epic_state_store::save(path, &state))
        .await;
    match saved {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(Failure::StateNotSaved(Some(error)).into()),
        Err(_) => Err(Failure::StateNotSaved(None).into()),
    }
}

/// The same failure again, for another story of the batch.
fn copy_git_failed(error: &GitFailed) -> GitFailed {
    GitFailed {
        action: error.action.clone(),
        source: chain(error.source.as_ref()).into(),
    }
}
