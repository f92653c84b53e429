//! What a sandbox around one worktree needs from the repository's administrative files: the
//! administrative directory git registered for the worktree ([`registered_admin_dir`]), and a
//! reflog directory that exists before the git directory is made read-only
//! ([`ensure_logs_dir`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::worktree::{normalized, worktree_of};

/// The administrative directory git registered for the linked worktree at `worktree`, in the
/// repository whose common git directory is `common_dir`: the one under
/// `<common_dir>/worktrees/` whose `gitdir` file names `worktree`'s `.git`.
///
/// Read from the registrations, never from the worktree's own `.git` file: whatever works in
/// the worktree can rewrite that file to name another worktree's administrative directory (a
/// sandbox that trusted it would make that one writable). `None` when no registration names
/// the worktree (the main worktree, a worktree being added).
///
/// ```no_run
/// # use std::path::Path;
/// let admin = epic_git_ops::registered_admin_dir(
///     Path::new("/src/shop/.git"),
///     Path::new("/src/shop.worktrees/checkout/cart-api"),
/// );
/// ```
pub fn registered_admin_dir(common_dir: &Path, worktree: &Path) -> Option<PathBuf> {
    let wanted = normalized(worktree);
    std::fs::read_dir(common_dir.join("worktrees"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|admin| worktree_of(admin).is_some_and(|named| normalized(&named) == wanted))
}

/// Creates `<common_dir>/logs` when it is missing: a commit appends to its branch's reflog
/// there, and inside a sandbox that keeps the rest of the git directory read-only, git could
/// not create the directory itself.
pub fn ensure_logs_dir(common_dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(common_dir.join("logs"))
}
