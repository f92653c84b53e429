//! [`RunOptions`]: each option of `epic run` defined once, as its flag, its `epic.toml` key, its
//! `epic config` line and its schema entry; how one layer of options is read (`epic.toml`), laid
//! over another, and given its defaults ([`RunOptions::defaults`], read from the executor's
//! `RunConfig::new`, which `--help` and the schema show); the keys in contract order.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_agents::ScriptSeat;
use epic_executor::{NoopPolicy, OnBlocked, PlannerPolicy, RunConfig, WorktreeMode};
use epic_process::sandbox::SandboxMode;
use epic_schedule::Policy;
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};

use super::{
    ConfigError, Count, Dollars, GateJunit, NamedSeats, NonBlank, ParseError, PriceOverride,
    Reruns, RosterSpec, Seconds, Silence, StorePath, Wait,
};

/// The config file's name, at the repository root.
pub(crate) const FILE_NAME: &str = "epic.toml";

/// The options of `epic run` (docs/contract.md), each optional: `None` is "not set in this layer".
///
/// One layer is `epic.toml` ([`load`](Self::load)), one the command line (`epic run` and `epic
/// config` flatten this into their arguments; a list flag given replaces the file's whole list,
/// and each on/off option has a `--no-…` form to turn off what `epic.toml` turns on), one the
/// defaults ([`defaults`](Self::defaults)); [`resolve`](super::resolve()) lays them over each other.
///
/// The fields are in docs/contract.md's order, which `epic config` prints them in ([`keys`]); each
/// one's doc comment is both its `--help` text (clap drops the final period) and its description
/// in the schema, but where the flag is written otherwise than the key: a list's flag takes one
/// value and is repeated, and the coder's help says where else to set it. The `no_…` fields are
/// the command line's negations only: serde skips them, and [`given`](Self::given) folds them
/// into their options.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(
    transform = unset_is_absent,
    title = "epic.toml",
    description = "`epic.toml`: the options of `epic run`, each optional; a flag given on the \
                   command line wins\nover the same key here.\n\nUnknown keys are an error, so a \
                   misspelt key is caught rather than ignored."
)]
#[command(
    next_help_heading = "Run options (also settable in epic.toml; flags win)",
    mut_args = with_default
)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each `--no-…` negation is a flag of its own, folded into its option by `given`"
)]
pub(crate) struct RunOptions {
    /// Where the epic branch starts if it does not exist yet: a git revision.
    #[arg(long, value_name = "REF")]
    pub(crate) base: Option<NonBlank>,

    /// The integration branch the stories merge into; unset, `epic/<epic_id>`.
    #[arg(long, value_name = "NAME")]
    pub(crate) epic_branch: Option<NonBlank>,

    /// How many stories are implemented at once, at least 1.
    #[arg(long, value_name = "N")]
    pub(crate) concurrency: Option<Count>,

    /// Stop at the first failed story instead of skipping only its dependents.
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        overrides_with = "no_fail_fast"
    )]
    pub(crate) fail_fast: Option<bool>,
    /// Skip a failed story's dependents and go on
    #[arg(long, overrides_with = "fail_fast")]
    #[serde(skip)]
    pub(crate) no_fail_fast: bool,

    /// The agent that plans and implements each story: a preset (`claude`, `codex`, `gemini`,
    /// `aider`, `opencode`, `script`), `exec:COMMAND` or a seat of `[seats]`; or a roster of
    /// them, in order of preference (`claude,codex`), each turn on the first not paused by a
    /// usage limit or an outage. Required, here or as `--coder`.
    #[arg(
        long,
        value_name = "SEATS",
        help = "The agent that plans and implements: claude, codex, gemini, aider, opencode, \
                script, exec:COMMAND or a named seat; a roster with commas (claude,codex) \
                [required here or in epic.toml]"
    )]
    pub(crate) coder: Option<RosterSpec>,

    /// The story-level judge, a seat or roster like `coder`; unset, no judge rounds.
    #[arg(long, value_name = "SEATS", overrides_with = "no_judge")]
    pub(crate) judge: Option<RosterSpec>,
    /// No judge, whatever epic.toml or the last run named
    #[arg(long, overrides_with = "judge")]
    #[serde(skip)]
    pub(crate) no_judge: bool,

    /// The per-task reviewers, each a seat or roster like `coder`.
    #[arg(
        long,
        value_name = "SEATS",
        help = "A per-task reviewer, a seat or a roster (claude,codex); repeatable",
        overrides_with = "no_reviewer"
    )]
    pub(crate) reviewer: Option<Vec<RosterSpec>>,
    /// No reviewers, whatever epic.toml or the last run named
    #[arg(long, overrides_with = "reviewer")]
    #[serde(skip)]
    pub(crate) no_reviewer: bool,

    /// The architect of `epic plan`, which splits an epic into a plan: a seat or roster like
    /// `coder`; unset, the coder. (Only `epic plan` reads it.)
    #[arg(
        long,
        value_name = "SEATS",
        help = "The architect, which splits an epic into a plan: claude, codex, gemini, aider, \
                opencode, script, exec:COMMAND or a named seat, or a roster; unset, the coder"
    )]
    pub(crate) architect: Option<RosterSpec>,

    /// Checks run with `sh -c`, per task in the story's worktree and on the epic head after each
    /// merge.
    #[arg(
        long,
        value_name = "CMD",
        help = "A check run with `sh -c` per task and on the epic head after each merge; \
                repeatable"
    )]
    pub(crate) gate: Option<Vec<NonBlank>>,

    /// Judge attempts, each but the last followed by one coder feedback round; at least 1.
    #[arg(long, value_name = "N")]
    pub(crate) judge_rounds: Option<Count>,

    /// Review rounds per task, at least 1.
    #[arg(long, value_name = "N")]
    pub(crate) max_rounds: Option<Count>,

    /// The most tasks a story's plan may have, at least 1: a longer plan is sent back to the
    /// planner once, then fails the story.
    #[arg(long, value_name = "N")]
    pub(crate) max_tasks: Option<Count>,

    /// Whether a story's tasks are planned by a planner turn first: `auto` takes a small story
    /// (description and acceptance criteria at most 800 characters) as one task with no
    /// planner turn, `always` plans every story.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub(crate) planner: Option<PlannerPolicy>,

    /// Deadline of one agent turn in seconds (1 to 2592000); the turn's whole process group is
    /// killed when it passes.
    #[arg(long, value_name = "SECS")]
    pub(crate) turn_timeout: Option<Seconds>,

    /// Deadline of one gate command in seconds (1 to 2592000).
    #[arg(long, value_name = "SECS")]
    pub(crate) gate_timeout: Option<Seconds>,

    /// How many more times a red gate command runs on the same tree before it counts as red (0
    /// to 10; 0: none): green on a rerun, the command is flaky and passed, the story is not
    /// charged, and the event `gate_flaky` keeps its first run's output. In a story's task loop,
    /// on the epic head after a merge, at the baseline and in landing.
    #[arg(long, value_name = "N")]
    pub(crate) gate_reruns: Option<Reruns>,

    /// A JUnit XML file a gate command writes, as `PATH=COMMAND`: the path relative to the
    /// directory the command runs in, the command as given to `gate`. A red command's failing
    /// tests are read from that file rather than from its output, so a story is charged only
    /// with the tests it turned red; a file the run did not rewrite leaves the command judged
    /// whole.
    #[arg(
        long,
        value_name = "PATH=CMD",
        help = "A JUnit XML file a gate command writes, as PATH=COMMAND: its failing tests are \
                read from there; repeatable"
    )]
    pub(crate) gate_junit: Option<Vec<GateJunit>>,

    /// Commands run with `sh -c` in every fresh or caught-up story worktree (dependency
    /// installs).
    #[arg(
        long,
        value_name = "CMD",
        help = "A command run with `sh -c` in every fresh or caught-up story worktree; repeatable"
    )]
    pub(crate) setup: Option<Vec<NonBlank>>,

    /// Keep a story's worktree after it merged (its branch always stays).
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        overrides_with = "no_keep_worktrees"
    )]
    pub(crate) keep_worktrees: Option<bool>,
    /// Remove a story's worktree once it merged
    #[arg(long, overrides_with = "keep_worktrees")]
    #[serde(skip)]
    pub(crate) no_keep_worktrees: bool,

    /// Start although the gates fail on the epic head; a merge is then undone only if a gate
    /// that passed on the baseline fails.
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        overrides_with = "no_allow_red_baseline"
    )]
    pub(crate) allow_red_baseline: Option<bool>,
    /// Refuse to start while the gates fail on the epic head
    #[arg(long, overrides_with = "allow_red_baseline")]
    #[serde(skip)]
    pub(crate) no_allow_red_baseline: bool,

    /// The order among ready stories.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub(crate) schedule: Option<Policy>,

    /// The most stories proven together by one gate run on the epic head, at least 1: stories
    /// ready to integrate at once are merged in turn and gated once, a red batch bisected to
    /// its culprits; `1` integrates one at a time. Measured (BENCHMARKS.md, "Merge queue"): ten
    /// stories ready at once integrate in 2 gate runs instead of 10, 6 with one culprit (at 8: 3
    /// and 7).
    #[arg(long, value_name = "N")]
    pub(crate) merge_batch: Option<Count>,

    /// How many times a story whose merge is red on the epic head goes back to its coder before
    /// it fails (0 to 10; 0: it fails at once): its merge undone, its worktree caught up, its
    /// coder told the gates' output on the combined tree, the stories it now meets and its
    /// perimeter; its own checks run again and it rejoins the merge queue (`merge_revision`).
    #[arg(long, value_name = "N")]
    pub(crate) merge_revisions: Option<Reruns>,

    /// What a test file looks like: a pattern ending in `/` is a directory anywhere in the path,
    /// any other a glob (`*`) on the file name, or on the path when it holds a `/`. A story
    /// whose diff deletes such a file or adds a skip marker (`#[ignore]`, `@pytest.mark.skip`,
    /// `t.Skip(`, `xit(`, `it.skip(`, …) fails unless its plan entry sets `tests_change`.
    #[arg(
        long,
        value_name = "PATTERN",
        help = "What a test file looks like (`tests/`, `*_test.*`, …): deleting one, or adding a \
                skip marker, fails a story whose plan entry lacks `tests_change`; repeatable"
    )]
    pub(crate) test_pattern: Option<Vec<NonBlank>>,

    /// Agents, gates and setup run in a bubblewrap sandbox that keeps the repository, the other
    /// worktrees and the epic's state read-only: `auto` where `bwrap` is installed (saying once when
    /// it is not; one that fails stops the run), `on` or the run does not start (exit 2), `off`
    /// uncontained.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,

    /// Credential stores shown to the agents, gates and setup commands after all: in the
    /// sandbox each of the usual stores (`~/.ssh`, `~/.gnupg`, `~/.aws`, `~/.azure`, `~/.kube`,
    /// `~/.docker/config.json`, `~/.netrc`, `~/.git-credentials`, `~/.config/gh`,
    /// `~/.config/git/credentials`, the tokens that publish packages) reads as empty; a path
    /// here (absolute, or `~/…` from the home) names one of them to show as it is.
    #[arg(
        long,
        value_name = "PATH",
        help = "A credential store the sandbox hides (~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc, …) \
                to show to the agents and gates of the run; repeatable"
    )]
    pub(crate) expose: Option<Vec<StorePath>>,

    /// The most the epic may spend on agent turns, in US dollars, across its runs: once the
    /// spend (the agents' reported costs where they report them, else estimates) reaches it, no
    /// agent turn starts, running turns finish, and the unfinished stories end not started with
    /// the reason; exit 1. A rerun with a larger budget carries on. Unset, unlimited.
    #[arg(long, value_name = "X")]
    pub(crate) budget_usd: Option<Dollars>,

    /// The longest a seat's pause may last: an agent at its usage limit pauses its seat until
    /// the reset (an outage, with probes at growing intervals), and a pause that would end later
    /// stops the run as an interrupt does (exit 130; a rerun resumes). Whole seconds, or with
    /// units: `90m`, `6h`, `1h30m`, `2d`.
    #[arg(long, value_name = "DURATION")]
    pub(crate) max_wait: Option<Wait>,
    /// A task whose coder changed nothing, even when asked again, and did not confirm it was
    /// already satisfied: `complete` ticks it with a warning while its gates are green, `fail`
    /// fails the story.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub(crate) noop: Option<NoopPolicy>,

    /// Settles the `BLOCKED_ON` claims the plan cannot settle, in a read-only turn: a seat or
    /// roster like `coder`; unset, such a claim fails its story.
    #[arg(long, value_name = "SEATS", overrides_with = "no_verifier")]
    pub(crate) verifier: Option<RosterSpec>,
    /// No verifier, whatever epic.toml or the last run named
    #[arg(long, overrides_with = "verifier")]
    #[serde(skip)]
    pub(crate) no_verifier: bool,
    /// A command run with `sh -c` in the epic's worktree on every move of a story on the board
    /// (planned, active, done, failed, skipped), the story's card as one JSON object on its
    /// standard input, to sync an outside tracker; a hook that fails or runs past 30 s is an
    /// event, never a failed story; unset, only `board.md` shows the board.
    #[arg(long, value_name = "CMD")]
    pub(crate) board_hook: Option<NonBlank>,

    /// What a coder's `BLOCKED_ON:` that the plan and the verifier do not settle does: `fail`
    /// fails the story as a missing dependency; `ask` leaves it waiting for `epic answer STORY
    /// TEXT`, its slot given to other stories, at most `--max-wait`, and the answer is its
    /// coder's next turn.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub(crate) on_blocked: Option<OnBlocked>,

    /// A command run with `sh -c` in the sandbox whenever a story needs a person (waiting for an
    /// answer, failed, stopped, every seat of a roster paused), with `EPIC_EPIC`,
    /// `EPIC_STORY` and `EPIC_ATTENTION` set and the question or reason on its standard input;
    /// one that fails or runs past 30 s is an event, never a failed story; unset, nothing is
    /// run.
    #[arg(long, value_name = "CMD")]
    pub(crate) notify: Option<NonBlank>,

    /// Files of house rules (`CONTRIBUTING.md`, a style guide) whose text every agent's prompt
    /// carries under the heading "House rules"; read when the run starts, a relative path from
    /// the repository root. A file that cannot be read stops the run before it starts.
    #[arg(
        long,
        value_name = "FILE",
        help = "A file of house rules (CONTRIBUTING.md, …) every agent's prompt carries, read at \
                the start from the repository root; repeatable"
    )]
    pub(crate) rules: Option<Vec<NonBlank>>,
    /// Where stories work: `warm` runs them in at most `concurrency` slot worktrees, each
    /// switched to the next story's branch at the epic head (only the files that differ are
    /// rewritten; ignored files such as build caches and dependencies stay, so setup and gates
    /// are incremental; a failed story's worktree leaves the rotation for inspection); `fresh`
    /// adds a new worktree per story, nothing carried between stories. Either way the ignored
    /// files that `.worktreeinclude` at the repository root names (gitignore patterns: `.env`,
    /// local settings) are copied from the main checkout into each new worktree.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) worktrees: Option<WorktreeMode>,
    /// How long an agent turn may stream only "cannot reach the service" lines (Codex retries
    /// for ever without a network) before it counts as an outage of its seat: the turn ends and
    /// the seat pauses with probes, bounded by `max_wait`. Whole seconds, or with units like
    /// `max_wait`.
    #[arg(long, value_name = "DURATION")]
    pub(crate) outage_wait: Option<Wait>,
    /// How long an agent turn may print nothing, on its standard output or standard error,
    /// before it is ended as stalled (its process group killed, as at `turn_timeout`): the
    /// request then runs again once, and a second stall fails the story. Every preset streams
    /// its events as it works, so silence means a wedged tool or a model that stopped
    /// answering. `0`: never; else whole seconds, or with units like `max_wait`.
    #[arg(long, value_name = "DURATION")]
    pub(crate) stall_timeout: Option<Silence>,

    /// Check each seat before the first story, without spending a token: its program is
    /// installed and, for `claude`, `codex` and `gemini`, signed in (an API key or token in the
    /// environment, a Codex model provider of its own with its key, `claude auth status`,
    /// `codex login status`, Gemini's auth settings). Every seat that fails its check is named,
    /// and the run stops before anything starts (exit 2). `epic plan` checks its architect's
    /// seats before the first round, `epic land` the coder's before its first lander turn.
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        overrides_with = "no_preflight"
    )]
    pub(crate) preflight: Option<bool>,
    /// Skip the seat checks before the first story (for custom setups: a key the check cannot
    /// see, a wrapper of the CLI)
    #[arg(long, overrides_with = "preflight")]
    #[serde(skip)]
    pub(crate) no_preflight: bool,

    /// Price overrides for the report's cost estimates: a seat or model name prefix (`claude`,
    /// `aider`, `claude-opus-4`) → US dollars per million input and output tokens. The longest
    /// matching prefix wins, then the built-in prices.
    #[arg(skip)]
    pub(crate) prices: Option<BTreeMap<String, PriceOverride>>,

    /// Named seats, by name (`[seats.NAME]`): a preset or `exec:COMMAND` (`seat`) with
    /// environment variables of its own (`env`), such as a second account of one CLI; a roster
    /// names it like a preset (`coder = ["claude", "claude-work"]`).
    #[arg(skip)]
    pub(crate) seats: Option<NamedSeats>,
}

impl RunOptions {
    /// Reads `epic.toml` in `root`, the repository root, with its path: `None` when there is no
    /// such file.
    pub(crate) fn load(root: &Path) -> Result<Option<(PathBuf, Self)>, ConfigError> {
        let path = root.join(FILE_NAME);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(ConfigError::NotUtf8 { path });
        };
        let options = Self::parse(&text).map_err(|error| error.in_file(path.clone()))?;
        Ok(Some((path, options)))
    }

    /// Parses the text of an `epic.toml`.
    pub(crate) fn parse(text: &str) -> Result<Self, ParseError> {
        let deserializer =
            toml::Deserializer::parse(text).map_err(|error| ParseError::new(text, &error, None))?;
        serde_path_to_error::deserialize(deserializer).map_err(|error| {
            let path = error.path().to_string();
            ParseError::new(text, error.inner(), Some(path))
        })
    }

    /// Every option at its default, as [`RunConfig::new`] sets it (the one place the defaults are
    /// written). The coder has none; neither does the epic branch (`epic/<epic_id>`, which the
    /// executor names) nor the judge and the verifier.
    pub(crate) fn defaults() -> Self {
        // The coder seat is not read: the CLI's own `coder` is required.
        let config = RunConfig::new(Arc::new(ScriptSeat));
        let texts = |texts: Vec<String>| texts.into_iter().filter_map(NonBlank::new).collect();
        Self {
            base: NonBlank::new(config.base),
            epic_branch: config.epic_branch.and_then(NonBlank::new),
            concurrency: u32::try_from(config.concurrency).ok().and_then(Count::new),
            fail_fast: Some(config.fail_fast),
            coder: None,
            // A seat is an agent to run, with no name to show: `RunConfig::new` has no judge and
            // no reviewers (a unit test holds it to that).
            judge: None,
            reviewer: Some(Vec::new()),
            gate: Some(texts(config.gates)),
            judge_rounds: Count::new(config.judge_rounds),
            max_rounds: Count::new(config.max_rounds),
            max_tasks: u32::try_from(config.max_tasks).ok().and_then(Count::new),
            turn_timeout: Seconds::new(config.turn_timeout),
            gate_timeout: Seconds::new(config.gate_timeout),
            gate_reruns: Reruns::new(config.gate_reruns),
            gate_junit: Some(
                config
                    .gate_junit
                    .into_iter()
                    .map(|(command, path)| GateJunit { path, command })
                    .collect(),
            ),
            setup: Some(texts(config.setup)),
            keep_worktrees: Some(config.keep_worktrees),
            allow_red_baseline: Some(config.allow_red_baseline),
            preflight: Some(config.preflight),
            schedule: Some(config.schedule),
            merge_batch: u32::try_from(config.merge_batch).ok().and_then(Count::new),
            merge_revisions: Reruns::new(config.merge_revisions),
            test_pattern: Some(texts(config.test_patterns)),
            sandbox: Some(config.sandbox),
            // No store: `RunConfig::new` exposes none (a unit test holds it to that).
            expose: Some(Vec::new()),
            budget_usd: config
                .budget_usd
                .and_then(|usd| Dollars::try_from(usd).ok()),
            noop: Some(config.noop),
            planner: Some(config.planner),
            board_hook: config.board_hook.and_then(NonBlank::new),
            on_blocked: Some(config.on_blocked),
            notify: config.notify.and_then(NonBlank::new),
            // No files: `RunConfig::new` has no house rules (`extra_rules` is empty; a unit test
            // holds it to that). The CLI reads the files into it ([`house_rules`]).
            rules: Some(Vec::new()),
            max_wait: Wait::new(config.max_wait),
            outage_wait: Wait::new(config.outage_wait),
            stall_timeout: Silence::new(config.stall_timeout),
            worktrees: Some(config.worktrees),
            // No overrides: the executor's own price table ([`Resolved::run_config`]).
            prices: Some(BTreeMap::new()),
            // No named seats: a roster names presets until epic.toml names more.
            seats: Some(BTreeMap::new()),
            ..Self::default()
        }
    }

    /// These options as the command line gave them: each `--no-…` flag turns its option off
    /// (`--no-reviewer`: an empty list). The seats a lower layer may name and `--no-judge` or
    /// `--no-verifier` drops are unset here; [`dropping`](Self::dropping) unsets them in the
    /// merged options.
    #[must_use]
    pub(crate) fn given(&self) -> Self {
        let mut given = self.clone();
        let negations = [
            (&mut given.fail_fast, self.no_fail_fast),
            (&mut given.keep_worktrees, self.no_keep_worktrees),
            (&mut given.allow_red_baseline, self.no_allow_red_baseline),
            (&mut given.preflight, self.no_preflight),
        ];
        for (option, off) in negations {
            if off {
                *option = Some(false);
            }
        }
        if self.no_reviewer {
            given.reviewer = Some(Vec::new());
        }
        given
    }

    /// The keys whose `--no-…` flag drops what a lower layer set, leaving them unset:
    /// `--no-judge`, `--no-verifier`.
    pub(crate) fn dropped(&self) -> Vec<&'static str> {
        [("judge", self.no_judge), ("verifier", self.no_verifier)]
            .into_iter()
            .filter_map(|(key, off)| off.then_some(key))
            .collect()
    }

    /// `merged`, the layers these flags lie over, with what [`dropped`](Self::dropped) names
    /// unset.
    #[must_use]
    pub(crate) fn dropping(&self, mut merged: Self) -> Self {
        if self.no_judge {
            merged.judge = None;
        }
        if self.no_verifier {
            merged.verifier = None;
        }
        merged
    }

    /// These options laid over `under`, key by key: an option set here wins (a list as a whole),
    /// any other keeps `under`'s value.
    ///
    /// Generic over the fields: it goes through the keys serde writes, so a new option needs no
    /// code here. The `no_…` negations are not keys: lay [`given`](Self::given) options.
    #[must_use]
    pub(crate) fn over(&self, under: &Self) -> Self {
        let mut merged = under.values();
        merged.extend(self.values());
        serde_json::from_value(serde_json::Value::Object(merged))
            .expect("options written by serde read back, each value checked again")
    }

    /// The options set (not `None`), by key.
    pub(super) fn values(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(keys) =
            serde_json::to_value(self).expect("options serialise to a JSON object")
        else {
            return serde_json::Map::new();
        };
        keys.into_iter()
            .filter(|(_, value)| !value.is_null())
            .collect()
    }

    /// Only the options of `keys` (the others unset): what a command that reads only those takes
    /// from a layer.
    #[must_use]
    pub(crate) fn only(&self, keys: &[&str]) -> Self {
        let mut values = self.values();
        values.retain(|key, _| keys.contains(&key.as_str()));
        serde_json::from_value(serde_json::Value::Object(values))
            .expect("options written by serde read back, each value checked again")
    }

    /// The keys these options set, in [`keys`] order.
    pub(crate) fn keys_set(&self) -> Vec<&'static str> {
        let set = self.values();
        keys()
            .iter()
            .copied()
            .filter(|key| set.contains_key(*key))
            .collect()
    }
}

/// The defaults of the run options, by key ([`RunOptions::defaults`]), for `--help` and the
/// schema.
static DEFAULTS: std::sync::LazyLock<serde_json::Map<String, serde_json::Value>> =
    std::sync::LazyLock::new(|| RunOptions::defaults().values());

/// Run option `arg`'s `--help` with its default ([`RunOptions::defaults`]) after it: `[default:
/// 3]` on an option that takes a value, `(the default)` on the flag of an on/off pair that is
/// the default; nothing for an option whose default is unset or an empty list.
fn with_default(arg: clap::Arg) -> clap::Arg {
    use serde_json::Value;
    let id = arg.get_id().as_str();
    let (key, negated) = match id.strip_prefix("no_") {
        Some(key) => (key, true),
        None => (id, false),
    };
    let plain = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let note = match DEFAULTS.get(key) {
        Some(Value::Bool(on)) if *on != negated => "(the default)".to_owned(),
        Some(Value::Bool(_) | Value::Null | Value::Object(_)) | None => return arg,
        Some(Value::Array(items)) if items.is_empty() => return arg,
        Some(Value::Array(items)) => format!(
            "[default: {}]",
            items.iter().map(plain).collect::<Vec<_>>().join(", ")
        ),
        Some(value) => format!("[default: {}]", plain(value)),
    };
    let long = arg
        .get_long_help()
        .map(|help| clap::builder::StyledStr::from(format!("{help} {note}")));
    let short = format!(
        "{} {note}",
        arg.get_help().map(ToString::to_string).unwrap_or_default()
    );
    let arg = arg.help(short);
    match long {
        Some(long) => arg.long_help(long),
        None => arg,
    }
}

/// The schema of `epic.toml` as a file's keys are written: a key not set is absent, never `null`,
/// so each key's schema is its value's (schemars makes each `Option` field nullable, with a
/// `null` default), and its `default` is the option's ([`RunOptions::defaults`]).
fn unset_is_absent(schema: &mut Schema) {
    use serde_json::Value;
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (key, property) in properties.iter_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        property.remove("default");
        if let Some(default) = DEFAULTS.get(key) {
            property.insert("default".to_owned(), default.clone());
        }
        // `"type": ["boolean", "null"]`: an inline schema.
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|name| name != "null");
            if let [name] = types.as_slice() {
                let name = name.clone();
                property.insert("type".to_owned(), name);
            }
        }
        // `"anyOf": [{"$ref": …}, {"type": "null"}]`: a named one.
        if let Some(Value::Array(choices)) = property.get("anyOf")
            && let [Value::Object(only)] = choices
                .iter()
                .filter(|choice| choice.get("type").is_none_or(|name| name != "null"))
                .collect::<Vec<_>>()
                .as_slice()
        {
            let only = (*only).clone();
            property.remove("anyOf");
            property.extend(only);
        }
    }
}

/// The keys of `epic.toml`, in [`RunOptions`]' order (docs/contract.md's, the order `epic config`
/// prints them in): the field names serde reads.
///
/// A derived `Deserialize` hands its field names to the deserializer before it reads anything;
/// this deserializer keeps them and reads nothing.
pub(crate) fn keys() -> &'static [&'static str] {
    use serde::de::{Error as _, Visitor, value::Error};

    /// Takes a struct's field names.
    struct FieldNames<'a>(&'a mut &'static [&'static str]);

    impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(Error::custom("only the field names are read"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }

    let mut names: &'static [&'static str] = &[];
    // Always the error above: the names are all it is for.
    RunOptions::deserialize(FieldNames(&mut names)).ok();
    names
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use std::sync::Arc;
    use std::time::Duration;

    use epic_agents::ScriptSeat;
    use epic_executor::{NoopPolicy, OnBlocked, PlannerPolicy, RunConfig, WorktreeMode};
    use epic_process::sandbox::SandboxMode;
    use epic_schedule::Policy;

    use epic_report::Price;

    use super::*;
    use crate::config::resolve;
    use crate::config::test_support::{FULL, Flags, flags, seat, texts};
    use crate::config::user_home;

    #[test]
    fn defaults_follow_the_contract() {
        let resolved = resolve(&RunOptions::default(), &flags(&["--coder", "claude"])).unwrap();
        assert_eq!(resolved.coder, seat("claude"));
        let config = resolved.run_config();
        assert_eq!(config.base, "HEAD");
        assert_eq!(
            config.epic_branch, None,
            "the executor names it epic/<epic_id>"
        );
        assert_eq!(config.concurrency, 3);
        assert!(!config.fail_fast && !config.keep_worktrees && !config.allow_red_baseline);
        assert!(config.judge.is_none() && config.reviewers.is_empty());
        assert!(config.gates.is_empty() && config.setup.is_empty());
        assert_eq!((config.judge_rounds, config.max_rounds), (2, 3));
        assert_eq!(config.max_tasks, 30);
        assert_eq!(config.turn_timeout, Duration::from_mins(30));
        assert_eq!(config.gate_timeout, Duration::from_mins(30));
        assert_eq!(config.gate_reruns, 1);
        assert_eq!(config.schedule, Policy::CriticalPath);
        assert_eq!(config.test_patterns, epic_guard::DEFAULT_TEST_PATTERNS);
        assert_eq!(config.sandbox, SandboxMode::Auto);
        assert!(config.expose.is_empty());
        assert_eq!(config.noop, NoopPolicy::Complete);
        assert!(config.verifier.is_none());
        assert!(config.board_hook.is_none() && config.extra_rules.is_empty());
        assert!(config.preflight);
        assert_eq!(config.max_wait, Duration::from_hours(6));
        assert_eq!(config.outage_wait, Duration::from_mins(2));
        assert_eq!(config.stall_timeout, Duration::from_mins(10));
        assert_eq!(config.worktrees, WorktreeMode::Warm);
        assert_eq!(config.prices, epic_report::PriceTable::default());
        // What `epic config` shows: every default, from the executor's.
        assert_eq!(
            resolved.options,
            RunOptions {
                base: NonBlank::new("HEAD".into()),
                concurrency: Count::new(3),
                fail_fast: Some(false),
                coder: Some(seat("claude")),
                reviewer: Some(vec![]),
                gate: Some(vec![]),
                judge_rounds: Count::new(2),
                max_rounds: Count::new(3),
                max_tasks: Count::new(30),
                turn_timeout: Seconds::new(Duration::from_mins(30)),
                gate_timeout: Seconds::new(Duration::from_mins(30)),
                gate_reruns: Reruns::new(1),
                gate_junit: Some(vec![]),
                setup: Some(vec![]),
                keep_worktrees: Some(false),
                allow_red_baseline: Some(false),
                schedule: Some(Policy::CriticalPath),
                merge_batch: Count::new(16),
                merge_revisions: Reruns::new(1),
                test_pattern: Some(texts(epic_guard::DEFAULT_TEST_PATTERNS)),
                sandbox: Some(SandboxMode::Auto),
                expose: Some(vec![]),
                noop: Some(NoopPolicy::Complete),
                planner: Some(PlannerPolicy::Auto),
                on_blocked: Some(OnBlocked::Fail),
                rules: Some(vec![]),
                worktrees: Some(WorktreeMode::Warm),
                preflight: Some(true),
                max_wait: Wait::new(Duration::from_hours(6)),
                outage_wait: Wait::new(Duration::from_mins(2)),
                stall_timeout: Silence::new(Duration::from_mins(10)),
                prices: Some(BTreeMap::new()),
                seats: Some(BTreeMap::new()),
                ..RunOptions::default()
            }
        );
        let resolved = resolve(
            &RunOptions::default(),
            &flags(&[
                "--coder",
                "claude",
                "--test-pattern",
                "qa/",
                "--test-pattern",
                "*.t",
            ]),
        )
        .unwrap();
        assert_eq!(resolved.options.test_pattern, Some(texts(&["qa/", "*.t"])));
        assert_eq!(
            resolved.run_config().test_patterns,
            ["qa/", "*.t"],
            "--test-pattern reaches the executor"
        );
    }

    #[test]
    fn the_executor_has_no_default_seats() {
        // `RunOptions::defaults` relies on it: a seat cannot be shown by name.
        let config = RunConfig::new(Arc::new(ScriptSeat));
        assert!(config.judge.is_none() && config.reviewers.is_empty());
        // Nor an exposed store, nor a home (the CLI reads it from the environment).
        assert!(config.expose.is_empty() && config.home.is_none());
    }

    #[test]
    fn the_schema_gives_each_default_and_no_doc_restates_one() {
        let schema = serde_json::to_value(schemars::schema_for!(RunOptions)).unwrap();
        let defaults = RunOptions::defaults().values();
        let mut checked = 0;
        for key in keys() {
            let property = &schema["properties"][key];
            let description = property["description"].as_str().unwrap();
            assert!(
                !description.contains("Default:") && !description.contains("default:"),
                "{key}: a doc comment restates its default: {description}"
            );
            match defaults.get(*key) {
                Some(default) => {
                    assert_eq!(&property["default"], default, "{key}");
                    checked += 1;
                }
                None => assert!(property.get("default").is_none(), "{key}"),
            }
        }
        // All but those without a default: epic_branch, coder, judge, architect, budget_usd,
        // verifier, board_hook, notify.
        assert_eq!(checked, keys().len() - 8);
    }

    #[test]
    fn each_flag_shows_its_default() {
        use clap::CommandFactory as _;
        let defaults = RunOptions::defaults().values();
        let plain = |value: &serde_json::Value| match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let (mut valued, mut switches) = (0, 0);
        for arg in Flags::command().get_arguments() {
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let id = arg.get_id().as_str();
            if let Some((_, default)) = help.split_once(" [default: ") {
                let expected = match &defaults[id] {
                    serde_json::Value::Array(items) => {
                        items.iter().map(plain).collect::<Vec<_>>().join(", ")
                    }
                    value => plain(value),
                };
                assert_eq!(default.trim_end_matches(']'), expected, "{id}");
                valued += 1;
            } else if help.ends_with(" (the default)") {
                let (key, on) = id
                    .strip_prefix("no_")
                    .map_or((id, true), |key| (key, false));
                assert_eq!(defaults[key], on, "{id}");
                switches += 1;
            }
        }
        assert_eq!((valued, switches), (20, 4));
    }

    #[test]
    fn the_keys_are_in_contract_order() {
        assert_eq!(
            keys(),
            [
                "base",
                "epic_branch",
                "concurrency",
                "fail_fast",
                "coder",
                "judge",
                "reviewer",
                "architect",
                "gate",
                "judge_rounds",
                "max_rounds",
                "max_tasks",
                "planner",
                "turn_timeout",
                "gate_timeout",
                "gate_reruns",
                "gate_junit",
                "setup",
                "keep_worktrees",
                "allow_red_baseline",
                "schedule",
                "merge_batch",
                "merge_revisions",
                "test_pattern",
                "sandbox",
                "expose",
                "budget_usd",
                "max_wait",
                "noop",
                "verifier",
                "board_hook",
                "on_blocked",
                "notify",
                "rules",
                "worktrees",
                "outage_wait",
                "stall_timeout",
                "preflight",
                "prices",
                "seats",
            ]
        );
    }

    #[test]
    fn every_key_parses() {
        let file = RunOptions::parse(FULL).unwrap();
        assert_eq!(file.keys_set(), keys());
        let resolved = resolve(&file, &flags(&[])).unwrap();
        assert_eq!(resolved.coder, seat("exec:./agent.sh --fast"));
        assert_eq!(resolved.options.judge, Some(seat("codex")));
        assert_eq!(
            resolved.options.reviewer,
            Some(vec![seat("gemini"), seat("claude")])
        );
        assert_eq!(resolved.options.architect, Some(seat("claude")));
        let config = resolved.run_config();
        assert_eq!(config.base, "main");
        assert_eq!(config.epic_branch.as_deref(), Some("integration/checkout"));
        assert_eq!(config.concurrency, 5);
        assert!(config.fail_fast && config.keep_worktrees && config.allow_red_baseline);
        assert!(config.judge.is_some());
        assert_eq!(config.reviewers.len(), 2);
        assert_eq!(config.test_patterns, ["qa/", "*.t"]);
        assert_eq!(config.gates, ["cargo test", "cargo clippy"]);
        assert_eq!((config.judge_rounds, config.max_rounds), (1, 4));
        assert_eq!(config.max_tasks, 12);
        assert_eq!(config.turn_timeout, Duration::from_mins(10));
        assert_eq!(config.gate_timeout, Duration::from_mins(5));
        assert_eq!(config.gate_reruns, 0);
        assert_eq!(
            config.gate_junit,
            [("cargo test".to_owned(), "target/junit.xml".to_owned())].into()
        );
        assert_eq!(config.setup, ["npm ci"]);
        assert_eq!(config.schedule, Policy::Waves);
        assert_eq!(config.merge_batch, 2);
        assert_eq!(config.merge_revisions, 3);
        assert_eq!(config.sandbox, SandboxMode::Off);
        let home = user_home().expect("the tests run with HOME set").home;
        assert_eq!(config.expose, [home.join(".ssh"), home.join(".config/gh")]);
        assert_eq!(config.budget_usd, Some(12.5));
        assert_eq!(config.noop, NoopPolicy::Fail);
        assert_eq!(resolved.options.verifier, Some(seat("gemini")));
        assert!(config.verifier.is_some());
        assert_eq!(config.board_hook.as_deref(), Some("./sync-tracker.sh"));
        assert_eq!(
            resolved.options.rules,
            Some(texts(&["CONTRIBUTING.md", "docs/style.md"]))
        );
        assert!(!config.preflight);
        assert_eq!(config.max_wait, Duration::from_mins(90));
        assert_eq!(config.outage_wait, Duration::from_secs(45));
        assert_eq!(config.stall_timeout, Duration::ZERO);
        assert_eq!(config.worktrees, WorktreeMode::Fresh);
        let prices = config.prices;
        assert_eq!(
            prices.price_of("aider"),
            Some(Price::new(0.5, 1.5).unwrap())
        );
        assert_eq!(
            prices.price_of("claude-opus-4-1"),
            Some(Price::new(15.0, 75.0).unwrap())
        );
        // Not overridden: the built-in price.
        assert_eq!(
            prices.price_of("claude"),
            Some(Price::new(3.0, 15.0).unwrap())
        );
    }

    #[test]
    fn no_input_panics() {
        for text in [
            "",
            "=",
            "[",
            "concurrency = 1e99",
            "turn_timeout = -9223372036854775808",
            "reviewer = \"claude\"",
            "prices = 3",
            "[prices]\n\"\" = { input = 0, output = 0 }",
            "gate = [\"\"]",
            "coder = \"exec:\"",
            "é = 1",
            "\u{feff}base = \"x\"",
        ] {
            drop(RunOptions::parse(text));
        }
    }
}
