//! Finding the repository a command works in: its root (where `epic.toml` and `epic init`'s files
//! live), its git common dir (where the epics' state lives, shared by every worktree), and the
//! git-ops handle every git operation goes through.
//!
//! One function, [`discover`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{Git as _, GixGit};

use crate::error::{CommandError, Kind, Message};

/// A repository as a command sees it.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The root of the worktree the command runs in.
    pub(crate) root: PathBuf,
    /// The git directory every worktree of the repository shares, absolute: the epics' state is
    /// under `<common_dir>/epic/`.
    pub(crate) common_dir: PathBuf,
    /// The repository, for git operations.
    pub(crate) git: Arc<GixGit>,
}

/// The repository `--repo DIR` names, or the current directory's when `None`.
///
/// Not a repository (or a bare one, which has no worktree) or a missing directory: exit 2 with a
/// hint.
pub(crate) fn discover(dir: Option<&Path>) -> Result<Repo, CommandError> {
    let shown = dir.map_or_else(
        || "the current directory".to_owned(),
        |dir| format!("`{}`", dir.display()),
    );
    let start = match dir {
        Some(dir) if !dir.is_dir() => {
            return Err(CommandError::new(
                Kind::Repository,
                Message::new(format!("{shown} is not a directory")),
            )
            .hint("--repo names a directory inside a git repository"));
        }
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().map_err(|error| {
            CommandError::new(
                Kind::Repository,
                Message::new(format!("the current directory is not readable: {error}")),
            )
        })?,
    };
    let not_a_repository = || {
        CommandError::new(
            Kind::Repository,
            Message::new(format!(
                "{shown} is not in a git repository with a worktree"
            )),
        )
        .hint("run epic inside a git repository, or name one with `--repo DIR`")
        .hint("`git init` makes the current directory a repository")
    };
    let git = GixGit::discover(&start).map_err(|_| not_a_repository())?;
    let root = git.worktree_root(&start).map_err(|_| not_a_repository())?;
    Ok(Repo {
        root,
        common_dir: git.common_dir().to_owned(),
        git: Arc::new(git),
    })
}
