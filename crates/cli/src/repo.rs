//! Finding the repository a command works in: its root (where `epic.toml` and `epic init`'s files
//! live) and its git common dir (where the epics' state lives, shared by every worktree).
//!
//! One function, [`discover`], which asks the `git` command line; git-ops replaces it later.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{CliError, Kind, Message, WithSource};

/// A repository as a command sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repo {
    /// The root of the worktree the command runs in (`git rev-parse --show-toplevel`).
    pub(crate) root: PathBuf,
    /// The git directory every worktree of the repository shares (`git rev-parse
    /// --git-common-dir`), absolute: the epics' state is under `<common_dir>/epic/`.
    pub(crate) common_dir: PathBuf,
}

/// The repository `--repo DIR` names, or the current directory's when `None`.
///
/// Not a repository (or a bare one, which has no worktree), a missing directory, or no `git`
/// command: exit 2 with a hint.
pub(crate) fn discover(dir: Option<&Path>) -> Result<Repo, CliError> {
    let shown = dir.map_or_else(
        || "the current directory".to_owned(),
        |dir| format!("`{}`", dir.display()),
    );
    let mut git = Command::new("git");
    if let Some(dir) = dir {
        if !dir.is_dir() {
            return Err(CliError::new(
                Kind::Repository,
                Message::new(format!("{shown} is not a directory")),
            )
            .hint("--repo names a directory inside a git repository"));
        }
        git.arg("-C").arg(dir);
    }
    // `--path-format=absolute` (git 2.31+): the common dir is otherwise relative to `dir`.
    let output = git
        .args([
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
        ])
        // Run as the user would, whatever the environment says about another repository.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_COMMON_DIR")
        .output()
        .map_err(|error| {
            let hint = if error.kind() == io::ErrorKind::NotFound {
                "install git: epic runs it to find the repository"
            } else {
                "check that the `git` command runs"
            };
            CliError::new(
                Kind::Repository,
                WithSource {
                    message: "failed to run `git rev-parse`".into(),
                    source: error,
                },
            )
            .hint(hint)
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines().filter(|line| !line.is_empty());
    match (output.status.success(), lines.next(), lines.next()) {
        (true, Some(root), Some(common_dir)) => Ok(Repo {
            root: PathBuf::from(OsStr::new(root)),
            common_dir: PathBuf::from(OsStr::new(common_dir)),
        }),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let reason = stderr
                .lines()
                .find(|line| !line.trim().is_empty())
                .map(|line| line.trim().trim_start_matches("fatal: ").to_owned());
            let mut message = format!("{shown} is not in a git repository with a worktree");
            if let Some(reason) = reason {
                message.push_str(" (git: ");
                message.push_str(&reason);
                message.push(')');
            }
            Err(CliError::new(Kind::Repository, Message::new(message))
                .hint("run epic inside a git repository, or name one with `--repo DIR`")
                .hint("`git init` makes the current directory a repository"))
        }
    }
}
