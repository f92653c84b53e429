//! Merging a branch into a worktree's branch: gix decides, git applies.
//!
//! gix decides first, in the object database (`decide`): when the two sides' tree diffs show
//! they changed clearly separate files, the merge cannot conflict; otherwise gix merges the two
//! commits' trees in memory (nothing is written, the worktree is not touched). A conflict ends
//! there, with the conflicting paths and the worktree exactly as it was. A clean merge of sides
//! that touched the same files is made by `git merge --no-ff`, the reference for what such a
//! merge makes (its merge drivers and strategy, its own checks); should git still stop on a
//! conflict that gix resolved, the merge is aborted and reported as a conflict all the same.
//! Sides with clearly separate changes need no merging of any file: the merged tree is ours's
//! with theirs's changes written in (`merged_tree`), and the worktree is moved to the merge in
//! plumbing (`apply_disjoint`, `advance_worktree`), or not moved at all (`merge_objects`): the
//! merge queue builds a batch's chain of merges in the object database and checks out only its
//! last.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use gix::bstr::{BString, ByteSlice};
use gix::merge::tree::TreatAsUnresolved;

use crate::cli::{args, failure, words};
use crate::diff::TreeChange;
use crate::error::{AdvanceError, Cause, MergeError};
use crate::path_text::path_text;
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, MergeFavor, MergeOutcome};

pub(crate) fn merge(
    git: &GixGit,
    worktree: &Path,
    branch: &str,
    message: &str,
    favor: MergeFavor,
) -> Result<MergeOutcome, MergeError> {
    let sides = {
        let repo = rev::open(git, worktree)?;
        [
            rev::head(&repo, worktree)?,
            rev::resolve(&repo, worktree, branch)?,
        ]
    };
    match in_objects(git, worktree, branch, sides, message, favor)? {
        Some(MergeOutcome::Merged(merge)) => {
            apply_disjoint(git, worktree, branch, message, sides, merge.0)
        }
        Some(outcome) => Ok(outcome),
        None => apply(git, worktree, branch, message, favor, sides[1]),
    }
}

/// What a merge of `theirs` into `ours` comes to, decided in the object database.
enum Decision {
    /// `theirs` is already in `ours`.
    UpToDate,
    /// The two share no history.
    Unrelated,
    /// The merge leaves these paths unmerged.
    Conflict(Vec<String>),
    /// The sides changed clearly separate files since their one merge base: what `theirs`
    /// changed.
    Disjoint(Changes),
    /// A clean merge of sides that touched the same files (or with several merge bases): git
    /// merges it in the worktree.
    Clean,
}

fn decide(
    repo: &gix::Repository,
    ours: gix::ObjectId,
    theirs: gix::ObjectId,
    favor: MergeFavor,
) -> Result<Decision, gix::Error> {
    // One walk of the history for both questions: `theirs` is an ancestor of `ours` exactly when
    // it is among their merge bases (see `rev::ancestor_of`).
    let bases: Vec<gix::ObjectId> = if theirs == ours {
        vec![theirs]
    } else {
        crate::generation::merge_bases(repo, ours, theirs)?
    };
    if bases.contains(&theirs) {
        return Ok(Decision::UpToDate);
    }
    let Some(base) = bases.first().copied() else {
        return Ok(Decision::Unrelated);
    };
    if bases.len() == 1
        && let Some(changes) = clearly_disjoint(repo, base, ours, theirs)?
    {
        return Ok(Decision::Disjoint(changes));
    }
    let conflicts = tree_conflicts(repo.clone(), ours, theirs, favor)?;
    if conflicts.is_empty() {
        Ok(Decision::Clean)
    } else {
        Ok(Decision::Conflict(conflicts))
    }
}

/// The merge of commit `theirs` into commit `ours` made in the object database alone, where
/// that is the whole of it: the merge commit of two sides that changed clearly separate files,
/// [`MergeOutcome::UpToDate`], or the conflicting paths; no worktree, index or branch is
/// touched. `None` when the merge needs git's merge in a worktree: a clean merge of sides that
/// touched the same files (or with several merge bases), which [`merge`] makes once the
/// worktree is at `ours`.
pub(crate) fn merge_objects(
    git: &GixGit,
    worktree: &Path,
    ours: gix::ObjectId,
    theirs: gix::ObjectId,
    message: &str,
) -> Result<Option<MergeOutcome>, MergeError> {
    let branch = theirs.to_string();
    in_objects(
        git,
        worktree,
        &branch,
        [ours, theirs],
        message,
        MergeFavor::None,
    )
}

/// [`merge_objects`], with `favor` for the conflicts and `branch` naming `theirs` in errors.
fn in_objects(
    git: &GixGit,
    worktree: &Path,
    branch: &str,
    [ours, theirs]: [gix::ObjectId; 2],
    message: &str,
    favor: MergeFavor,
) -> Result<Option<MergeOutcome>, MergeError> {
    let fail = |source| MergeError::Failed {
        branch: branch.to_owned(),
        worktree: worktree.to_owned(),
        source,
    };
    let repo = rev::open(git, worktree)?;
    let changes =
        match decide(&repo, ours, theirs, favor).map_err(|error| fail(Cause::gix(error)))? {
            Decision::UpToDate => return Ok(Some(MergeOutcome::UpToDate)),
            Decision::Unrelated => {
                return Err(MergeError::NoMergeBase {
                    branch: branch.to_owned(),
                    worktree: worktree.to_owned(),
                });
            }
            Decision::Conflict(paths) => return Ok(Some(MergeOutcome::Conflict { paths })),
            Decision::Clean => return Ok(None),
            Decision::Disjoint(changes) => changes,
        };
    let tree = merged_tree(&repo, ours, &changes).map_err(fail)?;
    drop(repo);
    let message = crate::commit::clean_message(message);
    let id = crate::commit::write_commit(git, worktree, tree, &[ours, theirs], &message)
        .map_err(fail)?;
    Ok(Some(MergeOutcome::Merged(CommitId(id))))
}

/// What one side of a merge changed since the merge base: each file, link or submodule it
/// added or modified, with its new mode and object, by path.
type Changes = BTreeMap<BString, (gix::objs::tree::EntryMode, gix::ObjectId)>;

/// What `theirs` changed, when the two sides changed clearly separate files: no deletions (so
/// no renames, whole or of directories), and no path of one side equal to, or a directory of, a
/// path of the other. Such a merge cannot conflict, and its tree is `ours`'s with `theirs`'s
/// changes written in ([`merged_tree`]): gix's whole tree merge (some 20 ms on 20,000 files,
/// most of it rename-tracking set-up, and the worktree's index read for its attributes) is
/// skipped.
fn clearly_disjoint(
    repo: &gix::Repository,
    base: gix::ObjectId,
    ours: gix::ObjectId,
    theirs: gix::ObjectId,
) -> Result<Option<Changes>, gix::Error> {
    let base_tree = repo.find_commit(base)?.tree()?;
    let mut sides: Vec<Changes> = Vec::with_capacity(2);
    for side in [ours, theirs] {
        let tree = repo.find_commit(side)?.tree()?;
        let mut changes = Changes::new();
        for change in crate::diff::plain_tree_changes(repo, &base_tree, &tree)? {
            match change {
                TreeChange::Deletion { .. } => return Ok(None),
                TreeChange::Addition {
                    entry_mode,
                    oid,
                    path,
                    ..
                }
                | TreeChange::Modification {
                    entry_mode,
                    oid,
                    path,
                    ..
                } => {
                    if !entry_mode.is_tree() {
                        changes.insert(path, (entry_mode, oid));
                    }
                }
            }
        }
        sides.push(changes);
    }
    let (Some(theirs), Some(ours)) = (sides.pop(), sides.pop()) else {
        return Ok(None);
    };
    let clash = |one: &Changes, other: &Changes| {
        one.keys().any(|path| {
            other.contains_key(path)
                || path
                    .iter()
                    .enumerate()
                    .filter(|(_, byte)| **byte == b'/')
                    .any(|(at, _)| other.contains_key(path[..at].as_bstr()))
        })
    };
    Ok((!clash(&ours, &theirs) && !clash(&theirs, &ours)).then_some(theirs))
}

/// The tree of the merge of clearly separate changes (see [`clearly_disjoint`]): `ours`'s tree
/// with `theirs`'s `changes` written in, written. Every path is then what a three-way merge
/// makes it: `theirs`'s where `theirs` changed it, `ours`'s everywhere else (its own change, or
/// the base both kept).
fn merged_tree(
    repo: &gix::Repository,
    ours: gix::ObjectId,
    changes: &Changes,
) -> Result<gix::ObjectId, Cause> {
    let tree = repo
        .find_commit(ours)
        .map_err(Cause::gix)?
        .tree_id()
        .map_err(Cause::gix)?;
    let mut editor = crate::tree_edit::TreeEdit::of(repo, tree.detach())?;
    for (path, (mode, id)) in changes {
        editor.upsert(path.as_bstr(), mode.kind(), *id)?;
    }
    editor.write()
}

/// The paths the merge of `theirs` into `ours` leaves unmerged, computed in memory.
pub(crate) fn tree_conflicts(
    repo: gix::Repository,
    ours: gix::ObjectId,
    theirs: gix::ObjectId,
    favor: MergeFavor,
) -> Result<Vec<String>, gix::Error> {
    let repo = repo.with_object_memory();
    let mut options = repo.tree_merge_options()?;
    if favor == MergeFavor::Incoming {
        options = options.with_file_favor(Some(gix::merge::tree::FileFavor::Theirs));
    }
    let labels = gix::merge::blob::builtin_driver::text::Labels {
        ancestor: None,
        current: Some("HEAD".into()),
        other: Some("incoming".into()),
    };
    let outcome = repo.merge_commits(ours, theirs, labels, options.into())?;
    let how = TreatAsUnresolved::git();
    if !outcome.tree_merge.has_unresolved_conflicts(how) {
        return Ok(Vec::new());
    }
    let index = outcome.tree_merge.index(how, None)?;
    let mut paths: Vec<String> = index
        .entries()
        .iter()
        .filter(|entry| entry.stage_raw() != 0)
        .map(|entry| path_text(entry.path(&index)))
        .collect();
    paths.dedup();
    if paths.is_empty() {
        // Unresolved without unmerged stages: name the paths of the conflicts themselves.
        paths = outcome
            .tree_merge
            .conflicts
            .iter()
            .filter(|conflict| conflict.is_unresolved(how))
            .map(|conflict| path_text(conflict.ours.location()))
            .collect();
    }
    paths.sort_unstable();
    paths.dedup();
    Ok(paths)
}

/// Checks out `merge`, the merge commit of two sides that changed clearly separate files (see
/// [`in_objects`]), in plumbing: the worktree, its index and its branch moved from `ours` to it
/// ([`advance_worktree`]). `git merge --no-ff` does the same and more: it refreshes the stat
/// data of every file of the index, tries to stash, and writes the merge state first, some
/// 40 ms on a tree of 10,000 files where this takes about half. A worktree with local changes in
/// the way, which `git merge` would report better, takes the porcelain way.
fn apply_disjoint(
    git: &GixGit,
    worktree: &Path,
    branch: &str,
    message: &str,
    [ours, theirs]: [gix::ObjectId; 2],
    merge: gix::ObjectId,
) -> Result<MergeOutcome, MergeError> {
    let message = crate::commit::clean_message(message);
    let subject = message.lines().next().unwrap_or_default();
    let reason = format!("merge {theirs}: {subject}");
    match advance_worktree(git, worktree, ours, merge, &reason) {
        Ok(()) => Ok(MergeOutcome::Merged(CommitId(merge))),
        // Local changes in the way (nothing was touched): `git merge` says it best.
        Err(AdvanceError::Refused { .. }) => apply(
            git,
            worktree,
            branch,
            message.trim_end(),
            MergeFavor::None,
            theirs,
        ),
        Err(AdvanceError::Failed { source, .. }) => Err(MergeError::Failed {
            branch: branch.to_owned(),
            worktree: worktree.to_owned(),
            source,
        }),
    }
}

/// Moves `worktree` from commit `from` (its head) to commit `to`: its files and index first,
/// in process where that applies (see `advance`), else by git's two-tree read (`git read-tree
/// -m -u`: only the paths that differ are rewritten, and a local change in one of them refuses
/// the move before anything is touched), then its branch against `from` (see `refs`), the
/// reflog saying `reason`.
pub(crate) fn advance_worktree(
    git: &GixGit,
    worktree: &Path,
    from: gix::ObjectId,
    to: gix::ObjectId,
    reason: &str,
) -> Result<(), AdvanceError> {
    let failed = |source| AdvanceError::Failed {
        worktree: worktree.to_owned(),
        to: CommitId(to),
        source,
    };
    let (from_hex, to_hex) = (from.to_string(), to.to_string());
    let advanced = crate::advance::advance(git, worktree, from, to).map_err(failed)?;
    if let crate::advance::Advance::Declined(_) = advanced {
        let read = git
            .cli
            .output(worktree, args!["read-tree", "-m", "-u", &from_hex, &to_hex])
            .map_err(|error| failed(Cause::Cli(error)))?;
        if !read.status.success() {
            return Err(AdvanceError::Refused {
                worktree: worktree.to_owned(),
                to: CommitId(to),
                detail: words(&read),
            });
        }
    }
    crate::refs::update(git, worktree, "HEAD", to, Some(from), reason).map_err(failed)
}

/// Makes the merge commit with `git merge --no-ff`, and handles its refusal.
fn apply(
    git: &GixGit,
    worktree: &Path,
    branch: &str,
    message: &str,
    favor: MergeFavor,
    theirs: gix::ObjectId,
) -> Result<MergeOutcome, MergeError> {
    let fail = |source| MergeError::Failed {
        branch: branch.to_owned(),
        worktree: worktree.to_owned(),
        source,
    };
    let mut arguments: Vec<OsString> = [
        "merge",
        "--no-ff",
        "--no-edit",
        "--no-verify",
        "--quiet",
        "-m",
        message,
    ]
    .map(OsString::from)
    .into();
    if favor == MergeFavor::Incoming {
        arguments.extend(["-X", "theirs"].map(OsString::from));
    }
    arguments.push(theirs.to_string().into());
    let arguments: Vec<&OsStr> = arguments.iter().map(OsString::as_os_str).collect();
    let output = git
        .cli
        .output(worktree, &arguments)
        .map_err(|error| fail(Cause::Cli(error)))?;
    if output.status.success() {
        let repo = rev::open(git, worktree)?;
        return Ok(MergeOutcome::Merged(CommitId(rev::head(&repo, worktree)?)));
    }
    let repo = rev::open(git, worktree)?;
    let merging = repo.git_dir().join("MERGE_HEAD").exists();
    if !merging {
        return Err(MergeError::Refused {
            branch: branch.to_owned(),
            worktree: worktree.to_owned(),
            detail: words(&output),
        });
    }
    let unmerged = git
        .cli
        .run(
            worktree,
            args![
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                "--name-only",
                "-z",
                "--diff-filter=U"
            ],
        )
        .map(|out| {
            out.stdout
                .split(|byte| *byte == 0)
                .filter(|path| !path.is_empty())
                .map(path_text)
                .collect::<Vec<_>>()
        });
    git.cli
        .run(worktree, args!["merge", "--abort"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    match unmerged {
        Ok(mut paths) if !paths.is_empty() => {
            paths.sort_unstable();
            paths.dedup();
            Ok(MergeOutcome::Conflict { paths })
        }
        _ => Err(fail(Cause::Cli(failure(&arguments, &output)))),
    }
}

/// Aborts the merge in progress in `worktree`, if there is one (`MERGE_HEAD` exists): a
/// `git merge` killed before it finished (git writes the merge state before it commits) leaves
/// one, and every later merge there refuses ("You have not concluded your merge"). Whether a
/// merge was aborted.
pub(crate) fn abort_unfinished(git: &GixGit, worktree: &Path) -> Result<bool, MergeError> {
    let repo = rev::open(git, worktree)?;
    if !repo.git_dir().join("MERGE_HEAD").exists() {
        return Ok(false);
    }
    drop(repo);
    git.cli
        .run(worktree, args!["merge", "--abort"])
        .map_err(|error| MergeError::Failed {
            branch: "MERGE_HEAD".to_owned(),
            worktree: worktree.to_owned(),
            source: Cause::Cli(error),
        })?;
    Ok(true)
}
