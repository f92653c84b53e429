//! What a run is given and what it gives back: every `epic run` option ([`RunConfig`]), how a
//! run that started ended ([`RunOutcome`]), and why one could not start (`epic_branch::RunError`).

use std::path::PathBuf;
use std::time::Duration;

use epic_report::{EpicReport, PriceTable};

#[cfg(doc)]
use crate::run::run_epic;
use crate::task_loop::{NoopPolicy, PlannerPolicy};
use epic_schedule::Policy;
use std::sync::Arc;

use epic_agents::{Roster, Seat};
use epic_process::Clock;
use epic_process::sandbox::{Credentials, SandboxMode, UserHome};

/// Every `epic run` option, resolved (docs/contract.md, "`epic run`"): what the CLI hands to
/// [`run_epic`]. Each option's default is defined once, in [`RunConfig::new`]; the CLI reads
/// them from there (`epic config` shows them).
#[derive(Debug, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches of the command line, each its own flag"
)]
pub struct RunConfig {
    /// Where the epic branch starts if it does not exist yet (`--base`); resolved in the user's
    /// checkout.
    pub base: String,
    /// The integration branch (`--epic-branch`); `None` means `epic/<epic_id>`.
    pub epic_branch: Option<String>,
    /// Stories implemented at once, at least 1 (`--concurrency`).
    pub concurrency: usize,
    /// Stop at the first failed story (`--fail-fast`).
    pub fail_fast: bool,
    /// The agents that plan and implement (`--coder`): a roster, each turn on its first seat
    /// not paused.
    pub coder: Roster,
    /// The story-level judge (`--judge`); none: no judge rounds.
    pub judge: Option<Roster>,
    /// Per-task reviewers (`--reviewer`).
    pub reviewers: Vec<Roster>,
    /// Settles the `BLOCKED_ON:` claims the plan cannot settle, in a read-only turn
    /// (`--verifier`); none: such a claim fails its story.
    pub verifier: Option<Roster>,
    /// Gate commands, run with `sh -c` (`--gate`).
    pub gates: Vec<String>,
    /// Setup commands, run with `sh -c` in every fresh or caught-up story worktree (`--setup`).
    pub setup: Vec<String>,
    /// Judge attempts, each but the last followed by one coder round (`--judge-rounds`).
    pub judge_rounds: u32,
    /// Review rounds per task (`--max-rounds`).
    pub max_rounds: u32,
    /// The most tasks a story's plan may have, at least 1 (`--max-tasks`): a longer plan is sent
    /// back once, then fails the story.
    pub max_tasks: usize,
    /// The deadline of one agent turn (`--turn-timeout`).
    pub turn_timeout: Duration,
    /// The deadline of one gate or setup command (`--gate-timeout`).
    pub gate_timeout: Duration,
    /// How many more times a red gate command runs on the same tree before it counts as red
    /// (`--gate-reruns`): green on a rerun, it is flaky and passed. `0`: no reruns.
    pub gate_reruns: u32,
    /// The JUnit XML file each gate command writes, by command (`--gate-junit`), relative to
    /// the directory it runs in: its failing tests are read from there rather than from its
    /// output. None by default.
    pub gate_junit: std::collections::BTreeMap<String, String>,
    /// Keep a story's worktree after it merged (`--keep-worktrees`).
    pub keep_worktrees: bool,
    /// Start although the gates fail on the epic head (`--allow-red-baseline`).
    pub allow_red_baseline: bool,
    /// The most stories one candidate of the merge queue holds, at least 1 (`--merge-batch`,
    /// [`DEFAULT_MERGE_BATCH`]): stories ready to integrate together are merged in turn and
    /// proven by one gate run on the epic head, a red candidate bisected; `1` integrates one at a
    /// time.
    pub merge_batch: usize,
    /// How many times a story whose merge is red on the proven epic head goes back to its coder
    /// before it fails (`--merge-revisions`): its merge undone, its worktree caught up, its coder
    /// told the gates' output on the combined tree and the stories it now meets; its own checks
    /// again, then the queue again. `0`: it fails at once.
    pub merge_revisions: u32,
    /// The order among ready stories (`--schedule`).
    pub schedule: Policy,
    /// Prices for the usage estimates.
    pub prices: PriceTable,
    /// Extra standing instructions for the coder (house rules).
    pub extra_rules: String,
    /// The hook board: a command (`sh -c`) that gets each story transition as JSON on standard
    /// input; `None`: only `board.md`.
    pub board_hook: Option<String>,
    /// The deadline of one hook run.
    pub hook_timeout: Duration,
    /// What a test file looks like (`--test-pattern`, [`DEFAULT_TEST_PATTERNS`](epic_guard::DEFAULT_TEST_PATTERNS),
    /// where the patterns' syntax is): a story whose diff deletes one, or adds a line that skips a
    /// test (`#[ignore`, `@pytest.mark.skip`, `it.skip(`, `t.Skip(`, …), fails unless its plan
    /// entry sets `tests_change`.
    pub test_patterns: Vec<String>,
    /// Whether agents, gates and setup commands run in a bubblewrap sandbox that keeps the
    /// repository, the other worktrees and the epic's state read-only (`--sandbox`).
    /// A run without the sandbox makes the calling process the child subreaper of what it
    /// starts (`PR_SET_CHILD_SUBREAPER`, for the rest of its life), so that a daemon that
    /// escapes its turn is found and killed.
    pub sandbox: SandboxMode,
    /// The user's home and configuration home as the environment named them when the run
    /// started: in the sandbox, the credential stores under them
    /// ([`UserHome::credential_stores`]: `~/.ssh`, `~/.aws`, `~/.config/gh`, `~/.netrc`, …)
    /// read as empty to every agent turn, gate and setup command. `None` (the executor reads no
    /// environment, the CLI sets it): nothing is hidden.
    pub home: Option<UserHome>,
    /// Credential stores shown to the run's processes after all (`--expose`), each one of
    /// [`UserHome::credential_stores`] as an absolute path.
    pub expose: Vec<PathBuf>,
    /// Files outside the git directory that agent turns may not change, guarded like epic's own
    /// (the CLI names the plan file and `epic.toml`): a turn that changes one
    /// fails its story, and the file is put back.
    pub guarded_files: Vec<PathBuf>,
    /// Whether each seat in use is checked before the first story, without spending a token
    /// ([`Seat::ready`]: the program installed, logged in); one that is not ready stops the run
    /// before anything starts ([`RunError::SeatsNotReady`](epic_branch::RunError::SeatsNotReady)). `--no-preflight` turns it off.
    pub preflight: bool,
    /// What becomes of a task whose coder changed nothing, even when asked again, without
    /// confirming it was already satisfied (`--noop`): `complete` ticks it with a
    /// warning while its gates are green, `fail` fails the story.
    pub noop: NoopPolicy,
    /// Whether a story's tasks are planned by a planner turn first (`--planner`): `auto` plans
    /// only a story larger than [`SMALL_STORY`](crate::SMALL_STORY) characters, taking a small
    /// one as one task (one request fewer, and the planner's answer could only be that task);
    /// `always` plans every story (its checkpoints and per-task gates for any size).
    pub planner: PlannerPolicy,
    /// The most the epic may spend, in US dollars, across its runs (`--budget-usd`; none:
    /// unlimited): once the spend (reported by the agents where they report it, else estimated)
    /// reaches it, no agent turn starts, running turns finish, and the unfinished stories end
    /// not started with the reason; a rerun with a larger budget carries on.
    pub budget_usd: Option<f64>,
    /// The longest a seat's pause (a usage limit until its reset, an outage's probes) may last
    /// (`--max-wait`, [`DEFAULT_MAX_WAIT`]): a pause that would end later stops the run, which
    /// then ends as an interrupted one ([`RunOutcome::stopped`]).
    pub max_wait: Duration,
    /// How long an agent turn may stream only "cannot reach the service" lines (Codex's
    /// `Reconnecting... waiting for network`, repeated for ever) before it is ended as an outage
    /// of its seat, which then pauses with probes, bounded by `max_wait` (`--outage-wait`).
    pub outage_wait: Duration,
    /// How long an agent turn may print nothing, on its standard output or standard error,
    /// before it is ended as stalled (`--stall-timeout`, [`DEFAULT_STALL_TIMEOUT`]): its process
    /// group is killed as at its deadline, and the request runs again once; a second stall
    /// fails the story. `Duration::ZERO`: turns are never ended for silence.
    pub stall_timeout: Duration,
    /// Where stories work (`--worktrees`): slot worktrees reused story after story, or a new
    /// worktree per story.
    pub worktrees: WorktreeMode,
    /// The clock seat pauses read and wait on (a usage limit's reset, an outage's probes,
    /// `max_wait`, `outage_wait`), and a turn's silence is measured on (`stall_timeout`): the
    /// system's, or a [`ManualClock`](crate::ManualClock) a test
    /// moves. Not an option of the CLI.
    pub clock: Clock,
    /// What a coder's `BLOCKED_ON:` that the plan and the verifier do not settle does
    /// (`--on-blocked`): fail the story, or leave it waiting for a person's `epic answer`.
    pub on_blocked: OnBlocked,
    /// The command run whenever a story needs a person (`--notify`): waiting for an answer,
    /// failed, stopped, every seat of a roster paused.
    pub notify: Option<String>,
}

/// What a `BLOCKED_ON:` claim that stands does (`--on-blocked`, `on_blocked`).
// The doc comments of the variants are `epic run --help`'s text.
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
#[schemars(rename = "OnBlocked")]
pub enum OnBlocked {
    /// The story fails as missing a dependency
    #[default]
    Fail,
    /// The story waits for `epic answer STORY TEXT`, its slot given to others, at most
    /// `--max-wait`; the answer is its coder's next turn
    Ask,
}

/// Where stories work (`--worktrees`). Either way, `.worktreeinclude` at the repository root
/// names the ignored files copied into each new worktree.
// Serde and clap names are the CLI's (`warm`, `fresh`); its JSON Schema is named after the key.
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
#[schemars(rename = "Worktrees")]
pub enum WorktreeMode {
    /// At most `--concurrency` slot worktrees, each switched to the next story's branch at the
    /// epic head: only the files that differ are rewritten, and ignored files (build caches)
    /// stay
    #[default]
    Warm,
    /// A new worktree per story, removed once it merged: nothing carried between stories
    Fresh,
}

/// The default `--max-wait`: 6 hours. Claude Code's limits reset every 5 hours, so a pause on
/// one always fits and an unattended run picks up where it stopped; a weekly limit or a day-long
/// outage stops the run instead of holding the machine (and the epic's lock) for days. A rerun
/// resumes.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_hours(6);

/// The default `--stall-timeout`: 10 minutes. An agent at work prints as it works (every
/// preset streams its events); a build or a test run that prints nothing for that long is
/// rare, and a turn that does costs at most this instead of `--turn-timeout` (30 minutes).
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_mins(10);

impl RunConfig {
    /// Every seat of every role's roster, each once (by name), in role order: the coder, the
    /// judge, the reviewers, the verifier.
    pub fn seats(&self) -> impl Iterator<Item = &Arc<dyn Seat>> {
        let mut seen = std::collections::BTreeSet::new();
        std::iter::once(&self.coder)
            .chain(self.judge.as_ref())
            .chain(&self.reviewers)
            .chain(self.verifier.as_ref())
            .flat_map(Roster::seats)
            .filter(move |seat| seen.insert(seat.name().to_owned()))
    }

    /// Every option at its default, with this coder: the one place the defaults of `epic run`'s
    /// options are written. The CLI's defaults (`epic config`, `--help`, `epic schema config`)
    /// and the task loop's ([`LoopConfig::default`](crate::LoopConfig)) are read from here.
    pub fn new(coder: impl Into<Roster>) -> Self {
        Self {
            base: "HEAD".to_owned(),
            epic_branch: None,
            concurrency: 3,
            fail_fast: false,
            coder: coder.into(),
            judge: None,
            reviewers: Vec::new(),
            verifier: None,
            gates: Vec::new(),
            setup: Vec::new(),
            judge_rounds: 2,
            max_rounds: 3,
            max_tasks: 30,
            turn_timeout: Duration::from_mins(30),
            gate_timeout: Duration::from_mins(30),
            gate_reruns: 1,
            gate_junit: std::collections::BTreeMap::new(),
            keep_worktrees: false,
            allow_red_baseline: false,
            merge_batch: DEFAULT_MERGE_BATCH,
            merge_revisions: 1,
            schedule: Policy::CriticalPath,
            prices: PriceTable::default(),
            extra_rules: String::new(),
            board_hook: None,
            hook_timeout: Duration::from_secs(30),
            test_patterns: epic_guard::DEFAULT_TEST_PATTERNS
                .iter()
                .map(|pattern| (*pattern).to_owned())
                .collect(),
            sandbox: SandboxMode::Auto,
            home: None,
            expose: Vec::new(),
            guarded_files: Vec::new(),
            preflight: true,
            noop: NoopPolicy::Complete,
            planner: PlannerPolicy::Auto,
            budget_usd: None,
            max_wait: DEFAULT_MAX_WAIT,
            outage_wait: Duration::from_mins(2),
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            worktrees: WorktreeMode::Warm,
            clock: Clock::system(),
            on_blocked: OnBlocked::Fail,
            notify: None,
        }
    }
}

impl RunConfig {
    /// The credential stores this run's sandbox hides: the home's but those exposed.
    pub fn credentials(&self) -> Credentials {
        Credentials::new(self.home.as_ref(), &self.expose)
    }
}

/// `--merge-batch`'s default, measured (BENCHMARKS.md, "Merge queue"): ten stories ready at once
/// behind a gate of G seconds integrate in 2 gate runs instead of 10 when all are green (the
/// first ready story goes alone, the other nine together), and one culprit among them costs 6;
/// at 8 they take 3 and 7, at 4 they take 4 and 7. A batch holds only the stories waiting when a
/// merge begins, so it is bounded by `--concurrency` too; a larger cap costs one
/// bisection step more per culprit for each doubling of the stories actually waiting.
pub const DEFAULT_MERGE_BATCH: usize = 16;

/// How a run ended, once it started: the report, and whether it was interrupted.
#[derive(Debug, Clone)]
#[must_use = "the report says whether every story is done"]
pub struct RunOutcome {
    /// The report, as written to `report.json` and `report.md`.
    pub report: EpicReport,
    /// Whether the run was cancelled (docs/contract.md: exit 130; the state is kept, a rerun
    /// resumes).
    pub interrupted: bool,
    /// The epic branch's worktree.
    pub epic_worktree: PathBuf,
    /// The epic's state directory.
    pub state_dir: PathBuf,
    /// Why a seat stopped the run, when one did: a pause past `--max-wait` (then `interrupted`
    /// is set too), or a seat that is not logged in (docs/contract.md: exit 2).
    pub stopped: Option<epic_chat::SeatStop>,
}

impl RunOutcome {
    /// Whether every story is done (docs/contract.md: exit 0; else 1, or 130 when interrupted).
    pub fn all_done(&self) -> bool {
        !self.interrupted && self.report.all_done()
    }
}
