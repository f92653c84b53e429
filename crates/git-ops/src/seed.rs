//! Seeding a new worktree from the main checkout: the ignored files that `.worktreeinclude`
//! names (`.env`, local settings), which a checkout never brings.
//!
//! `.worktreeinclude` sits at the root of the main checkout and holds gitignore patterns
//! (Claude Code's convention). A file is copied when it is untracked, matches one of them, and
//! is ignored by the repository's own ignore rules: what git carries needs no seeding, and an
//! untracked file that is not ignored would be a story's change. Files already in the worktree
//! are left alone, as is every file whose way into the worktree passes a symbolic link (an
//! agent's link would carry the copy out of the worktree).

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::cli::args;
use crate::error::{Cause, WorktreeError};
use crate::repo::GixGit;

/// The file at the main checkout's root that names what to seed.
pub(crate) const INCLUDE_FILE: &str = ".worktreeinclude";

pub(crate) fn seed(git: &GixGit, worktree: &Path) -> Result<Vec<String>, WorktreeError> {
    let fail = |source| WorktreeError::Failed {
        action: "seed",
        path: worktree.to_owned(),
        source,
    };
    let Some(main) = crate::Git::main_worktree(git).map(Path::to_path_buf) else {
        return Ok(Vec::new());
    };
    let include = main.join(INCLUDE_FILE);
    if !std::fs::symlink_metadata(&include).is_ok_and(|meta| meta.is_file()) {
        return Ok(Vec::new());
    }
    let mut exclude_from = std::ffi::OsString::from("--exclude-from=");
    exclude_from.push(&include);
    // Untracked files matching the patterns (the only exclude rules given, so "ignored" here
    // means "named by `.worktreeinclude`").
    let named = git
        .cli
        .run(
            &main,
            args!["ls-files", "-z", "--others", "--ignored", &exclude_from],
        )
        .map_err(|error| fail(Cause::Cli(error)))?
        .stdout;
    if named.is_empty() {
        return Ok(Vec::new());
    }
    // Of those, the ones the repository ignores: its ignored files, an ignored directory as one
    // entry ending in `/` (git does not look inside it, nor does an ignore rule).
    let ignored = git
        .cli
        .run(
            &main,
            args![
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--directory"
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?
        .stdout;
    let ignored: Vec<&[u8]> = ignored
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .collect();
    let is_ignored = |name: &[u8]| {
        ignored
            .iter()
            .any(|entry| *entry == name || (entry.ends_with(b"/") && name.starts_with(entry)))
    };
    let mut copied = Vec::new();
    for name in named
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty() && is_ignored(name))
    {
        let relative = Path::new(OsStr::from_bytes(name));
        if copy_one(&main, worktree, relative).map_err(|error| fail(Cause::Io(error)))? {
            copied.push(crate::path_text::path_text(name));
        }
    }
    copied.sort_unstable();
    Ok(copied)
}

/// Copies `relative` from `main` into `worktree` unless it is there already, it is neither a
/// file nor a symbolic link, or its way into the worktree is not plain directories. Whether it
/// was copied.
fn copy_one(main: &Path, worktree: &Path, relative: &Path) -> io::Result<bool> {
    if relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_)))
    {
        return Ok(false);
    }
    let to = worktree.join(relative);
    if std::fs::symlink_metadata(&to).is_ok() || !plain_way(worktree, relative) {
        return Ok(false);
    }
    let from = main.join(relative);
    let Ok(meta) = std::fs::symlink_metadata(&from) else {
        return Ok(false);
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
    } else if meta.is_file() {
        // `copy_file_range` underneath: the kernel shares the blocks where the file system
        // can (a reflink on btrfs and XFS), and copies them where not.
        std::fs::copy(&from, &to)?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// Whether every directory on the way from `worktree` to `relative`'s parent is a directory or
/// missing, never a symbolic link.
fn plain_way(worktree: &Path, relative: &Path) -> bool {
    let mut at = PathBuf::from(worktree);
    let Some(parent) = relative.parent() else {
        return true;
    };
    for part in parent.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => return false,
            Ok(_) => {}
            Err(_) => return true,
        }
    }
    true
}
