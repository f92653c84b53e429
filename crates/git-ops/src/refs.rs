//! Moving a branch (or the notes ref) from one commit to another in process, as `git
//! update-ref -m <reason> <ref> <new> <old>` does with the files backend: a lock file made
//! exclusively beside the ref, the ref's value checked under it (its loose file, else
//! `packed-refs`), the new value written to the lock, a line appended to the ref's reflog (and
//! to the worktree's `HEAD` reflog when the move went through `HEAD`), and the lock renamed
//! over the ref. A `git` process costs a few milliseconds of CPU each time; epic moves a ref
//! for every commit, every catch-up, every batch of the merge queue and its notes.
//!
//! It applies where nothing can surprise it, and declines ([`Moved::Declined`], with nothing
//! left behind) everywhere else, where the caller runs `git update-ref`, which also reports a
//! ref that moved meanwhile in git's words: a configuration that changes how refs or reflogs
//! are written (another ref storage, `core.logAllRefUpdates`, `core.sharedRepository`,
//! `core.preferSymlinkRefs`, `core.fsync`), an identity that is git's to work out (see
//! `signature::plain_identity`), a lock someone holds, a value that is not the
//! expected one, a head that is detached or a symbolic link, a ref that is itself symbolic or
//! not a branch or a note.

use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::Path;

use crate::error::Cause;
use crate::repo::GixGit;

/// How [`move_ref`] went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Moved {
    /// The ref points at the new commit, its reflog says so.
    Done,
    /// Nothing was changed; why git has to do it.
    Declined(&'static str),
}

/// Settings that change how git writes a ref or its log: any of them set, git does it.
const DECLINED_SETTINGS: [&str; 4] = [
    "extensions.refstorage",
    "core.sharedrepository",
    "core.prefersymlinkrefs",
    "core.fsync",
];

/// Moves `name` from `old` to `new` as [`move_ref`] does, else (declined, or failed before the
/// ref moved) with `git update-ref -m <reason> <name> <new> <old>`, which checks `old` again.
pub(crate) fn update(
    git: &GixGit,
    worktree: &Path,
    name: &str,
    new: gix::ObjectId,
    old: Option<gix::ObjectId>,
    reason: &str,
) -> Result<(), Cause> {
    if let Ok(Moved::Done) = move_ref(git, worktree, name, new, old, reason) {
        return Ok(());
    }
    let (new, old) = (
        new.to_string(),
        old.map(|old| old.to_string()).unwrap_or_default(),
    );
    git.cli
        .run(
            worktree,
            crate::cli::args!["update-ref", "-m", reason, name, &new, &old],
        )
        .map(drop)
        .map_err(Cause::Cli)
}

/// Moves `name` (`refs/heads/…` or `refs/notes/…`; or `HEAD`, the branch `worktree`'s head is
/// on) from `old` (`None`: it must not exist) to `new`, the reflog saying `reason`.
#[expect(
    clippy::default_trait_access,
    reason = "gix keeps the permissions type in a module it does not export"
)]
pub(crate) fn move_ref(
    git: &GixGit,
    worktree: &Path,
    name: &str,
    new: gix::ObjectId,
    old: Option<gix::ObjectId>,
    reason: &str,
) -> Result<Moved, Cause> {
    use Moved::Declined;

    let Some(pin) = git.cli.pin()? else {
        return Ok(Declined("the configuration is not pinned"));
    };
    // `git init` writes `core.logAllRefUpdates = true`, the default of a repository with a
    // worktree: only another value changes anything.
    let logs_all = pin
        .value("core.logallrefupdates")
        .is_none_or(|value| value.eq_ignore_ascii_case("true"));
    if !logs_all || DECLINED_SETTINGS.iter().any(|key| pin.had(key)) {
        return Ok(Declined("a setting of how refs are written"));
    }
    let Some([_, (committer, email)]) = crate::signature::plain_identity(git)? else {
        return Ok(Declined("an identity git works out"));
    };
    let repo = git.repo_at(worktree)?;
    if repo.workdir().is_none() {
        return Ok(Declined("a bare repository"));
    }
    let (git_dir, common_dir) = (repo.git_dir().to_owned(), repo.common_dir().to_owned());
    drop(repo);
    // Through `HEAD`: the branch it is on, and `HEAD` locked too so it cannot change meanwhile.
    let head_file = git_dir.join("HEAD");
    let (target, head_lock) = if name == "HEAD" {
        let Some(target) = symbolic_target(&head_file)? else {
            return Ok(Declined("a detached or linked head"));
        };
        let Ok(lock) = gix::lock::Marker::acquire_to_hold_resource(
            &head_file,
            gix::lock::acquire::Fail::Immediately,
            None,
            Default::default(),
        ) else {
            return Ok(Declined("a lock on the head"));
        };
        (target, Some(lock))
    } else {
        (name.to_owned(), None)
    };
    let via_head = head_lock.is_some();
    if !(target.starts_with("refs/heads/") || target.starts_with("refs/notes/"))
        || gix::refs::FullName::try_from(target.as_str()).is_err()
    {
        return Ok(Declined("not a branch or a note"));
    }
    let path = common_dir.join(&target);
    if let Some(parent) = path.parent()
        && std::fs::create_dir_all(parent).is_err()
    {
        return Ok(Declined("a ref in the way of its directory"));
    }
    // `<ref>.lock`, made exclusively and removed unless committed, as git's; the process's
    // umask, as git writes a ref where `core.sharedRepository` is unset.
    let Ok(mut lock) = gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::Immediately,
        None,
        Default::default(),
    ) else {
        return Ok(Declined("a lock on the ref"));
    };
    // Under the locks: the head still on the branch, the branch still at `old`.
    if via_head && symbolic_target(&head_file)?.as_deref() != Some(target.as_str()) {
        return Ok(Declined("the head moved"));
    }
    match current(git, worktree, &path, &target)? {
        Current::Direct(found) if old == found => {}
        _ => return Ok(Declined("not at the expected commit")),
    }
    let (new_hex, old_hex) = (
        new.to_string(),
        old.unwrap_or_else(|| gix::ObjectId::null(new.kind()))
            .to_string(),
    );
    lock.write_all(format!("{new_hex}\n").as_bytes())?;
    let line = reflog_line(&old_hex, &new_hex, &committer, &email, reason);
    append(&common_dir.join("logs").join(&target), &line)?;
    if via_head {
        append(&git_dir.join("logs").join("HEAD"), &line)?;
    }
    lock.commit().map_err(|error| Cause::Io(error.error))?;
    drop(head_lock);
    Ok(Moved::Done)
}

/// The ref `HEAD` (the file `head_file`) names, when it is a plain file naming one.
fn symbolic_target(head_file: &Path) -> Result<Option<String>, Cause> {
    if std::fs::symlink_metadata(head_file)?
        .file_type()
        .is_symlink()
    {
        return Ok(None);
    }
    let content = std::fs::read_to_string(head_file)?;
    Ok(content
        .strip_prefix("ref: ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .map(str::to_owned))
}

/// A ref's value as found.
enum Current {
    /// A commit (`None`: the ref does not exist).
    Direct(Option<gix::ObjectId>),
    /// Anything else: symbolic, unreadable.
    Other,
}

/// The value of ref `name` (whose loose file is `path`): its loose file, else `packed-refs`.
fn current(git: &GixGit, worktree: &Path, path: &Path, name: &str) -> Result<Current, Cause> {
    match std::fs::read(path) {
        Ok(content) => {
            let hex = content.strip_suffix(b"\n").unwrap_or(&content);
            return Ok(
                gix::ObjectId::from_hex(hex).map_or(Current::Other, |id| Current::Direct(Some(id)))
            );
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(Cause::Io(error)),
    }
    let repo = git.repo_at(worktree)?;
    let packed = repo.refs.cached_packed_buffer().map_err(Cause::gix)?;
    let Some(packed) = packed else {
        return Ok(Current::Direct(None));
    };
    let found = packed
        .try_find(name)
        .map_err(Cause::gix)?
        .map(|reference| reference.target());
    Ok(Current::Direct(found))
}

/// A reflog line as git writes it: the message's whitespace runs made one space, its ends
/// trimmed.
fn reflog_line(old: &str, new: &str, name: &str, email: &str, reason: &str) -> String {
    let time = gix::date::Time::now_local_or_utc();
    let offset = time.offset.unsigned_abs();
    let sign = if time.offset < 0 { '-' } else { '+' };
    let zone = format!("{sign}{:02}{:02}", offset / 3600, offset % 3600 / 60);
    // git's `isspace`: no vertical tab, no form feed.
    let message: Vec<&str> = reason
        .split([' ', '\t', '\n', '\r'])
        .filter(|word| !word.is_empty())
        .collect();
    let mut line = format!("{old} {new} {name} <{email}> {} {zone}", time.seconds);
    if !message.is_empty() {
        line.push('\t');
        line.push_str(&message.join(" "));
    }
    line.push('\n');
    line
}

/// Appends `line` to the reflog at `path` in one write, creating it (and its directories).
fn append(path: &Path, line: &str) -> Result<(), Cause> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut log = OpenOptions::new().create(true).append(true).open(path)?;
    log.write_all(line.as_bytes())?;
    Ok(())
}
