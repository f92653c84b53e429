//! The options of `epic run`, each defined once ([`RunOptions`]), and how their three layers
//! meet: the flags over `epic.toml` over the executor's defaults.
//!
//! [`RunOptions`] is at once the command line's run options (clap), the file `epic.toml` (serde:
//! every key optional, unknown keys refused), `epic config`'s output, and the file's JSON Schema
//! (`epic schema config`); each field's doc comment is its `--help` text and its schema
//! description. A new option is one field (its doc, its flag's value name) and one line in each
//! of the two conversions from and to the executor's [`RunConfig`], whose types differ; the rest
//! is generic over the fields:
//!
//! - [`RunOptions::over`] lays one layer over another, key by key, through the keys serde writes;
//!   [`keys`] lists them in order from serde too;
//! - [`RunOptions::defaults`] reads the defaults from [`RunConfig::new`], the one place they are
//!   written;
//! - [`resolve`] layers the flags over the file over the defaults into a [`Resolved`], which
//!   [`Resolved::run_config`] turns into the executor's [`RunConfig`];
//! - [`resolve_rerun`], for `epic run`, slips one more layer between the file and the defaults:
//!   the options the epic's last run recorded ([`LastRun`]), and says what it took from them and
//!   which seats and gates changed.
//!
//! The value types ([`Count`], [`Seconds`], [`SeatSpec`], [`NonBlank`], and the executor's
//! [`Policy`]) check themselves the same way whether they come from the file (serde) or from a
//! flag (`FromStr`, `ValueEnum`), so a value is refused for the same reason and in the same words
//! wherever it is written.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use epic_executor::{
    CommandSeat, NoopPolicy, Policy, Preset, RunConfig, SandboxMode, ScriptSeat, UserHome,
    WorktreeMode,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::error::{CommandError, Kind};

/// The config file's name, at the repository root.
pub(crate) const FILE_NAME: &str = "epic.toml";

/// The longest timeout accepted, in seconds (30 days): far beyond any sensible turn, and far
/// below what would overflow a deadline computed from it.
pub(crate) const MAX_TIMEOUT: u64 = 30 * 24 * 60 * 60;

/// The options of `epic run` (CONTRACT.md), each optional: `None` is "not set in this layer".
///
/// One layer is `epic.toml` ([`load`](Self::load)), one the command line (`epic run` and `epic
/// config` flatten this into their arguments; a list flag given replaces the file's whole list,
/// and each on/off option has a `--no-…` form to turn off what `epic.toml` turns on), one the
/// defaults ([`defaults`](Self::defaults)); [`resolve`] lays them over each other.
///
/// The fields are in CONTRACT.md's order, which `epic config` prints them in ([`keys`]); each
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
    /// `aider`, `opencode`, `script`) or `exec:COMMAND`. Required, here or as `--coder`.
    #[arg(
        long,
        value_name = "SEAT",
        help = "The agent that plans and implements: claude, codex, gemini, aider, opencode, \
                script or exec:COMMAND [required here or in epic.toml]"
    )]
    pub(crate) coder: Option<SeatSpec>,

    /// The story-level judge, a seat like `coder`; unset, no judge rounds.
    #[arg(long, value_name = "SEAT")]
    pub(crate) judge: Option<SeatSpec>,

    /// The per-task reviewers, seats like `coder`.
    #[arg(
        long,
        value_name = "SEAT",
        help = "A per-task reviewer, a seat; repeatable"
    )]
    pub(crate) reviewer: Option<Vec<SeatSpec>>,

    /// The architect of `epic plan`, which splits an epic into a plan: a seat like `coder`; unset,
    /// the coder. (Only `epic plan` reads it.)
    #[arg(
        long,
        value_name = "SEAT",
        help = "The architect, which splits an epic into a plan: claude, codex, gemini, aider, \
                opencode, script or exec:COMMAND; unset, the coder"
    )]
    pub(crate) architect: Option<SeatSpec>,

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

    /// Deadline of one agent turn in seconds (1 to 2592000); the turn's whole process group is
    /// killed when it passes.
    #[arg(long, value_name = "SECS")]
    pub(crate) turn_timeout: Option<Seconds>,

    /// Deadline of one gate command in seconds (1 to 2592000).
    #[arg(long, value_name = "SECS")]
    pub(crate) gate_timeout: Option<Seconds>,

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
    /// worktrees and the epic's state read-only: `auto` where `bwrap` works (saying once when it
    /// does not), `on` or the run does not start (exit 2), `off` uncontained.
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

    /// Settles the `BLOCKED_ON` claims the plan cannot settle, in a read-only turn: a seat like
    /// `coder`; unset, such a claim fails its story.
    #[arg(long, value_name = "SEAT")]
    pub(crate) verifier: Option<SeatSpec>,
    /// A command run with `sh -c` in the epic's worktree on every move of a story on the board
    /// (planned, active, done, failed, skipped), the story's card as one JSON object on its
    /// standard input, to sync an outside tracker; a hook that fails or runs past 30 s is an
    /// event, never a failed story; unset, only `board.md` shows the board.
    #[arg(long, value_name = "CMD")]
    pub(crate) board_hook: Option<NonBlank>,

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

    /// Check each seat before the first story, without spending a token: its program is
    /// installed and, for `claude`, `codex` and `gemini`, signed in (an API key or token in the
    /// environment, a Codex model provider of its own with its key, `claude auth status`,
    /// `codex login status`, Gemini's auth settings). A seat that fails its check stops the run
    /// before anything starts (exit 2).
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
            setup: Some(texts(config.setup)),
            keep_worktrees: Some(config.keep_worktrees),
            allow_red_baseline: Some(config.allow_red_baseline),
            preflight: Some(config.preflight),
            schedule: Some(config.schedule),
            merge_batch: u32::try_from(config.merge_batch).ok().and_then(Count::new),
            test_pattern: Some(texts(config.test_patterns)),
            sandbox: Some(config.sandbox),
            // No store: `RunConfig::new` exposes none (a unit test holds it to that).
            expose: Some(Vec::new()),
            budget_usd: config
                .budget_usd
                .and_then(|usd| Dollars::try_from(usd).ok()),
            noop: Some(config.noop),
            board_hook: config.board_hook.and_then(NonBlank::new),
            // No files: `RunConfig::new` has no house rules (`extra_rules` is empty; a unit test
            // holds it to that). The CLI reads the files into it ([`house_rules`]).
            rules: Some(Vec::new()),
            max_wait: Wait::new(config.max_wait),
            outage_wait: Wait::new(config.outage_wait),
            worktrees: Some(config.worktrees),
            // No overrides: the executor's own price table ([`Resolved::run_config`]).
            prices: Some(BTreeMap::new()),
            ..Self::default()
        }
    }

    /// These options as the command line gave them: each `--no-…` flag turns its option off.
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
        given
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
    fn values(&self) -> serde_json::Map<String, serde_json::Value> {
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

/// The run options one command reads, by key: each command takes only the flags of those
/// ([`OptionsOf`]).
pub(crate) trait Reads:
    fmt::Debug + Clone + Default + PartialEq + Send + Sync + 'static
{
    /// Whether the command reads option `key`.
    fn reads(key: &str) -> bool;
    /// The heading of these options in the command's `--help`.
    const HEADING: &'static str;
}

/// The options `epic run` and `epic config` read: all but the architect, which only `epic plan`
/// reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForRun;

impl Reads for ForRun {
    fn reads(key: &str) -> bool {
        key != "architect"
    }
    const HEADING: &'static str = "Run options (also settable in epic.toml; flags win)";
}

/// The options landing reads (`epic land`): the coder, who resolves conflicts and red gates, its
/// rounds and turns, the gates, the test guard's patterns, the sandbox and what it shows, the
/// house rules, the budget, the seat pauses and the prices (`epic.toml` only), and the epic
/// branch.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForLanding;

impl ForLanding {
    /// The keys, in [`keys`] order.
    pub(crate) const KEYS: [&'static str; 14] = [
        "epic_branch",
        "coder",
        "gate",
        "max_rounds",
        "turn_timeout",
        "gate_timeout",
        "test_pattern",
        "sandbox",
        "expose",
        "budget_usd",
        "max_wait",
        "rules",
        "outage_wait",
        "prices",
    ];
}

impl Reads for ForLanding {
    fn reads(key: &str) -> bool {
        Self::KEYS.contains(&key)
    }
    const HEADING: &'static str =
        "Run options (flags over epic.toml over the epic's last run's options)";
}

/// The options `epic plan` reads: the architect and its sandbox (and from `epic.toml` the coder,
/// the turn timeout and the prices, which it has no flags for).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForPlanning;

impl Reads for ForPlanning {
    fn reads(key: &str) -> bool {
        matches!(key, "architect" | "sandbox")
    }
    const HEADING: &'static str = "Architect options (also settable in epic.toml; flags win)";
}

/// The run options a command reads ([`Reads`]), as its flags: those of [`RunOptions`] (each
/// defined there once, with its help, value name and value parser) whose key it reads, the
/// others not accepted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OptionsOf<R> {
    /// The options given; those the command does not read are unset.
    pub(crate) options: RunOptions,
    reads: std::marker::PhantomData<R>,
}

impl<R: Reads> OptionsOf<R> {
    /// The flags of [`RunOptions`] this command takes (an option's `--no-…` negation with it).
    fn flags() -> impl Iterator<Item = clap::Arg> {
        let all = <RunOptions as clap::Args>::augment_args(clap::Command::new("epic"));
        all.get_arguments()
            .filter(|arg| {
                let id = arg.get_id().as_str();
                R::reads(id) || id.strip_prefix("no_").is_some_and(R::reads)
            })
            .cloned()
            .collect::<Vec<_>>()
            .into_iter()
    }
}

impl<R: Reads> clap::Args for OptionsOf<R> {
    fn augment_args(command: clap::Command) -> clap::Command {
        Self::flags().fold(command, |command, arg| {
            command.arg(arg.help_heading(R::HEADING))
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl<R: Reads> clap::FromArgMatches for OptionsOf<R> {
    /// The options given, read by [`RunOptions`]' own parser: the flags given, as they were
    /// given, parsed again with every run option defined (so each value goes through the one
    /// definition of its type).
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut words = Vec::new();
        for arg in Self::flags() {
            let id = arg.get_id().as_str();
            if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
                continue;
            }
            let Some(long) = arg.get_long() else {
                continue;
            };
            let takes_values = arg.get_action().takes_values()
                && arg.get_num_args().is_none_or(|n| n.max_values() > 0);
            if takes_values {
                for value in matches.get_raw(id).into_iter().flatten() {
                    let mut word = std::ffi::OsString::from(format!("--{long}="));
                    word.push(value);
                    words.push(word);
                }
            } else {
                words.push(format!("--{long}").into());
            }
        }
        let all = <RunOptions as clap::Args>::augment_args(
            clap::Command::new("epic").no_binary_name(true),
        );

        let options = <RunOptions as clap::FromArgMatches>::from_arg_matches(
            &all.try_get_matches_from(words)?,
        )?;
        Ok(Self {
            options,
            reads: std::marker::PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
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

/// The keys of `epic.toml`, in [`RunOptions`]' order (CONTRACT.md's, the order `epic config`
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

/// Every `epic run` option resolved ([`resolve`]): the flags over `epic.toml` over the defaults.
/// What `epic run` hands to the executor ([`run_config`](Self::run_config)); `epic config`
/// prints it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    /// The coder, the option without a default.
    pub(crate) coder: SeatSpec,
    /// Every option, each set but those without a default (`epic_branch`, `judge`, `verifier`); serialised
    /// (for `epic config --format json`) with the config file's keys, timeouts in seconds.
    pub(crate) options: RunOptions,
}

/// `flags` over `file` over the defaults, the coder perhaps still unset.
pub(crate) fn merged(file: &RunOptions, flags: &RunOptions) -> RunOptions {
    flags.given().over(&file.over(&RunOptions::defaults()))
}

/// The options `epic run` uses: `flags` over `file` over the defaults.
///
/// The only option without a default is the coder; without one this fails (exit 2) with a hint
/// naming both places to set it.
pub(crate) fn resolve(file: &RunOptions, flags: &RunOptions) -> Result<Resolved, CommandError> {
    let options = merged(file, flags);
    if options
        .expose
        .as_ref()
        .is_some_and(|stores| !stores.is_empty())
    {
        exposed(&options, user_home().as_ref())?;
    }
    let Some(coder) = options.coder.clone() else {
        return Err(CommandError::new(
            Kind::Config,
            crate::error::Message::new("no coder seat: `epic run` needs one"),
        )
        .hint(
            "pass `--coder SEAT` (claude, codex, gemini, aider, opencode, script or exec:COMMAND)",
        )
        .hint(format!(
            "or set `coder = \"claude\"` in {FILE_NAME} at the repository root"
        )));
    };
    Ok(Resolved { coder, options })
}

/// The user's home as the environment names it when the command starts (`HOME`, and
/// `XDG_CONFIG_HOME` where it is set): the sandbox hides the credential stores in it. None
/// where `HOME` is unset or not an absolute path: then nothing is hidden.
pub(crate) fn user_home() -> Option<UserHome> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    Some(UserHome {
        home: absolute("HOME")?,
        config_home: absolute("XDG_CONFIG_HOME"),
    })
}

/// The credential stores `options` exposes (`expose`), as absolute paths, each checked to be
/// one the sandbox hides under `home`: a path that is not (a typo, a file inside a store, a
/// path the agents see anyway) is a config error (exit 2) listing the stores.
pub(crate) fn exposed(
    options: &RunOptions,
    home: Option<&UserHome>,
) -> Result<Vec<PathBuf>, CommandError> {
    let stores = home.map(UserHome::credential_stores).unwrap_or_default();
    let mut paths = Vec::new();
    for store in options.expose.iter().flatten() {
        let Some(path) = store.path(home) else {
            return Err(CommandError::new(
                Kind::Config,
                crate::error::Message::new(format!(
                    "`expose` names `{store}`, but HOME is not set: there is no home to \
                     read `~` as"
                )),
            )
            .hint("write the store's absolute path, or run with HOME set"));
        };
        if !stores.contains(&path) {
            let shown: Vec<String> = stores
                .iter()
                .map(|store| match home {
                    Some(home) => match store.strip_prefix(&home.home) {
                        Ok(rest) => format!("~/{}", rest.display()),
                        Err(_) => store.display().to_string(),
                    },
                    None => store.display().to_string(),
                })
                .collect();
            return Err(CommandError::new(
                Kind::Config,
                crate::error::Message::new(format!(
                    "`expose` names `{store}` (`{}`), which is not a credential store the \
                     sandbox hides",
                    path.display()
                )),
            )
            .hint(format!(
                "the stores it hides, each of which `--expose` (or `expose` in {FILE_NAME}) can \
                 show: {}",
                if shown.is_empty() {
                    "none (HOME is not set)".to_owned()
                } else {
                    shown.join(", ")
                }
            ))
            .hint("every other path is visible to the agents as it is"));
        }
        paths.push(path);
    }
    Ok(paths)
}

/// The options a run was given, kept in the epic's state ([`EpicDir::run_options`]) for the next
/// run: the flags over `epic.toml` over the run before's, not the defaults (a newer build's
/// defaults apply to a rerun), and never the architect (`epic run` does not read it) nor the
/// prices (only `epic.toml` sets them, and they change no outcome: a rerun would keep prices
/// removed from the file without a flag to show them by).
///
/// [`EpicDir::run_options`]: epic_state_store::EpicDir::run_options
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct LastRun(pub(crate) RunOptions);

impl epic_state_store::Document for LastRun {
    const NAME: &'static str = "run options";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "remove it, and give the run its options again (the next run records them)";
}

/// The options of a run that may follow another ([`resolve_rerun`]): what it runs with, what it
/// records for the next one, and what to tell the user about them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rerun {
    /// What the run uses.
    pub(crate) resolved: Resolved,
    /// What the run records ([`LastRun`]).
    pub(crate) record: RunOptions,
    /// Lines for stderr, before the run: the options taken from the last run, each seat or gate
    /// list that changed since it, and a warning when no gate proves a merge.
    pub(crate) lines: Vec<String>,
}

/// The options that decide what proves a merge and who works, with how a message names them.
const WATCHED: [(&str, &str); 5] = [
    ("coder", "the coder"),
    ("judge", "the judge"),
    ("reviewer", "the reviewers"),
    ("verifier", "the verifier"),
    ("gate", "the gates"),
];

/// The options `epic run` uses: `flags` over `file` over `last` (the options the last run of the
/// epic recorded, if any) over the defaults.
///
/// Fails like [`resolve`] without a coder in any layer.
pub(crate) fn resolve_rerun(
    file: &RunOptions,
    flags: &RunOptions,
    last: Option<&RunOptions>,
) -> Result<Rerun, CommandError> {
    let given = flags.given().over(file);
    let mut record = given.over(last.unwrap_or(&RunOptions::default()));
    record.architect = None;
    record.prices.clone_from(&file.prices);
    let resolved = resolve(&record, &RunOptions::default())?;
    record.prices = None;
    let mut lines = Vec::new();
    if let Some(last) = last {
        let set = given.values();
        let reused: Vec<&str> = last
            .keys_set()
            .into_iter()
            .filter(|key| !set.contains_key(*key) && has_flag(key))
            .collect();
        if !reused.is_empty() {
            lines.push(format!(
                "using the options of the last run: {}",
                last.as_flags(&reused)
            ));
        }
        let defaults = RunOptions::defaults();
        let (before, now) = (last.over(&defaults), record.over(&defaults));
        let (before_values, now_values) = (before.values(), now.values());
        for (key, what) in WATCHED {
            if before_values.get(key) != now_values.get(key) {
                lines.push(format!(
                    "{what} changed since the last run: was {}, now {}",
                    before.as_flags_or_none(key),
                    now.as_flags_or_none(key)
                ));
            }
        }
    }
    if resolved.options.gate.as_ref().is_none_or(Vec::is_empty) {
        lines.push(format!(
            "warning: no gate: nothing proves a merge (a story merges on its agents' word \
             alone); pass `--gate CMD` or set `gate` in {FILE_NAME}"
        ));
    }
    Ok(Rerun {
        resolved,
        record,
        lines,
    })
}

/// Whether option `key` has a flag of the same name (`prices` and `architect` are set only in
/// `epic.toml`).
fn has_flag(key: &str) -> bool {
    !matches!(key, "prices" | "architect")
}

impl RunOptions {
    /// The options `keys` as `epic run` flags, each value quoted for a POSIX shell where it needs
    /// it: `--coder exec:./agent.sh --gate 'cargo test'`. An empty list reads `no --gate`.
    pub(crate) fn as_flags(&self, keys: &[&str]) -> String {
        use serde_json::Value;
        let values = self.values();
        let mut words = Vec::new();
        for key in keys {
            let Some(value) = values.get(*key) else {
                continue;
            };
            let flag = format!("--{}", key.replace('_', "-"));
            let text = |value: &Value| match value {
                Value::String(text) => shell_quote(text),
                other => shell_quote(&other.to_string()),
            };
            match value {
                Value::Bool(true) => words.push(flag),
                Value::Bool(false) => words.push(format!("--no-{}", &flag[2..])),
                Value::Array(items) if items.is_empty() => words.push(format!("no {flag}")),
                Value::Array(items) => {
                    for item in items {
                        words.push(format!("{flag} {}", text(item)));
                    }
                }
                other => words.push(format!("{flag} {}", text(other))),
            }
        }
        words.join(" ")
    }

    /// Option `key` as flags ([`as_flags`](Self::as_flags)), or `none` when it is unset or an
    /// empty list.
    fn as_flags_or_none(&self, key: &str) -> String {
        match self.values().get(key) {
            None => "none".to_owned(),
            Some(serde_json::Value::Array(items)) if items.is_empty() => "none".to_owned(),
            Some(_) => self.as_flags(&[key]),
        }
    }
}

/// `text` as one word for a POSIX shell, quoted by [`shlex`] where it needs quoting; a NUL byte,
/// which no shell word can hold, is shown escaped (the line is for people to read).
pub(crate) fn shell_quote(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| text.escape_default().to_string(), Into::into)
}

impl Resolved {
    /// What the executor runs with: [`RunConfig::new`] with each option set here, each seat made
    /// a running agent, the config's price overrides over the executor's prices.
    pub(crate) fn run_config(&self) -> RunConfig {
        /// `value`, if set, in `slot`.
        fn set<T>(slot: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *slot = value;
            }
        }
        let texts = |texts: &Option<Vec<NonBlank>>| {
            texts
                .as_ref()
                .map(|t| t.iter().map(NonBlank::to_string).collect())
        };
        let options = &self.options;
        let mut config = RunConfig::new(self.coder.to_seat());
        set(
            &mut config.base,
            options.base.as_ref().map(NonBlank::to_string),
        );
        set(
            &mut config.epic_branch,
            options
                .epic_branch
                .as_ref()
                .map(|branch| Some(branch.to_string())),
        );
        set(&mut config.concurrency, options.concurrency.map(Count::size));
        set(&mut config.fail_fast, options.fail_fast);
        set(
            &mut config.judge,
            options.judge.as_ref().map(|judge| Some(judge.to_seat())),
        );
        set(
            &mut config.reviewers,
            options
                .reviewer
                .as_ref()
                .map(|seats| seats.iter().map(SeatSpec::to_seat).collect()),
        );
        set(&mut config.gates, texts(&options.gate));
        set(
            &mut config.judge_rounds,
            options.judge_rounds.map(Count::get),
        );
        set(&mut config.max_rounds, options.max_rounds.map(Count::get));
        set(&mut config.max_tasks, options.max_tasks.map(Count::size));
        set(
            &mut config.turn_timeout,
            options.turn_timeout.map(Seconds::duration),
        );
        set(
            &mut config.gate_timeout,
            options.gate_timeout.map(Seconds::duration),
        );
        set(&mut config.setup, texts(&options.setup));
        set(&mut config.keep_worktrees, options.keep_worktrees);
        set(&mut config.allow_red_baseline, options.allow_red_baseline);
        set(&mut config.preflight, options.preflight);
        set(&mut config.schedule, options.schedule);
        set(&mut config.merge_batch, options.merge_batch.map(Count::size));
        set(&mut config.test_patterns, texts(&options.test_pattern));
        set(&mut config.sandbox, options.sandbox);
        config.home = user_home();
        set(&mut config.expose, self.expose_paths(config.home.as_ref()));
        set(
            &mut config.budget_usd,
            options.budget_usd.map(|usd| Some(usd.get())),
        );
        set(&mut config.noop, options.noop);
        set(
            &mut config.verifier,
            options
                .verifier
                .as_ref()
                .map(|verifier| Some(verifier.to_seat())),
        );
        set(
            &mut config.board_hook,
            options
                .board_hook
                .as_ref()
                .map(|command| Some(command.to_string())),
        );
        set(&mut config.max_wait, options.max_wait.map(Wait::duration));
        set(
            &mut config.outage_wait,
            options.outage_wait.map(Wait::duration),
        );
        set(&mut config.worktrees, options.worktrees);
        config.prices = config.prices.clone().merge(self.price_overrides());
        config
    }

    /// The stores `expose` names, as paths from `home` (each checked when the options were
    /// resolved: [`exposed`]).
    fn expose_paths(&self, home: Option<&UserHome>) -> Option<Vec<PathBuf>> {
        let stores = self.options.expose.as_ref()?;
        Some(stores.iter().filter_map(|store| store.path(home)).collect())
    }

    /// The config's price overrides as a table, the most specific prefix first.
    fn price_overrides(&self) -> epic_report::PriceTable {
        let mut overrides: Vec<(&String, &PriceOverride)> =
            self.options.prices.iter().flatten().collect();
        // A table tries its rates in order; the most specific prefix must come first.
        overrides.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(b.0)));
        overrides.into_iter().fold(
            epic_report::PriceTable::empty(),
            |table, (prefix, price)| table.with(prefix.clone(), price.price()),
        )
    }
}

/// The most of one rules file an agent's prompt carries, in bytes: a house-rules file is a page
/// or two; beyond this, the prompt says the file goes on.
pub(crate) const RULES_FILE_CAP: usize = 32 * 1024;

/// The house rules every agent's prompt carries ([`RunConfig::extra_rules`]): the text of each
/// file of `rules` (a relative path from the repository `root`), in order, each under a heading
/// naming it, each cut at [`RULES_FILE_CAP`] bytes with a note; empty without files. A file that
/// cannot be read is an error naming it.
pub(crate) fn house_rules(root: &Path, rules: &[NonBlank]) -> Result<String, ConfigError> {
    let mut out = String::new();
    for rule in rules {
        let name = rule.to_string();
        let path = root.join(&name);
        let bytes = fs::read(&path).map_err(|source| ConfigError::Rules {
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let end = text.floor_char_boundary(RULES_FILE_CAP);
        let cut = if end < text.len() {
            format!(
                "\n[… the file goes on: {} more bytes left out …]",
                text.len() - end
            )
        } else {
            String::new()
        };
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "## {name}\n\n{}{cut}", &text[..end]);
    }
    Ok(out)
}

/// An agent seat: a preset, the built-in script seat, or `exec:COMMAND`, a shell command; what
/// `--coder`, `--judge` and `--reviewer` name ([`to_seat`](Self::to_seat) makes it the executor's
/// [`Seat`](epic_executor::Seat), the agent that runs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) enum SeatSpec {
    /// A preset agent CLI.
    Preset(Preset),
    /// The built-in script seat (`epic demo`, tests): runs no model.
    Script,
    /// `exec:COMMAND`: the command, run with `sh -c`, never blank.
    Exec(String),
}

impl SeatSpec {
    /// The agent this seat names: a preset's command line, the built-in script seat, or the
    /// `exec:` command run with `sh -c`.
    pub(crate) fn to_seat(&self) -> Arc<dyn epic_executor::Seat> {
        match self {
            Self::Preset(preset) => Arc::new(CommandSeat::preset(*preset)),
            Self::Script => Arc::new(ScriptSeat),
            Self::Exec(command) => Arc::new(CommandSeat::shell(command.clone())),
        }
    }
}

impl fmt::Display for SeatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Preset(preset) => f.write_str(preset.name()),
            Self::Script => f.write_str("script"),
            Self::Exec(command) => write!(f, "exec:{command}"),
        }
    }
}

impl FromStr for SeatSpec {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        if let Some(command) = text.strip_prefix("exec:") {
            return if command.trim().is_empty() {
                Err(ValueError(
                    "`exec:` needs a command after it, such as `exec:./agent.sh`".into(),
                ))
            } else {
                Ok(Self::Exec(command.to_owned()))
            };
        }
        if text == "script" {
            return Ok(Self::Script);
        }
        text.parse().map(Self::Preset).map_err(|_| {
            ValueError(format!(
                "unknown seat `{text}`: expected claude, codex, gemini, aider, opencode, script \
                 or exec:COMMAND"
            ))
        })
    }
}

impl TryFrom<String> for SeatSpec {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        text.parse()
    }
}

impl From<SeatSpec> for String {
    fn from(seat: SeatSpec) -> Self {
        seat.to_string()
    }
}

impl JsonSchema for SeatSpec {
    fn schema_name() -> Cow<'static, str> {
        "Seat".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An agent: a preset (claude, codex, gemini, aider, opencode, script) \
                            or `exec:COMMAND`, a shell command.",
            "type": "string",
            "pattern": "^(claude|codex|gemini|aider|opencode|script|exec:.*\\S.*)$"
        })
    }
}

/// A whole number of at least 1 (concurrency, rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u32")]
pub(crate) struct Count(u32);

impl Count {
    /// `n`, if it is at least 1.
    pub(crate) fn new(n: u32) -> Option<Self> {
        (n >= 1).then_some(Self(n))
    }

    /// The number.
    pub(crate) fn get(self) -> u32 {
        self.0
    }

    /// The number as a size (`concurrency`, `merge_batch`, `max_tasks`).
    pub(crate) fn size(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl TryFrom<i64> for Count {
    type Error = ValueError;

    fn try_from(n: i64) -> Result<Self, ValueError> {
        match u32::try_from(n) {
            Ok(n) if n >= 1 => Ok(Self(n)),
            _ if n < 1 => Err(ValueError(format!(
                "expected a whole number of at least 1, not {n}"
            ))),
            _ => Err(ValueError(format!(
                "expected a whole number of at most {}, not {n}",
                u32::MAX
            ))),
        }
    }
}

impl FromStr for Count {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let n: i64 = text.trim().parse().map_err(|_| {
            ValueError(format!(
                "expected a whole number of at least 1, not `{text}`"
            ))
        })?;
        n.try_into()
    }
}

impl From<Count> for u32 {
    fn from(count: Count) -> Self {
        count.0
    }
}

impl JsonSchema for Count {
    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": u32::MAX})
    }
}

/// An amount of US dollars: a finite number above 0 (a budget).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub(crate) struct Dollars(f64);

impl Dollars {
    /// The amount.
    pub(crate) fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Dollars {
    type Error = ValueError;

    fn try_from(usd: f64) -> Result<Self, ValueError> {
        if usd.is_finite() && usd > 0.0 {
            Ok(Self(usd))
        } else {
            Err(ValueError(format!(
                "expected an amount of US dollars above 0, not {usd}"
            )))
        }
    }
}

impl FromStr for Dollars {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let usd: f64 =
            text.trim().trim_start_matches('$').parse().map_err(|_| {
                ValueError(format!("expected an amount of US dollars, not `{text}`"))
            })?;
        usd.try_into()
    }
}

impl From<Dollars> for f64 {
    fn from(usd: Dollars) -> Self {
        usd.0
    }
}

impl JsonSchema for Dollars {
    fn schema_name() -> Cow<'static, str> {
        "Dollars".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "number", "exclusiveMinimum": 0})
    }
}

/// A timeout in whole seconds, from 1 to [`MAX_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u64")]
pub(crate) struct Seconds(u64);

impl Seconds {
    /// `duration` in whole seconds, if it is from 1 to [`MAX_TIMEOUT`] of them.
    pub(crate) fn new(duration: Duration) -> Option<Self> {
        i64::try_from(duration.as_secs())
            .ok()
            .and_then(|n| Self::try_from(n).ok())
    }

    /// The timeout.
    pub(crate) fn duration(self) -> Duration {
        Duration::from_secs(self.0)
    }
}

impl TryFrom<i64> for Seconds {
    type Error = ValueError;

    fn try_from(n: i64) -> Result<Self, ValueError> {
        match u64::try_from(n) {
            Ok(n) if (1..=MAX_TIMEOUT).contains(&n) => Ok(Self(n)),
            _ => Err(ValueError(format!(
                "expected a number of seconds from 1 to {MAX_TIMEOUT} (30 days), not {n}"
            ))),
        }
    }
}

impl FromStr for Seconds {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let n: i64 = text.trim().parse().map_err(|_| {
            ValueError(format!(
                "expected a whole number of seconds of at least 1, not `{text}`"
            ))
        })?;
        n.try_into()
    }
}

impl From<Seconds> for u64 {
    fn from(seconds: Seconds) -> Self {
        seconds.0
    }
}

impl JsonSchema for Seconds {
    fn schema_name() -> Cow<'static, str> {
        "Seconds".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT})
    }
}

/// A wait of 1 second to [`MAX_TIMEOUT`]: whole seconds (`3600`), or numbers with units `s`,
/// `m`, `h`, `d` (`90m`, `1h30m`); written back in the largest whole unit (`6h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct Wait(u64);

impl Wait {
    /// `duration` in whole seconds, if it is from 1 to [`MAX_TIMEOUT`] of them.
    pub(crate) fn new(duration: Duration) -> Option<Self> {
        let secs = duration.as_secs();
        (1..=MAX_TIMEOUT).contains(&secs).then_some(Self(secs))
    }

    /// The wait.
    pub(crate) fn duration(self) -> Duration {
        Duration::from_secs(self.0)
    }
}

impl FromStr for Wait {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let invalid = || {
            ValueError(format!(
                "expected a duration such as `90m`, `6h`, `1h30m` or whole seconds, from 1 \
                 second to 30 days, not `{text}`"
            ))
        };
        let trimmed = text.trim();
        if let Ok(secs) = trimmed.parse::<u64>() {
            return Self::new(Duration::from_secs(secs)).ok_or_else(invalid);
        }
        let mut total: u64 = 0;
        let mut rest = trimmed;
        while !rest.is_empty() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let n: u64 = rest[..digits].parse().map_err(|_| invalid())?;
            let unit = match rest[digits..].chars().next() {
                Some('s') => 1,
                Some('m') => 60,
                Some('h') => 3600,
                Some('d') => 86_400,
                _ => return Err(invalid()),
            };
            total = n
                .checked_mul(unit)
                .and_then(|secs| total.checked_add(secs))
                .ok_or_else(invalid)?;
            rest = rest[digits + 1..].trim_start();
        }
        Self::new(Duration::from_secs(total)).ok_or_else(invalid)
    }
}

impl TryFrom<String> for Wait {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        text.parse()
    }
}

impl From<Wait> for String {
    fn from(wait: Wait) -> Self {
        let secs = wait.0;
        if secs.is_multiple_of(86_400) {
            format!("{}d", secs / 86_400)
        } else if secs.is_multiple_of(3600) {
            format!("{}h", secs / 3600)
        } else if secs.is_multiple_of(60) {
            format!("{}m", secs / 60)
        } else {
            format!("{secs}s")
        }
    }
}

impl JsonSchema for Wait {
    fn schema_name() -> Cow<'static, str> {
        "Wait".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^([0-9]+|([0-9]+[smhd])+)$",
            "description": "whole seconds, or numbers with units s, m, h, d (`90m`, `6h`, `1h30m`), from 1 second to 30 days"
        })
    }
}

/// A string with something other than whitespace in it (a revision, a branch, a command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct NonBlank(String);

impl NonBlank {
    /// `text`, if it is not blank.
    pub(crate) fn new(text: String) -> Option<Self> {
        Self::try_from(text).ok()
    }
}

impl fmt::Display for NonBlank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for NonBlank {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        if text.trim().is_empty() {
            Err(ValueError("expected a value, not a blank string".into()))
        } else {
            Ok(Self(text))
        }
    }
}

impl FromStr for NonBlank {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        text.to_owned().try_into()
    }
}

impl From<NonBlank> for String {
    fn from(text: NonBlank) -> Self {
        text.0
    }
}

impl JsonSchema for NonBlank {
    fn schema_name() -> Cow<'static, str> {
        "NonBlank".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "\\S"})
    }
}

/// A credential store to show to a run's agents (`--expose`): an absolute path, or `~/…` from the
/// user's home, as written (a rerun reads `~` as its own home).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct StorePath(String);

impl StorePath {
    /// The path, `~/` read as `home`'s home: none for a `~/` path without a home.
    pub(crate) fn path(&self, home: Option<&UserHome>) -> Option<PathBuf> {
        match self.0.strip_prefix("~/") {
            Some(rest) => home.map(|home| home.home.join(rest)),
            None => Some(PathBuf::from(&self.0)),
        }
    }
}

impl fmt::Display for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for StorePath {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        if text.starts_with('/') || (text.starts_with("~/") && text.len() > 2) {
            Ok(Self(text))
        } else {
            Err(ValueError(format!(
                "expected a credential store's path, absolute or from the home (`~/.ssh`), not \
                 `{text}`"
            )))
        }
    }
}

impl FromStr for StorePath {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        text.to_owned().try_into()
    }
}

impl From<StorePath> for String {
    fn from(path: StorePath) -> Self {
        path.0
    }
}

impl JsonSchema for StorePath {
    fn schema_name() -> Cow<'static, str> {
        "StorePath".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A credential store's path: absolute, or `~/…` from the home.",
            "type": "string",
            "pattern": "^(/|~/.)"
        })
    }
}

/// A price override: US dollars per million tokens, each a finite number of at least 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "RawPrice")]
pub(crate) struct PriceOverride {
    /// Dollars per million input (prompt) tokens.
    pub(crate) input: f64,
    /// Dollars per million output (reply) tokens.
    pub(crate) output: f64,
}

impl PriceOverride {
    /// As the report's price.
    pub(crate) fn price(self) -> epic_report::Price {
        // Checked when read: both figures are finite and non-negative.
        epic_report::Price::new(self.input, self.output).unwrap_or(epic_report::Price::FREE)
    }
}

/// A price override: US dollars per million tokens, each a finite number of at least 0 (the
/// form written, before its figures are checked).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PriceOverride")]
struct RawPrice {
    /// Dollars per million input (prompt) tokens.
    #[schemars(range(min = 0))]
    input: f64,
    /// Dollars per million output (reply) tokens.
    #[schemars(range(min = 0))]
    output: f64,
}

impl TryFrom<RawPrice> for PriceOverride {
    type Error = ValueError;

    fn try_from(raw: RawPrice) -> Result<Self, ValueError> {
        epic_report::Price::new(raw.input, raw.output)
            .map_err(|error| ValueError(error.to_string()))?;
        Ok(Self {
            input: raw.input,
            output: raw.output,
        })
    }
}

/// Why a value was refused; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueError(String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

/// An `epic.toml` that could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The file exists but could not be read.
    #[error("failed to read config file `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file is not UTF-8 (TOML is).
    #[error("config file `{}` is not UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// A file of house rules (`--rules`, `rules`) could not be read.
    #[error("failed to read rules file `{}`", path.display())]
    Rules {
        /// The file, as the repository root resolves it.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid TOML, or a key or value is wrong.
    #[error("invalid config file `{}`{}: {}", path.display(), error.position(), error.what())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        error: Box<ParseError>,
    },
}

/// What is wrong with the text of an `epic.toml`, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// The line and column (from 1) of the offending text, when known.
    pub(crate) location: Option<(usize, usize)>,
    /// The key the error is about (`concurrency`, `prices.claude.input`), when it is about one.
    pub(crate) key: Option<String>,
    /// An unknown key that was found instead of a known one.
    pub(crate) unknown: Option<String>,
    /// The known keys at the unknown key's place.
    pub(crate) expected: Vec<String>,
    /// The parser's message.
    pub(crate) message: String,
}

impl ParseError {
    fn new(text: &str, error: &toml::de::Error, path: Option<String>) -> Self {
        let location = error
            .span()
            .map(|span| epic_story_plan::line_column(text, span.start));
        let message = error.message().trim().to_owned();
        let (unknown, expected) = match message.strip_prefix("unknown field ") {
            Some(rest) => {
                let mut names = backticked(rest).into_iter();
                (names.next(), names.collect())
            }
            None => (None, Vec::new()),
        };
        // For an unknown key, the path ends with that key: the table is what comes before it.
        let key = match (&unknown, path) {
            (Some(unknown), Some(path)) => path
                .strip_suffix(unknown.as_str())
                .map(|table| table.trim_end_matches('.').to_owned()),
            (_, path) => path,
        };
        let key = key.filter(|path| path != "." && !path.is_empty());
        Self {
            location,
            key,
            unknown,
            expected,
            message,
        }
    }

    /// This error as a [`ConfigError`] of the file at `path`.
    fn in_file(self, path: PathBuf) -> ConfigError {
        ConfigError::Parse {
            path,
            error: Box::new(self),
        }
    }

    /// ` at line L, column C`, or nothing.
    fn position(&self) -> String {
        match self.location {
            Some((line, column)) => format!(" at line {line}, column {column}"),
            None => String::new(),
        }
    }

    /// The error without its position: an unknown key, a key and what is wrong with its value,
    /// or the parser's text.
    fn what(&self) -> String {
        match (&self.unknown, &self.key) {
            (Some(unknown), Some(table)) => format!("unknown key `{unknown}` in `{table}`"),
            (Some(unknown), None) => format!("unknown key `{unknown}`"),
            (None, Some(key)) => format!("key `{key}`: {}", self.message),
            (None, None) => self.message.clone(),
        }
    }

    /// The known key closest to the unknown one, if one is close enough to be a typo.
    fn suggestion(&self) -> Option<&str> {
        let unknown = self.unknown.as_deref()?;
        self.expected
            .iter()
            .map(|known| (strsim::levenshtein(unknown, known), known))
            .filter(|&(distance, known)| distance <= 2.max(known.len() / 4))
            .min_by_key(|&(distance, _)| distance)
            .map(|(_, known)| known.as_str())
    }
}

impl From<ConfigError> for CommandError {
    fn from(error: ConfigError) -> Self {
        let hints: Vec<String> = match &error {
            ConfigError::Read { .. } => vec!["check the file's permissions".into()],
            ConfigError::NotUtf8 { .. } => vec!["save it as UTF-8 text".into()],
            ConfigError::Rules { .. } => {
                vec!["a relative `--rules` or `rules` path is read from the repository root".into()]
            }
            ConfigError::Parse { error, .. } => {
                let mut hints = Vec::new();
                if let Some(known) = error.suggestion() {
                    hints.push(format!("did you mean `{known}`?"));
                }
                if error.unknown.is_some() {
                    hints.push(format!(
                        "known keys here: {}",
                        error
                            .expected
                            .iter()
                            .map(|key| format!("`{key}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                } else if error.key.is_some() {
                    hints.push("fix the value at the position shown".into());
                } else {
                    hints.push("fix the TOML syntax at the position shown".into());
                }
                hints.push(format!(
                    "`epic schema config` describes every key of {FILE_NAME}"
                ));
                hints
            }
        };
        hints
            .into_iter()
            .fold(Self::new(Kind::Config, error), CommandError::hint)
    }
}

/// The `` `names` `` in a serde message, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;
    use epic_report::Price;

    use super::*;

    /// The run options of a command line, as `epic run` will parse them.
    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        options: RunOptions,
    }

    fn flags(args: &[&str]) -> RunOptions {
        Flags::try_parse_from(std::iter::once("epic").chain(args.iter().copied()))
            .unwrap()
            .options
    }

    fn seat(text: &str) -> SeatSpec {
        text.parse().unwrap()
    }

    /// The options a command that reads `R` takes from `args`.
    fn options_of<R: Reads>(args: &[&str]) -> Result<RunOptions, clap::Error> {
        #[derive(Debug, clap::Parser)]
        struct Only<R: Reads> {
            #[command(flatten)]
            options: OptionsOf<R>,
        }
        Only::<R>::try_parse_from(std::iter::once("epic").chain(args.iter().copied()))
            .map(|only| only.options.options)
    }

    #[test]
    fn a_command_reads_its_options_as_the_run_options_parse_them() {
        for args in [
            &[
                "--coder",
                "exec:./a.sh --x=1",
                "--gate=-x",
                "--gate=a=b",
                "--gate",
                "c d",
            ][..],
            &[
                "--fail-fast",
                "--no-fail-fast",
                "--concurrency",
                "4",
                "--max-wait",
                "1h30m",
            ],
            &[
                "--no-preflight",
                "--keep-worktrees",
                "--schedule",
                "waves",
                "--sandbox=off",
            ],
            &[
                "--expose",
                "~/.aws",
                "--budget-usd",
                "$2.5",
                "--rules",
                "A.md",
                "--rules",
                "B.md",
            ],
            &[],
        ] {
            assert_eq!(options_of::<ForRun>(args).unwrap(), flags(args), "{args:?}");
        }
        let land = [
            "--coder",
            "claude",
            "--gate=-x",
            "--sandbox",
            "on",
            "--max-rounds",
            "5",
        ];
        assert_eq!(options_of::<ForLanding>(&land).unwrap(), flags(&land));
        let plan = ["--architect", "codex", "--sandbox", "off"];
        assert_eq!(options_of::<ForPlanning>(&plan).unwrap(), flags(&plan));
        // A bad value is refused for the same reason as by `epic run`.
        let error = options_of::<ForLanding>(&["--max-rounds", "0"]).unwrap_err();
        assert!(error.to_string().contains("at least 1"), "{error}");
        // An option the command does not read is not a flag of it.
        for args in [
            &["--concurrency", "2"][..],
            &["--judge", "claude"],
            &["--no-preflight"],
        ] {
            let error = options_of::<ForLanding>(args).unwrap_err();
            assert_eq!(
                error.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{args:?}"
            );
        }
        assert!(options_of::<ForRun>(&["--architect", "claude"]).is_err());
    }

    #[test]
    fn every_key_landing_reads_is_an_option() {
        for key in ForLanding::KEYS {
            assert!(keys().contains(&key), "{key}");
        }
    }

    fn texts(texts: &[&str]) -> Vec<NonBlank> {
        texts.iter().map(|text| text.parse().unwrap()).collect()
    }

    #[test]
    fn a_rerun_takes_flags_then_the_file_then_the_last_run() {
        let last = flags(&[
            "--coder",
            "script",
            "--gate",
            "make test",
            "--max-rounds",
            "1",
            "--fail-fast",
        ]);
        let file = RunOptions::parse("max_rounds = 4\narchitect = \"claude\"\n").unwrap();
        let rerun = resolve_rerun(&file, &flags(&["--no-fail-fast"]), Some(&last)).unwrap();
        let options = &rerun.resolved.options;
        assert_eq!(rerun.resolved.coder, SeatSpec::Script);
        assert_eq!(options.gate, Some(texts(&["make test"])));
        assert_eq!(options.max_rounds, Count::new(4));
        assert_eq!(options.fail_fast, Some(false));
        // What is recorded: no defaults, no architect.
        assert_eq!(rerun.record.architect, None);
        assert_eq!(rerun.record.concurrency, None);
        let priced = RunOptions {
            prices: Some(BTreeMap::new()),
            ..last.clone()
        };
        let file = RunOptions::parse("[prices.claude]\ninput = 1.0\noutput = 2.0\n").unwrap();
        let rerun_priced = resolve_rerun(&file, &flags(&[]), Some(&priced)).unwrap();
        assert_eq!(rerun_priced.record.prices, None);
        assert_eq!(rerun_priced.resolved.options.prices, file.prices);
        assert_eq!(
            rerun.lines,
            ["using the options of the last run: --coder script --gate 'make test'"]
        );
    }

    #[test]
    fn a_first_run_records_what_it_was_given_and_warns_without_a_gate() {
        let rerun = resolve_rerun(
            &RunOptions::default(),
            &flags(&["--coder", "script", "--setup", "npm ci"]),
            None,
        )
        .unwrap();
        assert_eq!(rerun.record.setup, Some(texts(&["npm ci"])));
        assert_eq!(rerun.lines.len(), 1);
        assert!(
            rerun.lines[0].starts_with("warning: no gate: nothing proves a merge"),
            "{:?}",
            rerun.lines
        );
    }

    #[test]
    fn a_rerun_says_which_seats_and_gates_changed() {
        let last = flags(&[
            "--coder",
            "script",
            "--judge",
            "codex",
            "--verifier",
            "gemini",
            "--gate",
            "true",
        ]);
        let now = flags(&[
            "--coder",
            "claude",
            "--verifier",
            "codex",
            "--gate",
            "true",
            "--gate",
            "false",
        ]);
        let file = RunOptions::parse("judge = \"codex\"\n").unwrap();
        let rerun = resolve_rerun(&file, &now, Some(&last)).unwrap();
        assert_eq!(
            rerun.lines,
            [
                "the coder changed since the last run: was --coder script, now --coder claude",
                "the verifier changed since the last run: was --verifier gemini, now --verifier \
                 codex",
                "the gates changed since the last run: was --gate true, now --gate true --gate \
                 false",
            ]
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("plan.json"), "plan.json");
        assert_eq!(shell_quote("exec:./agent.sh"), "exec:./agent.sh");
        assert_eq!(shell_quote("my plan.md"), "'my plan.md'");
        assert_eq!(shell_quote("it's"), "\"it's\"");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn defaults_follow_the_contract() {
        let resolved = resolve(&RunOptions::default(), &flags(&["--coder", "claude"])).unwrap();
        assert_eq!(resolved.coder, SeatSpec::Preset(Preset::Claude));
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
        assert_eq!(config.schedule, Policy::CriticalPath);
        assert_eq!(config.test_patterns, epic_executor::DEFAULT_TEST_PATTERNS);
        assert_eq!(config.sandbox, SandboxMode::Auto);
        assert!(config.expose.is_empty());
        assert_eq!(config.noop, NoopPolicy::Complete);
        assert!(config.verifier.is_none());
        assert!(config.board_hook.is_none() && config.extra_rules.is_empty());
        assert!(config.preflight);
        assert_eq!(config.max_wait, Duration::from_hours(6));
        assert_eq!(config.outage_wait, Duration::from_mins(2));
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
                setup: Some(vec![]),
                keep_worktrees: Some(false),
                allow_red_baseline: Some(false),
                schedule: Some(Policy::CriticalPath),
                merge_batch: Count::new(16),
                test_pattern: Some(texts(epic_executor::DEFAULT_TEST_PATTERNS)),
                sandbox: Some(SandboxMode::Auto),
                expose: Some(vec![]),
                noop: Some(NoopPolicy::Complete),
                rules: Some(vec![]),
                worktrees: Some(WorktreeMode::Warm),
                preflight: Some(true),
                max_wait: Wait::new(Duration::from_hours(6)),
                outage_wait: Wait::new(Duration::from_mins(2)),
                prices: Some(BTreeMap::new()),
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
    fn an_exposed_path_must_be_a_hidden_store() {
        let home = UserHome {
            home: "/home/ann".into(),
            config_home: Some("/xdg".into()),
        };
        let exposing = |paths: &[&str]| {
            let mut args = vec!["--coder", "script"];
            for path in paths {
                args.extend(["--expose", path]);
            }
            exposed(&flags(&args).given(), Some(&home))
        };
        assert_eq!(
            exposing(&["~/.ssh", "/xdg/gh", "/home/ann/.config/gh/"]).unwrap(),
            [
                PathBuf::from("/home/ann/.ssh"),
                PathBuf::from("/xdg/gh"),
                PathBuf::from("/home/ann/.config/gh")
            ]
        );
        for wrong in ["~/.sshh", "~/.ssh/id_ed25519", "~/.codex", "/etc"] {
            let error = exposing(&[wrong]).unwrap_err();
            assert_eq!(error.exit_code(), 2);
            let text = format!("{}\n{}", error.cause().unwrap(), error.hints().join("\n"));
            assert!(
                text.contains(&format!("`{wrong}`"))
                    && text.contains("not a credential store")
                    && text.contains("~/.ssh, ~/.gnupg"),
                "{text}"
            );
        }
        let error = exposed(&flags(&["--expose", "~/.ssh"]), None).unwrap_err();
        assert!(error.cause().unwrap().contains("HOME is not set"));
        // The form is checked where it is written, by a flag or in the file.
        assert!("ssh".parse::<StorePath>().is_err() && "~/".parse::<StorePath>().is_err());
        assert!(RunOptions::parse("expose = [\".ssh\"]").is_err());
        let run = flags(&["--coder", "script", "--expose", "~/.aws"]).given();
        let config = Resolved {
            coder: SeatSpec::Script,
            options: run,
        }
        .run_config();
        let home = user_home().expect("the tests run with HOME set");
        assert_eq!(config.expose, [home.home.join(".aws")]);
        assert_eq!(config.home, Some(home));
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
        // verifier, board_hook.
        assert_eq!(checked, keys().len() - 7);
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
        assert_eq!((valued, switches), (15, 4));
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
                "turn_timeout",
                "gate_timeout",
                "setup",
                "keep_worktrees",
                "allow_red_baseline",
                "schedule",
                "merge_batch",
                "test_pattern",
                "sandbox",
                "expose",
                "budget_usd",
                "max_wait",
                "noop",
                "verifier",
                "board_hook",
                "rules",
                "worktrees",
                "outage_wait",
                "preflight",
                "prices",
            ]
        );
    }

    #[test]
    fn the_coder_is_required() {
        let error = resolve(&RunOptions::default(), &flags(&[])).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.cause().unwrap().contains("no coder seat"));
    }

    const FULL: &str = r#"
base = "main"
epic_branch = "integration/checkout"
concurrency = 5
fail_fast = true
coder = "exec:./agent.sh --fast"
judge = "codex"
reviewer = ["gemini", "claude"]
architect = "claude"
gate = ["cargo test", "cargo clippy"]
judge_rounds = 1
max_rounds = 4
max_tasks = 12
turn_timeout = 600
gate_timeout = 300
setup = ["npm ci"]
keep_worktrees = true
allow_red_baseline = true
schedule = "waves"
merge_batch = 2
test_pattern = ["qa/", "*.t"]
sandbox = "off"
expose = ["~/.ssh", "~/.config/gh"]
budget_usd = 12.5
noop = "fail"
verifier = "gemini"
board_hook = "./sync-tracker.sh"
rules = ["CONTRIBUTING.md", "docs/style.md"]
worktrees = "fresh"
preflight = false
max_wait = "1h30m"
outage_wait = "45s"

[prices]
aider = { input = 0.5, output = 1.5 }
"claude-opus" = { input = 15, output = 75 }
"#;

    #[test]
    fn waits_take_seconds_or_units() {
        let wait = |text: &str| text.parse::<Wait>().map(Wait::duration);
        assert_eq!(wait("3600"), Ok(Duration::from_hours(1)));
        assert_eq!(wait("90m"), Ok(Duration::from_mins(90)));
        assert_eq!(wait("1h30m"), Ok(Duration::from_mins(90)));
        assert_eq!(wait("2d"), Ok(Duration::from_hours(48)));
        assert!(wait("0").is_err() && wait("6 hours").is_err() && wait("31d").is_err());
        assert!(wait("h").is_err() && wait("").is_err());
        assert_eq!(
            String::from(Wait::new(Duration::from_mins(90)).unwrap()),
            "90m"
        );
        assert_eq!(
            String::from(Wait::new(Duration::from_hours(6)).unwrap()),
            "6h"
        );
    }

    #[test]
    fn every_key_parses() {
        let file = RunOptions::parse(FULL).unwrap();
        assert_eq!(file.keys_set(), keys());
        let resolved = resolve(&file, &flags(&[])).unwrap();
        assert_eq!(resolved.coder, SeatSpec::Exec("./agent.sh --fast".into()));
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
        assert_eq!(config.setup, ["npm ci"]);
        assert_eq!(config.schedule, Policy::Waves);
        assert_eq!(config.merge_batch, 2);
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
    fn the_longest_price_prefix_wins() {
        let file = RunOptions::parse(
            "[prices]\nclaude = { input = 1, output = 2 }\n\"claude-x\" = { input = 7, output = 8 }\n",
        )
        .unwrap();
        let prices = resolve(&file, &flags(&["--coder", "script"]))
            .unwrap()
            .run_config()
            .prices;
        assert_eq!(
            prices.price_of("claude-x1"),
            Some(Price::new(7.0, 8.0).unwrap())
        );
        assert_eq!(
            prices.price_of("claude"),
            Some(Price::new(1.0, 2.0).unwrap())
        );
    }

    #[test]
    fn flags_win_over_the_config() {
        let file = RunOptions::parse(FULL).unwrap();
        let resolved = resolve(
            &file,
            &flags(&[
                "--base",
                "v2",
                "--concurrency",
                "1",
                "--no-fail-fast",
                "--coder",
                "claude",
                "--reviewer",
                "aider",
                "--gate",
                "make check",
                "--turn-timeout",
                "60",
                "--schedule",
                "plan-order",
                "--no-keep-worktrees",
            ]),
        )
        .unwrap();
        assert_eq!(resolved.coder, seat("claude"));
        // A list flag replaces the whole list.
        assert_eq!(resolved.options.reviewer, Some(vec![seat("aider")]));
        // Not given as a flag: the config's.
        assert_eq!(resolved.options.judge, Some(seat("codex")));
        let config = resolved.run_config();
        assert_eq!(config.base, "v2");
        assert_eq!(config.concurrency, 1);
        assert!(!config.fail_fast && !config.keep_worktrees);
        assert_eq!(config.gates, ["make check"]);
        assert_eq!(config.turn_timeout, Duration::from_mins(1));
        assert_eq!(config.schedule, Policy::PlanOrder);
        // Not given as flags: the config's.
        assert_eq!(config.setup, ["npm ci"]);
        assert_eq!(config.gate_timeout, Duration::from_mins(5));
        assert!(config.allow_red_baseline);
    }

    #[test]
    fn a_boolean_flag_turns_on_what_the_config_leaves_off() {
        let config = resolve(
            &RunOptions::parse("fail_fast = false").unwrap(),
            &flags(&[
                "--coder",
                "claude",
                "--fail-fast",
                "--keep-worktrees",
                "--allow-red-baseline",
            ]),
        )
        .unwrap()
        .run_config();
        assert!(config.fail_fast && config.keep_worktrees && config.allow_red_baseline);
    }

    #[test]
    fn the_last_of_a_flag_and_its_negation_wins() {
        let given = |args: &[&str]| flags(args).given().fail_fast;
        assert_eq!(given(&[]), None, "neither: not set");
        assert_eq!(given(&["--fail-fast"]), Some(true));
        assert_eq!(given(&["--no-fail-fast"]), Some(false));
        assert_eq!(given(&["--fail-fast", "--no-fail-fast"]), Some(false));
        assert_eq!(given(&["--no-fail-fast", "--fail-fast"]), Some(true));
        assert_eq!(flags(&["--no-fail-fast"]).given().keys_set(), ["fail_fast"]);
    }

    #[test]
    fn bad_values_are_refused_by_flags_too() {
        for args in [
            &["--concurrency", "0"][..],
            &["--concurrency", "-2"],
            &["--max-rounds", "x"],
            &["--max-tasks", "0"],
            &["--turn-timeout", "0"],
            &["--gate-timeout", "99999999999"],
            &["--coder", "claud"],
            &["--judge", "exec: "],
            &["--schedule", "random"],
            &["--gate", " "],
            &["--fail-fast=true"],
        ] {
            let argv = std::iter::once("epic").chain(args.iter().copied());
            assert!(Flags::try_parse_from(argv).is_err(), "{args:?}");
        }
    }

    fn parse_error(text: &str) -> ParseError {
        RunOptions::parse(text).unwrap_err()
    }
    #[test]
    fn errors_name_the_key_and_position() {
        let error = parse_error("coder = \"claude\"\nconcurency = 4\n");
        assert_eq!(error.location, Some((2, 1)));
        assert_eq!(error.unknown.as_deref(), Some("concurency"));
        assert_eq!(error.suggestion(), Some("concurrency"));
        assert_eq!(error.what(), "unknown key `concurency`");

        let error = parse_error("\n\nconcurrency = 0\n");
        assert_eq!(error.location, Some((3, 15)));
        assert_eq!(error.key.as_deref(), Some("concurrency"));
        assert_eq!(
            error.what(),
            "key `concurrency`: expected a whole number of at least 1, not 0"
        );

        let error = parse_error("[prices.aider]\ninput = 1\noutptu = 2\n");
        assert_eq!(error.location.map(|l| l.0), Some(3));
        assert_eq!(error.what(), "unknown key `outptu` in `prices.aider`");
        assert_eq!(error.suggestion(), Some("output"));

        let error = parse_error("schedule = \"random\"");
        assert_eq!(error.key.as_deref(), Some("schedule"));
        assert!(error.message.contains("critical-path"), "{error:?}");

        let error = parse_error("coder = \"claud\"");
        assert_eq!(error.location, Some((1, 9)));
        assert!(
            error.message.starts_with("unknown seat `claud`"),
            "{error:?}"
        );

        let error = parse_error("[prices]\nx = { input = -1, output = 2 }\n");
        assert_eq!(error.key.as_deref(), Some("prices.x"));

        let error = parse_error("base = \n");
        assert_eq!(error.key, None);
        assert_eq!(error.location.map(|l| l.0), Some(1));
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
