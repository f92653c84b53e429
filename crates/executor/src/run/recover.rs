//! What earlier runs left, checked before a run's first story: a merge left unproven undone
//! (back to the proven head epic recorded, never where the journal alone says) or a proven one
//! finished, and the stories merged on earlier runs found (each believed only while its merge
//! commit is on the epic branch's first-parent line).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_state_store::{EpicDir, StoryStage, StoryState};
use epic_story_plan::ValidPlan;

use crate::merge_queue::{MergeJournal, ProvenCandidate};
use epic_branch::ProvenHead;
use epic_branch::RunError;
use epic_events::{Event, EventSink};
use epic_process::offload::{self, BoxError};

/// The stories whose state says merged under their current plan entry (a story whose entry
/// changed since starts over): plan index and state, in plan order. A state that cannot be
/// read counts as not merged; what the states say is checked against the epic branch by
/// [`check_merged_stories`].
pub(super) async fn merged_on_earlier_runs(
    plan: &ValidPlan,
    dir: &EpicDir,
) -> Vec<(usize, StoryState)> {
    let stories: Vec<(String, Option<PathBuf>)> = plan
        .plan()
        .stories
        .iter()
        .map(|story| {
            (
                epic_story_plan::story_hash(story),
                dir.story_state(&story.id).ok(),
            )
        })
        .collect();
    offload::blocking(move || {
        stories
            .into_iter()
            .enumerate()
            .filter_map(|(index, (hash, path))| {
                let state = epic_state_store::load::<StoryState>(path?).ok().flatten()?;
                (state.status == StoryStage::Merged && state.hash == hash).then_some((index, state))
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// Refuses an epic branch that is not where epic left it: at the proven head it recorded, or at
/// the recorded merge commit of a story whose merge was proven but whose proven head a killed
/// run did not get to record. Without a record (an epic begun before epic kept one) the branch is
/// taken as it is.
pub(super) async fn check_proven_head(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    candidates: &[(usize, StoryState)],
    epic_worktree: &Path,
    epic_branch: &str,
) -> Result<(), RunError> {
    let proven_file = dir.proven_head();
    let recorded = {
        let path = proven_file.clone();
        offload::blocking(move || epic_state_store::load::<ProvenHead>(path))
            .await
            .map_err(|error| RunError::State {
                action: "read the proven epic head".to_owned(),
                source: Box::new(error),
            })?
            .map_err(|error| RunError::State {
                action: "read the proven epic head".to_owned(),
                source: Box::new(error),
            })?
    };
    let Some(proven) = recorded.and_then(|record| record.commit.parse::<CommitId>().ok()) else {
        return Ok(());
    };
    let merges: Vec<CommitId> = candidates
        .iter()
        .filter_map(|(_, state)| state.merge.as_deref()?.parse().ok())
        .collect();
    let (worktree, tip) = (
        epic_worktree.to_path_buf(),
        format!("refs/heads/{epic_branch}"),
    );
    let head = offload::git(git, "read the epic branch", move |git| {
        let head = git.rev_parse(&worktree, &tip)?;
        let explained = head == proven
            || (merges.contains(&head) && git.is_ancestor(&worktree, &proven.to_hex(), &tip)?);
        Ok::<_, BoxError>((!explained).then_some(head))
    })
    .await?;
    match head {
        None => Ok(()),
        Some(head) => Err(RunError::EpicBranchMoved {
            epic_branch: epic_branch.to_owned(),
            head: head.to_hex(),
            proven: proven.to_hex(),
            epic_worktree: epic_worktree.to_path_buf(),
            proven_file,
        }),
    }
}

/// Why a state that says merged is not believed.
pub(super) enum Unproven {
    /// It records no merge commit (an older file, or one edited).
    NoCommit,
    /// Its merge commit is not on the epic branch's first-parent line.
    OffTheLine(String),
}

/// The one place a run decides which stories an earlier run merged: of the `candidates` (states
/// that say merged), those whose recorded merge commit is on the epic branch's first-parent
/// line, as plan index and branch, in plan order. Fails when a story recorded with a merge
/// commit is not on the epic branch while its story branch, not contained in it, still exists:
/// something moved or reset the branch. Any other state that says merged without the epic
/// branch showing it is not believed: it is set back to `started`, so the story runs again, and
/// a run note says why.
pub(super) async fn check_merged_stories(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    dir: &EpicDir,
    candidates: Vec<(usize, StoryState)>,
    epic_worktree: &Path,
    epic_branch: &str,
    events: &EventSink,
) -> Result<Vec<(usize, String)>, RunError> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let judged = offload::git(git, "check the merged stories are on the epic branch", {
        let (epic_worktree, epic_branch) = (epic_worktree.to_path_buf(), epic_branch.to_owned());
        move |git| {
            let tip = format!("refs/heads/{epic_branch}");
            let mut judged = Vec::new();
            for (index, state) in candidates {
                let Some(commit) = state
                    .merge
                    .as_deref()
                    .and_then(|merge| merge.parse::<CommitId>().ok())
                else {
                    judged.push((index, state, Err(Unproven::NoCommit)));
                    continue;
                };
                if git.branch_exists(&state.branch)?
                    && !git.is_ancestor(
                        &epic_worktree,
                        &format!("refs/heads/{}", state.branch),
                        &tip,
                    )?
                {
                    judged.push((index, state, Ok(false)));
                } else if git.on_first_parent_line(&epic_worktree, &commit, &tip)? {
                    judged.push((index, state, Ok(true)));
                } else {
                    judged.push((index, state, Err(Unproven::OffTheLine(commit.to_hex()))));
                }
            }
            Ok::<_, BoxError>(judged)
        }
    })
    .await?;
    let missing: Vec<String> = judged
        .iter()
        .filter(|(_, _, on)| matches!(on, Ok(false)))
        .map(|(index, _, _)| plan.plan().stories[*index].id.clone())
        .collect();
    if !missing.is_empty() {
        return Err(RunError::MergedStoriesMissing {
            epic_branch: epic_branch.to_owned(),
            stories: missing,
        });
    }
    let mut merged = Vec::new();
    for (index, state, on) in judged {
        let why = match on {
            Ok(_) => {
                merged.push((index, state.branch));
                continue;
            }
            Err(Unproven::NoCommit) => "records no merge commit".to_owned(),
            Err(Unproven::OffTheLine(commit)) => format!(
                "its merge commit {commit} is not on the first-parent line of the epic branch \
                 `{epic_branch}`"
            ),
        };
        let id = state.id.clone();
        let path = dir.story_state(&id).map_err(RunError::EpicId)?;
        let reset = StoryState {
            status: StoryStage::Started,
            merge: None,
            hold: None,
            ..state
        };
        let saved = offload::blocking(move || epic_state_store::save(&path, &reset))
            .await
            .map_err(|error| RunError::State {
                action: format!("set story '{id}' back to started"),
                source: Box::new(error),
            })?;
        saved.map_err(|error| RunError::State {
            action: format!("set story '{id}' back to started"),
            source: Box::new(error),
        })?;
        events(Event::RunNote {
            message: format!(
                "the state of story '{id}' says it merged, but {why}; it is not counted as \
                 merged and runs again"
            ),
        });
    }
    Ok(merged)
}
/// Undoes the merges a previous run left unproven (it died while gating a batch), unless every
/// story the journal names says it merged. The journal is evidence of a crash, not an order: the
/// epic branch goes back only to the last proven head epic recorded ([`ProvenHead`]), only when
/// the journal's checkpoint is that head and the branch descends from it. A journal that names
/// another checkpoint, with the branch at the proven head, merged nothing and is dropped with a
/// note; otherwise it is refused and the branch is not moved. A journal that records a proven
/// candidate (the run died while recording its stories merged) is finished instead: when the
/// epic branch is at that candidate's head and the recorded proven head is the journal's
/// checkpoint or that head, the stories are recorded merged and the head proven.
#[expect(
    clippy::too_many_lines,
    reason = "one decision over the journal, the recorded proven head and the branch, read once"
)]
pub(super) async fn recover_merge(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    epic_worktree: &Path,
    epic_branch: &str,
    events: &EventSink,
) -> Result<(), RunError> {
    let path = dir.merge_journal();
    let state_error = |action: &str, source: BoxError| RunError::State {
        action: action.to_owned(),
        source,
    };
    let found = {
        let (path, dir) = (path.clone(), dir.clone());
        offload::blocking(move || {
            let journal = epic_state_store::load::<MergeJournal>(&path)?;
            let merged = journal.as_ref().is_some_and(|journal| {
                !journal.stories.is_empty()
                    && journal.stories.iter().all(|story| {
                        dir.story_state(story)
                            .ok()
                            .and_then(|state| {
                                epic_state_store::load::<StoryState>(state).ok().flatten()
                            })
                            .is_some_and(|state| state.status == StoryStage::Merged)
                    })
            });
            // Unreadable, the record proves nothing: the journal is then refused.
            let proven = epic_state_store::load::<ProvenHead>(dir.proven_head())
                .ok()
                .flatten()
                .and_then(|record| record.commit.parse::<CommitId>().ok());
            Ok::<_, epic_state_store::LoadError>(journal.map(|journal| (journal, merged, proven)))
        })
        .await
    };
    let (journal, merged, proven) = match found {
        Ok(Ok(Some(found))) => found,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(error)) => return Err(state_error("read the merge journal", Box::new(error))),
        Err(error) => return Err(state_error("read the merge journal", Box::new(error))),
    };
    let checkpoint = journal.checkpoint.parse::<CommitId>().ok();
    let candidate = journal
        .proven
        .as_ref()
        .and_then(|candidate| candidate.head.parse::<CommitId>().ok());
    let (head, descends) = offload::git(git, "read the epic branch", {
        let (epic_worktree, tip) = (
            epic_worktree.to_path_buf(),
            format!("refs/heads/{epic_branch}"),
        );
        move |git| {
            let head = git.rev_parse(&epic_worktree, &tip)?;
            let descends = match proven {
                Some(proven) => git.is_ancestor(&epic_worktree, &proven.to_hex(), &tip)?,
                None => false,
            };
            Ok::<_, BoxError>((head, descends))
        }
    })
    .await?;
    let refused = |journal: MergeJournal| RunError::MergeJournalRefused {
        journal: path.clone(),
        story: journal.stories.join("', '"),
        checkpoint: journal.checkpoint,
        proven: proven.map(|proven| proven.to_hex()),
        epic_branch: epic_branch.to_owned(),
        head: head.to_hex(),
        epic_worktree: epic_worktree.to_path_buf(),
    };
    if let (Some(candidate), Some(recorded)) = (candidate, journal.proven.as_ref()) {
        let explained = head == candidate
            && proven.is_some_and(|proven| Some(proven) == checkpoint || proven == candidate)
            && descends;
        if !explained {
            return Err(refused(journal));
        }
        finish_proven(dir, recorded, candidate).await?;
        let stories: Vec<String> = recorded
            .merges
            .iter()
            .map(|merge| merge.story.clone())
            .collect();
        events(Event::RunNote {
            message: format!(
                "a previous run stopped while recording the proven merge of {}; it is \
                 recorded (the epic branch stays at {candidate})",
                crate::merge_queue::names(&stories)
            ),
        });
    } else if !merged {
        match proven {
            Some(proven) if checkpoint == Some(proven) && descends => {
                let epic_worktree = epic_worktree.to_path_buf();
                offload::git(
                    git,
                    "undo the unproven merge of an interrupted run",
                    move |git| git.rollback(&epic_worktree, &proven),
                )
                .await?;
                events(Event::RunNote {
                    message: format!(
                        "a previous run stopped while proving the merge of {}; the merge \
                         was undone (the epic branch is back at {})",
                        journal.names(),
                        journal.checkpoint
                    ),
                });
            }
            Some(proven) if head == proven => events(Event::RunNote {
                message: format!(
                    "ignored the merge journal `{}`: it names {} and checkpoint {}, \
                     which is not the last proven epic head ({proven}), and the epic branch is \
                     at that proven head, so no merge was left unproven; the branch was not \
                     moved",
                    path.display(),
                    journal.names(),
                    journal.checkpoint
                ),
            }),
            _ => return Err(refused(journal)),
        }
    }
    match offload::blocking(move || epic_state_store::remove(&path)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(state_error("remove the merge journal", Box::new(error))),
        Err(error) => Err(state_error("remove the merge journal", Box::new(error))),
    }
}

/// Finishes recording the proven candidate `recorded` (head `head`) a killed run left: each of
/// its stories' states says merged, with its merge commit, and `head` is the proven head.
pub(super) async fn finish_proven(
    dir: &EpicDir,
    recorded: &ProvenCandidate,
    head: CommitId,
) -> Result<(), RunError> {
    let (dir, recorded) = (dir.clone(), recorded.clone());
    let finished = offload::blocking(move || {
        for merge in &recorded.merges {
            let path = dir.story_state(&merge.story)?;
            let Some(mut state) = epic_state_store::load::<StoryState>(&path)? else {
                continue;
            };
            if state.status != StoryStage::Merged || state.merge.as_deref() != Some(&merge.commit) {
                state.status = StoryStage::Merged;
                state.merge = Some(merge.commit.clone());
                epic_state_store::save(&path, &state)?;
            }
        }
        epic_state_store::save(
            dir.proven_head(),
            &ProvenHead {
                commit: head.to_hex(),
            },
        )?;
        Ok::<_, BoxError>(())
    })
    .await;
    match finished {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(RunError::State {
            action: "record the proven merges of an interrupted run".to_owned(),
            source,
        }),
        Err(error) => Err(RunError::State {
            action: "record the proven merges of an interrupted run".to_owned(),
            source: Box::new(error),
        }),
    }
}
