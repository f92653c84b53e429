//! Rolling a worktree back to a checkpoint, the patch of what it changed since one, and
//! restoring paths from another revision.
//!
//! They rewrite (or, for the patch, stage into a temporary index) files of a worktree and its index, which gix 0.91 cannot do for a set of
//! changes (it checks out whole trees into empty directories); the git command line does it.
//! gix resolves the revisions and decides, path by path, whether to check out or delete.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use crate::cli::args;
use crate::error::{Cause, DiffError, GitCommandError, RestoreError, RollbackError};
use crate::path_text::{path_bytes, path_text};
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, Restored, WorktreeState};

pub(crate) fn rollback(git: &GixGit, worktree: &Path, to: &CommitId) -> Result<(), RollbackError> {
    let fail = |source| RollbackError::Failed {
        worktree: worktree.to_owned(),
        to: *to,
        source,
    };
    let to_hex = to.to_hex();
    git.cli
        .run(worktree, args!["reset", "--hard", "--quiet", &to_hex])
        .map_err(|error| fail(Cause::Cli(error)))?;
    // Untracked files a failed merge or gate left behind go too; ignored ones (build output,
    // dependencies) stay, as `git clean` without `-x` leaves them.
    git.cli
        .run(worktree, args!["clean", "-f", "-d", "--quiet"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(())
}

/// The head of the names of the temporary directories [`full_index`] makes its index in.
const PATCH_INDEX: &str = "epic-patch-index-";

/// A temporary index file, in a directory of its own that is removed (with the lock git may
/// have left beside the index) when dropped. A directory made with a new random name each time:
/// a name from the process id alone was taken again by a later process with the same id after
/// a kill left the first one's lock behind, and every `git add` of that process failed.
struct TempIndex {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

/// Checks `head` out in `worktree` by force: on `branch`, moved there (`-B`), or detached.
pub(crate) fn force_checkout(
    git: &GixGit,
    worktree: &Path,
    branch: Option<&str>,
    head: &str,
) -> Result<std::process::Output, GitCommandError> {
    match branch {
        Some(branch) => git.cli.run(
            worktree,
            args!["checkout", "--quiet", "--force", "-B", branch, head],
        ),
        None => git.cli.run(
            worktree,
            args!["checkout", "--quiet", "--force", "--detach", head],
        ),
    }
}

/// A copy of `worktree`'s index with every file of the worktree added to it (`git add -A`),
/// untracked ones included and ignored ones not: the worktree's whole state, staged where it
/// leaves the worktree's own index alone. A copy, so that `add -A` stats what the index already
/// knows instead of reading every file; a worktree without an index starts from an empty one.
fn full_index(git: &GixGit, worktree: &Path) -> Result<TempIndex, Cause> {
    let own = git.cli.run(
        worktree,
        args!["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    let own = PathBuf::from(String::from_utf8_lossy(&own.stdout).trim_end());
    let dir = tempfile::Builder::new()
        .prefix(PATCH_INDEX)
        .tempdir()
        .map_err(Cause::Io)?;
    let index = TempIndex {
        path: dir.path().join("index"),
        _dir: dir,
    };
    match std::fs::copy(&own, &index.path) {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(Cause::Io(error)),
    }
    git.cli
        .run_on_index(worktree, &index.path, args!["add", "-A"])?;
    Ok(index)
}

pub(crate) fn worktree_patch(
    git: &GixGit,
    worktree: &Path,
    base: &CommitId,
) -> Result<Vec<u8>, DiffError> {
    let base_hex = base.to_hex();
    let fail = |source| DiffError::Failed {
        base: base_hex.clone(),
        head: format!("the worktree `{}`", worktree.display()),
        source,
    };
    let index = full_index(git, worktree).map_err(fail)?;
    let diff = git
        .cli
        .run_on_index(
            worktree,
            &index.path,
            args![
                "diff",
                "--cached",
                "--binary",
                "--full-index",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                &base_hex,
                "--",
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(diff.stdout)
}

pub(crate) fn worktree_state(git: &GixGit, worktree: &Path) -> Result<WorktreeState, DiffError> {
    let fail = |source| DiffError::Failed {
        base: "HEAD".to_owned(),
        head: format!("the worktree `{}`", worktree.display()),
        source,
    };
    let repo = rev::open(git, worktree).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let head =
        rev::resolve(&repo, worktree, "HEAD").map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let branch = crate::Git::current_branch(git, worktree)
        .map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let index = full_index(git, worktree).map_err(fail)?;
    let tree = git
        .cli
        .run_on_index(worktree, &index.path, args!["write-tree"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(WorktreeState {
        branch,
        head: CommitId(head),
        tree: String::from_utf8_lossy(&tree.stdout).trim().to_owned(),
    })
}

pub(crate) fn put_back(
    git: &GixGit,
    worktree: &Path,
    state: &WorktreeState,
) -> Result<Option<Vec<String>>, RollbackError> {
    let fail = |source| RollbackError::Failed {
        worktree: worktree.to_owned(),
        to: state.head,
        source,
    };
    let now = worktree_state(git, worktree).map_err(|error| fail(Cause::Diff(Box::new(error))))?;
    if now == *state {
        return Ok(None);
    }
    let changed = git
        .cli
        .run(
            worktree,
            args![
                "diff-tree",
                "-r",
                "-z",
                "--name-only",
                "--no-renames",
                &state.tree,
                &now.tree
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    let head = state.head.to_hex();
    // The branch back where it was and checked out (`-B` moves it), whatever was checked out
    // since; then the files: what was never there goes, and the tree comes back into the
    // worktree alone, uncommitted changes as uncommitted changes.
    force_checkout(git, worktree, state.branch.as_deref(), &head)
        .map_err(|error| fail(Cause::Cli(error)))?;
    git.cli
        .run(worktree, args!["clean", "-f", "-d", "--quiet"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    let root = crate::Git::worktree_root(git, worktree)
        .map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    git.cli
        .run(
            &root,
            args![
                "restore",
                "--quiet",
                "--worktree",
                "--source",
                &state.tree,
                "--",
                "."
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    let mut paths: Vec<String> = changed
        .stdout
        .split(|&byte| byte == 0)
        .filter(|path| !path.is_empty())
        .map(path_text)
        .collect();
    paths.sort_unstable();
    Ok(Some(paths))
}

/// `path` (a path as this crate writes it, see `path_text`) as a repository path with `/`
/// separators, or `None` if it is empty, absolute, leaves the worktree or is under `.git`.
pub(crate) fn clean_path(path: &str) -> Option<PathBuf> {
    let bytes = path_bytes(path)?;
    let mut clean = PathBuf::new();
    for component in gix::path::from_byte_slice(&bytes).ok()?.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let first = clean.components().next()?;
    (first.as_os_str() != ".git").then_some(clean)
}

pub(crate) fn restore_paths(
    git: &GixGit,
    worktree: &Path,
    source: &str,
    paths: &[&str],
) -> Result<Restored, RestoreError> {
    let fail = |cause| RestoreError::Failed {
        worktree: worktree.to_owned(),
        source_rev: source.to_owned(),
        source: cause,
    };
    let mut clean = Vec::with_capacity(paths.len());
    for path in paths {
        let Some(cleaned) = clean_path(path) else {
            return Err(RestoreError::UnsafePath {
                path: (*path).to_owned(),
            });
        };
        clean.push(cleaned);
    }
    clean.sort_unstable();
    clean.dedup();
    let repo = rev::open(git, worktree)?;
    let source_id = rev::resolve(&repo, worktree, source)?;
    let tree = repo
        .find_commit(source_id)
        .and_then(|commit| commit.tree())
        .map_err(|error| fail(Cause::gix(error)))?;
    let (mut checked_out, mut deleted) = (Vec::new(), Vec::new());
    for path in clean {
        let entry = tree
            .lookup_entry_by_path(&path)
            .map_err(|error| fail(Cause::gix(error)))?;
        if entry.is_some() {
            checked_out.push(path);
        } else {
            deleted.push(path);
        }
    }
    let with_paths = |head: &[&str], paths: &[PathBuf]| -> Vec<OsString> {
        let mut all: Vec<OsString> = head.iter().map(OsString::from).collect();
        all.push("--".into());
        all.extend(paths.iter().map(|path| path.as_os_str().to_owned()));
        all
    };
    let run = |arguments: Vec<OsString>| {
        let arguments: Vec<&OsStr> = arguments.iter().map(OsString::as_os_str).collect();
        git.cli
            .run(worktree, &arguments)
            .map(drop)
            .map_err(|error| fail(Cause::Cli(error)))
    };
    if !checked_out.is_empty() {
        run(with_paths(
            &["checkout", &source_id.to_string()],
            &checked_out,
        ))?;
    }
    if !deleted.is_empty() {
        run(with_paths(
            &["rm", "-r", "-f", "-q", "--ignore-unmatch"],
            &deleted,
        ))?;
        run(with_paths(&["clean", "-f", "-d", "-q"], &deleted))?;
    }
    let texts = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|path| {
                gix::path::into_bstr(path.as_path()).map_or_else(
                    |_| path.to_string_lossy().into_owned(),
                    |bytes| path_text(&bytes),
                )
            })
            .collect()
    };
    Ok(Restored {
        checked_out: texts(&checked_out),
        deleted: texts(&deleted),
    })
}

#[cfg(test)]
mod tests {
    use super::clean_path;

    #[test]
    fn cleans_and_refuses_paths() {
        let clean = |path| {
            clean_path(path).map(|path| {
                gix::path::into_bstr(path)
                    .expect("a unix path is bytes")
                    .into_owned()
            })
        };
        assert_eq!(clean("src/a.rs"), Some("src/a.rs".into()));
        assert_eq!(clean("./src//a b.rs"), Some("src/a b.rs".into()));
        assert_eq!(clean("dir/"), Some("dir".into()));
        assert_eq!(
            clean(r#""src/raw\377.txt""#),
            Some(b"src/raw\xff.txt"[..].into())
        );
        assert_eq!(clean_path(r#""../x\n""#), None);
        assert_eq!(clean_path(r#""unclosed"#), None);
        assert_eq!(clean_path(""), None);
        assert_eq!(clean_path("/etc/passwd"), None);
        assert_eq!(clean_path("../x"), None);
        assert_eq!(clean_path("a/../../x"), None);
        assert_eq!(clean_path(".git/config"), None);
        assert_eq!(clean_path("."), None);
    }
}
