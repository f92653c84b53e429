//! Linked worktrees through the git command line: add, list, remove, move, prune.
//!
//! gix 0.91 adds and removes linked worktrees but neither moves nor prunes them; all five go
//! through the command line, the reference for the registration files (see the crate docs).
//! Branch checks before an add use gix, so the common refusals come back typed rather than as
//! git's words.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::cli::args;
use crate::error::{Cause, WorktreeError};
use crate::repo::GixGit;
use crate::types::{CommitId, Removal, WorktreeInfo};
use crate::{branch, rev};

/// Holds an exclusive OS lock on `<common-dir>/git-ops-worktrees.lock` while one worktree
/// command runs, so the worktree administration of several processes on one repository (two
/// epics run side by side) is serialized: two `git worktree add` of the same name (each epic's
/// `_epic`) race for `.git/worktrees/<name>`, and a `git worktree prune` run while another
/// process's add is half done unregisters it. Best effort: without the file, no lock. The
/// lock dies with its holder.
fn admin_lock(git: &GixGit) -> Option<std::fs::File> {
    let path = crate::Git::common_dir(git).join("git-ops-worktrees.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

/// `path` made absolute against the process's current directory, so git (which runs elsewhere)
/// sees the same place and a leading `-` can never read as an option.
fn absolute(path: &Path) -> Result<PathBuf, io::Error> {
    std::path::absolute(path)
}

/// `path` with symbolic links resolved as far as it exists, the rest appended: how git records a
/// worktree's location.
pub(crate) fn normalized(path: &Path) -> PathBuf {
    let Ok(path) = absolute(path) else {
        return path.to_owned();
    };
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return lexical(&path),
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn failed<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(Cause) -> WorktreeError + 'a {
    move |source| WorktreeError::Failed {
        action,
        path: path.to_owned(),
        source,
    }
}

/// Refuses a destination that exists and is not an empty directory, as git would, but typed.
fn check_destination(path: &Path) -> Result<(), WorktreeError> {
    match std::fs::read_dir(path).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        _ => Err(WorktreeError::PathExists {
            path: path.to_owned(),
        }),
    }
}

/// Maps git's refusal of an already checked-out branch to its typed error.
fn checked_out(error: Cause, branch: &str, path: &Path) -> WorktreeError {
    if let Cause::Cli(cli) = &error {
        let detail = cli.detail();
        if detail.contains("already used by worktree") || detail.contains("already checked out") {
            return WorktreeError::BranchCheckedOut {
                branch: branch.to_owned(),
            };
        }
    }
    failed("add", path)(error)
}

pub(crate) fn add_new_branch(
    git: &GixGit,
    path: &Path,
    name: &str,
    start: &str,
) -> Result<(), WorktreeError> {
    let path = absolute(path).map_err(|error| failed("add", path)(Cause::Io(error)))?;
    let exists = branch::exists(git, name)?;
    if exists {
        return Err(WorktreeError::BranchExists {
            branch: name.to_owned(),
        });
    }
    check_destination(&path)?;
    let anchor = git.anchor();
    let start =
        CommitId(rev::resolve(&git.main_repo(), anchor, start).map_err(WorktreeError::StartPoint)?)
            .to_hex();
    let _admin = admin_lock(git);
    git.cli
        .run(
            anchor,
            args!["worktree", "add", "--quiet", "-b", name, &path, &start],
        )
        .map_err(|error| failed("add", &path)(Cause::Cli(error)))?;
    git.forget(&path);
    Ok(())
}

pub(crate) fn add_existing(git: &GixGit, path: &Path, name: &str) -> Result<(), WorktreeError> {
    let path = absolute(path).map_err(|error| failed("add", path)(Cause::Io(error)))?;
    let exists = branch::exists(git, name).unwrap_or(false);
    if !exists {
        return Err(WorktreeError::NoSuchBranch {
            branch: name.to_owned(),
        });
    }
    check_destination(&path)?;
    // The short name: git checks out a local branch attached when given its short name (a full
    // `refs/heads/…` name would detach the head).
    let _admin = admin_lock(git);
    git.cli
        .run(
            git.anchor(),
            args!["worktree", "add", "--quiet", &path, name],
        )
        .map_err(|error| checked_out(Cause::Cli(error), name, &path))?;
    git.forget(&path);
    Ok(())
}

pub(crate) fn list(git: &GixGit) -> Result<Vec<WorktreeInfo>, WorktreeError> {
    let anchor = git.anchor();
    let output = git
        .cli
        .run(anchor, args!["worktree", "list", "--porcelain", "-z"])
        .map_err(|error| failed("list", anchor)(Cause::Cli(error)))?;
    Ok(parse_list(&output.stdout))
}

/// Parses `git worktree list --porcelain -z`: NUL-terminated lines, an empty line after each
/// worktree.
fn parse_list(out: &[u8]) -> Vec<WorktreeInfo> {
    let mut list: Vec<WorktreeInfo> = Vec::new();
    let mut current: Option<WorktreeInfo> = None;
    for line in out.split(|byte| *byte == 0) {
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            list.extend(current.take());
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((&line, ""));
        if key == "worktree" {
            list.extend(current.take());
            current = Some(WorktreeInfo {
                path: PathBuf::from(value),
                head: None,
                branch: None,
                is_main: list.is_empty(),
                prunable: false,
                locked: false,
            });
            continue;
        }
        let Some(worktree) = current.as_mut() else {
            continue;
        };
        match key {
            "HEAD" => worktree.head = value.parse().ok().filter(|id: &CommitId| !id.0.is_null()),
            "branch" => {
                worktree.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).into());
            }
            "locked" => worktree.locked = true,
            "prunable" => worktree.prunable = true,
            _ => {}
        }
    }
    list.extend(current);
    list
}

pub(crate) fn remove(git: &GixGit, path: &Path) -> Result<Removal, WorktreeError> {
    let path = absolute(path).map_err(|error| failed("remove", path)(Cause::Io(error)))?;
    git.forget(&path);
    if path.exists() {
        // Twice forced: also when the worktree is locked.
        let _admin = admin_lock(git);
        let removed = git.cli.run(
            git.anchor(),
            args!["worktree", "remove", "--force", "--force", &path],
        );
        if let Err(error) = removed {
            // A `git worktree add` killed half way leaves a registered directory whose `.git`
            // file is missing or empty, or points to an administrative directory without its
            // `HEAD` or `commondir` yet; git refuses to remove it ("validation failed"). It
            // holds nothing of value: delete it and drop its registration. An unregistered
            // directory is never deleted.
            if !registered(git, &path)? || intact(&path) {
                return Err(failed("remove", &path)(Cause::Cli(error)));
            }
            std::fs::remove_dir_all(&path)
                .map_err(|error| failed("remove", &path)(Cause::Io(error)))?;
            unlock_interrupted_add(git, &path)
                .map_err(|error| failed("remove", &path)(Cause::Io(error)))?;
            git.cli
                .run(git.anchor(), args!["worktree", "prune"])
                .map_err(|error| failed("remove", &path)(Cause::Cli(error)))?;
        }
        return Ok(Removal::Removed);
    }
    if !registered(git, &path)? {
        return Ok(Removal::Absent);
    }
    {
        let _admin = admin_lock(git);
        unlock_interrupted_add(git, &path)
            .map_err(|error| failed("remove", &path)(Cause::Io(error)))?;
    }
    prune(git)?;
    Ok(Removal::Pruned)
}

/// The lock `git worktree add` holds on the worktree it is adding: its administrative
/// directory's `locked` file reads this until the add is done (epic's git runs with
/// `LC_ALL=C`, so untranslated).
const ADDING: &str = "initializing";

/// Drops the registrations that a `git worktree add` killed before it had written them whole
/// left: still locked by the add ("initializing"), with `HEAD` or `commondir` missing or empty.
/// git cannot read them (`git worktree list` fails on the whole repository: "failed to read
/// .git/worktrees/…/commondir") and `prune` skips them as locked. The administrative directory
/// is deleted, and the worktree's directory with it unless its `.git` file points to another
/// (what git does itself when an add fails). Called holding the
/// administration lock.
fn drop_dead_adds(git: &GixGit) -> io::Result<()> {
    let unreadable = |file: PathBuf| std::fs::metadata(file).map_or(true, |meta| meta.len() == 0);
    for admin in admin_dirs(git)? {
        if !locked_by_add(&admin)
            || !(unreadable(admin.join("HEAD")) || unreadable(admin.join("commondir")))
        {
            continue;
        }
        // git adds only into a missing or empty directory, and deletes it when an add fails:
        // all there is in it came from the add that died, its `.git` file (pointing here, or
        // not written whole yet) included.
        if let Some(worktree) = worktree_of(&admin)
            && admin_dir(&worktree).is_none_or(|to| normalized(&to) == normalized(&admin))
        {
            match std::fs::remove_dir_all(worktree) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        std::fs::remove_dir_all(&admin)?;
    }
    Ok(())
}

/// The administrative directories of the linked worktrees (`<common-dir>/worktrees/*`).
fn admin_dirs(git: &GixGit) -> io::Result<Vec<PathBuf>> {
    match std::fs::read_dir(crate::Git::common_dir(git).join("worktrees")) {
        Ok(entries) => entries
            .map(|entry| entry.map(|entry| entry.path()))
            .collect(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(error) => Err(error),
    }
}

/// The worktree an administrative directory registers: its `gitdir` file names the worktree's
/// `.git`, absolute or (`worktree.useRelativePaths`) relative to the administrative directory.
/// An add killed while it wrote `gitdir` leaves it empty or cut short: only a path whose last
/// component is `.git`, and whose worktree does not hold the administrative directory itself
/// (an empty `gitdir` would name `.git/worktrees`, and its parent the main worktree), names one.
pub(crate) fn worktree_of(admin: &Path) -> Option<PathBuf> {
    let gitdir = std::fs::read_to_string(admin.join("gitdir")).ok()?;
    let gitdir = admin.join(gitdir.trim());
    if gitdir.file_name() != Some(std::ffi::OsStr::new(".git")) {
        return None;
    }
    let worktree = gitdir.parent()?.to_path_buf();
    (!normalized(admin).starts_with(normalized(&worktree))).then_some(worktree)
}

/// Whether the `locked` file of an administrative directory is the lock of an add under way.
fn locked_by_add(admin: &Path) -> bool {
    std::fs::read_to_string(admin.join("locked")).is_ok_and(|reason| reason.trim() == ADDING)
}

/// Unlocks the registration of the missing or half-made worktree at `path` when what locks it
/// is a `git worktree add` killed half way: git removes its "initializing" lock only when the
/// add ends, and keeps a locked registration from `prune` and its path from a new add
/// ("missing but locked"). Any other lock (`git worktree lock`, with or without a reason of its
/// own) is left alone. Called holding the administration lock, for a path only this process
/// adds. Whether a lock was removed.
fn unlock_interrupted_add(git: &GixGit, path: &Path) -> io::Result<bool> {
    let wanted = normalized(path);
    for admin in admin_dirs(git)? {
        if worktree_of(&admin).is_some_and(|worktree| normalized(&worktree) == wanted)
            && locked_by_add(&admin)
        {
            std::fs::remove_file(admin.join("locked"))?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `path` is registered as a linked worktree.
fn registered(git: &GixGit, path: &Path) -> Result<bool, WorktreeError> {
    let wanted = normalized(path);
    Ok(list(git)?
        .into_iter()
        .any(|worktree| !worktree.is_main && normalized(&worktree.path) == wanted))
}

/// Whether `path` holds a `.git` file that points (`gitdir: …`) to an administrative directory
/// with its `HEAD` and `commondir`, as every linked worktree whose add finished does.
fn intact(path: &Path) -> bool {
    admin_dir(path)
        .is_some_and(|admin| admin.join("HEAD").is_file() && admin.join("commondir").is_file())
}

/// The administrative directory the `.git` file of the linked worktree at `path` points to.
pub(crate) fn admin_dir(path: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(path.join(".git")).ok()?;
    let admin = text.trim().strip_prefix("gitdir:")?;
    // Relative to the worktree when git writes it so (`worktree.useRelativePaths`).
    Some(path.join(admin.trim()))
}

/// Whether the linked worktree at `path` is one whose `git worktree add` never finished (killed
/// half way): its administrative directory still holds the add's "initializing" lock, and its
/// checkout may be partial. Such a worktree is to be removed and added again, not worked in.
/// Reads two small files; `false` for anything else, a missing worktree included.
///
/// ```no_run
/// # let worktree = std::path::Path::new("../app.worktrees/checkout/cart-api");
/// if epic_git_ops::add_interrupted(worktree) {
///     // remove it (`Git::remove_worktree`) and add it again
/// }
/// ```
pub fn add_interrupted(path: &Path) -> bool {
    admin_dir(path).is_some_and(|admin| locked_by_add(&admin))
}

/// The other worktree whose registration the `.git` file of the linked worktree at `path`
/// names, when an agent pointed it there: every git command run in `path` would then act on that
/// worktree's index and branch (the epic's or a sibling's). `None` for a worktree linked to its
/// own registration, and for anything that is not a linked worktree or whose link names no
/// worktree (git fails there by itself). Reads two small files; it changes nothing
/// ([`Git::relink_worktree`](crate::Git::relink_worktree) points the link back).
///
/// ```no_run
/// # let worktree = std::path::Path::new("../app.worktrees/checkout/cart-api");
/// if let Some(other) = epic_git_ops::linked_elsewhere(worktree) {
///     // run no git in `worktree`: it would act on `other`
/// }
/// ```
pub fn linked_elsewhere(path: &Path) -> Option<PathBuf> {
    let named = worktree_of(&admin_dir(path)?)?;
    (normalized(&named) != normalized(path)).then_some(named)
}

/// [`Git::relink_worktree`](crate::Git::relink_worktree): the registration whose `gitdir` names
/// `path`'s `.git` is the worktree's own; its `.git` file is rewritten to name it, as git writes
/// it, when it names another.
pub(crate) fn relink(git: &GixGit, path: &Path) -> Result<bool, WorktreeError> {
    let fail = failed("relink", path);
    let Some(named) = admin_dir(path) else {
        return Ok(false);
    };
    let wanted = normalized(path);
    if worktree_of(&named).is_some_and(|worktree| normalized(&worktree) == wanted) {
        return Ok(false);
    }
    let _admin = admin_lock(git);
    let own = admin_dirs(git)
        .map_err(|error| failed("relink", path)(Cause::Io(error)))?
        .into_iter()
        .find(|admin| worktree_of(admin).is_some_and(|worktree| normalized(&worktree) == wanted));
    let Some(own) = own else {
        return Ok(false);
    };
    git.forget(path);
    std::fs::write(path.join(".git"), format!("gitdir: {}\n", own.display()))
        .map_err(|error| fail(Cause::Io(error)))?;
    Ok(true)
}

pub(crate) fn move_to(git: &GixGit, from: &Path, to: &Path) -> Result<(), WorktreeError> {
    let from = absolute(from).map_err(|error| failed("move", from)(Cause::Io(error)))?;
    let to = absolute(to).map_err(|error| failed("move", &from)(Cause::Io(error)))?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|error| failed("move", &from)(Cause::Io(error)))?;
    }
    git.forget(&from);
    let arguments: &[&OsStr] = args!["worktree", "move", &from, &to];
    let _admin = admin_lock(git);
    git.cli
        .run(git.anchor(), arguments)
        .map_err(|error| failed("move", &from)(Cause::Cli(error)))?;
    Ok(())
}

pub(crate) fn prune(git: &GixGit) -> Result<(), WorktreeError> {
    let anchor = git.anchor();
    let _admin = admin_lock(git);
    drop_dead_adds(git).map_err(|error| failed("prune", anchor)(Cause::Io(error)))?;
    git.cli
        .run(anchor, args!["worktree", "prune"])
        .map(drop)
        .map_err(|error| failed("prune", anchor)(Cause::Cli(error)))
}

/// The states an unfinished rebase keeps in a worktree's git directory.
const REBASE_DIRS: [&str; 2] = ["rebase-merge", "rebase-apply"];

/// The files an unfinished merge, cherry-pick or revert keeps in a worktree's git directory.
const OPERATION_HEADS: [&str; 3] = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"];

/// [`Git::switch_worktree`](crate::Git::switch_worktree): an unfinished rebase dropped
/// (`rebase --quit`), `git checkout --force` onto the branch (`-B` at `start`, or at its own tip),
/// then the proof that the worktree is clean, with `git clean -ffd` first when it is not.
pub(crate) fn switch(
    git: &GixGit,
    path: &Path,
    branch: &str,
    start: Option<&CommitId>,
) -> Result<CommitId, WorktreeError> {
    let fail = |source| failed("switch", path)(source);
    let admin = admin_dir(path).ok_or_else(|| WorktreeError::NotClean {
        path: path.to_owned(),
        what: "it is not a linked worktree (no `.git` file naming its registration)".to_owned(),
    })?;
    let expected = match start {
        Some(start) => *start,
        None => {
            let repo = git.main_repo();
            CommitId(
                rev::resolve(&repo, git.anchor(), &format!("refs/heads/{branch}"))
                    .map_err(WorktreeError::StartPoint)?,
            )
        }
    };
    if REBASE_DIRS.iter().any(|dir| admin.join(dir).exists()) {
        git.cli
            .run(path, args!["rebase", "--quit"])
            .map_err(|error| fail(Cause::Cli(error)))?;
    }
    let start_hex = expected.to_hex();
    // The common case, a clean slot moved on to a new branch at the epic head, in process (see
    // `advance`); proven like git's checkout below, which runs where it does not apply or the
    // proof fails.
    if start.is_some()
        && switch_in_process(git, path, &admin, branch, &expected)?
        && prove_switched(git, path, &admin, branch, &expected).is_ok()
    {
        return Ok(expected);
    }
    // `--force` throws away what differs from the target (a killed switch's half-written files,
    // a previous story's uncommitted edits); only the files that differ are rewritten, and ignored
    // files stay. `--ignore-other-worktrees`: never here; a branch held elsewhere is refused.
    let checkout: &[&OsStr] = if start.is_some() {
        args![
            "checkout",
            "--force",
            "--quiet",
            "--no-guess",
            "-B",
            branch,
            &start_hex,
            "--"
        ]
    } else {
        args!["checkout", "--force", "--quiet", "--no-guess", branch, "--"]
    };
    git.cli
        .run(path, checkout)
        .map_err(|error| checked_out_as("switch", Cause::Cli(error), branch, path))?;
    // The status (in process, watched by the monitor) is the proof; only when it finds
    // something does the whole-tree `git clean` run: untracked files that are not ignored, what
    // the previous story or its gates left, twice forced so a nested repository goes too.
    // Ignored ones (build caches) stay.
    if prove_switched(git, path, &admin, branch, &expected).is_err() {
        git.cli
            .run(path, args!["clean", "-f", "-f", "-d", "--quiet"])
            .map_err(|error| fail(Cause::Cli(error)))?;
        prove_switched(git, path, &admin, branch, &expected)?;
    }
    Ok(expected)
}

/// [`switch`] without git's checkout: the worktree's files and index moved from its head's
/// tree to `start`'s in process, the branch set to `start` (made or reset, as `checkout -B`
/// does) and the head attached to it. `false`, where it does not apply (an unfinished
/// operation, the branch held by another worktree, a head that does not read, anything
/// [`advance`](crate::advance::advance) declines or fails at): the caller's checkout decides.
fn switch_in_process(
    git: &GixGit,
    path: &Path,
    admin: &Path,
    branch: &str,
    start: &CommitId,
) -> Result<bool, WorktreeError> {
    let busy = OPERATION_HEADS
        .iter()
        .chain(REBASE_DIRS.iter())
        .any(|name| admin.join(name).exists());
    if busy || held_elsewhere(git, admin, branch) {
        return Ok(false);
    }
    let Ok(from) = rev::open(git, path).and_then(|repo| rev::head(&repo, path)) else {
        return Ok(false);
    };
    // An error after files were touched is repaired by the forced checkout all the same.
    if !matches!(
        crate::advance::advance(git, path, from, start.0),
        Ok(crate::advance::Advance::Done)
    ) {
        return Ok(false);
    }
    let reference = format!("refs/heads/{branch}");
    let message = format!("epic: switch to {branch}");
    // One transaction for both (git 2.46 and later), else one command each. `--no-deref`: the
    // head itself is attached, not the branch it is on made a link to the new one. Not gix's: its ref
    // transactions lock `packed-refs` to look names up, and a kill inside one leaves a lock that
    // fails every later deletion of a ref, the user's git's too.
    let both = format!(
        "update {reference} {}\nsymref-update HEAD {reference}\n",
        start.to_hex()
    );
    if git
        .cli
        .run_with_input(
            path,
            args!["update-ref", "--no-deref", "-m", &message, "--stdin"],
            both.as_bytes(),
        )
        .is_ok()
    {
        return Ok(true);
    }
    let fail = |source| failed("switch", path)(source);
    git.cli
        .run(
            path,
            args!["update-ref", "-m", &message, &reference, &start.to_hex()],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    git.cli
        .run(
            path,
            args!["symbolic-ref", "-m", &message, "HEAD", &reference],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(true)
}

/// Whether another worktree than the one registered at `admin` has `branch` checked out, or is
/// in the middle of a rebase (which may hold it): git's checkout refuses such a branch.
fn held_elsewhere(git: &GixGit, admin: &Path, branch: &str) -> bool {
    let common = crate::Git::common_dir(git);
    let wanted = format!("ref: refs/heads/{branch}");
    let mut others = vec![common.to_owned()];
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        others.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
    }
    let same = |dir: &Path| normalized(dir) == normalized(admin);
    others.iter().filter(|dir| !same(dir)).any(|dir| {
        let head = std::fs::read_to_string(dir.join("HEAD")).unwrap_or_default();
        head.trim_end() == wanted || REBASE_DIRS.iter().any(|name| dir.join(name).exists())
    })
}

/// The proof [`switch`] ends with: no merge, cherry-pick, revert or rebase in progress, the head
/// on `branch` at `expected`, no tracked change and no untracked file that is not ignored.
fn prove_switched(
    git: &GixGit,
    path: &Path,
    admin: &Path,
    branch: &str,
    expected: &CommitId,
) -> Result<(), WorktreeError> {
    let not_clean = |what: String| WorktreeError::NotClean {
        path: path.to_owned(),
        what,
    };
    if let Some(state) = OPERATION_HEADS
        .iter()
        .chain(REBASE_DIRS.iter())
        .find(|name| admin.join(name).exists())
    {
        return Err(not_clean(format!("`{state}` is still there")));
    }
    let on = rev::current_branch(git, path).map_err(|error| not_clean(error.to_string()))?;
    if on.as_deref() != Some(branch) {
        return Err(not_clean(format!(
            "its head is on {}, not on `{branch}`",
            on.map_or_else(|| "no branch".to_owned(), |on| format!("`{on}`"))
        )));
    }
    let head = {
        let repo = rev::open(git, path).map_err(|error| not_clean(error.to_string()))?;
        CommitId(rev::resolve(&repo, path, "HEAD").map_err(|error| not_clean(error.to_string()))?)
    };
    if head != *expected {
        return Err(not_clean(format!(
            "its head is at {head}, not at {expected}"
        )));
    }
    let status =
        crate::status::status(git, path, &[]).map_err(|error| not_clean(error.to_string()))?;
    if status.is_dirty() {
        return Err(not_clean(format!(
            "changed or untracked: {}",
            status.paths.join(", ")
        )));
    }
    Ok(())
}

/// Maps git's refusal of a branch checked out in another worktree to its typed error.
fn checked_out_as(action: &'static str, error: Cause, branch: &str, path: &Path) -> WorktreeError {
    if let Cause::Cli(cli) = &error {
        let detail = cli.detail();
        if detail.contains("already used by worktree") || detail.contains("already checked out") {
            return WorktreeError::BranchCheckedOut {
                branch: branch.to_owned(),
            };
        }
    }
    failed(action, path)(error)
}

/// [`Git::detach_worktree`](crate::Git::detach_worktree): the head of the linked worktree at
/// `path` detached at the commit it is on (`git update-ref --no-deref HEAD`), so the branch it
/// was on is free to be checked out elsewhere. Its files and index are left as they are.
pub(crate) fn detach(git: &GixGit, path: &Path) -> Result<(), WorktreeError> {
    let fail = |source| failed("detach", path)(source);
    let head = {
        let repo = rev::open(git, path).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
        CommitId(
            rev::resolve(&repo, path, "HEAD").map_err(|error| fail(Cause::Rev(Box::new(error))))?,
        )
    };
    let head = head.to_hex();
    git.cli
        .run(
            path,
            args![
                "update-ref",
                "--no-deref",
                "-m",
                "epic: detach",
                "HEAD",
                &head
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_porcelain_list() {
        let out = b"worktree /r\0HEAD 1111111111111111111111111111111111111111\0branch refs/heads/main\0\0\
worktree /r.wt/a b\0HEAD 2222222222222222222222222222222222222222\0detached\0locked\0\0\
worktree /gone\0HEAD 3333333333333333333333333333333333333333\0branch refs/heads/story/e/x\0prunable gitdir file points to non-existent location\0\0";
        let list = parse_list(out);
        assert_eq!(list.len(), 3);
        assert!(list[0].is_main);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!(list[1].path, PathBuf::from("/r.wt/a b"));
        assert_eq!(list[1].branch, None);
        assert!(list[1].locked && !list[1].is_main);
        assert!(list[2].prunable);
        assert_eq!(list[2].branch.as_deref(), Some("story/e/x"));
    }

    #[test]
    fn normalizes_missing_paths() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        let missing = normalized(Path::new("/definitely/not/here/x"));
        assert!(missing.ends_with("here/x"));
    }
}
