//! A real repository in a temporary directory, built with the git command line: `git init` on
//! `main`, an identity, files, commits, branches, worktrees beside it.
//!
//! Layout of the temporary directory (its path resolved, as git reports paths):
//!
//! ```text
//! <root>/home/             HOME of every git process (Isolation)
//! <root>/<dir>/            the main worktree (`repo` unless the builder names it)
//! <root>/worktrees/<name>  where `beside(name)` puts linked worktrees
//! ```

use std::path::{Path, PathBuf};
use std::process::Output;

use tempfile::TempDir;

use crate::files::write_in;
use crate::isolation::{EMAIL, Isolation, NAME, succeeded};

/// Who the repository's commits are by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// [`NAME`] and [`EMAIL`] in the repository's configuration (`user.name`, `user.email`):
    /// every commit, the test's and the code's, has an author.
    Configured,
    /// None configured anywhere: the builder's own first commit names [`NAME`] and [`EMAIL`] on
    /// its command line, and any later commit must name one too (or the code under test falls
    /// back to its own). What a user's fresh clone on a machine without `~/.gitconfig` is.
    Unconfigured,
}

/// How a [`Repo`] is built; [`Repo::builder`] starts one with the defaults of [`Repo::new`].
#[derive(Debug, Clone)]
#[must_use]
pub struct Builder {
    prefix: String,
    within: Option<PathBuf>,
    dir: String,
    branch: String,
    identity: Identity,
    files: Vec<(String, Vec<u8>)>,
    message: Option<String>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            prefix: "epic-test-".to_owned(),
            within: None,
            dir: "repo".to_owned(),
            branch: "main".to_owned(),
            identity: Identity::Configured,
            files: vec![("README.md".to_owned(), b"hello\n".to_vec())],
            message: Some("initial".to_owned()),
        }
    }
}

impl Builder {
    /// The temporary directory's name starts with `prefix` (say which crate's test left it).
    pub fn prefix(mut self, prefix: &str) -> Self {
        prefix.clone_into(&mut self.prefix);
        self
    }

    /// The temporary directory is made in `base` rather than the system's (a benchmark's tmpfs
    /// or disk).
    pub fn within(mut self, base: &Path) -> Self {
        self.within = Some(base.to_owned());
        self
    }

    /// The repository starts on `branch` (default `main`).
    pub fn branch(mut self, branch: &str) -> Self {
        branch.clone_into(&mut self.branch);
        self
    }

    /// The main worktree is `<root>/<dir>` (its name shows in paths `epic` prints).
    pub fn dir(mut self, dir: &str) -> Self {
        dir.clone_into(&mut self.dir);
        self
    }

    /// Who commits (default: [`Identity::Configured`]).
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = identity;
        self
    }

    /// The first commit holds `files` (path, content) instead of the default `README.md`.
    pub fn files<P: AsRef<str>, C: AsRef<[u8]>>(mut self, files: &[(P, C)]) -> Self {
        self.files = files
            .iter()
            .map(|(path, content)| (path.as_ref().to_owned(), content.as_ref().to_vec()))
            .collect();
        self
    }

    /// The first commit's message (default `initial`).
    pub fn message(mut self, message: &str) -> Self {
        self.message = Some(message.to_owned());
        self
    }

    /// No commit at all: `main` is unborn.
    pub fn no_commit(mut self) -> Self {
        self.message = None;
        self
    }

    /// Creates the repository.
    pub fn build(self) -> Repo {
        let mut temp = tempfile::Builder::new();
        temp.prefix(&self.prefix);
        let temp = match &self.within {
            Some(base) => temp.tempdir_in(base),
            None => temp.tempdir(),
        }
        .expect("temp dir");
        let root = temp.path().canonicalize().expect("resolve the temp dir");
        let path = root.join(&self.dir);
        let isolation = Isolation::new(root.join("home"));
        std::fs::create_dir_all(isolation.home()).expect("home");
        std::fs::create_dir_all(&path).expect("repo dir");
        let repo = Repo {
            temp,
            root,
            path,
            isolation,
        };
        repo.git(&["init", "-q", "-b", &self.branch]);
        if self.identity == Identity::Configured {
            repo.git(&["config", "user.name", NAME]);
            repo.git(&["config", "user.email", EMAIL]);
        }
        if let Some(message) = self.message {
            for (rel, content) in &self.files {
                repo.write(rel, content);
            }
            repo.git(&["add", "-A"]);
            let name = format!("user.name={NAME}");
            let email = format!("user.email={EMAIL}");
            repo.git(&[
                "-c",
                &name,
                "-c",
                &email,
                "-c",
                "commit.gpgsign=false",
                "commit",
                "-q",
                "-m",
                &message,
            ]);
        }
        repo
    }
}

/// A repository in a temporary directory, with an isolated home beside it; both go when it is
/// dropped (see [`keep`](Self::keep)).
#[derive(Debug)]
pub struct Repo {
    temp: TempDir,
    root: PathBuf,
    path: PathBuf,
    isolation: Isolation,
}

impl Default for Repo {
    fn default() -> Self {
        Self::new()
    }
}

impl Repo {
    /// A repository on branch `main` with one commit (`README.md`, `initial`) and
    /// [`Identity::Configured`].
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A repository on `main` with [`Identity::Configured`] and no commit.
    pub fn empty() -> Self {
        Self::builder().no_commit().build()
    }

    /// A repository without commits and without any identity configured anywhere.
    pub fn without_identity() -> Self {
        Self::builder()
            .identity(Identity::Unconfigured)
            .no_commit()
            .build()
    }

    /// A builder with the defaults of [`new`](Self::new).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The temporary directory holding the repository, its home and its worktrees.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The main worktree.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The git common directory (`<path>/.git`), where epic keeps an epic's state.
    pub fn common_dir(&self) -> PathBuf {
        self.path.join(".git")
    }

    /// The home directory of this repository's git processes.
    pub fn home(&self) -> &Path {
        self.isolation.home()
    }

    /// How this repository's git processes are isolated, for processes the test starts itself.
    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    /// A path beside the repository (not inside it), for linked worktrees.
    pub fn beside(&self, name: &str) -> PathBuf {
        self.root.join("worktrees").join(name)
    }

    /// Keeps the temporary directory after the test (to look at a failure); its path.
    pub fn keep(self) -> PathBuf {
        let root = self.root.clone();
        // The directory stays; the handle that would remove it is let go.
        let _kept = self.temp.keep();
        root
    }

    /// Runs git in the main worktree; panics unless it succeeds. Its stdout.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.path, args)
    }

    /// Runs git in `dir`; panics unless it succeeds. Its stdout.
    #[track_caller]
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        self.isolation.run(dir, args)
    }

    /// Runs git in `dir` and returns whatever happened.
    pub fn try_git_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.isolation.output(dir, args)
    }

    /// Runs git in `dir` with `input` on its standard input; panics unless it succeeds. Its
    /// stdout.
    #[track_caller]
    pub fn git_in_with_input(&self, dir: &Path, args: &[&str], input: &str) -> String {
        self.isolation.run_with_input(dir, args, input)
    }

    /// Runs git in `dir` on the index file `index` rather than the worktree's own
    /// (`GIT_INDEX_FILE`); panics unless it succeeds. Its stdout.
    #[track_caller]
    pub fn git_on_index(&self, dir: &Path, index: &Path, args: &[&str]) -> String {
        let output = self
            .isolation
            .command(dir, args)
            .env("GIT_INDEX_FILE", index)
            .output()
            .expect("run git");
        succeeded(&output, dir, args)
    }

    /// `git rev-parse REV` in the main worktree, trimmed.
    #[track_caller]
    pub fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", rev]).trim().to_owned()
    }

    /// The subjects of `git log ARGS` in the main worktree (say `["--first-parent", "epic/e"]`),
    /// newest first.
    #[track_caller]
    pub fn subjects(&self, args: &[&str]) -> Vec<String> {
        let mut all = vec!["log", "--format=%s"];
        all.extend_from_slice(args);
        self.git(&all).lines().map(str::to_owned).collect()
    }

    /// Writes `contents` to `rel` under the main worktree, creating directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        write_in(&self.path, rel, contents);
    }

    /// The text of `rel` under the main worktree.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path.join(rel)).expect("read a file")
    }

    /// Writes, stages and commits one file in `dir`.
    #[track_caller]
    pub fn commit_file(&self, dir: &Path, rel: &str, contents: impl AsRef<[u8]>, message: &str) {
        write_in(dir, rel, contents);
        self.git_in(dir, &["add", "-A"]);
        self.git_in(dir, &["commit", "-q", "-m", message]);
    }

    /// Writes each of `files` (path, content) in the main worktree and commits them all.
    #[track_caller]
    pub fn commit_files(&self, files: &[(&str, &str)], message: &str) {
        for (path, contents) in files {
            self.write(path, contents);
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// A linked worktree at `path` on a new branch `branch` made at `start`.
    #[track_caller]
    pub fn worktree(&self, path: &Path, branch: &str, start: &str) {
        let path = path.display().to_string();
        self.git(&["worktree", "add", "-q", "-b", branch, &path, start]);
    }

    /// `git fsck --strict` passes.
    #[track_caller]
    pub fn fsck(&self) {
        self.git(&["fsck", "--strict", "--no-progress"]);
    }

    /// `git status --porcelain` in `dir`, untracked files one by one, as text.
    #[track_caller]
    pub fn porcelain(&self, dir: &Path) -> String {
        self.git_in(dir, &["status", "--porcelain", "--untracked-files=all"])
    }
}

#[cfg(test)]
mod tests {
    use super::{Identity, Repo};

    #[test]
    fn the_default_repository_has_main_an_identity_and_one_commit() {
        let repo = Repo::new();
        assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
        assert_eq!(repo.git(&["config", "user.name"]).trim(), "Test Person");
        assert_eq!(repo.subjects(&["main"]), ["initial"]);
        assert_eq!(repo.read("README.md"), "hello\n");
        assert_eq!(repo.path(), repo.root().join("repo"));
        assert!(repo.home().is_dir() && !repo.home().starts_with(repo.path()));
        repo.fsck();
    }

    #[test]
    fn a_built_repository_takes_its_directory_files_message_and_identity() {
        let repo = Repo::builder()
            .prefix("builder-")
            .dir("shop")
            .identity(Identity::Unconfigured)
            .files(&[("README.md", "# shop\n"), ("src/a.txt", "a\n")])
            .message("first")
            .build();
        assert!(repo.path().ends_with("shop"));
        assert!(
            !repo
                .try_git_in(repo.path(), &["config", "user.name"])
                .status
                .success()
        );
        assert_eq!(repo.subjects(&[]), ["first"]);
        assert_eq!(
            repo.git(&["log", "-1", "--format=%an <%ae>"]).trim(),
            "Test Person <test@example.com>"
        );
        assert_eq!(repo.git(&["ls-files"]), "README.md\nsrc/a.txt\n");
    }

    #[test]
    fn without_identity_nothing_is_committed_or_configured() {
        let repo = Repo::without_identity();
        assert!(
            !repo
                .try_git_in(repo.path(), &["rev-parse", "HEAD"])
                .status
                .success()
        );
        assert!(
            !repo
                .try_git_in(repo.path(), &["config", "user.email"])
                .status
                .success()
        );
        assert_eq!(
            Repo::empty().git(&["config", "user.email"]).trim(),
            "test@example.com"
        );
    }

    #[test]
    fn the_isolation_reaches_every_git_the_repository_runs() {
        let repo = Repo::new();
        // A global configuration in the isolated home is what git reads, not the machine's.
        std::fs::write(repo.home().join(".gitconfig"), "[core]\n\tabbrev = 12\n").expect("write");
        assert_eq!(repo.git(&["config", "core.abbrev"]).trim(), "12");
        assert_eq!(repo.rev("HEAD").len(), 40);
        let vars = repo.isolation().variables();
        assert!(vars.contains(&("GIT_DIR", None)));
        assert!(vars.contains(&("HOME", Some(repo.home().as_os_str().to_owned()))));
    }
}
