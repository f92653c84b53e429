//! The status of a worktree with gix: its changed paths, untracked files included.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::status::index_worktree::Item as WorktreeItem;

use crate::error::{Cause, StatusError};
use crate::memo::{Last, Memo, Stamp};
use crate::path_text::path_text;
use crate::repo::GixGit;
use crate::reset::clean_path;
use crate::rev;
use crate::scan::Scan;
use crate::types::{Status, Uncommitted, UncommittedKind};

/// Whether `path` is one of `exclude` or lies under one of them.
pub(crate) fn excluded(path: &str, exclude: &[&str]) -> bool {
    exclude.iter().any(|prefix| {
        let prefix = prefix.trim_end_matches('/');
        !prefix.is_empty()
            && path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

pub(crate) fn status(
    git: &GixGit,
    worktree: &Path,
    exclude: &[&str],
) -> Result<Status, StatusError> {
    let fail = |source| StatusError::Read {
        worktree: worktree.to_owned(),
        source,
    };
    let repo = git.repo_at(worktree).map_err(fail)?;
    let memo = git.memo(&repo);
    let paths = changed(git, &repo, &memo).map_err(|error| fail(Cause::gix(error)))?;
    let mut paths: Vec<String> = paths
        .into_iter()
        .filter(|path| !excluded(path, exclude))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    Ok(Status { paths })
}

/// [`status`]'s paths, each with what became of it against the head commit: in the head's
/// tree (a file, a link or a submodule there) or not, in the worktree's files or not.
pub(crate) fn uncommitted(git: &GixGit, worktree: &Path) -> Result<Vec<Uncommitted>, StatusError> {
    let paths = status(git, worktree, &[])?.paths;
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let fail = |source| StatusError::Read {
        worktree: worktree.to_owned(),
        source,
    };
    let rev_failed = |error| fail(Cause::Rev(Box::new(error)));
    let root = crate::Git::worktree_root(git, worktree).map_err(rev_failed)?;
    let repo = rev::open(git, worktree).map_err(rev_failed)?;
    let head = rev::resolve(&repo, worktree, "HEAD").map_err(rev_failed)?;
    let tree = repo
        .find_commit(head)
        .map_err(|error| fail(Cause::gix(error)))?
        .tree()
        .map_err(|error| fail(Cause::gix(error)))?;
    let mut changes = Vec::with_capacity(paths.len());
    for path in paths {
        // A status path is one git can stage: its bytes are those of a relative path.
        let (in_head, on_disk) = match clean_path(&path) {
            Some(relative) => (
                tree.lookup_entry_by_path(&relative)
                    .map_err(|error| fail(Cause::gix(error)))?
                    .is_some_and(|entry| !entry.mode().is_tree()),
                root.join(&relative).symlink_metadata().is_ok(),
            ),
            None => (false, true),
        };
        let kind = match (in_head, on_disk) {
            (false, true) => UncommittedKind::Added,
            (true, true) => UncommittedKind::Modified,
            (true, false) => UncommittedKind::Deleted,
            (false, false) => continue,
        };
        changes.push(Uncommitted { path, kind });
    }
    Ok(changes)
}

pub(crate) fn untracked_files(git: &GixGit, worktree: &Path) -> Result<Vec<String>, StatusError> {
    let fail = |source| StatusError::Read {
        worktree: worktree.to_owned(),
        source,
    };
    // From the root: pathspecs are literal in epic's git, so `:/` cannot say "all of it".
    let root = crate::Git::worktree_root(git, worktree)
        .map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let output = git
        .cli
        .run(
            &root,
            &[
                "ls-files".as_ref(),
                "--others".as_ref(),
                "--exclude-standard".as_ref(),
                "-z".as_ref(),
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    let mut paths: Vec<String> = output
        .stdout
        .split(|&byte| byte == 0)
        .filter(|path| !path.is_empty())
        .map(|path| path_text(path.as_bstr()))
        .collect();
    paths.sort_unstable();
    Ok(paths)
}

/// Every changed path of the worktree of `repo`, as `git status --porcelain
/// --untracked-files=all` lists them (a staged rename as its new path).
fn changed(
    git: &GixGit,
    repo: &gix::Repository,
    memo: &Mutex<Memo>,
) -> Result<Vec<String>, gix::Error> {
    let platform = repo
        .status(gix::progress::Discard)?
        .untracked_files(gix::status::UntrackedFiles::Files)
        // git status reports a file moved on disk but not staged as deleted plus untracked.
        .index_worktree_rewrites(None);
    let mut paths = Vec::new();
    // Nothing changed since the last status (see `Last`): its answer, before the index is even
    // read (a kept answer implies the index still matches the head).
    let stamp = Stamp::of(repo);
    if let Some(workdir) = repo.workdir() {
        let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(paths) = memo.reuse(workdir, &stamp) {
            return Ok(paths);
        }
    }
    let index = crate::kept_index::shared(git, repo)?;
    if index_matches_head(repo, &index)? {
        // Nothing staged: only the worktree against the index is left to compare, and the
        // quick pass proves most of it unchanged.
        let began = std::time::SystemTime::now();
        let scanned = {
            let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
            let Memo {
                verified, watching, ..
            } = &mut *memo;
            crate::scan::scan(repo, &index, verified, watching)
        };
        // The answer can be kept while nothing changes only where the monitor sees every
        // change that could alter it: not inside an untracked directory or a submodule, which
        // it does not watch (inside an ignored one nothing counts).
        let generation = match scanned.scan {
            Scan::Found { .. } => scanned.generation,
            Scan::Declined => None,
        }
        .filter(|_| all_ignored(repo, &index, &scanned.directories));
        let mut reported = HashSet::new();
        let pathspecs = match scanned.scan {
            Scan::Found { changed, suspects } => {
                paths.extend(changed.iter().map(|path| path_text(path)));
                reported.extend(changed);
                // None: nothing for gix to judge (no pathspec at all would mean everything).
                (!suspects.is_empty()).then(|| {
                    suspects
                        .iter()
                        .map(|path| literal(path.as_bstr()))
                        .collect::<Vec<_>>()
                })
            }
            Scan::Declined => Some(Vec::new()),
        };
        if let Some(pathspecs) = pathspecs {
            // The suspects the scan leaves are few: threads for them cost more than they save.
            let platform = if pathspecs.is_empty() {
                platform
            } else {
                platform.index_worktree_options_mut(|options| options.thread_limit = Some(1))
            };
            let mut iter = platform.into_index_worktree_iter(pathspecs)?;
            for item in iter.by_ref() {
                let item = item?;
                reported.insert(item.rela_path().to_owned());
                paths.extend(worktree_path(&item));
            }
        }
        // What gix read and found equal need not be read again (see `scan`). Kept here, not
        // written to the index: gix's write would drop the index's cached tree, which is what
        // proves nothing staged, and so every later status would take the long way.
        let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
        memo.verified.keep(scanned.candidates, &reported, began);
        memo.last = generation.map(|generation| {
            let mut paths = paths.clone();
            paths.sort_unstable();
            paths.dedup();
            Last {
                stamp,
                generation,
                paths,
            }
        });
    } else {
        memo.lock().unwrap_or_else(PoisonError::into_inner).last = None;
        let mut iter = platform.into_iter(None)?;
        for item in iter.by_ref() {
            match item? {
                gix::status::Item::IndexWorktree(item) => paths.extend(worktree_path(&item)),
                gix::status::Item::TreeIndex(change) => {
                    paths.push(path_text(change.location()));
                }
            }
        }
        write_refreshed_stats(iter.outcome_mut());
    }
    Ok(paths)
}

/// Whether every one of `directories` is ignored.
fn all_ignored(repo: &gix::Repository, index: &gix::index::State, directories: &[BString]) -> bool {
    if directories.is_empty() {
        return true;
    }
    let Ok(mut excludes) = repo.excludes(
        index,
        None,
        gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
    ) else {
        return false;
    };
    directories.iter().all(|dir| {
        excludes
            .at_entry(dir.as_bstr(), Some(gix::index::entry::Mode::DIR))
            .is_ok_and(|platform| platform.is_excluded())
    })
}

/// After a commit of `staged` (the paths a status just listed) in the worktree at `worktree`:
/// where that status's answer was kept and named exactly those paths, the worktree is now clean
/// as long as nothing changed since, which the next status finds without a walk.
pub(crate) fn committed(git: &GixGit, worktree: &Path, staged: &[String]) {
    let Ok(repo) = git.repo_at(worktree) else {
        return;
    };
    let memo = git.memo(&repo);
    let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(last) = memo.last.take() else {
        return;
    };
    if last.paths != staged {
        return;
    }
    memo.last = Some(Last {
        stamp: Stamp::of(&repo),
        generation: last.generation,
        paths: Vec::new(),
    });
}

/// A pathspec matching exactly `path` (and what is under it), from the worktree root whatever
/// the current directory, with no glob characters.
fn literal(path: &BStr) -> BString {
    let mut spec = BString::from(":(top,literal)");
    spec.extend_from_slice(path);
    spec
}

/// Whether the index's cached tree (its `TREE` extension, which git keeps valid after commits,
/// resets and checkouts and invalidates up to the root on every staged change) is complete and
/// is `HEAD`'s tree: then nothing is staged, and the costly diff of `HEAD`'s tree against the
/// index can be skipped, as git skips it.
fn index_matches_head(
    repo: &gix::Repository,
    index: &gix::index::File,
) -> Result<bool, gix::Error> {
    let Some(tree) = index.tree() else {
        return Ok(false);
    };
    let complete =
        tree.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(index.entries().len());
    if !complete {
        return Ok(false);
    }
    Ok(repo.head_tree_id_or_empty()?.detach() == tree.id)
}

/// The path of a change between the index and the worktree, if git status would list it.
fn worktree_path(item: &WorktreeItem) -> Option<String> {
    if let WorktreeItem::DirectoryContents { entry, .. } = item {
        // Only untracked files: not ignored ones, not (empty) directories.
        let untracked_file = matches!(entry.status, gix::dir::entry::Status::Untracked)
            && entry.disk_kind != Some(gix::dir::entry::Kind::Directory);
        if !untracked_file {
            return None;
        }
    }
    Some(path_text(item.rela_path()))
}

/// Like git status, keeps the refreshed file stats so the next status need not hash files again.
fn write_refreshed_stats(outcome: Option<&mut gix::status::Outcome>) {
    if let Some(outcome) = outcome.filter(|outcome| outcome.has_changes()) {
        // Not written (the index is locked): the next status re-checks these files, no more.
        outcome.write_changes().and_then(Result::ok);
    }
}

#[cfg(test)]
mod tests {
    use super::excluded;

    #[test]
    fn excludes_paths_and_what_is_under_them() {
        let exclude = [".llm4ts", "build/"];
        assert!(excluded(".llm4ts", &exclude));
        assert!(excluded(".llm4ts/trace.jsonl", &exclude));
        assert!(excluded("build/out.o", &exclude));
        assert!(!excluded(".llm4ts2/x", &exclude));
        assert!(!excluded("src/build/x", &exclude));
        assert!(!excluded("x", &[""]));
    }
}
