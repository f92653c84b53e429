//! What a sandbox around one worktree needs from the repository's administrative files: the
//! administrative directory git registered for the worktree ([`registered_admin_dir`]), a
//! reflog directory that exists before the git directory is made read-only
//! ([`ensure_logs_dir`]), and the directories of a group of branches that a sandbox leaves
//! writable while the rest of `refs/` is not ([`ensure_branch_dirs`]), and a story branch given
//! to one turn in directories of its own, moved on the repository by epic once the turn is over
//! ([`PrivateBranch`]).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use crate::cli::Cli;
use crate::error::GitCommandError;
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

/// Creates, where missing, the directory of the branches under `refs/heads/<group>` and of their
/// reflogs under `logs/refs/heads/<group>`, and returns both: a sandbox binds these two writable
/// (the rest of `refs/` and `logs/` read-only), so a commit on one of those branches can write
/// its loose ref and append to its reflog even after `git pack-refs` removed the directories.
///
/// `group` is a relative path of plain names (`story/checkout`); anything else (an absolute
/// path, `..`, an empty name) is refused as [`io::ErrorKind::InvalidInput`].
///
/// ```no_run
/// # use std::path::Path;
/// let [refs, logs] =
///     epic_git_ops::ensure_branch_dirs(Path::new("/src/shop/.git"), "story/checkout")?;
/// assert!(refs.ends_with("refs/heads/story/checkout"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn ensure_branch_dirs(common_dir: &Path, group: &str) -> io::Result<[PathBuf; 2]> {
    let plain = !group.is_empty()
        && group
            .split('/')
            .all(|name| !name.is_empty() && name != "." && name != "..");
    if !plain {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{group}` is not a plain branch directory"),
        ));
    }
    let refs = common_dir.join("refs/heads").join(group);
    let logs = common_dir.join("logs/refs/heads").join(group);
    std::fs::create_dir_all(&refs)?;
    std::fs::create_dir_all(&logs)?;
    Ok([refs, logs])
}

/// `path` with its symbolic links resolved as far as it exists (its longest existing ancestor
/// resolved, the rest appended), made absolute first: how a sandbox names the places it binds,
/// since bubblewrap cannot make a mount point through a link (a `HOME` that is a link to the
/// real home, a repository reached through one).
pub fn resolved_path(path: &Path) -> PathBuf {
    normalized(path)
}

/// One story branch (`refs/heads/<group>/<name>`) given to a sandboxed turn in directories of
/// its own: bound over the group's directories of refs and reflogs, they hold only that branch,
/// so the turn's commits move it there, and nothing the turn does reaches another ref (the
/// other story branches, the epic branch, the target, epic's notes: read-only, or not there).
/// Once the turn is over, [`settle`](Self::settle) moves the real branch where the turn left
/// its own, by compare-and-swap from where it started, and names whatever else the turn wrote.
///
/// Removed with its temporary directory when dropped.
#[derive(Debug)]
pub struct PrivateBranch {
    /// The full ref name.
    name: String,
    /// The branch's file name in the group's directory.
    file: String,
    /// The repository's common git directory.
    common_dir: PathBuf,
    /// The group's real directories (`refs/heads/<group>`, `logs/refs/heads/<group>`).
    real: [PathBuf; 2],
    /// `refs/` and `logs/` of the turn's own, in a temporary directory.
    dir: tempfile::TempDir,
    /// What the branch's file held as the turn started (none: the branch was packed, or absent).
    started: Option<Vec<u8>>,
    /// The commit the branch was on as the turn started, if it existed.
    at: Option<String>,
}

/// What a turn did with its [`PrivateBranch`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settled {
    /// The branch moved from the first commit to the second (`None`: it did not move).
    pub moved: Option<(Option<String>, String)>,
    /// What else the turn wrote in the branch's directories, or a move that was refused, each
    /// said in a line (another story's branch made or moved, a symbolic ref, a commit that does
    /// not exist).
    pub refused: Vec<String>,
}

/// Why a [`PrivateBranch`] could not be made or settled.
#[derive(Debug, thiserror::Error)]
pub enum PrivateBranchError {
    /// Its directories could not be made or read.
    #[error("the story branch's own directories: {0}")]
    Io(#[from] io::Error),
    /// git could not read or move the branch.
    #[error(transparent)]
    Git(#[from] GitCommandError),
}

impl PrivateBranch {
    /// The branch `refs/heads/<group>/<name>` of the repository whose common git directory is
    /// `common_dir`, given its own directories in a new directory under `within`: its file
    /// copied in where it is loose (a packed branch is read from `packed-refs`, read-only), the
    /// group's real directories made where missing (they are the mount points).
    ///
    /// `within` must be read-only to every other process the sandbox runs (a turn that could
    /// write another turn's directories there would move that turn's branch at its settling).
    pub fn new(
        common_dir: &Path,
        group: &str,
        name: &str,
        within: &Path,
    ) -> Result<Self, PrivateBranchError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{name}` is not a plain branch name"),
            )
            .into());
        }
        let real = ensure_branch_dirs(common_dir, group)?;
        std::fs::create_dir_all(within)?;
        let dir = tempfile::Builder::new()
            .prefix("branch-")
            .tempdir_in(within)?;
        std::fs::create_dir(dir.path().join("refs"))?;
        std::fs::create_dir(dir.path().join("logs"))?;
        let started = match std::fs::read(real[0].join(name)) {
            Ok(bytes) => Some(bytes),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error.into()),
        };
        if let Some(bytes) = &started {
            std::fs::write(dir.path().join("refs").join(name), bytes)?;
        }
        let full = format!("refs/heads/{group}/{name}");
        // A loose branch names its commit in its file: git is asked only for a packed one.
        let at = match started.as_deref().and_then(commit_id) {
            Some(id) => Some(id),
            None => commit_of(common_dir, &full)?,
        };
        Ok(Self {
            name: full,
            file: name.to_owned(),
            common_dir: common_dir.to_path_buf(),
            real,
            dir,
            started,
            at,
        })
    }

    /// The binds a sandbox makes: each of the turn's own directories (first) over the real
    /// one (second), refs then reflogs.
    pub fn binds(&self) -> [(PathBuf, PathBuf); 2] {
        let [refs, logs] = &self.real;
        [
            (self.dir.path().join("refs"), refs.clone()),
            (self.dir.path().join("logs"), logs.clone()),
        ]
    }

    /// Once the turn is over: moves the real branch to where the turn left its own, by
    /// compare-and-swap from the commit it started on (a branch moved meanwhile by someone else
    /// is left as it is and the move refused), and names everything else the turn wrote there.
    /// Its reflog entries are dropped: the move writes epic's own.
    pub fn settle(self) -> Result<Settled, PrivateBranchError> {
        let mut settled = Settled::default();
        let refs = self.dir.path().join("refs");
        for entry in walk(&refs)? {
            if entry != Path::new(&self.file) {
                let shown = entry.display();
                settled.refused.push(format!(
                    "`{}/{shown}` was written: a turn may move only its own story's branch",
                    self.name.rsplit_once('/').map_or("", |(group, _)| group)
                ));
            }
        }
        let now = match std::fs::read(refs.join(&self.file)) {
            Ok(bytes) => Some(bytes),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error.into()),
        };
        if now == self.started {
            return Ok(settled);
        }
        let Some(now) = now else {
            settled.refused.push(format!(
                "`{}` was deleted: a turn may not delete its story's branch",
                self.name
            ));
            return Ok(settled);
        };
        let text = String::from_utf8_lossy(&now).trim().to_owned();
        if commit_id(&now).is_none() {
            settled.refused.push(format!(
                "`{}` was made to hold `{}`, not a commit id: left where it was",
                self.name,
                text.chars().take(80).collect::<String>()
            ));
            return Ok(settled);
        }
        if self.at.as_deref() == Some(text.as_str()) {
            return Ok(settled);
        }
        let cli = Cli::for_repository(self.common_dir.clone(), self.common_dir.clone());
        // `update-ref NAME NEW OLD` refuses when the branch is no longer at OLD (the empty
        // OLD: when it did not exist), an object that is not there, and one that is not a
        // commit.
        let old = self.at.clone().unwrap_or_default();
        let args: [&OsStr; 6] = [
            OsStr::new("update-ref"),
            OsStr::new("-m"),
            OsStr::new("epic: the turn's commits"),
            OsStr::new(&self.name),
            OsStr::new(&text),
            OsStr::new(&old),
        ];
        match cli.run(&self.common_dir, &args) {
            Ok(_) => settled.moved = Some((self.at.clone(), text)),
            Err(error) => settled.refused.push(format!(
                "`{}` could not be moved to {text}: {}",
                self.name,
                error.detail().trim()
            )),
        }
        Ok(settled)
    }
}

/// The object id a loose ref's file holds (40 or 64 hexadecimal digits and a newline), or
/// `None` for anything else (a symbolic ref, junk).
fn commit_id(file: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(file).ok()?.trim();
    (matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_owned())
}

/// The commit `name` is on in the repository of `common_dir`, if it exists.
fn commit_of(common_dir: &Path, name: &str) -> Result<Option<String>, GitCommandError> {
    let cli = Cli::for_repository(common_dir.to_path_buf(), common_dir.to_path_buf());
    let args: [&OsStr; 4] = [
        OsStr::new("rev-parse"),
        OsStr::new("--verify"),
        OsStr::new("--quiet"),
        OsStr::new(name),
    ];
    let output = cli.output(common_dir, &args)?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Ok((output.status.success() && !text.is_empty()).then_some(text))
}

/// Every file under `root`, relative to it (a symbolic link is a file here).
fn walk(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(root.join(&relative))? {
            let entry = entry?;
            let path = relative.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_dirs_are_made_and_odd_groups_refused() {
        let dir = tempfile::tempdir().expect("temp");
        let [refs, logs] = ensure_branch_dirs(dir.path(), "story/shop").expect("made");
        assert!(refs.is_dir() && logs.is_dir());
        assert_eq!(refs, dir.path().join("refs/heads/story/shop"));
        assert_eq!(logs, dir.path().join("logs/refs/heads/story/shop"));
        ensure_branch_dirs(dir.path(), "story/shop").expect("made again");
        for odd in ["", "/etc", "story/../..", "story//x", "."] {
            let error = ensure_branch_dirs(dir.path(), odd).expect_err(odd);
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{odd}");
        }
    }
}
