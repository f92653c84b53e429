//! `epic clean [EPIC] [--branches]`: remove an epic's worktrees, and with `--branches` its story
//! branches.
//!
//! It takes the epic's lock for as long as it works, so it refuses (exit 3) while a run holds
//! it, and no run can start meanwhile. It removes every registered worktree under
//! `<repo-parent>/<repo-name>.worktrees/<epic>/` (the story worktrees and the epic branch's
//! `_epic`, located by the executor's own [`epic_branch::worktrees_root`]) and any other worktree a
//! story's state names, then prunes stale registrations. The epic branch is never touched.
//!
//! The state is kept, so merged stories stay merged. With `--branches`, the story branches named
//! by the state files, the report and the worktree list are deleted; a story that had not merged
//! loses its work with its branch, so its state file and task checkpoint go too, and the next run
//! starts it over rather than resuming on a branch that no longer exists.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use epic_git_ops::{Git as _, Removal};
use epic_state_store::{EpicDir, EpicLock, LockError, StoryStage, StoryState};

use crate::args::{CleanArgs, GlobalArgs};
use crate::commands::render;
use crate::epics;
use crate::error::{CommandError, Kind, Message};
use crate::output::{self, Output};
use crate::repo;

/// Runs `epic clean`.
pub(crate) fn run(global: &GlobalArgs, args: &CleanArgs, out: Output) -> Result<(), CommandError> {
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.as_deref(), "clean")?;
    let epic = dir.epic_id().to_owned();
    let _lock = EpicLock::acquire(&dir).map_err(|error| match error {
        LockError::Held { .. } => CommandError::new(Kind::LockHeld, error).hint(format!(
            "`epic status {epic}` shows the run; clean once it has ended"
        )),
        error => CommandError::new(Kind::Repository, error),
    })?;
    let git = repo.git.as_ref();
    let Some(main) = git.main_worktree().map(Path::to_path_buf) else {
        return Err(CommandError::new(
            Kind::Repository,
            Message::new("the repository is bare: it has no worktrees to clean"),
        ));
    };
    let root = epic_branch::worktrees_root(&main, &epic);
    let states = states(&dir)?;
    let listed = git.worktrees().map_err(git_error)?;

    let mut targets = BTreeSet::new();
    for info in listed.iter().filter(|info| !info.is_main) {
        let named = states
            .iter()
            .any(|state| same_path(&state.worktree, &info.path));
        if named || within(&info.path, &root) {
            targets.insert(info.path.clone());
        }
    }
    let mut lines = Vec::new();
    for path in &targets {
        match git.remove_worktree(path).map_err(git_error)? {
            Removal::Removed => lines.push(format!("removed worktree {}", path.display())),
            Removal::Pruned => lines.push(format!(
                "pruned the registration of the missing worktree {}",
                path.display()
            )),
            Removal::Absent => {}
        }
    }
    git.prune_worktrees().map_err(git_error)?;
    remove_empty_worktree_dirs(&root);

    if args.branches {
        lines.extend(delete_branches(&repo, &dir, &states, &listed)?);
    }
    let text = render(|w| {
        if lines.is_empty() {
            writeln!(w, "epic {epic}: nothing to remove")?;
        }
        for line in &lines {
            writeln!(w, "{line}")?;
        }
        Ok(())
    });
    output::data(&text)?;
    if !args.branches && !out.quiet() {
        out.hint("the story branches are kept; `--branches` deletes them too");
    }
    Ok(())
}

/// Deletes the epic's story branches (never the epic branch); a story that had not merged loses
/// its state and checkpoint with its branch. The lines saying what was done.
fn delete_branches(
    repo: &repo::Repo,
    dir: &EpicDir,
    states: &[StoryState],
    listed: &[epic_git_ops::WorktreeInfo],
) -> Result<Vec<String>, CommandError> {
    let git = repo.git.as_ref();
    let prefix = format!("story/{}/", dir.epic_id());
    let report = epics::load_report(dir).ok().flatten();
    let epic_branch = report.as_ref().map(|report| report.epic_branch.clone());
    let mut names: BTreeSet<String> = states.iter().map(|state| state.branch.clone()).collect();
    names.extend(listed.iter().filter_map(|info| info.branch.clone()));
    if let Some(report) = &report {
        names.extend(
            report
                .stories
                .iter()
                .filter_map(|story| story.branch.clone()),
        );
    }
    let mut lines = Vec::new();
    for name in names {
        if !name.starts_with(&prefix) || Some(&name) == epic_branch.as_ref() {
            continue;
        }
        if !git.branch_exists(&name).map_err(git_error)? {
            continue;
        }
        git.delete_branch(&name).map_err(git_error)?;
        lines.push(format!("deleted branch {name}"));
        for state in states
            .iter()
            .filter(|state| state.branch == name && state.status != StoryStage::Merged)
        {
            for path in [
                dir.story_state(&state.id),
                dir.story_plan(&state.id),
                dir.story_revisions(&state.id),
            ]
            .into_iter()
            .flatten()
            {
                remove_file(&path)?;
            }
            lines.push(format!(
                "story {} had not merged: its state is reset, the next run starts it over",
                state.id
            ));
        }
    }
    Ok(lines)
}

/// The state of every story of the epic that has one.
fn states(dir: &EpicDir) -> Result<Vec<StoryState>, CommandError> {
    let ids = dir
        .story_ids()
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    let mut states = Vec::new();
    for id in ids {
        let path = dir
            .story_state(&id)
            .map_err(|error| CommandError::new(Kind::Repository, error))?;
        if let Some(state) = epic_state_store::load::<StoryState>(&path)
            .map_err(|error| CommandError::new(Kind::Repository, error))?
        {
            states.push(state);
        }
    }
    Ok(states)
}

/// Leaves no empty directories behind: `<epic>/`, then `<repo-name>.worktrees/`. Neither is
/// in the repository or the state directory: they are the directories epic made beside the
/// repository for worktrees, and only an empty one is removed.
#[expect(
    clippy::disallowed_methods,
    reason = "the empty directories epic made for worktrees, beside the repository; `remove_dir` \
              refuses a directory that still holds anything"
)]
fn remove_empty_worktree_dirs(root: &Path) {
    if std::fs::remove_dir(root).is_ok()
        && let Some(parent) = root.parent()
    {
        std::fs::remove_dir(parent).ok();
    }
}

/// Removes a file of the state directory (a story's state, its checkpoint) through
/// epic-state-store; a file already gone is fine.
fn remove_file(path: &Path) -> Result<(), CommandError> {
    epic_state_store::remove(path)
        .map(drop)
        .map_err(|error| CommandError::new(Kind::Repository, error))
}

fn git_error(error: impl std::error::Error + Send + Sync + 'static) -> CommandError {
    CommandError::new(Kind::Repository, error)
}

/// `path` with symbolic links resolved where it exists, for comparing.
fn resolved(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn same_path(a: &Path, b: &Path) -> bool {
    resolved(a) == resolved(b)
}

/// Whether `path` is `root` or lies under it.
fn within(path: &Path, root: &Path) -> bool {
    resolved(path).starts_with(resolved(root)) || path.starts_with(root)
}
