//! Step 2 of a landing: the target merged into the epic branch, each conflicted path resolved
//! by its owning story's lander turn (the unowned ones by a final turn), the gates made green in
//! bounded rounds, every turn held to its perimeter (`perimeter.rs`) and the resolutions and
//! fixes to the test guard, or the epic branch put back.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, CommitOutcome, FileChangeKind, FileHead};
use epic_report::{LandedConflict, PutBack};
use epic_story_plan::Story;

use super::perimeter::Reach;
use super::prompt::{self as land_prompt, Sides};
use crate::error::{Halt, LandError};
use crate::lander::{Lander, Proven, Turns};
use crate::outcome::{LandOutcome, NotLanded};
use crate::record::LandingJournal;
use epic_agents::{Role, SeatError};
use epic_attest::AttestedGate;
use epic_chat::{Chat, ChatContext};
use epic_events::Event;
use epic_gates::GateResult;
use epic_process::chain;
use epic_process::offload::{self, BoxError};

fn first_line(text: &str) -> String {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// Whether `text` holds a conflict marker line.
fn has_markers(text: &str) -> bool {
    text.lines().any(|line| {
        line.starts_with("<<<<<<< ")
            || line == "<<<<<<<"
            || line.starts_with(">>>>>>> ")
            || line == ">>>>>>>"
            || line == "======="
            || line.starts_with("||||||| ")
    })
}

impl Lander {
    /// Merges the target into the epic branch, has the conflicts resolved and the gates made
    /// green: the proven epic head.
    pub(super) async fn prove(
        &self,
        turns: &Turns,
        checkpoint: CommitId,
        journal_path: &Path,
    ) -> Result<Proven, Halt> {
        let from = self.rev(&self.target_ref).await?;
        self.save_journal(
            journal_path,
            LandingJournal {
                target: self.target.clone(),
                from: from.to_hex(),
                checkpoint: checkpoint.to_hex(),
                commit: None,
                landing: None,
            },
            turns,
        )
        .await?;
        let head = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        let mut conflicts = Vec::new();
        let mut put_back = Vec::new();
        let merged = if self.is_ancestor(&from.to_hex(), &head.to_hex()).await? {
            head
        } else {
            let (epic, rev) = (self.epic_worktree.clone(), from.to_hex());
            let paths = self
                .git_op("merge the target into the epic branch", move |git| {
                    git.start_merge(&epic, &rev)
                })
                .await?;
            self.note(format!(
                "merged `{}` ({from}) into the epic branch{}",
                self.target,
                if paths.is_empty() {
                    String::new()
                } else {
                    format!("; conflicts: {}", paths.join(", "))
                }
            ));
            if !paths.is_empty() {
                conflicts = self.owned(paths);
                put_back = self.resolve(turns, head, from, &conflicts).await?;
            }
            let message = format!(
                "{}: merge {} into {}",
                self.dir.epic_id(),
                self.target,
                self.epic_branch
            );
            let epic = self.epic_worktree.clone();
            let merged = self
                .git_op("commit the merge of the target", move |git| {
                    let state = git.worktree_state(&epic)?;
                    let commit = git.commit_tree(&epic, &state.tree, &[head, from], &message)?;
                    git.rollback(&epic, &commit)?;
                    Ok::<_, BoxError>(commit)
                })
                .await?;
            self.check_resolutions(&conflicts, head, from, merged)
                .await?;
            merged
        };
        let (rounds, gates) = self.green(turns, merged, &mut put_back).await?;
        // What lands is the head's tree: the gates proved it only if the files they ran on are
        // exactly that tree. Something that wrote the worktree meanwhile (a process a turn left
        // behind) leaves nothing proven.
        let epic = self.epic_worktree.clone();
        let status = self
            .git_op("read the status of the epic worktree", move |git| {
                git.status(&epic, &[])
            })
            .await?;
        if status.is_dirty() {
            return Err(Halt::NotLanded(NotLanded::WorktreeChanged {
                paths: status.paths,
            }));
        }
        let head = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        let epic = self.epic_worktree.clone();
        let tree = self
            .git_op("read the proven tree", move |git| git.worktree_state(&epic))
            .await?
            .tree;
        Ok(Proven {
            head,
            from,
            conflicts,
            rounds,
            gates,
            tree,
            put_back,
        })
    }

    /// One lander turn per story with conflicts, then one for the paths no story owns, each
    /// held to its own paths (what else it changed put back, the merge kept open); fails while
    /// a path is still unmerged or holds conflict markers. What was put back.
    pub(super) async fn resolve(
        &self,
        turns: &Turns,
        ours: CommitId,
        theirs: CommitId,
        conflicts: &[LandedConflict],
    ) -> Result<Vec<PutBack>, Halt> {
        let mut by_story: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for conflict in conflicts {
            by_story
                .entry(conflict.story.clone())
                .or_default()
                .push(conflict.path.clone());
        }
        // Stories in plan order, the unowned paths last.
        let mut groups: Vec<(Option<&Story>, Vec<String>)> = self
            .plan
            .stories
            .iter()
            .filter_map(|story| {
                by_story
                    .get(&Some(story.id.clone()))
                    .map(|paths| (Some(story), paths.clone()))
            })
            .collect();
        if let Some(paths) = by_story.get(&None) {
            groups.push((None, paths.clone()));
        }
        let mut put_back = Vec::new();
        for (story, paths) in groups {
            let sides = self.sides(ours, theirs, &paths).await?;
            let prompt = land_prompt::conflicts(story, &self.target, &sides);
            let story =
                story.map_or_else(|| Story::new("", "", Vec::<String>::new()), Clone::clone);
            let reach = Reach {
                story: (!story.id.is_empty()).then(|| story.id.clone()),
                paths,
                merging: Some(theirs),
                round: None,
            };
            let before = self.before_turn().await?;
            self.ask(turns, Arc::new(story), prompt).await?;
            put_back.extend(self.hold(before, &reach).await?);
        }
        let left = self.unresolved(conflicts).await?;
        if left.is_empty() {
            return Ok(put_back);
        }
        Err(Halt::NotLanded(NotLanded::Unresolved {
            target: self.target.clone(),
            paths: left,
        }))
    }

    /// Both sides of each path.
    pub(super) async fn sides(
        &self,
        ours: CommitId,
        theirs: CommitId,
        paths: &[String],
    ) -> Result<Vec<Sides>, Halt> {
        let (epic, paths) = (self.epic_worktree.clone(), paths.to_vec());
        Ok(self
            .git_op("read both sides of the conflicts", move |git| {
                paths
                    .into_iter()
                    .map(|path| {
                        Ok::<_, epic_git_ops::LandGitError>(Sides {
                            ours: git.file_at(&epic, &ours.to_hex(), &path)?,
                            theirs: git.file_at(&epic, &theirs.to_hex(), &path)?,
                            path,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .await?)
    }

    /// The conflicted paths that still hold conflict markers.
    pub(super) async fn unresolved(
        &self,
        conflicts: &[LandedConflict],
    ) -> Result<Vec<String>, Halt> {
        let (epic, paths): (PathBuf, Vec<String>) = (
            self.epic_worktree.clone(),
            conflicts.iter().map(|c| c.path.clone()).collect(),
        );
        let left = offload::blocking(move || {
            paths
                .into_iter()
                .filter(
                    |path| match epic_git_ops::read_head(&epic, path, 64 * 1024 * 1024) {
                        Ok(FileHead::Text { text, .. }) => has_markers(&text),
                        Ok(FileHead::Binary { .. } | FileHead::Missing | FileHead::Directory) => {
                            false
                        }
                        Ok(_) | Err(_) => true,
                    },
                )
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        Ok(left)
    }

    /// One lander turn on `story` (empty id: the epic's); before the landing's first, the
    /// lander's seats are checked as a run checks its own (unless `--no-preflight`).
    pub(super) async fn ask(
        &self,
        turns: &Turns,
        story: Arc<Story>,
        prompt: String,
    ) -> Result<(), Halt> {
        if self.config.preflight
            && !turns
                .seats_checked
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            epic_agents::check_seats(self.config.lander.seats(), &self.main)
                .await
                .map_err(|not_ready| Halt::Error(not_ready.into()))?;
        }
        let mut chat = Chat::new(
            self.config.lander.clone(),
            Role::Lander,
            land_prompt::system(
                self.dir.epic_id(),
                &self.plan.epic,
                &self.target,
                &self.config.extra_rules,
            ),
            ChatContext {
                epic: self.dir.epic_id().to_owned(),
                story: Arc::clone(&story),
                task: None,
                worktree: self.epic_worktree.clone(),
                slot: 0,
                turn_timeout: self.config.turn_timeout,
                sandbox: turns.sandbox.clone(),
                cancel: self.cancel.clone(),
            },
            Arc::clone(&turns.recorder),
        );
        let asked = chat.ask(prompt).await;
        // Without the sandbox, what the turn left running is found as an orphan and killed.
        for message in turns.sandbox.sweep().await {
            self.note(message);
        }
        match asked {
            Ok(_) => Ok(()),
            // Cancelled by its seats (a login lost, every seat paused past `--max-wait`), not by
            // the user: say which.
            Err(SeatError::Cancelled) => Err(match turns.pauses.stop() {
                Some(stop) => Halt::Error(LandError::Stopped(stop)),
                None => Halt::Cancelled,
            }),
            Err(error) => Err(Halt::NotLanded(NotLanded::TurnFailed {
                story: (!story.id.is_empty()).then(|| story.id.clone()),
                error: chain(&error),
            })),
        }
    }

    /// Runs the gates on the epic worktree; red, up to `max_rounds` lander rounds, each held
    /// to the stories' owned paths (what else it changed put back, into `put_back`), its fix
    /// committed and held to the test guard. The rounds taken, and the gates' results on the
    /// green head.
    pub(super) async fn green(
        &self,
        turns: &Turns,
        merged: CommitId,
        put_back: &mut Vec<PutBack>,
    ) -> Result<(u32, Vec<AttestedGate>), Halt> {
        let rounds = self.config.max_rounds.max(1);
        let mut round = 0;
        loop {
            let (failure, results) = self.gates(turns).await?;
            let Some(failure) = failure else {
                return Ok((round, results));
            };
            if round >= rounds {
                return Err(Halt::NotLanded(NotLanded::GatesRed {
                    target: self.target.clone(),
                    rounds: round,
                    failure: first_line(&failure),
                }));
            }
            round += 1;
            let reach = Reach {
                paths: self.owned_paths(),
                merging: None,
                story: None,
                round: Some(round),
            };
            let prompt = land_prompt::red_gates(&failure, round, rounds, &reach.paths);
            let before = self.before_turn().await?;
            self.ask(
                turns,
                Arc::new(Story::new("", "", Vec::<String>::new())),
                prompt,
            )
            .await?;
            put_back.extend(self.hold(before, &reach).await?);
            let (epic, message) = (
                self.epic_worktree.clone(),
                format!(
                    "{}: land: fix the gates (round {round})",
                    self.dir.epic_id()
                ),
            );
            let committed = self
                .git_op("commit the lander's fix", move |git| {
                    git.commit_all(&epic, &message)
                })
                .await?;
            if matches!(committed, CommitOutcome::Committed(_)) {
                self.check_tests(merged).await?;
            }
        }
    }

    /// Runs the gates once: the failure, if red, and each gate's result as the attestation
    /// names it (command, exit code, flaky when it passed on a rerun).
    pub(super) async fn gates(
        &self,
        turns: &Turns,
    ) -> Result<(Option<String>, Vec<AttestedGate>), Halt> {
        let events = Arc::clone(&self.events);
        let results = Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = Arc::clone(&results);
        let on_result = move |result: &GateResult| {
            kept.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(result.attested(false));
            events(Event::EpicGate {
                story: None,
                command: result.command.clone(),
                passed: result.passed,
                duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
                status: result.status.clone(),
            });
            if let Some(event) = result.flaky_event(None) {
                events(event);
            }
            if let Some(event) = result.leftovers_event(None) {
                events(event);
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), self.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), String::new()),
            (
                "EPIC_WORKTREE".to_owned(),
                self.epic_worktree.display().to_string(),
            ),
        ];
        let review = turns
            .gates
            .run(&self.epic_worktree, &env, &self.cancel, &on_result)
            .await
            .map_err(|_| Halt::Cancelled)?;
        let results = std::mem::take(
            &mut *results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if review.clean {
            return Ok((None, results));
        }
        let mut failure = review.summary.clone();
        for issue in &review.issues {
            let _ = write!(failure, "\n{}\n{}", issue.title, issue.description);
        }
        Ok((Some(failure), results))
    }

    /// Fails when the lander's fixes since `merged` deleted or skipped tests.
    pub(super) async fn check_tests(&self, merged: CommitId) -> Result<(), Halt> {
        let patterns = self.config.test_patterns.clone();
        let (epic, base) = (self.epic_worktree.clone(), merged.to_hex());
        let changes = self
            .git_op("diff the lander's fixes", move |git| {
                git.file_changes_vs_base(
                    &epic,
                    &base,
                    "HEAD",
                    &epic_guard::has_skip_marker,
                    &|path| epic_guard::is_test_path(path, &patterns),
                )
            })
            .await?;
        let found = epic_guard::tampering(&changes, &self.config.test_patterns);
        tampered(&found)
    }

    /// Fails when the resolutions of the conflict turns deleted, disabled, emptied or skipped
    /// tests in the conflicted paths: what the merge commit `merged` does to them that it does
    /// against both sides, the epic head `ours` and the target `theirs` (a resolution may take
    /// either side's version; it may not drop what both had). Paths of a story that sets
    /// `tests_change` are its to change.
    pub(super) async fn check_resolutions(
        &self,
        conflicts: &[LandedConflict],
        ours: CommitId,
        theirs: CommitId,
        merged: CommitId,
    ) -> Result<(), Halt> {
        let paths: Vec<String> = conflicts
            .iter()
            .filter(|conflict| {
                !conflict.story.as_ref().is_some_and(|id| {
                    self.plan
                        .stories
                        .iter()
                        .any(|story| &story.id == id && story.tests_change)
                })
            })
            .map(|conflict| conflict.path.clone())
            .collect();
        if paths.is_empty() {
            return Ok(());
        }
        let patterns = self.config.test_patterns.clone();
        let epic = self.epic_worktree.clone();
        let sides = self
            .git_op("diff the conflicts' resolutions", move |git| {
                let mut sides = Vec::with_capacity(2);
                for base in [ours, theirs] {
                    let changes: Vec<_> = git
                        .file_changes_vs_base(
                            &epic,
                            &base.to_hex(),
                            &merged.to_hex(),
                            &epic_guard::has_skip_marker,
                            &|path| epic_guard::is_test_path(path, &patterns),
                        )?
                        .into_iter()
                        .filter(|change| {
                            let source = match &change.kind {
                                FileChangeKind::Renamed { from }
                                | FileChangeKind::Copied { from } => Some(from.as_str()),
                                _ => None,
                            };
                            paths.iter().any(|path| {
                                epic_story_plan::path::within(&change.path, path)
                                    || source.is_some_and(|from| {
                                        epic_story_plan::path::within(from, path)
                                    })
                            })
                        })
                        .collect();
                    sides.push(changes);
                }
                Ok::<_, BoxError>(sides)
            })
            .await?;
        let [vs_ours, vs_theirs] = [&sides[0], &sides[1]]
            .map(|changes| epic_guard::tampering(changes, &self.config.test_patterns));
        tampered(&vs_ours.common(&vs_theirs))
    }
}

/// What a lander's change did to tests, as the reason the landing stops; `Ok` when nothing.
fn tampered(found: &epic_guard::Tampering) -> Result<(), Halt> {
    if found.is_empty() {
        return Ok(());
    }
    let mut what = Vec::new();
    if !found.deleted.is_empty() {
        what.push(format!("deleted {}", found.deleted.join(", ")));
    }
    for (from, to) in &found.renamed {
        what.push(format!("renamed {from} to {to}"));
    }
    if !found.linked.is_empty() {
        what.push(format!("replaced {} by links", found.linked.join(", ")));
    }
    if !found.emptied.is_empty() {
        what.push(format!("emptied {}", found.emptied.join(", ")));
    }
    for (file, marker) in &found.skipped {
        what.push(format!("skipped a test in {file} (`{marker}`)"));
    }
    Err(Halt::NotLanded(NotLanded::TestsTampered {
        found: what.join("; "),
    }))
}

impl Lander {
    /// Puts the epic branch and worktree back at `checkpoint` and says why the landing stopped.
    pub(super) async fn give_up(
        &self,
        halt: Halt,
        checkpoint: CommitId,
        journal_path: &Path,
    ) -> Result<LandOutcome, LandError> {
        let epic = self.epic_worktree.clone();
        let undone = self
            .git_op("put the epic branch back", move |git| {
                git.abort_unfinished_merge(&epic)?;
                git.rollback(&epic, &checkpoint).map_err(BoxError::from)
            })
            .await;
        if let Err(error) = &undone {
            self.note(format!(
                "the epic branch could not be put back at {checkpoint}: {}",
                chain(error)
            ));
        }
        if undone.is_ok() {
            let path = journal_path.to_path_buf();
            offload::blocking(move || epic_state_store::remove(path).ok())
                .await
                .ok();
        }
        match halt {
            Halt::NotLanded(why) => Ok(LandOutcome::NotLanded(why)),
            Halt::Cancelled => Ok(LandOutcome::Interrupted),
            Halt::Error(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_markers_are_whole_lines() {
        assert!(has_markers(
            "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> main\n"
        ));
        assert!(has_markers("x\n=======\n"));
        assert!(!has_markers(
            "a heading\n=======  \nnot a marker: `<<<<<<<` inline\n"
        ));
        assert!(!has_markers("resolved\n"));
    }
}
