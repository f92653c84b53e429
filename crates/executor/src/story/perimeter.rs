//! Step 5 of a story, once its tasks are done (and again in each judge round): its perimeter.
//! Paths changed outside the owned ones are put back as the proven epic head has them; a
//! changed shared read-only path, a committed path still outside, or a committed symbolic link
//! that points out of the repository, into `.git` or into somebody else's paths, fails the
//! story; and a diff that deletes, disables or empties tests or adds skip markers fails it unless
//! its plan entry sets `tests_change`.

use std::collections::BTreeSet;

use epic_git_ops::CommitId;

use super::work::Work;
use crate::failure::{Failure, Stop};
use epic_events::Event;
use epic_process::offload::BoxError;

impl Work {
    /// Paths changed against the epic head the story last caught up with, committed or not.
    async fn changed(&self) -> Result<Vec<String>, Stop> {
        let worktree = self.worktree.clone();
        let base = self.base.clone();
        self.git("list the story's changed paths", move |git| {
            let mut paths: BTreeSet<String> = git
                .changed_paths_vs_base(&worktree, &base, "HEAD")?
                .into_iter()
                .collect();
            paths.extend(git.status(&worktree, &[])?.paths);
            Ok::<_, BoxError>(paths.into_iter().collect::<Vec<_>>())
        })
        .await
    }

    /// Puts paths changed outside the owned ones back as the epic head has them, uncommitted
    /// (the caller commits). A changed shared read-only path fails the story. Whether anything
    /// was restored.
    pub(super) async fn repair_perimeter(&self) -> Result<bool, Stop> {
        let check = epic_perimeter::check(self.changed().await?, &self.story);
        if !check.shared_read_only.is_empty() {
            return Err(self.violation(check));
        }
        if check.outside.is_empty() {
            return Ok(false);
        }
        let (worktree, base, stray) = (
            self.worktree.clone(),
            self.base.clone(),
            check.outside.clone(),
        );
        self.git("put paths outside the perimeter back", move |git| {
            let paths: Vec<&str> = stray.iter().map(String::as_str).collect();
            git.restore_paths(&worktree, &base, &paths)
        })
        .await?;
        self.emit(Event::PerimeterRestored {
            story: self.id().to_owned(),
            paths: check.outside.clone(),
        });
        self.note(format!(
            "restored {} path(s) outside its perimeter from {}: {}",
            check.outside.len(),
            self.shared.epic_branch,
            check.outside.join(", ")
        ));
        Ok(true)
    }

    /// Fails unless every path the story's commits change (against the epic head it last caught
    /// up with) is inside its owned paths. Only the commits: called after the story's work is
    /// committed, and the merge takes only the checked commit; uncommitted paths were seen by
    /// [`repair_perimeter`](Self::repair_perimeter) before that commit. The commit checked: the
    /// story branch's tip, read once; the later checks and the merge take that commit, never
    /// the branch's tip of their moment.
    ///
    /// The symbolic links among those paths are judged by where they point (their blobs'
    /// content): one in the owned paths that leads out of the repository, into `.git`, or into
    /// another story's owned paths or a shared read-only path fails the story too.
    pub(super) async fn enforce_perimeter(&self) -> Result<CommitId, Stop> {
        let (worktree, base) = (self.worktree.clone(), self.base.clone());
        let branch = format!("refs/heads/{}", self.branch);
        let (checked, committed, links) = self
            .git("list the story's changed paths", move |git| {
                let checked = git.rev_parse(&worktree, &branch)?;
                let head = checked.to_hex();
                let (paths, links) =
                    git.changed_paths_and_links_vs_base(&worktree, &base, &head)?;
                Ok::<_, BoxError>((checked, paths, links))
            })
            .await?;
        let check = epic_perimeter::check(committed, &self.story).with_links(
            links.iter().map(|link| (&link.path, &link.target)),
            &self.story,
            &self.shared.plan,
        );
        if check.is_clean() {
            Ok(checked)
        } else {
            Err(self.violation(check))
        }
    }

    /// Fails the story when the diff of commit `checked` deletes, disables (renamed to another
    /// file type, replaced by a symbolic link) or empties test files or adds skip markers,
    /// unless its plan entry sets `tests_change`: a gate is as green with its tests gone.
    pub(super) async fn guard_tests(&self, checked: &CommitId) -> Result<(), Stop> {
        if self.story.tests_change {
            return Ok(());
        }
        let (worktree, base, head) = (self.worktree.clone(), self.base.clone(), checked.to_hex());
        let patterns = self.shared.config.test_patterns.clone();
        let changes = self
            .git("diff the story against the epic branch", move |git| {
                git.file_changes_vs_base(
                    &worktree,
                    &base,
                    &head,
                    &epic_guard::has_skip_marker,
                    &|path| epic_guard::is_test_path(path, &patterns),
                )
            })
            .await?;
        let found = epic_guard::tampering(&changes, &self.shared.config.test_patterns);
        if found.is_empty() {
            return Ok(());
        }
        Err(Failure::TestsTampered {
            story: self.id().to_owned(),
            found: Box::new(found),
        }
        .into())
    }

    fn violation(&self, check: epic_perimeter::PerimeterCheck) -> Stop {
        let shared = !check.shared_read_only.is_empty();
        Failure::Perimeter {
            violation: check.into_violation(self.id()).map(Box::new),
            shared,
            worktree: self.worktree.clone(),
        }
        .into()
    }
}
