//! What a git process killed mid-write leaves behind, cleared before the next one trips on it:
//! lock files in a worktree's git directory, of its branch and of other refs epic moves (its
//! notes), and the directory of a worktree
//! whose add died before it wrote `.git`.
//!
//! Plain file operations, not git commands: git itself has no command that removes a lock file
//! (it tells the user to delete it), and a directory with no `.git` is no worktree git knows.
//! Only safe under the caller's own lock (epic's lock on the epic): a lock file found then is a
//! dead process's, never one of a git process still running.

use std::io;
use std::path::{Path, PathBuf};

use crate::worktree::admin_dir;

/// Removes the lock files a git process killed mid-write leaves behind (`index.lock`,
/// `AUTO_MERGE.lock`, … at the top of the git directory of the worktree at `worktree`, and
/// `<branch>.lock` of the branch it works on under `common_dir`), which would fail every later
/// git command there. The paths removed, the worktree's first (sorted), then the branch's.
///
/// Call it only where no git process of yours can be running in that worktree or on that
/// branch: a lock file then belongs to a process that died. A `branch` with an empty or `..`
/// component names no lock file.
///
/// ```no_run
/// # let (common_dir, worktree) = (std::path::Path::new(".git"), std::path::Path::new("."));
/// for removed in epic_git_ops::clear_stale_locks(common_dir, worktree, "story/e/a") {
///     println!("removed {}", removed.display());
/// }
/// ```
pub fn clear_stale_locks(common_dir: &Path, worktree: &Path, branch: &str) -> Vec<PathBuf> {
    let dotgit = worktree.join(".git");
    let git_dir = if dotgit.is_dir() {
        Some(dotgit)
    } else {
        admin_dir(worktree)
    };
    let mut candidates = Vec::new();
    if let Some(git_dir) = git_dir
        && let Ok(entries) = std::fs::read_dir(&git_dir)
    {
        // index.lock, HEAD.lock, AUTO_MERGE.lock, ORIG_HEAD.lock, MERGE_HEAD.lock, …
        candidates.extend(
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "lock") && path.is_file()),
        );
        candidates.sort();
    }
    candidates.extend(ref_lock(common_dir, &format!("refs/heads/{branch}")));
    candidates
        .into_iter()
        .filter(|path| std::fs::remove_file(path).is_ok())
        .collect()
}

/// Removes the lock files a git process killed while it moved one of `refs` (full names:
/// `refs/notes/epic`) left under `common_dir`, which would fail every later update of that ref.
/// The paths removed. A name outside `refs/`, or with an empty, `.` or `..` component, names no
/// lock file.
///
/// Call it only where no git process of yours can be moving those refs: a lock file then
/// belongs to a process that died.
///
/// ```no_run
/// # let common_dir = std::path::Path::new(".git");
/// for removed in epic_git_ops::clear_stale_ref_locks(common_dir, &["refs/notes/epic"]) {
///     println!("removed {}", removed.display());
/// }
/// ```
pub fn clear_stale_ref_locks(common_dir: &Path, refs: &[&str]) -> Vec<PathBuf> {
    refs.iter()
        .filter_map(|name| ref_lock(common_dir, name))
        .filter(|path| std::fs::remove_file(path).is_ok())
        .collect()
}

/// The lock file of the ref `name` under `common_dir`, if `name` is a ref's full name whose
/// every component is a plain name.
fn ref_lock(common_dir: &Path, name: &str) -> Option<PathBuf> {
    let rest = name.strip_prefix("refs/")?;
    let plain = rest
        .split('/')
        .all(|part| !part.is_empty() && part != "." && part != "..");
    plain.then(|| common_dir.join(format!("{name}.lock")))
}

/// Removes the directory at `path`, where a worktree is to be added, and everything in it: what
/// a `git worktree add` killed before it wrote `.git` leaves, which git neither lists nor
/// removes, and which keeps the add from using the path. Remove a worktree that is there as a
/// worktree first ([`Git::remove_worktree`](crate::Git::remove_worktree)): this takes the
/// directory as it is. Whether there was a directory to remove.
///
/// ```no_run
/// # let worktree = std::path::Path::new("../app.worktrees/checkout/cart-api");
/// if epic_git_ops::remove_leftover_dir(worktree)? {
///     println!("removed a worktree left half made");
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_leftover_dir(path: &Path) -> io::Result<bool> {
    if !path.is_dir() {
        return Ok(false);
    }
    std::fs::remove_dir_all(path)?;
    Ok(true)
}
