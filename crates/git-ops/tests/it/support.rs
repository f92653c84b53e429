//! Real repositories in temporary directories, and the git command line to build and check them.
//!
//! Every git run here and every [`GixGit`] made here is isolated from the machine: `HOME` is an
//! empty directory of the test's own, the system configuration is off, and identity variables a
//! CI machine may export are removed, so no test depends on `~/.gitconfig`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use epic_git_ops::{GixGit, IDENTITY_VARIABLES};
use tempfile::TempDir;

/// Variables that would change what the git processes of a test do (and the identity ones).
const CLEARED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_GLOBAL",
    "EMAIL",
    "XDG_CONFIG_HOME",
];

/// A repository in a temporary directory, with an isolated home beside it.
pub(crate) struct Repo {
    root: TempDir,
    /// The main worktree.
    pub(crate) path: PathBuf,
    home: PathBuf,
}

impl Repo {
    /// A repository on branch `main` with one commit (`README.md`) and a local identity.
    pub(crate) fn new() -> Self {
        let repo = Self::empty();
        repo.write("README.md", "hello\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    /// A repository on branch `main` with a local identity and no commits.
    pub(crate) fn empty() -> Self {
        let repo = Self::bare_identity();
        repo.git(&["config", "user.name", "Test Person"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo
    }

    /// A repository without commits and without any identity configured anywhere.
    pub(crate) fn bare_identity() -> Self {
        let root = tempfile::Builder::new()
            .prefix("git-ops-")
            .tempdir()
            .expect("temp dir");
        let home = root.path().join("home");
        let path = root.path().join("repo");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&path).expect("repo dir");
        let repo = Self { root, path, home };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A directory beside the repository (not inside it), for worktrees.
    pub(crate) fn beside(&self, name: &str) -> PathBuf {
        self.root.path().join("worktrees").join(name)
    }

    /// A [`GixGit`] on this repository, isolated like the test's own git.
    pub(crate) fn handle(&self) -> GixGit {
        isolate_handle(GixGit::discover(&self.path).expect("discover"), &self.home)
    }

    /// Runs git in the main worktree; panics unless it succeeds. Returns stdout.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.path, args)
    }

    /// Runs git in `dir`; panics unless it succeeds. Returns stdout.
    pub(crate) fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.try_git_in(dir, args);
        assert!(
            output.status.success(),
            "git {args:?} failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs git in `dir` and returns whatever happened.
    pub(crate) fn try_git_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.git_command(dir, args).output().expect("run git")
    }

    /// git in `dir` with `args`, isolated, not started.
    fn git_command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        isolate(&mut command, &self.home);
        command.current_dir(dir).args(args);
        command
    }

    /// Runs git in `dir` with `input` on its standard input; panics unless it succeeds.
    /// Returns stdout.
    pub(crate) fn git_in_with_input(&self, dir: &Path, args: &[&str], input: &str) -> String {
        use std::io::Write as _;
        let mut child = self
            .git_command(dir, args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let output = child.wait_with_output().expect("wait for git");
        assert!(
            output.status.success(),
            "git {args:?} failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Writes `content` to `rel` under the main worktree, creating directories.
    pub(crate) fn write(&self, rel: &str, content: &str) {
        write_in(&self.path, rel, content);
    }

    /// Writes, stages and commits one file in `dir` with the CLI.
    pub(crate) fn commit_file(&self, dir: &Path, rel: &str, content: &str, message: &str) {
        write_in(dir, rel, content);
        self.git_in(dir, &["add", "-A"]);
        self.git_in(dir, &["commit", "-q", "-m", message]);
    }

    /// Writes each of `files` (path, content) in the main worktree and commits them all.
    pub(crate) fn commit_files(&self, files: &[(&str, &str)], message: &str) {
        for (path, content) in files {
            self.write(path, content);
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// Runs git in `dir` on the index file `index` rather than the worktree's own
    /// (`GIT_INDEX_FILE`); panics unless it succeeds. Returns stdout.
    pub(crate) fn git_on_index(&self, dir: &Path, index: &Path, args: &[&str]) -> String {
        let mut command = Command::new("git");
        isolate(&mut command, &self.home);
        let output = command
            .current_dir(dir)
            .env("GIT_INDEX_FILE", index)
            .args(args)
            .output()
            .expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} on {} failed in {}: {}",
            index.display(),
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `git fsck --strict` passes.
    pub(crate) fn fsck(&self) {
        self.git(&["fsck", "--strict", "--no-progress"]);
    }

    /// `git status --porcelain` in `dir`, as text.
    pub(crate) fn porcelain(&self, dir: &Path) -> String {
        self.git_in(dir, &["status", "--porcelain", "--untracked-files=all"])
    }

    /// The home directory of this repository's git processes.
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }
}

/// Points `command` at `home` and away from the machine's configuration.
pub(crate) fn isolate(command: &mut Command, home: &Path) {
    for key in CLEARED.iter().chain(&IDENTITY_VARIABLES) {
        command.env_remove(key);
    }
    command
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C");
}

/// The same isolation for the git processes of a [`GixGit`].
pub(crate) fn isolate_handle(mut git: GixGit, home: &Path) -> GixGit {
    for key in CLEARED.iter().chain(&IDENTITY_VARIABLES) {
        git = git.with_env(*key, None::<&str>);
    }
    git.with_env("HOME", Some(home))
        .with_env("GIT_CONFIG_NOSYSTEM", Some("1"))
}

/// The git commands a `GIT_TRACE` file recorded (`git update-ref …`), but the configuration
/// read a handle makes at its first command.
pub(crate) fn traced_commands(trace: &Path) -> Vec<String> {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            line.split_once("trace: built-in: ")
                .map(|(_, command)| command)
        })
        .filter(|command| !command.starts_with("git config"))
        .map(str::to_owned)
        .collect()
}

/// Writes `content` to `rel` under `dir`, creating directories.
pub(crate) fn write_in(dir: &Path, rel: &str, content: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    std::fs::write(path, content).expect("write file");
}

/// The lines of `text`, sorted, without empty ones.
pub(crate) fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}
