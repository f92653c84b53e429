//! Running the git command line with a clean, non-interactive environment.
//!
//! Every call removes the variables that would redirect git to another repository, index or
//! configuration (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_CONFIG_PARAMETERS`, …: set
//! when epic itself runs inside a git hook), and sets:
//!
//! - `GIT_TERMINAL_PROMPT=0`, `GIT_SSH_COMMAND="ssh -o BatchMode=yes"`, standard input closed:
//!   nothing ever waits for a person;
//! - `GIT_EDITOR=:`, `GIT_MERGE_AUTOEDIT=no`, `GIT_PAGER=cat`, `PAGER=cat`: no editor, no pager;
//! - `LC_ALL=C`: messages in one stable language, since some are matched (`nothing to commit`);
//! - `GIT_LITERAL_PATHSPECS=1`: a path is a path, never a glob (`*.rs`, `:(top)` stay literal);
//! - `GIT_ADVICE=0`: no hints in the details of errors;
//! - `-c core.hooksPath=/dev/null`: the repository's hooks do not run. epic's own commits,
//!   merges and resets are bookkeeping; the project's checks run as epic's gates, and a hook
//!   could prompt, hang or refuse. gix runs no hooks either, so both paths behave alike.
//! - `-c maintenance.auto=false -c gc.auto=0` ([`MAINTENANCE_OFF`]): no automatic maintenance
//!   after each of epic's commits and merges. Those run dozens of times per epic, each would
//!   consider (and sometimes start, in the background) a repack of the user's repository mid-run.
//!   The one exception is `maintain`, which runs git's check once, when the executor asks (the
//!   end of a run).
//!
//! - `GIT_NO_REPLACE_OBJECTS=1`: replace refs (`git replace`, which an agent can make) never
//!   change what epic's git reads;
//! - the configuration pinned at the start (see `pin`), through `GIT_CONFIG_COUNT` and
//!   `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, which beat every configuration file.
//!
//! The caller's identity variables (`GIT_AUTHOR_NAME`, …) and `HOME` are kept: they are how a
//! person chooses who commits.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::GitCommandError;
use crate::pin::{self, Pin};

/// Variables that would make git act on something other than the directory it runs in.
const REMOVED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_QUARANTINE_PATH",
    "GIT_REFLOG_ACTION",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_SHALLOW_FILE",
    "GIT_REPLACE_REF_BASE",
    "GIT_TRACE",
    "LANGUAGE",
];

/// Variables every call sets.
const SET: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
    ("GIT_EDITOR", ":"),
    ("GIT_MERGE_AUTOEDIT", "no"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("LC_ALL", "C"),
    ("GIT_LITERAL_PATHSPECS", "1"),
    ("GIT_ADVICE", "0"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
];

/// The settings that turn git's automatic maintenance off, which every git epic runs carries
/// (`-c` here; the executor gives them to agents, gates and setup commands through
/// `GIT_CONFIG_COUNT`): the one definition of them.
pub const MAINTENANCE_OFF: [(&str, &str); 2] = [("maintenance.auto", "false"), ("gc.auto", "0")];

/// Whether a git command may run the repository's automatic maintenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Maintenance {
    /// No: [`MAINTENANCE_OFF`] (every command but one).
    Off,
    /// As the repository configures it (`gc --auto` when epic packs, in `maintain`).
    Repository,
}

/// `git config -z --list --show-scope`: the configuration, each entry with its scope.
const LIST_CONFIG: [&str; 4] = ["config", "-z", "--list", "--show-scope"];

/// How to run git: the program, the caller's environment overrides, and, for a repository,
/// its pinned configuration.
#[derive(Debug, Clone)]
pub(crate) struct Cli {
    program: PathBuf,
    env: Vec<(OsString, Option<OsString>)>,
    /// The repository whose configuration is pinned: its common git directory and where to
    /// read the configuration. `None` (a repository being made): nothing is pinned.
    repository: Option<(PathBuf, PathBuf)>,
    /// The pin, read at the first command (see `pin`); shared by clones, renewed when the
    /// environment changes before it (a test's `HOME`).
    pin: Arc<Mutex<Option<Arc<Pin>>>>,
}

impl pin::Env for Cli {
    fn var(&self, key: &str) -> Option<OsString> {
        self.env_var(key)
    }
}

impl Cli {
    pub(crate) fn new() -> Self {
        Self {
            program: PathBuf::from("git"),
            env: Vec::new(),
            repository: None,
            pin: Arc::default(),
        }
    }

    /// A git for the repository whose common git directory is `common_dir`, reading its
    /// configuration in `anchor`: its configuration is pinned at the first command.
    pub(crate) fn for_repository(common_dir: PathBuf, anchor: PathBuf) -> Self {
        Self {
            repository: Some((common_dir, anchor)),
            ..Self::new()
        }
    }

    pub(crate) fn set_program(&mut self, program: PathBuf) {
        self.program = program;
        self.pin = Arc::default();
    }

    /// Sets (`Some`) or removes (`None`) a variable for every git this handle runs; the last
    /// call for a name wins.
    pub(crate) fn set_env(&mut self, key: OsString, value: Option<OsString>) {
        self.env.retain(|(existing, _)| *existing != key);
        self.env.push((key, value));
        // The configuration git reads may depend on it (`HOME`): pinned afresh.
        self.pin = Arc::default();
    }

    /// The pinned configuration, read now if this is the first time; `None` outside a
    /// repository.
    pub(crate) fn pin(&self) -> Result<Option<Arc<Pin>>, GitCommandError> {
        let Some((_, anchor)) = &self.repository else {
            return Ok(None);
        };
        let mut kept = self.pin.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pin) = kept.as_ref() {
            return Ok(Some(Arc::clone(pin)));
        }
        let output = self.run_unpinned(anchor, &LIST_CONFIG.map(OsStr::new))?;
        let pin = Arc::new(Pin::from_listing(&output.stdout, self));
        *kept = Some(Arc::clone(&pin));
        Ok(Some(pin))
    }

    /// `git config -z --list --show-scope` now, without the pin: to compare with it.
    pub(crate) fn config_listing(&self) -> Result<Option<Vec<u8>>, GitCommandError> {
        let Some((_, anchor)) = &self.repository else {
            return Ok(None);
        };
        let output = self.run_unpinned(anchor, &LIST_CONFIG.map(OsStr::new))?;
        Ok(Some(output.stdout))
    }

    fn run_unpinned(&self, dir: &Path, args: &[&OsStr]) -> Result<Output, GitCommandError> {
        succeeded(
            args,
            spawned(
                args,
                self.base_command(dir, args, Maintenance::Off).output(),
            )?,
        )
    }

    /// The value a variable has for the git this handle runs.
    pub(crate) fn env_var(&self, key: &str) -> Option<OsString> {
        match self.env.iter().find(|(name, _)| name == key) {
            Some((_, value)) => value.clone(),
            None => std::env::var_os(key),
        }
    }

    /// The command for `args` in `dir`, with the pinned configuration.
    fn command(&self, dir: &Path, args: &[&OsStr]) -> Result<Command, GitCommandError> {
        self.command_with(dir, args, Maintenance::Off)
    }

    /// [`command`](Self::command), its automatic maintenance as `maintenance` says.
    fn command_with(
        &self,
        dir: &Path,
        args: &[&OsStr],
        maintenance: Maintenance,
    ) -> Result<Command, GitCommandError> {
        let mut command = self.base_command(dir, args, maintenance);
        if let (Some(pin), Some((common_dir, _))) = (self.pin()?, &self.repository) {
            let fresh = pin::fresh_driver_names(common_dir, self);
            let settings = pin.settings(&fresh);
            command.env("GIT_CONFIG_COUNT", settings.len().to_string());
            for (at, (key, value)) in settings.iter().enumerate() {
                command.env(format!("GIT_CONFIG_KEY_{at}"), key);
                command.env(format!("GIT_CONFIG_VALUE_{at}"), value);
            }
        }
        Ok(command)
    }

    /// The command for `args` in `dir` in the clean environment of the module docs; with
    /// `Maintenance::Repository`, git's automatic maintenance as the repository configures it.
    fn base_command(&self, dir: &Path, args: &[&OsStr], maintenance: Maintenance) -> Command {
        let mut command = Command::new(&self.program);
        command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for key in REMOVED {
            command.env_remove(key);
        }
        command.envs(SET.iter().copied());
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command.args(["-c", "core.hooksPath=/dev/null"]);
        if maintenance == Maintenance::Off {
            for (key, value) in MAINTENANCE_OFF {
                command.arg("-c").arg(format!("{key}={value}"));
            }
        }
        if dir.join(".git").is_file() {
            // A linked worktree (epic's: a story's, a slot, the epic's own): its index is written
            // without the trailing checksum, which git (and gix) then skip on every read. On a
            // tree of 10,000 files that is about a third of each index-rewriting command's time
            // (`checkout`, `read-tree`, `update-index`, `write-tree`: several a story). Git reads
            // such an index since 2.13. The main checkout's index is left as the user has it.
            command.args(["-c", "index.skipHash=true"]);
        }
        command.args(args);
        command
    }

    /// Runs git in `dir` and returns its output whatever its exit code; fails only if git could
    /// not be started.
    pub(crate) fn output(&self, dir: &Path, args: &[&OsStr]) -> Result<Output, GitCommandError> {
        spawned(args, self.command(dir, args)?.output())
    }

    /// Runs git in `dir` with `input` on its standard input; a non-zero exit is an error
    /// carrying git's words.
    pub(crate) fn run_with_input(
        &self,
        dir: &Path,
        args: &[&OsStr],
        input: &[u8],
    ) -> Result<Output, GitCommandError> {
        let mut child = spawned(args, self.command(dir, args)?.stdin(Stdio::piped()).spawn())?;
        let mut stdin = child.stdin.take();
        // Written from a thread while git's output is read: neither side can fill a pipe and
        // wait for the other.
        let output = std::thread::scope(|scope| {
            scope.spawn(move || {
                if let Some(stdin) = stdin.as_mut() {
                    // A git that stopped reading has failed; its exit status tells.
                    std::io::Write::write_all(stdin, input).ok();
                }
            });
            child.wait_with_output()
        });
        succeeded(args, spawned(args, output)?)
    }

    /// Runs git in `dir` on the index file `index` instead of the worktree's own
    /// (`GIT_INDEX_FILE`); a non-zero exit is an error carrying git's words.
    pub(crate) fn run_on_index(
        &self,
        dir: &Path,
        index: &Path,
        args: &[&OsStr],
    ) -> Result<Output, GitCommandError> {
        let output = self
            .command(dir, args)?
            .env("GIT_INDEX_FILE", index)
            .output();
        succeeded(args, spawned(args, output)?)
    }

    /// Runs git in `dir`; a non-zero exit is an error carrying git's words.
    pub(crate) fn run(&self, dir: &Path, args: &[&OsStr]) -> Result<Output, GitCommandError> {
        succeeded(args, self.output(dir, args)?)
    }

    /// Runs git in `dir` with the repository's own automatic maintenance settings (the only
    /// command that does: `gc --auto`, see `maintain`); a non-zero exit is an error carrying
    /// git's words.
    pub(crate) fn run_maintenance(
        &self,
        dir: &Path,
        args: &[&OsStr],
    ) -> Result<Output, GitCommandError> {
        let command = self.command_with(dir, args, Maintenance::Repository);
        succeeded(args, spawned(args, command?.output())?)
    }
}

/// `result` of starting (or waiting for) git, its I/O error as the error of a git that could not
/// run.
fn spawned<T>(args: &[&OsStr], result: std::io::Result<T>) -> Result<T, GitCommandError> {
    result.map_err(|error| GitCommandError {
        command: describe(args),
        code: None,
        detail: String::new(),
        spawn: Some(error),
    })
}

/// `output` if git exited 0, else the error carrying git's words.
fn succeeded(args: &[&OsStr], output: Output) -> Result<Output, GitCommandError> {
    if output.status.success() {
        Ok(output)
    } else {
        Err(failure(args, &output))
    }
}

/// The error for a git that ran and failed.
pub(crate) fn failure(args: &[&OsStr], output: &Output) -> GitCommandError {
    GitCommandError {
        command: describe(args),
        code: output.status.code(),
        detail: words(output),
        spawn: None,
    }
}

/// stderr then stdout, trimmed: what git said.
pub(crate) fn words(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let both = format!("{}\n{}", stderr.trim(), stdout.trim());
    both.trim().to_owned()
}

fn describe(args: &[&OsStr]) -> String {
    let mut text = String::from("git");
    for arg in args {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// Shorthand for building argument lists of mixed `&str`, `&Path` and `&OsStr`.
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        &[$(::std::convert::AsRef::<::std::ffi::OsStr>::as_ref($arg)),*]
    };
}
pub(crate) use args;
