//! Git notes (`git notes --ref <ref> …`) and the first-parent line of a branch: what an epic's
//! attestations are written to and checked against.
//!
//! Notes are written with the git command line (`git notes add -f -F -`): gix writes no notes,
//! and git keeps the notes ref's history (one commit per change) as every other tool expects.
//! They are read in two steps: `git notes list` for which object each note annotates, then
//! the note blobs through gix, in process.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cli::args;
use crate::error::{Cause, NoteError, RevError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, LineCommit};

pub(crate) fn write(
    git: &GixGit,
    worktree: &Path,
    notes_ref: &str,
    commit: &CommitId,
    text: &str,
) -> Result<(), NoteError> {
    git.cli
        .run_with_input(
            worktree,
            args![
                "notes",
                "--ref",
                notes_ref,
                "add",
                "-f",
                "-F",
                "-",
                &commit.to_hex()
            ],
            text.as_bytes(),
        )
        .map(drop)
        .map_err(|source| NoteError::Write {
            notes_ref: notes_ref.to_owned(),
            commit: *commit,
            source: Cause::Cli(source),
        })
}

pub(crate) fn read_all(
    git: &GixGit,
    worktree: &Path,
    notes_ref: &str,
) -> Result<BTreeMap<CommitId, String>, NoteError> {
    let read = |source| NoteError::Read {
        notes_ref: notes_ref.to_owned(),
        source,
    };
    // A notes ref that does not exist yet lists nothing, successfully.
    let output = git
        .cli
        .run(worktree, args!["notes", "--ref", notes_ref, "list"])
        .map_err(|error| read(Cause::Cli(error)))?;
    let repo = git.repo_at(worktree).map_err(read)?;
    let mut notes = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((blob, object)) = line.split_once(' ') else {
            continue;
        };
        let (Ok(blob), Ok(object)) = (
            gix::ObjectId::from_hex(blob.as_bytes()),
            gix::ObjectId::from_hex(object.trim().as_bytes()),
        ) else {
            continue;
        };
        let data = repo
            .find_object(blob)
            .map_err(|error| read(Cause::gix(error)))?
            .data
            .clone();
        notes.insert(
            CommitId(object),
            String::from_utf8_lossy(&data).into_owned(),
        );
    }
    Ok(notes)
}

pub(crate) fn first_parent_line(
    git: &GixGit,
    worktree: &Path,
    base: Option<&CommitId>,
    tip: &str,
) -> Result<(Vec<LineCommit>, bool), RevError> {
    let repo = rev::open(git, worktree)?;
    let tip = rev::resolve(&repo, worktree, tip)?;
    let read = |source| RevError::Read {
        worktree: worktree.to_owned(),
        source,
    };
    let mut line = Vec::new();
    let mut at = Some(tip);
    let mut reached = base.is_none();
    while let Some(id) = at {
        if base.is_some_and(|base| base.0 == id) {
            reached = true;
            break;
        }
        let commit = repo
            .find_commit(id)
            .map_err(|error| read(Cause::gix(error)))?;
        let tree = commit.tree_id().map_err(|error| read(Cause::gix(error)))?;
        let parents: Vec<CommitId> = commit
            .parent_ids()
            .map(|parent| CommitId(parent.detach()))
            .collect();
        let message = commit.message_raw_sloppy().to_string();
        let summary = message.lines().next().unwrap_or_default().to_owned();
        let author = commit
            .author()
            .map(|author| format!("{} <{}>", author.name, author.email))
            .unwrap_or_default();
        at = parents.first().map(|parent| parent.0);
        line.push(LineCommit {
            id: CommitId(id),
            tree: tree.detach().to_string(),
            parents,
            summary,
            author,
        });
    }
    line.reverse();
    Ok((line, reached))
}
