//! The sandbox every process a story starts runs in (agent turns, gates, setup commands): a
//! bubblewrap (`bwrap`) container that sees the whole file system as the user has it (tools,
//! caches, configuration, network), except that the main checkout, the worktrees of every epic
//! (`<repo>.worktrees/`: this epic's `_epic` and other stories', another epic's), the git
//! directory and the epic's state in it are read-only. Writable again, exactly: the worktree the process works in, the
//! administrative directory git registered for it (its `HEAD`, index, reflog) and, for an agent
//! turn, what a commit writes in the git directory (`objects`, `refs`, `logs`); for `epic plan`'s
//! architect, which works in the main checkout and only reads, nothing of it. Each process
//! gets its own PID namespace: when the process the turn started ends, everything it left
//! running (a daemon that cleared its environment and left the process group included) is
//! killed by the kernel with the namespace.
//!
//! The mode ([`SandboxMode`], `--sandbox`) is resolved once per run, before anything starts
//! ([`resolve`]): `auto` probes `bwrap` and runs unsandboxed, saying so once, where it does not
//! work; `on` refuses to run without it; `off` runs unsandboxed and says that agents are not
//! contained. The board hook is the user's own command and never runs in the sandbox.
//!
//! What is not contained, sandbox or not: the network, the rest of the user's files (their home,
//! other repositories), and what a commit may write in the git directory (any object, any ref:
//! the checks before a merge hold what reaches the epic branch).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::offload;
use crate::process::{self, Ending, Limits, Spec};

/// What to install where the sandbox cannot be made, as every message about it says.
pub const INSTALL_BUBBLEWRAP: &str =
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)";

/// How long each of the probe's two processes may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether agents, gates and setup commands run in a bubblewrap sandbox (`--sandbox`,
/// `sandbox` in `epic.toml`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Sandbox")]
pub enum SandboxMode {
    /// In the sandbox where bwrap works; without it, saying so once per run
    #[default]
    Auto,
    /// In the sandbox, or the run does not start
    On,
    /// Without the sandbox: agents are not contained
    Off,
}

impl SandboxMode {
    /// The mode as `--sandbox` and `epic.toml` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// The places of one epic a sandbox keeps read-only.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The repository's main checkout (its working tree).
    pub(crate) checkout: PathBuf,
    /// The git common directory: config, hooks, `info/`, every worktree's administrative
    /// directory, and the epic's state (`epic/`).
    pub(crate) common_dir: PathBuf,
    /// `<repo-parent>/<repo-name>.worktrees`: the worktrees of every epic of the repository
    /// (this epic's `_epic` and stories', and those of an epic run beside it).
    pub(crate) worktrees: PathBuf,
}

impl Layout {
    /// The layout of a repository checked out at `checkout`, with its git common directory at
    /// `common_dir` and an epic's worktrees under `worktrees_root`
    /// (`<repo-parent>/<repo-name>.worktrees/<epic>`, whose parent holds every epic's).
    pub(crate) fn new(checkout: &Path, common_dir: &Path, worktrees_root: &Path) -> Self {
        Self {
            checkout: checkout.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            worktrees: worktrees_root
                .parent()
                .unwrap_or(worktrees_root)
                .to_path_buf(),
        }
    }
}

/// What a sandboxed process may write, besides its own worktree and that worktree's
/// administrative directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Nothing: the process's own directory stays read-only too (the architect of `epic plan`,
    /// which reads the repository and replies with a plan).
    ReadOnly,
    /// Only those: a gate, a setup command.
    Worktree,
    /// Also what a commit writes in the git directory (`objects`, `refs`, `logs`): an agent's
    /// turn, since agents commit on their own.
    Commit,
}

/// The sandbox of a run: bubblewrap with the epic's layout, or none.
///
/// [`Sandbox::off`] (the default) runs every process as it is. A library user who drives
/// [`TaskLoop`](crate::TaskLoop) or a [`Seat`](crate::Seat) alone gets no sandbox; a run
/// ([`run_epic`](crate::run_epic)) makes its own, once before it starts, from
/// [`RunConfig::sandbox`](crate::RunConfig::sandbox).
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    bwrap: Option<Arc<Bwrap>>,
    /// Without bwrap: whether this process adopts orphans ([`process::adopt_orphans`]), so
    /// [`sweep`](Self::sweep) can find the daemons that escaped their turn.
    adopts: bool,
}

/// A working bubblewrap and what it protects.
#[derive(Debug)]
struct Bwrap {
    /// The `bwrap` program, as found on `PATH` when the run started.
    program: PathBuf,
    layout: Layout,
}

impl Sandbox {
    /// No sandbox: every process runs as it is.
    pub fn off() -> Self {
        Self::default()
    }

    /// Whether processes run in a sandbox.
    pub fn is_on(&self) -> bool {
        self.bwrap.is_some()
    }

    /// This unsandboxed run's sandbox, once this process adopts orphans: its
    /// [`sweep`](Self::sweep) then kills the daemons that escaped their turn.
    #[must_use]
    pub(crate) fn adopting(mut self) -> Self {
        self.adopts = self.bwrap.is_none();
        self
    }

    /// Kills what escaped its turn without the sandbox ([`process::kill_orphans`]), each with
    /// the message that says so; nothing when the sandbox is on (a turn's PID namespace took
    /// everything with it) or orphans are not adopted.
    pub(crate) async fn sweep(&self) -> Vec<String> {
        if !self.adopts {
            return Vec::new();
        }
        offload::blocking(process::kill_orphans)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|orphan| {
                format!(
                    "a process outlived its turn: pid {}, `{}`; it left its process group and \
                     cleared its environment, and was killed. Without the sandbox agents are not \
                     contained: {INSTALL_BUBBLEWRAP}",
                    orphan.pid, orphan.command
                )
            })
            .collect()
    }

    /// `spec` as it runs in the sandbox, with `worktree` (and its registered administrative
    /// directory, and with [`Access::Commit`] the git directory's `objects`, `refs` and `logs`)
    /// writable; `spec` unchanged when the sandbox is off.
    ///
    /// The administrative directory is looked up in the repository's registrations, not in the
    /// worktree's `.git` file, which the process itself may have rewritten.
    pub(crate) async fn wrap(&self, spec: Spec, worktree: &Path, access: Access) -> Spec {
        let Some(bwrap) = &self.bwrap else {
            return spec;
        };
        let admin = {
            let (common, worktree) = (bwrap.layout.common_dir.clone(), worktree.to_path_buf());
            offload::blocking(move || epic_git_ops::registered_admin_dir(&common, &worktree))
                .await
                .ok()
                .flatten()
        };
        bwrap.wrap(spec, worktree, admin.as_deref(), access)
    }
}

impl Bwrap {
    /// The `bwrap` command line around `spec`.
    ///
    /// Binds are applied in order, and a later one wins on the paths under it: first the whole
    /// file system as it is (`--dev-bind / /`, devices included), then the protected places
    /// read-only, then the process's own places writable again. The `-try` forms skip a path
    /// that does not exist (a worktrees root not made yet, a repository without `logs`).
    ///
    /// `--die-with-parent` has the kernel kill the sandbox when `bwrap`'s parent thread dies
    /// (`PR_SET_PDEATHSIG` follows the thread that spawned it, not the process): `process::run`
    /// spawns from the thread polling it, a tokio worker (or the thread of a current-thread
    /// runtime), which lives as long as the runtime; blocking-pool threads, which end when idle,
    /// never spawn agents (the workspace has no `block_in_place`, which would turn a worker into
    /// one). So epic killed outright (`SIGKILL`) takes its sandboxes down with it, daemons
    /// included: checked by hand, the inner PID 1 dies with the outer `bwrap`.
    fn wrap(&self, spec: Spec, worktree: &Path, admin: Option<&Path>, access: Access) -> Spec {
        let layout = &self.layout;
        let mut args: Vec<OsString> = vec!["--dev-bind".into(), "/".into(), "/".into()];
        let mut bind = |flag: &str, path: &Path| {
            args.push(flag.into());
            args.push(path.into());
            args.push(path.into());
        };
        for path in [&layout.checkout, &layout.worktrees, &layout.common_dir] {
            bind("--ro-bind-try", path);
        }
        if access != Access::ReadOnly {
            bind("--bind-try", worktree);
            if let Some(admin) = admin {
                bind("--bind-try", admin);
            }
        }
        if access == Access::Commit {
            for part in ["objects", "refs", "logs"] {
                bind("--bind-try", &layout.common_dir.join(part));
            }
        }
        args.extend(
            [
                "--unshare-pid",
                "--die-with-parent",
                "--proc",
                "/proc",
                "--chdir",
            ]
            .map(OsString::from),
        );
        args.push(spec.cwd.clone().into());
        args.push("--".into());
        args.push(spec.program);
        args.extend(spec.args);
        Spec {
            program: self.program.clone().into(),
            args,
            cwd: spec.cwd,
            env: spec.env,
            stdin: spec.stdin,
        }
    }
}

/// The sandbox a run uses, and what to say about it once.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The sandbox.
    pub(crate) sandbox: Sandbox,
    /// What the run says once (an event): the sandbox is off, or could not be made.
    pub(crate) note: Option<String>,
}

/// Why the sandbox was asked for (`--sandbox on`) and cannot be made here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the sandbox is required (`--sandbox on`) but {reason}; {INSTALL_BUBBLEWRAP}, or run with \
     `--sandbox off` to run agents uncontained"
)]
pub struct SandboxUnavailable {
    /// Why: `bwrap` not found, or what it said when it failed.
    pub reason: String,
}

/// Resolves `mode` for a run on `layout`: probes `bwrap` (unless `off`) by running `true` in a
/// sandbox of the same kind the run makes.
pub(crate) async fn resolve(
    mode: SandboxMode,
    layout: Layout,
) -> Result<Resolved, SandboxUnavailable> {
    if mode == SandboxMode::Off {
        return Ok(Resolved {
            sandbox: Sandbox::off(),
            note: Some(
                "the sandbox is off (`--sandbox off`): agents, gates and setup commands are not \
                 contained; they can write to the repository, the other stories' worktrees and \
                 epic's state, and what they leave running is only found by its process group, \
                 its tag, or as an orphan epic adopts"
                    .to_owned(),
            ),
        });
    }
    match probe(&layout).await {
        Ok(program) => Ok(Resolved {
            sandbox: Sandbox {
                bwrap: Some(Arc::new(Bwrap { program, layout })),
                adopts: false,
            },
            note: None,
        }),
        Err(reason) if mode == SandboxMode::On => Err(SandboxUnavailable { reason }),
        Err(reason) => Ok(Resolved {
            sandbox: Sandbox::off(),
            note: Some(format!(
                "agents, gates and setup commands run without the sandbox: {reason}; they are \
                 not contained (they can write to the repository, the other stories' worktrees \
                 and epic's state). To contain them, {INSTALL_BUBBLEWRAP}"
            )),
        }),
    }
}

/// Finds `bwrap` on `PATH` and runs `true` in a sandbox of the kind a run makes, with the
/// layout's places read-only: the program's path, or why there is no working sandbox.
async fn probe(layout: &Layout) -> Result<PathBuf, String> {
    let dir = &layout.checkout;
    // `command -v` finds it as a spawn would, on this process's PATH; the path found is used
    // for every sandbox of the run, so an agent's own PATH does not have to hold it.
    let found = probe_run(Spec {
        program: "sh".into(),
        args: vec!["-c".into(), "command -v bwrap".into()],
        cwd: dir.clone(),
        env: Vec::new(),
        stdin: None,
    })
    .await
    .map_err(|problem| format!("`bwrap` could not be looked for ({problem})"))?;
    let program = match found {
        (true, out) if Path::new(out.trim()).is_absolute() => PathBuf::from(out.trim()),
        _ => return Err("`bwrap` is not installed (not found on PATH)".to_owned()),
    };
    let mut args: Vec<OsString> = vec!["--dev-bind".into(), "/".into(), "/".into()];
    for path in [&layout.checkout, &layout.worktrees, &layout.common_dir] {
        args.extend(["--ro-bind-try".into(), path.into(), path.into()]);
    }
    args.extend(
        [
            "--unshare-pid",
            "--die-with-parent",
            "--proc",
            "/proc",
            "--",
            "true",
        ]
        .map(OsString::from),
    );
    let tried = probe_run(Spec {
        program: program.clone().into(),
        args,
        cwd: dir.clone(),
        env: Vec::new(),
        stdin: None,
    })
    .await;
    match tried {
        Ok((true, _)) => Ok(program),
        Ok((false, out)) => Err(format!(
            "`{}` cannot make a sandbox here: {}",
            program.display(),
            out.trim()
        )),
        Err(problem) => Err(format!(
            "`{}` cannot make a sandbox here ({problem})",
            program.display()
        )),
    }
}

/// Runs one probe process: whether it exited successfully, and its output (standard output,
/// then the end of standard error).
async fn probe_run(spec: Spec) -> Result<(bool, String), String> {
    let limits = Limits {
        stdout_head: 4096,
        stdout_tail: 0,
        stderr_tail: 2048,
    };
    let mut finished = process::run(
        &spec,
        Instant::now() + PROBE_TIMEOUT,
        &CancellationToken::new(),
        limits,
        &|_: &str| {},
    )
    .await
    .map_err(|error| error.to_string())?;
    let mut out = finished.stdout.text();
    let err = finished.stderr.text();
    if !err.trim().is_empty() {
        if !out.trim().is_empty() {
            out.push('\n');
        }
        out.push_str(err.trim());
    }
    match finished.ending {
        Ending::Exited(status) => Ok((status.success(), out)),
        Ending::TimedOut => Err(format!("timed out after {}s", PROBE_TIMEOUT.as_secs())),
        Ending::Cancelled => Err("cancelled".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bwrap() -> Bwrap {
        Bwrap {
            program: "/usr/bin/bwrap".into(),
            layout: Layout {
                checkout: "/src/shop".into(),
                common_dir: "/src/shop/.git".into(),
                worktrees: "/src/shop.worktrees".into(),
            },
        }
    }

    fn spec() -> Spec {
        Spec {
            program: "sh".into(),
            args: vec!["-c".into(), "true".into()],
            cwd: "/src/shop.worktrees/e/a".into(),
            env: Vec::new(),
            stdin: None,
        }
    }

    fn words(spec: &Spec) -> Vec<String> {
        spec.args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn protected_places_first_then_the_own_ones_writable() {
        let wrapped = bwrap().wrap(
            spec(),
            Path::new("/src/shop.worktrees/e/a"),
            Some(Path::new("/src/shop/.git/worktrees/a")),
            Access::Commit,
        );
        assert_eq!(wrapped.program, "/usr/bin/bwrap");
        let words = words(&wrapped).join(" ");
        let expected = "--dev-bind / / \
             --ro-bind-try /src/shop /src/shop \
             --ro-bind-try /src/shop.worktrees /src/shop.worktrees \
             --ro-bind-try /src/shop/.git /src/shop/.git \
             --bind-try /src/shop.worktrees/e/a /src/shop.worktrees/e/a \
             --bind-try /src/shop/.git/worktrees/a /src/shop/.git/worktrees/a \
             --bind-try /src/shop/.git/objects /src/shop/.git/objects \
             --bind-try /src/shop/.git/refs /src/shop/.git/refs \
             --bind-try /src/shop/.git/logs /src/shop/.git/logs \
             --unshare-pid --die-with-parent --proc /proc \
             --chdir /src/shop.worktrees/e/a -- sh -c true";
        assert_eq!(words, expected);
    }

    #[test]
    fn a_gate_gets_no_git_directory_parts() {
        let wrapped = bwrap().wrap(
            spec(),
            Path::new("/src/shop.worktrees/e/_epic"),
            None,
            Access::Worktree,
        );
        let words = words(&wrapped).join(" ");
        assert!(words.contains("--bind-try /src/shop.worktrees/e/_epic "));
        assert!(!words.contains("objects"));
        assert!(!words.contains("refs"));
    }

    #[test]
    fn the_architect_writes_nothing_of_the_repository() {
        let mut root = spec();
        root.cwd = "/src/shop".into();
        let wrapped = bwrap().wrap(
            root,
            Path::new("/src/shop"),
            Some(Path::new("/src/shop/.git")),
            Access::ReadOnly,
        );
        let words = words(&wrapped).join(" ");
        assert!(
            words.contains("--ro-bind-try /src/shop /src/shop "),
            "{words}"
        );
        assert!(!words.contains("--bind-try"), "{words}");
        assert!(
            words.ends_with("--chdir /src/shop -- sh -c true"),
            "{words}"
        );
    }

    #[tokio::test]
    async fn off_leaves_the_spec_as_it_is() {
        let wrapped = Sandbox::off()
            .wrap(spec(), Path::new("/x"), Access::Commit)
            .await;
        assert_eq!(wrapped.program, "sh");
        assert_eq!(words(&wrapped), ["-c", "true"]);
    }
}
