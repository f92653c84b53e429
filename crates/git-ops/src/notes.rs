//! Git notes (`git notes --ref <ref> …`) and the first-parent line of a branch: what an epic's
//! attestations are written to and checked against.
//!
//! The notes ref keeps its history as git keeps it (one commit per change), and a note's text is
//! what `git notes add -f -F -` would keep of it. The attestations of a batch of merges (one or
//! several) are written in process as one such change (`write_many`): the notes tree edited by
//! gix, laid out as the tree found (flat, or fanned out by the first one or two bytes of the
//! annotated id, as git lays out a notes tree that grew; a flat tree that grows past a few
//! hundred notes is fanned out one level, as git would), the commit written as
//! [`commit_all`](crate::commit) writes its own, the ref moved against the commit the notes were
//! added to (`refs`); wherever that does not apply (an identity or signing that is git's to
//! apply, a note git would not keep as given, a ref moved meanwhile), and for `write`, one
//! `git notes add -f -F -` per note. Notes are read in two steps: `git notes
//! list` for which object each note annotates, then the note blobs through gix, in process.

use std::collections::BTreeMap;
use std::path::Path;

use gix::bstr::ByteSlice;

use crate::cli::args;
use crate::error::{Cause, NoteError, RevError};
use crate::repo::GixGit;
use crate::rev;
use crate::tree_edit::TreeEdit;
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

/// The message of the commit `write_many` adds notes with, and its reflog line.
const NOTES_MESSAGE: &str = "Notes added by epic\n";

pub(crate) fn write_many(
    git: &GixGit,
    worktree: &Path,
    notes_ref: &str,
    notes: &[(CommitId, String)],
) -> Result<(), NoteError> {
    if notes.is_empty() {
        return Ok(());
    }
    let written =
        in_process(git, worktree, notes_ref, notes).map_err(|source| NoteError::Write {
            notes_ref: notes_ref.to_owned(),
            commit: notes[0].0,
            source,
        })?;
    if !written {
        for (commit, text) in notes {
            write(git, worktree, notes_ref, commit, text)?;
        }
    }
    Ok(())
}

/// Adds `notes` under `notes_ref` as one commit of the notes tree, in process; whether it did
/// (`false`: nothing was changed, and git is to write them).
fn in_process(
    git: &GixGit,
    worktree: &Path,
    notes_ref: &str,
    notes: &[(CommitId, String)],
) -> Result<bool, Cause> {
    if crate::signature::plain_identity(git)?.is_none() {
        return Ok(false);
    }
    // What `git notes add -F` keeps of a note (its clean-up); an empty one it would drop.
    let texts: Vec<String> = notes
        .iter()
        .map(|(_, text)| crate::commit::clean_message(text))
        .collect();
    if texts.iter().any(String::is_empty) {
        return Ok(false);
    }
    let repo = git.repo_at(worktree)?;
    let parent = match repo.try_find_reference(notes_ref).map_err(Cause::gix)? {
        Some(mut found) => Some(found.peel_to_commit().map_err(Cause::gix)?),
        None => None,
    };
    let (mut editor, fanout) = match &parent {
        Some(commit) => {
            let tree = commit.tree().map_err(Cause::gix)?;
            let mut fanout = fanout_of(&tree)?;
            let mut editor = TreeEdit::of(&repo, tree.id)?;
            if fanout == 0 {
                fanout = fan_out(&tree, &mut editor, notes.len())?;
            }
            (editor, fanout)
        }
        None => (TreeEdit::empty(&repo), 0),
    };
    for ((commit, _), text) in notes.iter().zip(&texts) {
        let hex = commit.to_hex();
        // Wherever a note of it is (any layout), it goes: a second one would be read as one
        // note of both texts.
        for depth in 0..=2 {
            editor.remove(note_path(&hex, depth).as_bytes().as_bstr())?;
        }
        let blob = repo.write_blob(text.as_bytes()).map_err(Cause::gix)?;
        editor.upsert(
            note_path(&hex, fanout).as_bytes().as_bstr(),
            gix::object::tree::EntryKind::Blob,
            blob.detach(),
        )?;
    }
    let tree = editor.write()?;
    let parent = parent.map(|commit| commit.id);
    drop(repo);
    let parents: Vec<gix::ObjectId> = parent.into_iter().collect();
    let id = crate::commit::write_commit(git, worktree, tree, &parents, NOTES_MESSAGE)?;
    let reason = format!("notes: {}", NOTES_MESSAGE.trim_end());
    // Moved meanwhile (another writer of notes): git adds them on top of what is there now.
    Ok(crate::refs::update(git, worktree, notes_ref, id, parent, &reason).is_ok())
}

/// How many notes a flat notes tree holds before it is fanned out one level: git fans a notes
/// tree out once it holds a few hundred notes, so that adding one rewrites a tree of a few
/// hundred entries and one of a few dozen, not one of every note.
const FAN_OUT_AT: usize = 256;

/// Fans the flat notes tree `tree`, being edited in `editor`, out one level (`ab/cdef…`) when
/// it will hold more than [`FAN_OUT_AT`] notes with `adding` more: every note moves once, and
/// from then on a batch's notes rewrite a subtree each. The fanout the notes are to be added
/// at. Entries that are not notes (names other than an object id's hex) stay where they are.
fn fan_out(tree: &gix::Tree<'_>, editor: &mut TreeEdit<'_>, adding: usize) -> Result<usize, Cause> {
    let hex_len = tree.id.kind().len_in_hex();
    let mut flat = Vec::new();
    for entry in tree.iter() {
        let entry = entry.map_err(Cause::gix)?;
        let name = entry.filename();
        if entry.mode().is_blob() && name.len() == hex_len && name.iter().all(u8::is_ascii_hexdigit)
        {
            flat.push((name.to_owned(), entry.object_id()));
        }
    }
    if flat.len() + adding <= FAN_OUT_AT {
        return Ok(0);
    }
    for (name, id) in flat {
        let hex = name.to_str_lossy();
        editor.remove(name.as_bstr())?;
        editor.upsert(
            note_path(&hex, 1).as_bytes().as_bstr(),
            gix::object::tree::EntryKind::Blob,
            id,
        )?;
    }
    Ok(1)
}

/// How many directory levels the notes tree `tree` fans its notes out by: one for each level of
/// two-hex-digit subtrees found (git fans a notes tree out once it holds a few hundred notes).
fn fanout_of(tree: &gix::Tree<'_>) -> Result<usize, Cause> {
    // The first two-hex-digit subtree of `tree`. Each tree is read into the handle's reused
    // buffers (a clone would add a buffer to them for good).
    let fanned = |tree: &gix::Tree<'_>| {
        tree.iter().find_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.filename();
            (entry.mode().is_tree() && name.len() == 2 && name.iter().all(u8::is_ascii_hexdigit))
                .then(|| entry.object_id())
        })
    };
    let mut fanout = 0;
    let mut next = fanned(tree);
    while let Some(sub) = next
        && fanout < 2
    {
        fanout += 1;
        next = fanned(&tree.repo().find_tree(sub).map_err(Cause::gix)?);
    }
    Ok(fanout)
}

/// Where the note of the object `hex` goes in a notes tree fanned out `depth` levels:
/// `ab/cdef…` for one.
fn note_path(hex: &str, depth: usize) -> String {
    let mut path = String::with_capacity(hex.len() + depth);
    for level in 0..depth {
        path.push_str(&hex[2 * level..2 * level + 2]);
        path.push('/');
    }
    path.push_str(&hex[2 * depth..]);
    path
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
