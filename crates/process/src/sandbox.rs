//! The sandbox every process a story starts runs in (agent turns, gates, setup commands): a
//! bubblewrap (`bwrap`) container that sees the whole file system as the user has it (tools,
//! caches, configuration, network), except that the main checkout, the worktrees of every epic
//! (`<repo>.worktrees/`: this epic's `_epic` and other stories', another epic's), the git
//! directory and the epic's state in it are read-only. Writable again, exactly: the worktree the process works in, the
//! administrative directory git registered for it (its `HEAD`, index, reflog) and, for an agent
//! turn, the objects a commit writes in the git directory (and, for a coder, its own story
//! branch in directories of the turn's own); for `epic plan`'s
//! architect, which works in the main checkout and only reads, nothing of it. Each process
//! gets its own PID namespace: when the process the turn started ends, everything it left
//! running (a daemon that cleared its environment and left the process group included) is
//! killed by the kernel with the namespace.
//!
//! The mode ([`SandboxMode`], `--sandbox`) is resolved once per run, before anything starts
//! ([`resolve`]): `auto` probes `bwrap` and runs unsandboxed, saying so once, where it is not
//! installed; `on` refuses to run without it; both refuse to run where it is installed and fails
//! ([`SandboxUnavailable::Broken`], with its words); `off` runs unsandboxed and says that agents
//! are not contained. The board hook is the user's own command and never runs in the sandbox.
//!
//! Every process holds no capability and has a session of its own, whatever user epic runs as;
//! no process moves a ref ([`Access`], [`Sandbox::wrap_commit`]); every place is bound by its
//! real path; epic's own `epic.toml` in the main checkout is hidden like a credential store.
//!
//! The user's credential stores ([`CREDENTIAL_STORES`] under their home, [`CONFIG_STORES`] under
//! their config home: `~/.ssh`, `~/.aws`, `~/.config/gh`, `~/.netrc`, …) are hidden: each one
//! that exists when a process starts reads as an empty, read-only directory or file (a stand-in
//! epic made, bound over it), so a turn cannot copy a key into its story, and a gate cannot
//! read one. Hidden are only the stores that exist: bubblewrap would otherwise make a mount point
//! for each on the real file system (the root is bound as it is), leaving empty directories in
//! the user's home. `--expose PATH` (`RunConfig::expose` of `epic-executor`) shows one
//! to the run's processes. The agents' own configuration (`~/.claude`, `~/.codex`, `~/.gemini`,
//! aider's, opencode's) is not a store: logins keep working.
//!
//! What is not contained, sandbox or not: the network, the environment (API keys in it
//! included), the rest of the user's files (their home but the credential stores, other
//! repositories), and the objects a commit writes in the git directory (any object: the checks
//! before a merge hold what reaches the epic branch).

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
    /// In the sandbox where bwrap is installed; without it, saying so once per run
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

/// The credential stores under the user's home that a sandbox hides, each a path relative to
/// the home: the keys and logins of ssh, GPG, the cloud CLIs (AWS, Azure), Kubernetes, Docker's
/// registry logins, `.netrc` (curl, git over HTTP, pip), git's credential store, and the tokens
/// that publish packages (cargo, `PyPI`, `RubyGems`, Terraform's registry). Not among them, as
/// docs/sandbox.md says why: the agents' own configuration, gcloud's (Vertex logins read it),
/// and the files that configure builds as well as holding tokens (`~/.npmrc`, Maven's and
/// Gradle's).
pub const CREDENTIAL_STORES: [&str; 13] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".pypirc",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
];

/// The credential stores under the user's configuration home (`$XDG_CONFIG_HOME`, and
/// `~/.config` where that is elsewhere or unset) that a sandbox hides: GitHub CLI's logins and
/// git's credential store.
pub const CONFIG_STORES: [&str; 2] = ["gh", "git/credentials"];

/// Where the user's credential stores are: their home and configuration home, as the
/// environment named them when the run started (the CLI reads them; the executor reads no
/// environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserHome {
    /// The home directory (`HOME`).
    pub home: PathBuf,
    /// The configuration home (`XDG_CONFIG_HOME`), where it is set; `~/.config` either way.
    pub config_home: Option<PathBuf>,
}

impl UserHome {
    /// The credential stores a sandbox hides, as absolute paths: [`CREDENTIAL_STORES`] under
    /// the home, [`CONFIG_STORES`] under `~/.config` and under the configuration home, each once.
    pub fn credential_stores(&self) -> Vec<PathBuf> {
        let mut config_homes = vec![self.home.join(".config")];
        if let Some(config_home) = &self.config_home
            && config_home.is_absolute()
            && !config_homes.contains(config_home)
        {
            config_homes.push(config_home.clone());
        }
        let mut stores: Vec<PathBuf> = CREDENTIAL_STORES
            .iter()
            .map(|store| self.home.join(store))
            .collect();
        for config_home in &config_homes {
            stores.extend(CONFIG_STORES.iter().map(|store| config_home.join(store)));
        }
        stores
    }
}

/// The credential stores a run's sandbox hides: the user's but those the run exposes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The stores hidden, absolute, none inside another.
    stores: Vec<PathBuf>,
}

impl Credentials {
    /// The stores of `home` but `expose` (none without a home: nothing is known to hide).
    pub fn new(home: Option<&UserHome>, expose: &[PathBuf]) -> Self {
        let all = home.map(UserHome::credential_stores).unwrap_or_default();
        let shown: Vec<&PathBuf> = all
            .iter()
            .filter(|store| expose.iter().any(|path| path == *store))
            .collect();
        let mut stores: Vec<PathBuf> = all
            .iter()
            .filter(|store| !shown.contains(store))
            .cloned()
            .collect();
        // A store inside another hidden one is hidden with it (and a mount inside a read-only
        // stand-in could not be made).
        let within: Vec<PathBuf> = stores
            .iter()
            .filter(|store| {
                stores
                    .iter()
                    .any(|other| other != *store && store.starts_with(other))
            })
            .cloned()
            .collect();
        stores.retain(|store| !within.contains(store));
        Self { stores }
    }

    /// The hidden stores that exist now, each with whether it is a directory, but one that holds
    /// a place of `layout` (the repository under `~/.ssh` stays the agents' to work in).
    #[expect(
        clippy::disallowed_methods,
        reason = "looks at the user's credential stores, outside the repository and the state \
                  directory, to hide the ones that exist"
    )]
    ///
    /// Each is named by its real path (every link along it followed: a `HOME` that is a link,
    /// a store that is one), which is where bubblewrap can bind its stand-in and what every way
    /// to it leads to; `layout`'s places are resolved too.
    fn present(&self, layout: &Layout) -> Vec<Mask> {
        let mut masks: Vec<Mask> = Vec::new();
        for store in &self.stores {
            // A dangling link leads to nothing to read.
            let Ok(real) = std::fs::canonicalize(store) else {
                continue;
            };
            let holds_a_place = [&layout.checkout, &layout.worktrees, &layout.common_dir]
                .iter()
                .any(|place| place.starts_with(&real));
            let Ok(metadata) = std::fs::metadata(&real) else {
                continue;
            };
            if !holds_a_place && !masks.iter().any(|mask| mask.path == real) {
                masks.push(Mask {
                    path: real,
                    dir: metadata.is_dir(),
                });
            }
        }
        masks
    }
}

/// One credential store hidden from a process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mask {
    /// The store.
    path: PathBuf,
    /// Whether it is a directory (an empty directory stands in) or a file (an empty file).
    dir: bool,
}

/// The empty directory and file epic binds over the credential stores it hides, in a temporary
/// directory of the run's own.
#[derive(Debug)]
struct StandIns {
    /// The directory holding both, kept read-only inside every sandbox.
    root: PathBuf,
    /// Removes the directory when the run's sandbox goes (none in unit tests).
    _keep: Option<tempfile::TempDir>,
}

impl StandIns {
    /// The empty directory.
    fn dir(&self) -> PathBuf {
        self.root.join("empty-dir")
    }

    /// The empty file.
    fn file(&self) -> PathBuf {
        self.root.join("empty-file")
    }

    /// Makes the stand-ins in a new temporary directory.
    fn make() -> std::io::Result<Self> {
        let keep = tempfile::Builder::new()
            .prefix("epic-stand-ins-")
            .tempdir()?;
        let stand_ins = Self {
            root: keep.path().to_path_buf(),
            _keep: Some(keep),
        };
        stand_ins.ensure()?;
        Ok(stand_ins)
    }

    /// Makes sure both are there and empty, made again if something outside the sandboxes (a
    /// cleaner of temporary files) removed or filled them: inside, they are read-only.
    #[expect(
        clippy::disallowed_methods,
        reason = "the stand-ins are the sandbox's own temporary files, outside the repository \
                  and the state directory"
    )]
    fn ensure(&self) -> std::io::Result<()> {
        let dir = self.dir();
        if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        let file = self.file();
        if !std::fs::metadata(&file).is_ok_and(|meta| meta.is_file() && meta.len() == 0) {
            std::fs::write(&file, b"")?;
        }
        Ok(())
    }
}

/// The places of one epic a sandbox keeps read-only.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The repository's main checkout (its working tree).
    pub checkout: PathBuf,
    /// The git common directory: config, hooks, `info/`, `refs/`, every worktree's
    /// administrative directory, and the epic's state (`epic/`).
    pub common_dir: PathBuf,
    /// `<repo-parent>/<repo-name>.worktrees`: the worktrees of every epic of the repository
    /// (this epic's `_epic` and stories', and those of an epic run beside it).
    pub worktrees: PathBuf,
    /// The directory of the epic's story branches under `refs/heads/` (`story/<epic>`), over
    /// which a coder's turn sees its own branch alone ([`Sandbox::wrap_commit`]). `None` for
    /// `epic plan`, whose architect commits nothing.
    pub story_branches: Option<String>,
}

impl Layout {
    /// The layout of a repository checked out at `checkout`, with its git common directory at
    /// `common_dir` and an epic's worktrees under `worktrees_root`
    /// (`<repo-parent>/<repo-name>.worktrees/<epic>`, whose parent holds every epic's, and
    /// whose name is the epic's: its story branches are `story/<epic>/…`).
    pub fn new(checkout: &Path, common_dir: &Path, worktrees_root: &Path) -> Self {
        Self {
            checkout: checkout.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            worktrees: worktrees_root
                .parent()
                .unwrap_or(worktrees_root)
                .to_path_buf(),
            story_branches: worktrees_root
                .file_name()
                .and_then(|epic| epic.to_str())
                .map(|epic| format!("story/{epic}")),
        }
    }

    /// The layout with every place's symbolic links resolved
    /// ([`epic_git_ops::resolved_path`]): bubblewrap binds a place only by its real path.
    fn resolved(&self) -> Self {
        Self {
            checkout: epic_git_ops::resolved_path(&self.checkout),
            common_dir: epic_git_ops::resolved_path(&self.common_dir),
            worktrees: epic_git_ops::resolved_path(&self.worktrees),
            story_branches: self.story_branches.clone(),
        }
    }

    /// epic's own configuration in the main checkout (`epic.toml`, which names every seat and
    /// its variables), hidden from every process like a credential store, when it is a file.
    #[expect(
        clippy::disallowed_methods,
        reason = "looks at whether the user's epic.toml exists, to hide it"
    )]
    fn config_mask(&self) -> Option<Mask> {
        let path = self.checkout.join(CONFIG_FILE);
        std::fs::symlink_metadata(&path)
            .is_ok_and(|meta| meta.is_file())
            .then_some(Mask { path, dir: false })
    }
}

/// Where, in the git common directory, coder turns get their story branch's own directories
/// ([`epic_git_ops::PrivateBranch`]): the git directory is read-only in every sandbox of every
/// epic of the repository, so no turn writes another's (a temporary directory elsewhere would be
/// writable to the turns of any other run).
const TURNS_DIR: &str = "epic-turns";

/// epic's configuration file in the main checkout, hidden from agents, gates and setup
/// commands ([`Layout::config_mask`]).
const CONFIG_FILE: &str = "epic.toml";

/// What a sandboxed process may write, besides its own worktree and that worktree's
/// administrative directory. No process moves a ref: `refs/`, `logs/` and `packed-refs` are
/// read-only to all (the target, the epic branch, the story branches, epic's notes); a coder's
/// commits move its story's branch in directories of the turn's own, and epic moves the real
/// one after the turn ([`Sandbox::wrap_commit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Nothing: the process's own directory stays read-only too (the architect of `epic plan`,
    /// which reads the repository and replies with a plan).
    ReadOnly,
    /// Only those: a gate, a setup command.
    Worktree,
    /// Also the objects `git add` and `git commit` write (`objects`): an agent's turn. Its
    /// commits move no ref ([`Sandbox::wrap_commit`] gives a coder its story's branch).
    Stage,
}

/// The sandbox of a run: bubblewrap with the epic's layout, or none.
///
/// [`Sandbox::off`] (the default) runs every process as it is. A library user who drives
/// `TaskLoop` or a `Seat` (`epic-executor`) alone gets no sandbox; a run (`run_epic`) makes its
/// own, once before it starts, from `RunConfig::sandbox`.
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
    /// The credential stores hidden.
    credentials: Credentials,
    /// What stands in for them and for epic's configuration.
    stand_ins: StandIns,
    /// Whether epic runs as root: its processes then run as [`ROOT_AS`] in a user namespace of
    /// their own.
    as_root: bool,
}

/// The user and group id root's processes run as in the sandbox, in a user namespace that maps
/// it to root outside: files root owns are theirs to read and write as before, but they hold
/// no capability (`--cap-drop ALL`), and, not being root inside, they can make user namespaces
/// of their own (the sandboxes of Codex, of a browser a test starts), which a root without
/// capabilities cannot (mapping root needs `CAP_SETFCAP`). 1000 is the first ordinary user's id
/// on most systems: tools that treat root specially (npm, pip) see an ordinary user.
pub const ROOT_AS: u32 = 1000;

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
    pub fn adopting(mut self) -> Self {
        self.adopts = self.bwrap.is_none();
        self
    }

    /// Kills what escaped its turn without the sandbox ([`process::kill_orphans`]), each with
    /// the message that says so; nothing when the sandbox is on (a turn's PID namespace took
    /// everything with it) or orphans are not adopted.
    pub async fn sweep(&self) -> Vec<String> {
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
    /// directory, and with [`Access::Stage`] the git directory's `objects`) writable, and no ref;
    /// `spec` unchanged when the sandbox is off.
    ///
    /// The administrative directory is looked up in the repository's registrations, not in the
    /// worktree's `.git` file, which the process itself may have rewritten.
    pub async fn wrap(&self, spec: Spec, worktree: &Path, access: Access) -> Spec {
        let Some(bwrap) = &self.bwrap else {
            return spec;
        };
        let (looked, given) = (Arc::clone(bwrap), worktree.to_path_buf());
        let places = offload::blocking(move || looked.places(&given))
            .await
            // Never fewer stores hidden: where the blocking pool cannot take the look (the
            // runtime shutting down), it is taken here.
            .unwrap_or_else(|_| bwrap.places(worktree));
        bwrap.wrap(spec, &places, access)
    }

    /// `spec` as a coder's turn on story `story` runs in the sandbox: [`Access::Stage`], and
    /// the story's branch (`refs/heads/story/<epic>/<story>`) in directories of the turn's own
    /// bound over the story branches' ([`epic_git_ops::PrivateBranch`]), so its commits move
    /// that branch and no other ref. Once the turn is over,
    /// [`PrivateBranch::settle`](epic_git_ops::PrivateBranch::settle) moves the real branch and
    /// names what else the turn wrote. `spec` unchanged and no branch when the sandbox is off (or the layout has no
    /// story branches: `epic plan`).
    ///
    /// # Errors
    ///
    /// The branch's own directories could not be made, or git could not read the branch.
    pub async fn wrap_commit(
        &self,
        spec: Spec,
        worktree: &Path,
        story: &str,
    ) -> Result<(Spec, Option<epic_git_ops::PrivateBranch>), epic_git_ops::PrivateBranchError> {
        let Some(bwrap) = &self.bwrap else {
            return Ok((spec, None));
        };
        let Some(group) = bwrap.layout.story_branches.clone() else {
            return Ok((self.wrap(spec, worktree, Access::Stage).await, None));
        };
        let (looked, given, story) = (Arc::clone(bwrap), worktree.to_path_buf(), story.to_owned());
        let made = offload::blocking(move || {
            let branch = epic_git_ops::PrivateBranch::new(
                &looked.layout.common_dir,
                &group,
                &story,
                &looked.layout.common_dir.join(TURNS_DIR),
            )?;
            let mut places = looked.places(&given);
            places.branches = branch.binds().to_vec();
            Ok::<_, epic_git_ops::PrivateBranchError>((places, branch))
        })
        .await
        .map_err(|error| {
            epic_git_ops::PrivateBranchError::Io(std::io::Error::other(error.to_string()))
        })?;
        let (places, branch) = made?;
        Ok((bwrap.wrap(spec, &places, Access::Stage), Some(branch)))
    }
}

/// What one process's sandbox binds, looked up as it starts: its own places (resolved) and what
/// it hides.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Places {
    /// The worktree the process works in.
    worktree: PathBuf,
    /// The administrative directory git registered for it, if any.
    admin: Option<PathBuf>,
    /// The story branch's own directories of refs and reflogs, each bound over the real one
    /// ([`Sandbox::wrap_commit`] only).
    branches: Vec<(PathBuf, PathBuf)>,
    /// The credential stores to hide.
    masks: Vec<Mask>,
    /// epic's configuration to hide, bound after the protected places it lies in.
    config: Option<Mask>,
}

impl Bwrap {
    /// The places of a process starting now in `worktree`: the worktree and its registered
    /// administrative directory resolved, and what to hide.
    fn places(&self, worktree: &Path) -> Places {
        let worktree = epic_git_ops::resolved_path(worktree);
        let admin = epic_git_ops::registered_admin_dir(&self.layout.common_dir, &worktree)
            .map(|admin| epic_git_ops::resolved_path(&admin));
        Places {
            worktree,
            admin,
            branches: Vec::new(),
            masks: self.masks(),
            config: self.layout.config_mask(),
        }
    }

    /// The credential stores to hide from a process starting now: those that exist, with the
    /// stand-ins made sure of (where they cannot be, the process fails to start, its stand-in's
    /// bind without a source, rather than see a store).
    fn masks(&self) -> Vec<Mask> {
        let masks = self.credentials.present(&self.layout);
        // An error here shows when bwrap cannot bind the missing stand-in: the process fails.
        self.stand_ins.ensure().ok();
        masks
    }

    /// The `bwrap` command line around `spec`.
    ///
    /// Binds are applied in order, and a later one wins on the paths under it: first the whole
    /// file system as it is (`--dev-bind / /`, devices included), then the stand-ins read-only
    /// and bound over each credential store of the places' masks (a directory store gets the
    /// empty directory, any other the empty file), then the protected places read-only, then
    /// the process's own places writable again (a repository inside a store stays visible),
    /// and last the stand-in over epic's configuration in the main checkout. The `-try` forms
    /// skip a path that does not exist (a worktrees root not made yet, a repository without
    /// `logs`); a store's bind has no `-try`: the masks hold only stores that exist, and a store
    /// that could not be hidden fails the process instead of showing it.
    ///
    /// The process holds no capability, whatever user epic runs as (`--cap-drop ALL`; bwrap
    /// also sets `no_new_privs`, so no program it runs gains one): as root, it can neither
    /// unmount a stand-in nor remount a read-only place writable, and a user namespace it makes
    /// inside holds every mount epic made locked. `--new-session` takes it off epic's
    /// terminal, so it cannot push keystrokes into it (`TIOCSTI`).
    ///
    /// `--die-with-parent` has the kernel kill the sandbox when `bwrap`'s parent thread dies
    /// (`PR_SET_PDEATHSIG` follows the thread that spawned it, not the process): `process::run`
    /// spawns from the thread polling it, a tokio worker (or the thread of a current-thread
    /// runtime), which lives as long as the runtime; blocking-pool threads, which end when idle,
    /// never spawn agents (the workspace has no `block_in_place`, which would turn a worker into
    /// one). So epic killed outright (`SIGKILL`) takes its sandboxes down with it, daemons
    /// included: checked by hand, the inner PID 1 dies with the outer `bwrap`.
    fn wrap(&self, spec: Spec, places: &Places, access: Access) -> Spec {
        let layout = &self.layout;
        let stand_ins = &self.stand_ins;
        let mut args: Vec<OsString> = vec!["--dev-bind".into(), "/".into(), "/".into()];
        let hide = |args: &mut Vec<OsString>, mask: &Mask| {
            let stand_in = if mask.dir {
                stand_ins.dir()
            } else {
                stand_ins.file()
            };
            args.extend([
                "--ro-bind".into(),
                stand_in.into(),
                mask.path.clone().into(),
            ]);
        };
        if !places.masks.is_empty() || places.config.is_some() {
            let root = &stand_ins.root;
            args.extend(["--ro-bind".into(), root.into(), root.into()]);
        }
        for mask in &places.masks {
            hide(&mut args, mask);
        }
        let bind = |args: &mut Vec<OsString>, flag: &str, path: &Path| {
            args.push(flag.into());
            args.push(path.into());
            args.push(path.into());
        };
        for path in [&layout.checkout, &layout.worktrees, &layout.common_dir] {
            bind(&mut args, "--ro-bind-try", path);
        }
        if access != Access::ReadOnly {
            bind(&mut args, "--bind-try", &places.worktree);
            if let Some(admin) = &places.admin {
                bind(&mut args, "--bind-try", admin);
            }
        }
        if access == Access::Stage {
            bind(&mut args, "--bind-try", &layout.common_dir.join("objects"));
            for (own, real) in &places.branches {
                args.extend(["--bind".into(), own.into(), real.into()]);
            }
        }
        if let Some(config) = &places.config {
            hide(&mut args, config);
        }
        if self.as_root {
            let id = ROOT_AS.to_string();
            args.extend(
                ["--unshare-user", "--uid", id.as_str(), "--gid", id.as_str()].map(OsString::from),
            );
        }
        args.extend(
            [
                "--unshare-pid",
                "--die-with-parent",
                "--proc",
                "/proc",
                "--cap-drop",
                "ALL",
                "--new-session",
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
pub struct Resolved {
    /// The sandbox.
    pub sandbox: Sandbox,
    /// What the run says once (an event): the sandbox is off, or could not be made.
    pub note: Option<String>,
}

/// What to do where `bwrap` is installed and cannot make a sandbox, as the message about it says.
pub const REPAIR_BUBBLEWRAP: &str = "bubblewrap needs user namespaces (or root): where they are \
     off, allow them (`sysctl -w kernel.unprivileged_userns_clone=1`, or \
     `user.max_user_namespaces` above 0; Ubuntu 24.04 wants an AppArmor profile that lets bwrap \
     use them; a container must allow them too)";

/// Why the run cannot have the sandbox it needs: asked for (`--sandbox on`) where `bwrap` is
/// missing, or `bwrap` installed and failing (whatever the mode but `off`: `auto` never runs
/// uncontained where bubblewrap is installed, since a failing one is a fault to fix, not a
/// machine without it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxUnavailable {
    /// `--sandbox on` and `bwrap` is not on `PATH`.
    #[error(
        "the sandbox is required (`--sandbox on`) but {reason}; {INSTALL_BUBBLEWRAP}, or run \
         with `--sandbox off` to run agents uncontained"
    )]
    Missing {
        /// That `bwrap` was not found.
        reason: String,
    },
    /// `bwrap` is installed and could not make a sandbox here.
    #[error(
        "the sandbox cannot be made: {reason}. {REPAIR_BUBBLEWRAP}; or run with `--sandbox off` \
         to run agents uncontained"
    )]
    Broken {
        /// What failed, with bwrap's own words.
        reason: String,
    },
}

/// Why [`probe`] found no working sandbox.
#[derive(Debug)]
enum ProbeError {
    /// `bwrap` is not on `PATH`.
    Missing(String),
    /// It is, and failed (or what it needs could not be made).
    Broken(String),
}

/// Resolves `mode` for a run on `layout`: probes `bwrap` (unless `off`) by running `true` in a
/// sandbox of the same kind the run makes.
pub async fn resolve(
    mode: SandboxMode,
    layout: Layout,
    credentials: Credentials,
) -> Result<Resolved, SandboxUnavailable> {
    if mode == SandboxMode::Off {
        return Ok(Resolved {
            sandbox: Sandbox::off(),
            note: Some(
                "the sandbox is off (`--sandbox off`): agents, gates and setup commands are not \
                 contained; they can write to the repository, the other stories' worktrees and \
                 epic's state, they can read your credentials (`~/.ssh`, `~/.aws`, \
                 `~/.config/gh`, …), and what they leave running is only found by its process \
                 group, its tag, or as an orphan epic adopts"
                    .to_owned(),
            ),
        });
    }
    match probe(layout, credentials).await {
        Ok(bwrap) => Ok(Resolved {
            sandbox: Sandbox {
                bwrap: Some(Arc::new(bwrap)),
                adopts: false,
            },
            note: None,
        }),
        Err(ProbeError::Broken(reason)) => Err(SandboxUnavailable::Broken { reason }),
        Err(ProbeError::Missing(reason)) if mode == SandboxMode::On => {
            Err(SandboxUnavailable::Missing { reason })
        }
        Err(ProbeError::Missing(reason)) => Ok(Resolved {
            sandbox: Sandbox::off(),
            note: Some(format!(
                "agents, gates and setup commands run without the sandbox: {reason}; they are \
                 not contained (they can write to the repository, the other stories' worktrees \
                 and epic's state, and read your credentials: `~/.ssh`, `~/.aws`, \
                 `~/.config/gh`, …). To contain them, {INSTALL_BUBBLEWRAP}"
            )),
        }),
    }
}

/// Finds `bwrap` on `PATH`, makes the stand-ins of the credential stores, and runs `true` in a
/// sandbox as a run makes them (the layout's places, resolved, read-only, the stores hidden):
/// the working sandbox, or why there is none.
async fn probe(layout: Layout, credentials: Credentials) -> Result<Bwrap, ProbeError> {
    let layout = offload::blocking({
        let layout = layout.clone();
        move || layout.resolved()
    })
    .await
    .unwrap_or_else(|_| layout.resolved());
    let dir = layout.checkout.clone();
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
    .map_err(|problem| {
        ProbeError::Broken(format!("`bwrap` could not be looked for ({problem})"))
    })?;
    let program = match found {
        (true, out) if Path::new(out.trim()).is_absolute() => PathBuf::from(out.trim()),
        _ => {
            return Err(ProbeError::Missing(
                "`bwrap` is not installed (not found on PATH)".to_owned(),
            ));
        }
    };
    let made = offload::blocking({
        let dir = dir.clone();
        move || {
            let bwrap = Bwrap {
                program,
                layout,
                credentials,
                stand_ins: StandIns::make()?,
                as_root: rustix::process::geteuid().is_root(),
            };
            let places = bwrap.places(&dir);
            Ok::<_, std::io::Error>((bwrap, places))
        }
    })
    .await
    .map_err(|error| error.to_string())
    .and_then(|made| {
        made.map_err(|error| {
            format!("the stand-ins of the credential stores could not be made ({error})")
        })
    });
    let (bwrap, places) = made.map_err(ProbeError::Broken)?;
    let check = Spec {
        program: "true".into(),
        args: Vec::new(),
        cwd: dir.clone(),
        env: Vec::new(),
        stdin: None,
    };
    let wrapped = bwrap.wrap(check, &places, Access::ReadOnly);
    let shown = bwrap.program.display().to_string();
    match probe_run(wrapped).await {
        Ok((true, _)) => Ok(bwrap),
        Ok((false, out)) => Err(ProbeError::Broken(format!(
            "`{shown}` is installed but failed: {}",
            out.trim()
        ))),
        Err(problem) => Err(ProbeError::Broken(format!(
            "`{shown}` is installed but failed ({problem})"
        ))),
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
        // No watchdog here: a stall would read as the time-out it stands for.
        Ending::TimedOut | Ending::Stalled => {
            Err(format!("timed out after {}s", PROBE_TIMEOUT.as_secs()))
        }
        Ending::Cancelled => Err("cancelled".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            checkout: "/src/shop".into(),
            common_dir: "/src/shop/.git".into(),
            worktrees: "/src/shop.worktrees".into(),
            story_branches: Some("story/e".into()),
        }
    }

    fn bwrap() -> Bwrap {
        Bwrap {
            program: "/usr/bin/bwrap".into(),
            layout: layout(),
            credentials: Credentials::default(),
            stand_ins: StandIns {
                root: "/run/stand-ins".into(),
                _keep: None,
            },
            as_root: false,
        }
    }

    /// The places of a process in `worktree`, registered at `admin`, hiding `masks`.
    fn places(worktree: &str, admin: Option<&str>, masks: &[Mask]) -> Places {
        Places {
            worktree: worktree.into(),
            admin: admin.map(PathBuf::from),
            branches: Vec::new(),
            masks: masks.to_vec(),
            config: None,
        }
    }

    fn home() -> UserHome {
        UserHome {
            home: "/home/ann".into(),
            config_home: None,
        }
    }

    /// A bubblewrap hiding `home`'s stores but `expose`, its stand-ins in `/run/stand-ins`.
    fn hiding(expose: &[&str]) -> Bwrap {
        let expose: Vec<PathBuf> = expose.iter().map(PathBuf::from).collect();
        Bwrap {
            credentials: Credentials::new(Some(&home()), &expose),
            ..bwrap()
        }
    }

    fn mask(path: &str, dir: bool) -> Mask {
        Mask {
            path: path.into(),
            dir,
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
        let mut places = places(
            "/src/shop.worktrees/e/a",
            Some("/src/shop/.git/worktrees/a"),
            &[],
        );
        places.branches = vec![
            (
                "/tmp/own/refs".into(),
                "/src/shop/.git/refs/heads/story/e".into(),
            ),
            (
                "/tmp/own/logs".into(),
                "/src/shop/.git/logs/refs/heads/story/e".into(),
            ),
        ];
        places.config = Some(mask("/src/shop/epic.toml", false));
        let wrapped = bwrap().wrap(spec(), &places, Access::Stage);
        assert_eq!(wrapped.program, "/usr/bin/bwrap");
        let words = words(&wrapped).join(" ");
        let expected = "--dev-bind / / \
             --ro-bind /run/stand-ins /run/stand-ins \
             --ro-bind-try /src/shop /src/shop \
             --ro-bind-try /src/shop.worktrees /src/shop.worktrees \
             --ro-bind-try /src/shop/.git /src/shop/.git \
             --bind-try /src/shop.worktrees/e/a /src/shop.worktrees/e/a \
             --bind-try /src/shop/.git/worktrees/a /src/shop/.git/worktrees/a \
             --bind-try /src/shop/.git/objects /src/shop/.git/objects \
             --bind /tmp/own/refs /src/shop/.git/refs/heads/story/e \
             --bind /tmp/own/logs /src/shop/.git/logs/refs/heads/story/e \
             --ro-bind /run/stand-ins/empty-file /src/shop/epic.toml \
             --unshare-pid --die-with-parent --proc /proc --cap-drop ALL --new-session \
             --chdir /src/shop.worktrees/e/a -- sh -c true";
        assert_eq!(words, expected);
    }

    #[test]
    fn a_gate_gets_no_git_directory_parts() {
        let wrapped = bwrap().wrap(
            spec(),
            &places("/src/shop.worktrees/e/_epic", None, &[]),
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
            &places("/src/shop", Some("/src/shop/.git"), &[]),
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

    #[test]
    fn stand_ins_go_over_the_stores_before_the_protected_places() {
        let wrapped = hiding(&[]).wrap(
            spec(),
            &places(
                "/src/shop.worktrees/e/a",
                None,
                &[
                    mask("/home/ann/.ssh", true),
                    mask("/home/ann/.netrc", false),
                ],
            ),
            Access::Worktree,
        );
        let words = words(&wrapped).join(" ");
        let expected = "--dev-bind / / \
             --ro-bind /run/stand-ins /run/stand-ins \
             --ro-bind /run/stand-ins/empty-dir /home/ann/.ssh \
             --ro-bind /run/stand-ins/empty-file /home/ann/.netrc \
             --ro-bind-try /src/shop /src/shop ";
        assert!(words.starts_with(expected), "{words}");
        assert!(
            words.ends_with("--chdir /src/shop.worktrees/e/a -- sh -c true"),
            "{words}"
        );
    }

    #[test]
    fn nothing_to_hide_binds_no_stand_in() {
        let wrapped = hiding(&[]).wrap(
            spec(),
            &places("/src/shop.worktrees/e/a", None, &[]),
            Access::Worktree,
        );
        let words = words(&wrapped).join(" ");
        assert!(!words.contains("stand-ins"), "{words}");
    }

    #[test]
    fn no_process_gets_a_real_ref_to_write() {
        let staged = words(&bwrap().wrap(
            spec(),
            &places("/src/shop.worktrees/e/_epic", None, &[]),
            Access::Stage,
        ))
        .join(" ");
        assert!(
            staged.contains("--bind-try /src/shop/.git/objects "),
            "{staged}"
        );
        assert!(!staged.contains("refs"), "{staged}");
        assert!(!staged.contains("logs"), "{staged}");
        let worktree = words(&bwrap().wrap(
            spec(),
            &places("/src/shop.worktrees/e/a", None, &[]),
            Access::Worktree,
        ))
        .join(" ");
        assert!(!worktree.contains("objects"), "{worktree}");
    }

    #[test]
    fn every_process_drops_its_capabilities_and_leaves_the_terminal() {
        for access in [Access::ReadOnly, Access::Worktree, Access::Stage] {
            let words = words(&bwrap().wrap(
                spec(),
                &places("/src/shop.worktrees/e/a", None, &[]),
                access,
            ))
            .join(" ");
            assert!(
                words.contains(" --cap-drop ALL --new-session "),
                "{access:?}: {words}"
            );
        }
    }

    #[test]
    fn as_root_a_process_runs_as_an_ordinary_id_mapped_to_root() {
        let words = words(
            &Bwrap {
                as_root: true,
                ..bwrap()
            }
            .wrap(
                spec(),
                &places("/src/shop.worktrees/e/a", None, &[]),
                Access::Stage,
            ),
        )
        .join(" ");
        assert!(
            words.contains(" --unshare-user --uid 1000 --gid 1000 --unshare-pid "),
            "{words}"
        );
        let ordinary = words_of(&bwrap().wrap(
            spec(),
            &places("/src/shop.worktrees/e/a", None, &[]),
            Access::Stage,
        ));
        assert!(!ordinary.contains("--unshare-user"), "{ordinary}");
    }

    fn words_of(spec: &Spec) -> String {
        words(spec).join(" ")
    }

    #[test]
    fn an_epics_story_branches_are_named_by_its_worktrees_root() {
        let layout = Layout::new(
            Path::new("/src/shop"),
            Path::new("/src/shop/.git"),
            Path::new("/src/shop.worktrees/checkout"),
        );
        assert_eq!(layout.worktrees, Path::new("/src/shop.worktrees"));
        assert_eq!(layout.story_branches.as_deref(), Some("story/checkout"));
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plants a home reached through a link"
    )]
    fn a_home_through_a_link_hides_the_real_stores() {
        let temp = tempfile::tempdir().expect("temp");
        let real = temp.path().join("real-home");
        std::fs::create_dir_all(real.join(".ssh")).expect("ssh");
        std::fs::write(real.join(".netrc"), "machine x").expect("netrc");
        let link = temp.path().join("home");
        std::os::unix::fs::symlink(&real, &link).expect("link the home");
        let credentials = Credentials::new(
            Some(&UserHome {
                home: link,
                config_home: None,
            }),
            &[],
        );
        let real = std::fs::canonicalize(&real).expect("real home");
        assert_eq!(
            credentials.present(&layout()),
            [
                Mask {
                    path: real.join(".ssh"),
                    dir: true
                },
                Mask {
                    path: real.join(".netrc"),
                    dir: false
                },
            ]
        );
    }

    #[test]
    fn the_stores_of_a_home_and_its_config_home() {
        let stores = UserHome {
            home: "/home/ann".into(),
            config_home: Some("/xdg".into()),
        }
        .credential_stores();
        for store in [
            "/home/ann/.ssh",
            "/home/ann/.aws",
            "/home/ann/.gnupg",
            "/home/ann/.kube",
            "/home/ann/.docker/config.json",
            "/home/ann/.netrc",
            "/home/ann/.git-credentials",
            "/home/ann/.cargo/credentials.toml",
            "/home/ann/.pypirc",
            "/home/ann/.config/gh",
            "/home/ann/.config/git/credentials",
            "/xdg/gh",
            "/xdg/git/credentials",
        ] {
            assert!(
                stores.contains(&PathBuf::from(store)),
                "{store}: {stores:?}"
            );
        }
        // The agents' own configuration is no store.
        for own in [
            ".claude",
            ".claude.json",
            ".codex",
            ".gemini",
            ".config/opencode",
        ] {
            let own = Path::new("/home/ann").join(own);
            assert!(
                !stores.iter().any(|store| own.starts_with(store)),
                "{}",
                own.display()
            );
        }
        // `XDG_CONFIG_HOME` at `~/.config`, or relative (which the spec says to ignore): once.
        for config_home in ["/home/ann/.config", "xdg"] {
            let stores = UserHome {
                home: "/home/ann".into(),
                config_home: Some(config_home.into()),
            }
            .credential_stores();
            assert_eq!(
                stores,
                home().credential_stores(),
                "{config_home}: the stores of `~/.config` alone"
            );
        }
    }

    #[test]
    fn an_exposed_store_is_not_hidden_and_no_home_hides_nothing() {
        let all = home().credential_stores();
        let exposed = hiding(&["/home/ann/.ssh"]).credentials.stores;
        assert_eq!(exposed.len(), all.len() - 1);
        assert!(!exposed.contains(&PathBuf::from("/home/ann/.ssh")));
        assert!(exposed.contains(&PathBuf::from("/home/ann/.aws")));
        assert!(Credentials::new(None, &[]).stores.is_empty());
    }

    #[test]
    fn a_store_inside_another_goes_with_it() {
        let credentials = Credentials::new(
            Some(&UserHome {
                home: "/home/ann".into(),
                config_home: Some("/home/ann/.ssh/config-home".into()),
            }),
            &[],
        );
        assert!(
            !credentials
                .stores
                .iter()
                .any(|store| store.starts_with("/home/ann/.ssh/config-home")),
            "{:?}",
            credentials.stores
        );
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plants credential stores in a throwaway home"
    )]
    fn only_the_stores_that_exist_are_hidden_and_never_one_holding_the_repository() {
        let home = tempfile::tempdir().expect("home");
        let home = home.path();
        std::fs::create_dir_all(home.join(".ssh")).expect("ssh");
        std::fs::create_dir_all(home.join(".docker")).expect("docker");
        std::fs::write(home.join(".docker/config.json"), "{}").expect("docker config");
        std::fs::create_dir_all(home.join(".kube/work/shop")).expect("a repository in .kube");
        std::os::unix::fs::symlink(home.join("nowhere"), home.join(".netrc")).expect("link");
        let credentials = Credentials::new(
            Some(&UserHome {
                home: home.to_path_buf(),
                config_home: None,
            }),
            &[],
        );
        let layout = Layout {
            checkout: home.join(".kube/work/shop"),
            common_dir: home.join(".kube/work/shop/.git"),
            worktrees: home.join(".kube/work/shop.worktrees"),
            story_branches: None,
        };
        assert_eq!(
            credentials.present(&layout),
            [
                Mask {
                    path: home.join(".ssh"),
                    dir: true
                },
                Mask {
                    path: home.join(".docker/config.json"),
                    dir: false
                },
            ]
        );
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test empties and removes the stand-ins as a cleaner of temporary files might"
    )]
    fn the_stand_ins_are_made_again_empty() {
        let stand_ins = StandIns::make().expect("stand-ins");
        std::fs::write(stand_ins.file(), "planted").expect("fill the file");
        std::fs::write(stand_ins.dir().join("planted"), "x").expect("fill the directory");
        stand_ins.ensure().expect("made again");
        assert_eq!(std::fs::read(stand_ins.file()).expect("file"), b"");
        assert_eq!(std::fs::read_dir(stand_ins.dir()).expect("dir").count(), 0);
        std::fs::remove_dir_all(&stand_ins.root).expect("remove them");
        stand_ins.ensure().expect("made again");
        assert!(stand_ins.dir().is_dir() && stand_ins.file().is_file());
    }

    #[tokio::test]
    async fn off_leaves_the_spec_as_it_is() {
        let wrapped = Sandbox::off()
            .wrap(spec(), Path::new("/x"), Access::Stage)
            .await;
        assert_eq!(wrapped.program, "sh");
        assert_eq!(words(&wrapped), ["-c", "true"]);
    }
}
