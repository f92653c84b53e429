//! The landing's course: the checks before anything is touched (unmerged stories, attestations,
//! the user's checkout), the turns' sandbox, guard and budget, the attempts (merge, prove, move
//! the target by compare-and-swap) with their journal, and the dry run.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_report::{Landing, PutBack, Timestamp};

use crate::error::{Halt, LandError, state_error};
use crate::job::{LANDING, LandJob};
use crate::lander::{Lander, Proven, Turns};
use crate::outcome::{DryRun, LandOutcome, NotLanded, Unmerged};
use crate::record::LandingJournal;
use epic_attest::{Attestation, AttestedKind, LanderPerimeter};
use epic_branch::RunError;
use epic_chat::Budget;
use epic_chat::Recorder;
use epic_chat::SeatPauses;
use epic_events::ReportDocument;
use epic_gates::Gates;
use epic_guard::TurnGuard;
use epic_process::chain;
use epic_process::offload::{self, BoxError};
use epic_process::sandbox::{self, Layout};

/// How many times the landing goes back to the merge when the target moved meanwhile.
const RETRIES: u32 = 2;

impl Lander {
    pub(super) async fn dry_run(
        &self,
        epic_head: CommitId,
        unmerged: Vec<Unmerged>,
    ) -> Result<DryRun, LandError> {
        let from = self.rev(&self.target_ref).await?;
        let moved = !self
            .is_ancestor(&from.to_hex(), &epic_head.to_hex())
            .await?;
        let conflicts = if moved {
            let (main, ours, theirs) = (self.main.clone(), epic_head.to_hex(), from.to_hex());
            self.git_op("merge the target in memory", move |git| {
                git.merge_conflicts(&main, &ours, &theirs)
            })
            .await?
        } else {
            Vec::new()
        };
        Ok(DryRun {
            target: self.target.clone(),
            target_moved: moved,
            conflicts: self.owned(conflicts),
            unmerged,
            unattested: self.unattested_commits().await,
        })
    }

    pub(super) async fn land(
        self,
        job: &LandJob,
        unmerged: Vec<Unmerged>,
    ) -> Result<LandOutcome, LandError> {
        if let Some(finished) = self.recover(job).await? {
            return Ok(finished);
        }
        if let Some(outcome) = self.already_landed().await? {
            return Ok(outcome);
        }
        if !unmerged.is_empty() && !job.partial {
            return Ok(LandOutcome::NotLanded(NotLanded::Unmerged {
                stories: unmerged,
            }));
        }
        let unattested = self.unattested_commits().await;
        if !unattested.is_empty() && !job.allow_unattested {
            return Ok(LandOutcome::NotLanded(NotLanded::Unattested {
                commits: unattested,
            }));
        }
        // Before anything is touched: a checkout of the user's in the way of the landing.
        let checkpoint = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        if let Some(refused) = self.dirty_checkout(&checkpoint).await? {
            return Ok(LandOutcome::NotLanded(refused));
        }
        epic_branch::prepare_epic_worktree(
            &self.git,
            &self.dir,
            &self.main,
            "HEAD",
            &self.epic_branch,
            &self.epic_worktree,
        )
        .await?;
        let epic = self.epic_worktree.clone();
        self.git_op("abort a merge left in the epic worktree", move |git| {
            git.abort_unfinished_merge(&epic)
        })
        .await?;
        let epic = self.epic_worktree.clone();
        let status = self
            .git_op("read the status of the epic worktree", move |git| {
                git.status(&epic, &[])
            })
            .await?;
        if status.is_dirty() {
            return Err(RunError::DirtyEpicWorktree {
                worktree: self.epic_worktree.clone(),
                paths: status.paths,
            }
            .into());
        }
        let turns = self.turns().await?;
        let left_out: Vec<String> = unmerged.into_iter().map(|u| u.story).collect();
        self.attempts(job, &turns, checkpoint, &unattested, left_out)
            .await
    }

    /// Merges the target into the epic branch and proves it, then moves the target by
    /// compare-and-swap; a target that moved meanwhile is merged again, at most [`RETRIES`]
    /// times.
    pub(super) async fn attempts(
        &self,
        job: &LandJob,
        turns: &Turns,
        checkpoint: CommitId,
        unattested: &[String],
        left_out: Vec<String>,
    ) -> Result<LandOutcome, LandError> {
        let journal_path = self.dir.landing_journal();
        let mut attempt = 0;
        // What the lander turns of every attempt changed outside their perimeter: an attempt
        // given up for a moved target is merged again, and its put-backs still belong in the
        // landing's record.
        let mut put_back_before: Vec<PutBack> = Vec::new();
        loop {
            attempt += 1;
            let proven = match self.prove(turns, checkpoint, &journal_path).await {
                Ok(proven) => proven,
                Err(halt) => return self.give_up(halt, checkpoint, &journal_path).await,
            };
            self.attest_landing(checkpoint, &proven, &turns.guard).await;
            if job.stop_before_target {
                self.record_proven(proven.head, Some(&turns.guard)).await;
                self.remove_journal(&journal_path, turns).await;
                return Ok(LandOutcome::Ready {
                    epic_branch: self.epic_branch.clone(),
                    target: self.target.clone(),
                    head: proven.head.to_hex(),
                    conflicts: proven.conflicts,
                    rounds: proven.rounds,
                    put_back: proven.put_back,
                });
            }
            let message = self.landing_message(unattested, &left_out);
            let (main, tree, parents) = (
                self.main.clone(),
                format!("{}^{{tree}}", proven.head.to_hex()),
                [proven.from, proven.head],
            );
            let commit = self
                .git_op("write the landing commit", move |git| {
                    git.commit_tree(&main, &tree, &parents, &message)
                })
                .await?;
            // The landing as it will be recorded, in the journal before the target moves: a
            // rerun that finds the target moved records it whole.
            let mut landing = Landing::new(
                &self.target,
                commit.to_hex(),
                proven.from.to_hex(),
                Timestamp::now(),
            );
            landing.conflicts.clone_from(&proven.conflicts);
            landing.rounds = proven.rounds;
            landing.cost_usd = turns
                .recorder
                .usage()
                .totals()
                .cost_usd()
                .unwrap_or_default();
            landing.left_out.clone_from(&left_out);
            landing.put_back = put_back_before.clone();
            landing.put_back.extend(proven.put_back.iter().cloned());
            let journal = LandingJournal {
                target: self.target.clone(),
                from: proven.from.to_hex(),
                checkpoint: checkpoint.to_hex(),
                commit: Some(commit.to_hex()),
                landing: Some(landing.clone()),
            };
            self.save_journal(&journal_path, journal, turns).await?;
            self.note(format!(
                "the epic branch is green with `{}` in it: moving `{}` to the landing commit \
                 {commit}",
                self.target, self.target
            ));
            let (main, name, reason) = (
                self.main.clone(),
                self.target_ref.clone(),
                format!("epic land: {}", self.dir.epic_id()),
            );
            let from = proven.from;
            let swapped = self
                .git_op("move the target", move |git| {
                    git.swap_ref(&main, &name, &commit, &from, &reason)
                })
                .await?;
            if swapped {
                self.note(format!("`{}` moved to {commit}: landed", self.target));
                landing.landed_at = Timestamp::now();
                return self
                    .finish(job, landing, proven.from, commit, Some(turns))
                    .await;
            }
            if attempt > RETRIES {
                let halt = Halt::NotLanded(NotLanded::TargetKeptMoving {
                    target: self.target.clone(),
                    attempts: attempt,
                });
                return self.give_up(halt, checkpoint, &journal_path).await;
            }
            put_back_before.extend(proven.put_back);
            self.note(format!(
                "`{}` moved during the landing: merging it into the epic branch again",
                self.target
            ));
        }
    }

    /// The commits of the epic branch that `epic verify` does not find attested and
    /// consistent, oldest first (each as `<id> "<summary>"`), then the stories whose state
    /// claims a merge no attestation backs: what `epic land` refuses without
    /// `--allow-unattested`, and lists in the landing commit's message with it.
    pub(super) async fn unattested_commits(&self) -> Vec<String> {
        let (git, dir, main, branch) = (
            Arc::clone(&self.git),
            self.dir.clone(),
            self.main.clone(),
            self.epic_branch.clone(),
        );
        let verified = offload::blocking(move || {
            epic_attest::verify(git.as_ref(), &dir, &main, Some(&branch))
        })
        .await;
        match verified {
            Ok(Ok(verification)) => verification
                .unattested()
                .map(|commit| {
                    format!(
                        "{} \"{}\"",
                        commit.commit.get(..12).unwrap_or(&commit.commit),
                        commit.summary
                    )
                })
                .chain(verification.claims.iter().cloned())
                .collect(),
            Ok(Err(error)) => vec![format!(
                "the epic branch could not be verified: {}",
                chain(&error)
            )],
            Err(error) => vec![format!("the epic branch could not be verified: {error}")],
        }
    }

    /// Records the attestation of each commit the landing made on the epic branch (after
    /// `checkpoint`, up to the proven head: the merge of the target, then the fixes of red
    /// gates), each naming the gates' results and the tree they passed on, the head's, and the
    /// lander's perimeter with what was put back. Best effort, as a story's: a commit without
    /// one is named by `epic verify`.
    pub(super) async fn attest_landing(
        &self,
        checkpoint: CommitId,
        proven: &Proven,
        guard: &Arc<TurnGuard>,
    ) {
        let gates = proven.gates.clone();
        let (git, dir, epic, guard) = (
            Arc::clone(&self.git),
            self.dir.clone(),
            self.epic_worktree.clone(),
            Arc::clone(guard),
        );
        let (head, from, tree) = (proven.head, proven.from, proven.tree.clone());
        let lander = LanderPerimeter {
            conflicts: proven.conflicts.iter().map(|c| c.path.clone()).collect(),
            rounds: self.owned_paths(),
            put_back: proven.put_back.clone(),
        };
        let recorded = offload::blocking(move || {
            // The landing counts as part of the epic's last run.
            let run = epic_state_store::load::<ReportDocument>(dir.report_json())
                .ok()
                .flatten()
                .and_then(|report| report.0.latest_run())
                .unwrap_or_default();
            let (line, _) = git
                .first_parent_line(&epic, Some(&checkpoint), &head.to_hex())
                .map_err(|error| chain(&error))?;
            for commit in line {
                // A merge of the target as it was at an earlier attempt (the target moved
                // since, and was merged again) merges the target's history too: named as such,
                // it verifies, and so does the merge of the target as it is now.
                let merges_target = match commit.parents.get(1) {
                    Some(merged) if *merged == from => true,
                    Some(merged) => git
                        .is_ancestor(&epic, &merged.to_hex(), &from.to_hex())
                        .map_err(|error| chain(&error))?,
                    None => false,
                };
                let attestation = Attestation {
                    kind: AttestedKind::Landing,
                    epic: dir.epic_id().to_owned(),
                    run,
                    commit: commit.id.to_hex(),
                    story: None,
                    checked: commit
                        .parents
                        .get(1)
                        .filter(|_| merges_target)
                        .map(CommitId::to_hex),
                    perimeter: Some("passed".to_owned()),
                    test_guard: Some("passed".to_owned()),
                    judge: None,
                    gates: gates.clone(),
                    gated_commit: head.to_hex(),
                    gated_tree: tree.clone(),
                    lander: Some(lander.clone()),
                };
                attestation.record(git.as_ref(), &dir, &epic, &guard)?;
            }
            Ok::<_, String>(())
        })
        .await;
        let failed = match recorded {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(error) => error.to_string(),
        };
        self.note(format!(
            "the landing's commits could not be attested: {failed}"
        ));
    }

    /// The landing commit's message: `<epic>: land epic/<id>`, then the stories left out and
    /// the commits landed without attestation.
    pub(super) fn landing_message(&self, unattested: &[String], left_out: &[String]) -> String {
        let mut message = format!("{}: land {}\n", self.dir.epic_id(), self.epic_branch);
        if !left_out.is_empty() {
            let _ = write!(
                message,
                "\nLeft out (not merged): {}\n",
                left_out.join(", ")
            );
        }
        if !unattested.is_empty() {
            let _ = write!(
                message,
                "\nLanded without attestation: {}\n",
                unattested.join(", ")
            );
        }
        message
    }

    /// Refuses a main checkout that has the target checked out with changes in paths the
    /// landing changes.
    pub(super) async fn dirty_checkout(
        &self,
        epic_head: &CommitId,
    ) -> Result<Option<NotLanded>, LandError> {
        let (main, target, head) = (self.main.clone(), self.target.clone(), epic_head.to_hex());
        let target_ref = self.target_ref.clone();
        let found = self
            .git_op("read your checkout", move |git| {
                if git.current_branch(&main)?.as_deref() != Some(target.as_str()) {
                    return Ok::<_, BoxError>(Vec::new());
                }
                let status = git.status(&main, &[])?;
                if !status.is_dirty() {
                    return Ok(Vec::new());
                }
                let changes = git.changed_paths_vs_base(&main, &target_ref, &head)?;
                Ok(status
                    .paths
                    .into_iter()
                    .filter(|path| {
                        changes.iter().any(|changed| {
                            epic_story_plan::path::within(changed, path)
                                || epic_story_plan::path::within(path, changed)
                        })
                    })
                    .collect())
            })
            .await?;
        Ok((!found.is_empty()).then(|| NotLanded::DirtyCheckout {
            checkout: self.main.clone(),
            target: self.target.clone(),
            paths: found,
        }))
    }

    /// The sandbox, the guard, the budget and the seat pauses of the landing's turns and gates.
    pub(super) async fn turns(&self) -> Result<Turns, LandError> {
        let layout = Layout::new(&self.main, self.git.common_dir(), &self.worktree_root);
        let resolved =
            sandbox::resolve(self.config.sandbox, layout, self.config.credentials()).await?;
        if let Some(message) = resolved.note {
            self.note(message);
        }
        let mut sandbox = resolved.sandbox;
        if !sandbox.is_on() {
            // As a run does: a daemon that escapes its turn is found as an orphan this process
            // adopts (`PR_SET_CHILD_SUBREAPER`).
            match epic_process::adopt_orphans() {
                Ok(()) => sandbox = sandbox.adopting(),
                Err(error) => self.note(format!(
                    "processes that escape their turn cannot be looked for (epic could not \
                     become their subreaper: {error})"
                )),
            }
        }
        if sandbox.is_on() {
            let common = self.git.common_dir().to_path_buf();
            offload::blocking(move || epic_git_ops::ensure_logs_dir(&common))
                .await
                .map_err(|error| state_error("create the reflog directory", error))?
                .map_err(|error| state_error("create the reflog directory", error))?;
        }
        let guard = {
            let (common, dir, root, extra) = (
                self.git.common_dir().to_path_buf(),
                self.dir.clone(),
                self.worktree_root.clone(),
                self.config.guarded_files.clone(),
            );
            offload::blocking(move || TurnGuard::new(&common, &dir, &root, &extra))
                .await
                .map_err(|error| state_error("read the files epic guards", error))?
                .map_err(|error| state_error("read the files epic guards", error))?
        };
        let guard = Arc::new(guard);
        let earlier = {
            let path = self.dir.report_json();
            offload::blocking(move || epic_state_store::load::<ReportDocument>(path))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map_or(0.0, |report| report.0.spent_usd())
        };
        let budget = Arc::new(Budget::new(self.config.budget_usd, earlier));
        let pauses = Arc::new(
            SeatPauses::new(
                self.config.max_wait,
                self.config.outage_wait,
                Arc::clone(&self.events),
                self.config.clock.clone(),
            )
            .with_stall_timeout(self.config.stall_timeout),
        );
        let recorder = Recorder::new(
            LANDING,
            self.dir.transcripts_dir().join(format!("_{LANDING}")),
            self.config.prices.clone(),
            Arc::clone(&self.events),
        )
        .with_guard(Some(Arc::clone(&guard)))
        .with_budget(Some(budget))
        .with_pauses(Some(Arc::clone(&pauses)));
        let gates = Gates::new(self.config.gates.iter().cloned(), self.config.gate_timeout)
            .with_reruns(self.config.gate_reruns)
            .with_sandbox(sandbox.clone())
            .with_tidying(Arc::clone(&self.git))
            .with_guard(Arc::clone(&guard));
        Ok(Turns {
            recorder: Arc::new(recorder),
            guard,
            sandbox,
            gates,
            seats_checked: std::sync::atomic::AtomicBool::new(false),
            pauses,
        })
    }

    pub(super) async fn save_journal(
        &self,
        path: &Path,
        journal: LandingJournal,
        turns: &Turns,
    ) -> Result<(), LandError> {
        let guard = Arc::clone(&turns.guard);
        let path = path.to_path_buf();
        offload::blocking(move || {
            guard.epic_write(&path, || epic_state_store::save(&path, &journal))
        })
        .await
        .map_err(|error| state_error("write the landing journal", error))?
        .map_err(|error| state_error("write the landing journal", error))
    }

    pub(super) async fn remove_journal(&self, path: &Path, turns: &Turns) {
        let guard = Arc::clone(&turns.guard);
        let path = path.to_path_buf();
        offload::blocking(move || guard.epic_write(&path, || epic_state_store::remove(&path).ok()))
            .await
            .ok();
    }
}
