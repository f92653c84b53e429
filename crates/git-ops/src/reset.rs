//! Rolling a worktree back to a checkpoint, and restoring paths from another revision.
//!
//! Both rewrite files of a worktree and its index, which gix 0.91 cannot do for a set of
//! changes (it checks out whole trees into empty directories); the git command line does it.
//! gix resolves the revisions and decides, path by path, whether to check out or delete.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path};

use crate::cli::args;
use crate::error::{Cause, RestoreError, RollbackError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, Restored};

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

/// `path` as a repository path with `/` separators, or `None` if it is empty, absolute, or
/// leaves the worktree.
fn clean_path(path: &str) -> Option<String> {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for component in Path::new(trimmed).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if parts.is_empty() || parts.first() == Some(&".git") {
        return None;
    }
    Some(parts.join("/"))
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
    let mut restored = Restored::default();
    for path in clean {
        let entry = tree
            .lookup_entry_by_path(&path)
            .map_err(|error| fail(Cause::gix(error)))?;
        if entry.is_some() {
            restored.checked_out.push(path);
        } else {
            restored.deleted.push(path);
        }
    }
    let with_paths = |head: &[&str], paths: &[String]| -> Vec<OsString> {
        let mut all: Vec<OsString> = head.iter().map(OsString::from).collect();
        all.push("--".into());
        all.extend(paths.iter().map(OsString::from));
        all
    };
    let run = |arguments: Vec<OsString>| {
        let arguments: Vec<&OsStr> = arguments.iter().map(OsString::as_os_str).collect();
        git.cli
            .run(worktree, &arguments)
            .map(drop)
            .map_err(|error| fail(Cause::Cli(error)))
    };
    if !restored.checked_out.is_empty() {
        run(with_paths(
            &["checkout", &source_id.to_string()],
            &restored.checked_out,
        ))?;
    }
    if !restored.deleted.is_empty() {
        run(with_paths(
            &["rm", "-r", "-f", "-q", "--ignore-unmatch"],
            &restored.deleted,
        ))?;
        run(with_paths(&["clean", "-f", "-d", "-q"], &restored.deleted))?;
    }
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::clean_path;

    #[test]
    fn cleans_and_refuses_paths() {
        assert_eq!(clean_path("src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(clean_path("./src//a b.rs").as_deref(), Some("src/a b.rs"));
        assert_eq!(clean_path("dir/").as_deref(), Some("dir"));
        assert_eq!(clean_path(""), None);
        assert_eq!(clean_path("/etc/passwd"), None);
        assert_eq!(clean_path("../x"), None);
        assert_eq!(clean_path("a/../../x"), None);
        assert_eq!(clean_path(".git/config"), None);
        assert_eq!(clean_path("."), None);
    }
}
