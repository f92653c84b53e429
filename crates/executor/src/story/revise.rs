//! After step 7, when the merge was red: a merge revision (`--merge-revisions`). A merge the
//! gates turned red on the proven epic head (the story alone, or the culprit a bisection
//! pinned) is undone by the merge queue as ever; then, instead of failing, the story goes back
//! to its coder: a task appended to its checkpoint carries the gates' output on the combined
//! tree, the stories whose work it now meets (merged since it last caught up: their ids, titles,
//! what they provide and the paths they changed) and its perimeter. [`run`](super::work::Work::run)
//! then takes it through its steps again from the catch-up: the task loop does that one open
//! task (its gates, the perimeter gate, the reviewers, a commit, a tick), the perimeter is
//! enforced, the judge rounds run, and it rejoins the merge queue. After `--merge-revisions`
//! red revisions it fails as before, with every revision's gate output
//! ([`Failure::RevisionsExhausted`]); a revision whose coder ends with `BLOCKED_ON:` another
//! story's files fails with that ([`Failure::RevisionBlocked`]).
//!
//! Journalled in two files, in this order: `revisions/<id>.json` ([`Revisions`], the
//! count and what each revision was given), then the task in the checkpoint. A run killed
//! between them finds the revision recorded and its task missing, and appends it
//! ([`Work::resume_revision`]); killed before the record, it merges again, red again, and
//! records the same revision. The count is never reset by a rerun (only a changed plan entry,
//! which starts the story over, clears it): a rerun ends where an uninterrupted run would.

use std::fmt::Write as _;

use epic_git_ops::CommitId;
use epic_perimeter::Task;
use epic_state_store::{StoryStage, StoryState};
use epic_story_plan::Story;

use super::revision::{MetStory, Revision, Revisions};
use super::work::Work;
use crate::failure::{Failure, Stop};
use epic_events::Event;
use epic_process::offload;
use epic_protocol::TaskPlan;

impl Work {
    /// The story's merge failed with `red`, or the revision in progress did (its task's gates
    /// never turned green on the combined tree: that revision is spent red). With revisions left
    /// (`--merge-revisions`) this becomes the next revision, recorded and appended to the
    /// checkpoint (the spent one ticked): `Ok`, and the caller takes the story through its steps
    /// again. Anything else is the story's failure: `red` itself (neither, or
    /// `--merge-revisions 0`), or every revision used ([`Failure::RevisionsExhausted`]).
    pub(super) async fn revise(&mut self, red: Failure) -> Result<(), Stop> {
        let allowed = self.shared.config.merge_revisions;
        let spent = self.revision.is_some() && red.is_gates_never_green();
        if allowed == 0 || !(red.is_red_merge() || spent) {
            return Err(red.into());
        }
        let mut record = self.load_revisions().await?;
        let number = record.count().saturating_add(1);
        if number > allowed {
            return Err(Failure::RevisionsExhausted {
                revisions: record
                    .revisions
                    .iter()
                    .map(|revision| revision.red.clone())
                    .collect(),
                last: Box::new(red),
            }
            .into());
        }
        let head = self.shared.proven();
        let met = self.met_since(&self.base.clone(), head).await?;
        let revision = Revision {
            number,
            red: red.gate_output(),
            head: head.to_hex(),
            met,
            task: format!(
                "Merge revision {number}: make the epic gates green with the work merged \
                 meanwhile"
            ),
        };
        record.revisions.push(revision.clone());
        self.save_revisions(&record).await?;
        self.revisions = number;
        self.add_revision_task(&record).await?;
        self.emit(Event::MergeRevision {
            story: self.id().to_owned(),
            revision: number,
            of: allowed,
            head: revision.head.clone(),
            met: revision.met.iter().map(|story| story.id.clone()).collect(),
            reason: red.reason(),
        });
        self.revision = Some(revision);
        Ok(())
    }

    /// Before the task loop: the story's revisions as recorded. A revision whose task a killed
    /// run never appended to the checkpoint gets it now; the revision whose task is still open
    /// is the one in progress ([`Work::revision`]).
    pub(super) async fn resume_revision(&mut self) -> Result<(), Stop> {
        let record = self.load_revisions().await?;
        self.revisions = record.count();
        let open = self.add_revision_task(&record).await?;
        self.revision = record.revisions.last().filter(|_| open).cloned();
        Ok(())
    }

    /// The revision in progress failed with `failure`: a `BLOCKED_ON:` claim that stood is the
    /// revision's own failure ([`Failure::RevisionBlocked`]), naming the stories that own what
    /// it names; anything else is left as it is.
    pub(super) fn revision_failure(&self, failure: Failure) -> Failure {
        let Some(revision) = &self.revision else {
            return failure;
        };
        let (need, verifier) = match &failure {
            Failure::Blocked { need, verifier, .. } => (need, verifier),
            Failure::Rejected { failure: inner, .. } => match inner.as_ref() {
                Failure::Blocked { need, verifier, .. } => (need, verifier),
                _ => return failure,
            },
            _ => return failure,
        };
        let plan = &self.shared.plan;
        let mut owners: Vec<String> = Vec::new();
        for path in epic_perimeter::paths_named_in(plan, need) {
            if let Some(owner) = epic_perimeter::owner_of(plan, &path)
                && owner.id != self.story.id
                && !owners.contains(&owner.id)
            {
                owners.push(owner.id.clone());
            }
        }
        Failure::RevisionBlocked {
            revision: revision.number,
            need: need.clone(),
            owners,
            verifier: verifier.clone(),
            red: revision.red.clone(),
        }
    }

    /// The stories merged on the epic branch after `base` (the head the story last caught up
    /// with) and by `head`: each with a recorded merge that `head` holds and `base` does not.
    async fn met_since(&self, base: &str, head: CommitId) -> Result<Vec<MetStory>, Stop> {
        let mut met = Vec::new();
        for other in &self.shared.plan.stories {
            if other.id == self.story.id {
                continue;
            }
            let Ok(path) = self.shared.dir.story_state(&other.id) else {
                continue;
            };
            let state = offload::blocking(move || epic_state_store::load::<StoryState>(&path))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten();
            let Some(merge) = state
                .filter(|state| state.status == StoryStage::Merged)
                .and_then(|state| state.merge)
            else {
                continue;
            };
            let (epic, base, head) = (
                self.shared.epic_worktree.clone(),
                base.to_owned(),
                head.to_hex(),
            );
            let new = self
                .git("find the stories merged meanwhile", move |git| {
                    Ok::<_, offload::BoxError>(
                        git.is_ancestor(&epic, &merge, &head)?
                            && !git.is_ancestor(&epic, &merge, &base)?,
                    )
                })
                .await?;
            if new {
                met.push(MetStory {
                    id: other.id.clone(),
                    title: other.title.clone(),
                    provides: other.provides.clone(),
                    paths: self
                        .merged_paths(&other.id)
                        .await
                        .unwrap_or_else(|| other.owned.clone()),
                });
            }
        }
        Ok(met)
    }

    async fn load_revisions(&self) -> Result<Revisions, Stop> {
        let path = self
            .shared
            .dir
            .story_revisions(self.id())
            .map_err(Failure::UnsafeId)?;
        let loaded = offload::blocking(move || epic_state_store::load::<Revisions>(&path)).await;
        match loaded {
            Ok(Ok(record)) => Ok(record.unwrap_or_default()),
            Ok(Err(error)) => Err(Failure::StateUnreadable(error).into()),
            Err(_) => Err(Failure::StateNotSaved(None).into()),
        }
    }

    async fn save_revisions(&self, record: &Revisions) -> Result<(), Stop> {
        let path = self
            .shared
            .dir
            .story_revisions(self.id())
            .map_err(Failure::UnsafeId)?;
        let record = record.clone();
        let saved = self
            .shared
            .write(path, move |path| epic_state_store::save(path, &record))
            .await;
        match saved {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Failure::StateNotSaved(Some(error)).into()),
            Err(_) => Err(Failure::StateNotSaved(None).into()),
        }
    }

    /// Appends the task of `record`'s last revision to the story's checkpoint unless it is
    /// there, and ticks the tasks of the revisions before it still open (spent red): whether the
    /// last one's is open. `false` without a revision.
    async fn add_revision_task(&self, record: &Revisions) -> Result<bool, Stop> {
        let Some(revision) = record.revisions.last() else {
            return Ok(false);
        };
        let path = self
            .shared
            .dir
            .story_plan(self.id())
            .map_err(Failure::UnsafeId)?;
        let read = {
            let path = path.clone();
            offload::blocking(move || epic_state_store::read_if_exists(&path))
                .await
                .unwrap_or_else(|error| Err(std::io::Error::other(error)))
        };
        let checkpoint = |problem: String| {
            Stop::Failed(Failure::Tasks(crate::error::StoryError::Checkpoint {
                path: path.clone(),
                problem,
            }))
        };
        let mut plan = match read {
            Ok(Some(text)) => TaskPlan::parse(&text)
                .map_err(|error| checkpoint(format!("is malformed: {error}")))?,
            Ok(None) => TaskPlan::new(self.id(), Vec::new()),
            Err(error) => return Err(checkpoint(format!("cannot be read: {error}"))),
        };
        let spent: Vec<&str> = record
            .revisions
            .iter()
            .filter(|earlier| earlier.number < revision.number)
            .map(|earlier| earlier.task.as_str())
            .collect();
        let mut changed = false;
        for task in &mut plan.tasks {
            if !task.completed && spent.contains(&task.title.as_str()) {
                task.completed = true;
                changed = true;
            }
        }
        let open = match plan.tasks.iter().find(|task| task.title == revision.task) {
            Some(task) => !task.completed,
            None => {
                plan.tasks.push(Task::new(
                    revision.task.clone(),
                    brief(&self.story, revision, self.shared.config.merge_revisions),
                ));
                changed = true;
                true
            }
        };
        if !changed {
            return Ok(open);
        }
        let text = plan.render();
        let written = self
            .shared
            .write(path.clone(), move |path| {
                epic_state_store::write_atomic(path, text.as_bytes())
            })
            .await;
        match written {
            Ok(Ok(())) => Ok(open),
            Ok(Err(error)) => Err(checkpoint(format!("cannot be written: {error}"))),
            Err(error) => Err(checkpoint(format!("cannot be written: {error}"))),
        }
    }
}

/// What a revision's task tells the coder: why its merge was undone, the gates' output on the
/// combined tree, the stories whose work it now meets, and its perimeter.
fn brief(story: &Story, revision: &Revision, allowed: u32) -> String {
    let head = revision.head.get(..12).unwrap_or(&revision.head);
    let mut out = format!(
        "Merge revision {} of at most {allowed}. On the combined tree, the proven epic head \
         ({head}) with this story's work on top, the epic gates are red, so its merge into the \
         epic branch was undone. Your worktree now holds that tree: make the gates green again, \
         with changes inside your own owned paths only.\n\nThe gates' output on the combined \
         tree:\n\n",
        revision.number
    );
    for line in revision.red.lines() {
        let _ = writeln!(out, "    {line}");
    }
    if revision.met.is_empty() {
        out.push_str(
            "\nNo other story merged since this one last caught up: the gates are red with this \
             story's own work on the epic head.\n",
        );
    } else {
        out.push_str("\nThe stories whose work you now meet (merged since you last caught up):\n");
        for met in &revision.met {
            let _ = write!(out, "- '{}' (\"{}\")", met.id, met.title);
            if !met.provides.is_empty() {
                let _ = write!(out, "; provides {}", met.provides.join("; "));
            }
            let _ = writeln!(out, "; changed {}", list(&met.paths));
        }
    }
    let _ = write!(
        out,
        "\nYour perimeter: you may change {} only.",
        list(&story.owned)
    );
    if !story.shared_read_only.is_empty() {
        let _ = write!(
            out,
            " You read {} but never change it.",
            list(&story.shared_read_only)
        );
    }
    out.push_str(
        " Adapt this story to the work merged before it. If the fix can only be made in \
         another story's files, change nothing and end your reply with `BLOCKED_ON: <the files \
         and the story that owns them>`.\n",
    );
    out
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}
