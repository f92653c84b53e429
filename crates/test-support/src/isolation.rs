//! Git processes cut off from the machine they run on: an empty home of the test's own, no
//! system configuration, none of the variables through which a shell or a CI machine points git
//! at another repository, another configuration or another person.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The name of the identity [`Identity::Configured`](crate::Identity::Configured) writes into a
/// repository's configuration, and which the builder's first commit carries.
pub const NAME: &str = "Test Person";

/// The e-mail of that identity.
pub const EMAIL: &str = "test@example.com";

/// The variables through which a person names who commits or when: cleared, so that a CI
/// machine exporting one does not change what a test's commits say. git-ops has the same list
/// (`epic_git_ops::IDENTITY_VARIABLES`); its tests check that this one holds every name of it.
pub const IDENTITY_VARIABLES: [&str; 6] = [
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
];

/// Variables that would point a test's git at another repository, index or configuration;
/// cleared beside [`IDENTITY_VARIABLES`].
pub const CLEARED: [&str; 10] = [
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

/// How every git process of a test runs: `HOME` is a directory of the test's own (empty unless
/// the test writes a `.gitconfig` there), the system configuration is off, and the variables of
/// [`CLEARED`] and [`IDENTITY_VARIABLES`] are removed.
///
/// The same isolation reaches processes this crate does not start (a `GixGit` handle, an agent
/// seat) through [`variables`](Self::variables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    home: PathBuf,
}

impl Isolation {
    /// Isolation with `HOME` at `home` (which the caller creates).
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self { home: home.into() }
    }

    /// The home directory of the isolated processes.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Each variable the isolation sets (`Some`) or removes (`None`), in a fixed order: for
    /// process builders other than [`Command`], such as `GixGit::with_env` or an agent seat's
    /// `with_env`/`without_env`.
    pub fn variables(&self) -> Vec<(&'static str, Option<OsString>)> {
        let mut variables: Vec<(&'static str, Option<OsString>)> = CLEARED
            .iter()
            .chain(&IDENTITY_VARIABLES)
            .map(|key| (*key, None))
            .collect();
        variables.push(("HOME", Some(self.home.clone().into_os_string())));
        variables.push(("GIT_CONFIG_NOSYSTEM", Some(OsString::from("1"))));
        variables
    }

    /// Applies [`variables`](Self::variables) to `command`.
    pub fn apply<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        for (key, value) in self.variables() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
    }

    /// `git ARGS` in `dir`, isolated and in the C locale (git's messages untranslated), not
    /// started.
    pub fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        self.apply(&mut command);
        command.env("LC_ALL", "C").current_dir(dir).args(args);
        command
    }

    /// Runs `git ARGS` in `dir` and returns whatever happened.
    pub fn output(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir, args).output().expect("run git")
    }

    /// Runs `git ARGS` in `dir`; panics, with git's stderr, unless it succeeds. Its stdout.
    #[track_caller]
    pub fn run(&self, dir: &Path, args: &[&str]) -> String {
        succeeded(&self.output(dir, args), dir, args)
    }

    /// Runs `git ARGS` in `dir` with `input` on its standard input; panics unless it succeeds.
    /// Its stdout.
    #[track_caller]
    pub fn run_with_input(&self, dir: &Path, args: &[&str], input: &str) -> String {
        use std::io::Write as _;
        let mut child = self
            .command(dir, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let output = child.wait_with_output().expect("wait for git");
        succeeded(&output, dir, args)
    }
}

/// The stdout of a git run that must have succeeded; panics with its stderr otherwise.
#[track_caller]
pub(crate) fn succeeded(output: &Output, dir: &Path, args: &[&str]) -> String {
    assert!(
        output.status.success(),
        "git {args:?} failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
