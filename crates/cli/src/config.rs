//! `epic.toml`, the run options a repository sets once, and how they meet the flags.
//!
//! Three types, one per stage:
//!
//! - [`Config`]: the file as written. Every key is optional; unknown keys are refused (a typo must
//!   not silently fall back to a default); every value is checked while it is read, so an error
//!   points at the key, the line and the column ([`ConfigError::Parse`]).
//! - [`RunFlags`]: the same options given on the command line; [`Config::merge`] lays them
//!   over the file (flags win).
//! - [`RunOptions`]: what `epic run` uses: the merged values with CONTRACT.md's defaults filled in
//!   ([`RunOptions::resolve`]).
//!
//! The value types ([`Count`], [`Seconds`], [`Seat`], [`NonBlank`], [`Schedule`]) check
//! themselves the same way whether they come from the file (serde) or from a flag (`FromStr`),
//! so a value is refused for the same reason and in the same words wherever it is written.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use clap::ValueEnum;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::args::RunFlags;
use crate::error::{CliError, Kind};

/// The config file's name, at the repository root.
pub(crate) const FILE_NAME: &str = "epic.toml";

/// Where the epic branch starts by default.
pub(crate) const DEFAULT_BASE: &str = "HEAD";
/// Stories implemented at once by default.
pub(crate) const DEFAULT_CONCURRENCY: u32 = 3;
/// Judge attempts by default.
pub(crate) const DEFAULT_JUDGE_ROUNDS: u32 = 2;
/// Review rounds per task by default.
pub(crate) const DEFAULT_MAX_ROUNDS: u32 = 3;
/// Deadline of one agent turn by default, in seconds.
pub(crate) const DEFAULT_TURN_TIMEOUT: u64 = 1800;
/// Deadline of one gate command by default, in seconds.
pub(crate) const DEFAULT_GATE_TIMEOUT: u64 = 1800;
/// The longest timeout accepted, in seconds (30 days): far beyond any sensible turn, and far
/// below what would overflow a deadline computed from it.
pub(crate) const MAX_TIMEOUT: u64 = 30 * 24 * 60 * 60;

/// The keys of `epic.toml`, in CONTRACT.md's order (the order `epic config` prints them in).
pub(crate) const KEYS: &[&str] = &[
    "base",
    "epic_branch",
    "concurrency",
    "fail_fast",
    "coder",
    "judge",
    "reviewer",
    "gate",
    "judge_rounds",
    "max_rounds",
    "turn_timeout",
    "gate_timeout",
    "setup",
    "keep_worktrees",
    "allow_red_baseline",
    "schedule",
    "test_pattern",
    "prices",
];

/// `epic.toml`: the options of `epic run`, each optional; a flag given on the command line wins
/// over the same key here.
///
/// Unknown keys are an error, so a misspelt key is caught rather than ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(title = "epic.toml")]
pub(crate) struct Config {
    /// Where the epic branch starts if it does not exist yet: a git revision. Default: `HEAD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NonBlank")]
    pub(crate) base: Option<NonBlank>,
    /// The integration branch the stories merge into. Default: `epic/<epic_id>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NonBlank")]
    pub(crate) epic_branch: Option<NonBlank>,
    /// How many stories are implemented at once, at least 1. Default: 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Count")]
    pub(crate) concurrency: Option<Count>,
    /// Stop at the first failed story instead of skipping only its dependents. Default: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub(crate) fail_fast: Option<bool>,
    /// The agent that plans and implements each story: a preset (`claude`, `codex`, `gemini`,
    /// `aider`, `opencode`, `script`) or `exec:COMMAND`. Required, here or as `--coder`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Seat")]
    pub(crate) coder: Option<Seat>,
    /// The story-level judge, a seat like `coder`. Default: no judge.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Seat")]
    pub(crate) judge: Option<Seat>,
    /// The per-task reviewers, seats like `coder`. Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<Seat>")]
    pub(crate) reviewer: Option<Vec<Seat>>,
    /// Checks run with `sh -c`, per task in the story's worktree and on the epic head after each
    /// merge. Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NonBlank>")]
    pub(crate) gate: Option<Vec<NonBlank>>,
    /// Judge attempts, each but the last followed by one coder feedback round; at least 1.
    /// Default: 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Count")]
    pub(crate) judge_rounds: Option<Count>,
    /// Review rounds per task, at least 1. Default: 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Count")]
    pub(crate) max_rounds: Option<Count>,
    /// Deadline of one agent turn in seconds (1 to 2592000); the turn's whole process group is
    /// killed when it passes. Default: 1800.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Seconds")]
    pub(crate) turn_timeout: Option<Seconds>,
    /// Deadline of one gate command in seconds (1 to 2592000). Default: 1800.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Seconds")]
    pub(crate) gate_timeout: Option<Seconds>,
    /// Commands run with `sh -c` in every fresh or caught-up story worktree (dependency
    /// installs). Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NonBlank>")]
    pub(crate) setup: Option<Vec<NonBlank>>,
    /// Keep a story's worktree after it merged (its branch always stays). Default: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub(crate) keep_worktrees: Option<bool>,
    /// Start although the gates fail on the epic head; a merge is then undone only if a gate
    /// that passed on the baseline fails. Default: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub(crate) allow_red_baseline: Option<bool>,
    /// The order among ready stories. Default: `critical-path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Schedule")]
    pub(crate) schedule: Option<Schedule>,
    /// What a test file looks like: a pattern ending in `/` is a directory anywhere in the path,
    /// any other a glob (`*`) on the file name, or on the path when it holds a `/`. A story
    /// whose diff deletes such a file or adds a skip marker (`#[ignore]`, `@pytest.mark.skip`,
    /// `t.Skip(`, `xit(`, `it.skip(`, …) fails unless its plan entry sets `tests_change`.
    /// Default: `tests/`, `test/`, `__tests__/`, `spec/`, `*_test.*`, `*.test.*`, `*-test.*`,
    /// `test_*.py`, `*_spec.*`, `*.spec.*`, `*Test.java`, `*Tests.cs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NonBlank>")]
    pub(crate) test_pattern: Option<Vec<NonBlank>>,
    /// Price overrides for the report's cost estimates: a seat or model name prefix (`claude`,
    /// `aider`, `claude-opus-4`) → US dollars per million input and output tokens. The longest
    /// matching prefix wins, then the built-in prices.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) prices: BTreeMap<String, PriceOverride>,
}

impl Config {
    /// Reads `epic.toml` in `root`, the repository root: the default (every key unset) when there
    /// is no such file.
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
        let config = Self::parse(&text).map_err(|error| error.in_file(path.clone()))?;
        Ok(Some((path, config)))
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

    /// This config with `flags` laid over it: each option given on the command line replaces
    /// the file's value (a list flag replaces the file's whole list).
    #[must_use]
    pub(crate) fn merge(self, flags: &RunFlags) -> Self {
        let flags = flags.to_config();
        Self {
            base: flags.base.or(self.base),
            epic_branch: flags.epic_branch.or(self.epic_branch),
            concurrency: flags.concurrency.or(self.concurrency),
            fail_fast: flags.fail_fast.or(self.fail_fast),
            coder: flags.coder.or(self.coder),
            judge: flags.judge.or(self.judge),
            reviewer: flags.reviewer.or(self.reviewer),
            gate: flags.gate.or(self.gate),
            judge_rounds: flags.judge_rounds.or(self.judge_rounds),
            max_rounds: flags.max_rounds.or(self.max_rounds),
            turn_timeout: flags.turn_timeout.or(self.turn_timeout),
            gate_timeout: flags.gate_timeout.or(self.gate_timeout),
            setup: flags.setup.or(self.setup),
            keep_worktrees: flags.keep_worktrees.or(self.keep_worktrees),
            allow_red_baseline: flags.allow_red_baseline.or(self.allow_red_baseline),
            schedule: flags.schedule.or(self.schedule),
            test_pattern: flags.test_pattern.or(self.test_pattern),
            // Prices have no flags.
            prices: self.prices,
        }
    }

    /// The keys this config sets, in [`KEYS`] order.
    pub(crate) fn keys_set(&self) -> Vec<&'static str> {
        let value = serde_json::to_value(self).unwrap_or_default();
        KEYS.iter()
            .copied()
            .filter(|key| value.get(key).is_some())
            .collect()
    }
}

/// Every `epic run` option resolved: the config file, the flags over it, CONTRACT.md's defaults
/// under both. What `epic run` hands to the executor; `epic config` prints it.
///
/// Serialised (for `epic config --format json`) with the config file's key names, timeouts in
/// seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RunOptions {
    /// Where the epic branch starts if it does not exist yet.
    pub(crate) base: String,
    /// The integration branch, when set; `None` means `epic/<epic_id>`
    /// ([`epic_branch_for`](Self::epic_branch_for)).
    pub(crate) epic_branch: Option<String>,
    /// Stories implemented at once, at least 1.
    pub(crate) concurrency: usize,
    /// Stop at the first failed story.
    pub(crate) fail_fast: bool,
    /// The agent that plans and implements.
    pub(crate) coder: Seat,
    /// The story-level judge, if any.
    pub(crate) judge: Option<Seat>,
    /// Per-task reviewers, in order.
    #[serde(rename = "reviewer")]
    pub(crate) reviewers: Vec<Seat>,
    /// Gate commands (`sh -c`), in order.
    #[serde(rename = "gate")]
    pub(crate) gates: Vec<String>,
    /// Judge attempts, at least 1.
    pub(crate) judge_rounds: u32,
    /// Review rounds per task, at least 1.
    pub(crate) max_rounds: u32,
    /// Deadline of one agent turn, more than zero.
    #[serde(serialize_with = "as_seconds")]
    pub(crate) turn_timeout: Duration,
    /// Deadline of one gate command, more than zero.
    #[serde(serialize_with = "as_seconds")]
    pub(crate) gate_timeout: Duration,
    /// Setup commands (`sh -c`), in order.
    pub(crate) setup: Vec<String>,
    /// Keep a story's worktree after it merged.
    pub(crate) keep_worktrees: bool,
    /// Start although the gates fail on the epic head.
    pub(crate) allow_red_baseline: bool,
    /// The order among ready stories.
    pub(crate) schedule: Schedule,
    /// What a test file looks like (a story may delete or skip tests only with
    /// `tests_change`).
    #[serde(rename = "test_pattern")]
    pub(crate) test_patterns: Vec<String>,
    /// The config's price overrides ([`price_table`](Self::price_table) applies them).
    pub(crate) prices: BTreeMap<String, PriceOverride>,
}

impl RunOptions {
    /// The options `epic run` uses: `flags` over `config`, over the defaults.
    ///
    /// The only option without a default is the coder; without one this fails (exit 2) with a
    /// hint naming both places to set it.
    pub(crate) fn resolve(config: Config, flags: &RunFlags) -> Result<Self, CliError> {
        let merged = config.merge(flags);
        let Some(coder) = merged.coder else {
            return Err(CliError::new(
                Kind::Config,
                crate::error::Message::new("no coder seat: `epic run` needs one"),
            )
            .hint("pass `--coder SEAT` (claude, codex, gemini, aider, opencode, script or exec:COMMAND)")
            .hint(format!("or set `coder = \"claude\"` in {FILE_NAME} at the repository root")));
        };
        let strings = |list: Option<Vec<NonBlank>>| {
            list.unwrap_or_default()
                .into_iter()
                .map(NonBlank::into_string)
                .collect()
        };
        Ok(Self {
            base: merged
                .base
                .map_or_else(|| DEFAULT_BASE.to_owned(), NonBlank::into_string),
            epic_branch: merged.epic_branch.map(NonBlank::into_string),
            concurrency: usize::try_from(
                merged.concurrency.map_or(DEFAULT_CONCURRENCY, Count::get),
            )
            .unwrap_or(usize::MAX),
            fail_fast: merged.fail_fast.unwrap_or(false),
            coder,
            judge: merged.judge,
            reviewers: merged.reviewer.unwrap_or_default(),
            gates: strings(merged.gate),
            judge_rounds: merged.judge_rounds.map_or(DEFAULT_JUDGE_ROUNDS, Count::get),
            max_rounds: merged.max_rounds.map_or(DEFAULT_MAX_ROUNDS, Count::get),
            turn_timeout: merged
                .turn_timeout
                .map_or(Duration::from_secs(DEFAULT_TURN_TIMEOUT), Seconds::duration),
            gate_timeout: merged
                .gate_timeout
                .map_or(Duration::from_secs(DEFAULT_GATE_TIMEOUT), Seconds::duration),
            setup: strings(merged.setup),
            keep_worktrees: merged.keep_worktrees.unwrap_or(false),
            allow_red_baseline: merged.allow_red_baseline.unwrap_or(false),
            schedule: merged.schedule.unwrap_or_default(),
            test_patterns: merged.test_pattern.map_or_else(
                || {
                    epic_executor::DEFAULT_TEST_PATTERNS
                        .iter()
                        .map(|pattern| (*pattern).to_owned())
                        .collect()
                },
                |patterns| patterns.into_iter().map(NonBlank::into_string).collect(),
            ),
            prices: merged.prices,
        })
    }

    /// The epic branch of epic `epic_id`: the configured one, else `epic/<epic_id>`.
    pub(crate) fn epic_branch_for(&self, epic_id: &str) -> String {
        self.epic_branch
            .clone()
            .unwrap_or_else(|| format!("epic/{epic_id}"))
    }

    /// The report's price table: the config's overrides, longest prefix first, over the built-in
    /// prices.
    pub(crate) fn price_table(&self) -> epic_report::PriceTable {
        let mut overrides: Vec<(&String, &PriceOverride)> = self.prices.iter().collect();
        // A table tries its rates in order; the most specific prefix must come first.
        overrides.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(b.0)));
        let table = overrides.into_iter().fold(
            epic_report::PriceTable::empty(),
            |table, (prefix, price)| table.with(prefix.clone(), price.price()),
        );
        epic_report::PriceTable::default().merge(table)
    }
}

impl RunOptions {
    /// What the executor runs epic `epic_id` with: these options, each seat made a running
    /// agent, the schedule the executor's policy, the prices with the config's overrides.
    pub(crate) fn run_config(&self, epic_id: &str) -> epic_executor::RunConfig {
        let mut config = epic_executor::RunConfig::new(self.coder.to_seat());
        config.base.clone_from(&self.base);
        config.epic_branch = Some(self.epic_branch_for(epic_id));
        config.concurrency = self.concurrency;
        config.fail_fast = self.fail_fast;
        config.judge = self.judge.as_ref().map(Seat::to_seat);
        config.reviewers = self.reviewers.iter().map(Seat::to_seat).collect();
        config.gates.clone_from(&self.gates);
        config.setup.clone_from(&self.setup);
        config.judge_rounds = self.judge_rounds;
        config.max_rounds = self.max_rounds;
        config.turn_timeout = self.turn_timeout;
        config.gate_timeout = self.gate_timeout;
        config.keep_worktrees = self.keep_worktrees;
        config.allow_red_baseline = self.allow_red_baseline;
        config.schedule = self.schedule.policy();
        config.prices = self.price_table();
        config.test_patterns.clone_from(&self.test_patterns);
        config
    }
}

fn as_seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(duration.as_secs())
}

/// The order among ready stories (`--schedule`, `schedule`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Schedule {
    /// Longest remaining dependency chain first
    #[default]
    CriticalPath,
    /// The plan's order
    PlanOrder,
    /// Each wave waits for the previous one
    Waves,
}

impl Schedule {
    /// The executor's policy of the same name.
    pub(crate) fn policy(self) -> epic_executor::Policy {
        match self {
            Self::CriticalPath => epic_executor::Policy::CriticalPath,
            Self::PlanOrder => epic_executor::Policy::PlanOrder,
            Self::Waves => epic_executor::Policy::Waves,
        }
    }
}

/// A built-in agent command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Preset {
    /// Claude Code.
    Claude,
    /// `OpenAI` Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Aider.
    Aider,
    /// opencode.
    Opencode,
    /// The built-in script seat (`epic demo`, tests): runs no model.
    Script,
}

impl Preset {
    /// Every preset, in CONTRACT.md's order.
    pub(crate) const ALL: [Self; 6] = [
        Self::Claude,
        Self::Codex,
        Self::Gemini,
        Self::Aider,
        Self::Opencode,
        Self::Script,
    ];

    /// The preset's name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Aider => "aider",
            Self::Opencode => "opencode",
            Self::Script => "script",
        }
    }
}

/// An agent seat: a [`Preset`] or `exec:COMMAND`, a shell command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) enum Seat {
    /// A built-in command line.
    Preset(Preset),
    /// `exec:COMMAND`: the command, run with `sh -c`, never blank.
    Exec(String),
}

impl Seat {
    /// The agent this seat names: a preset's command line, the built-in script seat, or the
    /// `exec:` command run with `sh -c`.
    pub(crate) fn to_seat(&self) -> std::sync::Arc<dyn epic_executor::Seat> {
        use epic_executor::{CommandSeat, Preset as Cli, ScriptSeat};
        let preset = match self {
            Self::Exec(command) => return std::sync::Arc::new(CommandSeat::shell(command.clone())),
            Self::Preset(Preset::Script) => return std::sync::Arc::new(ScriptSeat),
            Self::Preset(Preset::Claude) => Cli::Claude,
            Self::Preset(Preset::Codex) => Cli::Codex,
            Self::Preset(Preset::Gemini) => Cli::Gemini,
            Self::Preset(Preset::Aider) => Cli::Aider,
            Self::Preset(Preset::Opencode) => Cli::Opencode,
        };
        std::sync::Arc::new(CommandSeat::preset(preset))
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Preset(preset) => f.write_str(preset.as_str()),
            Self::Exec(command) => write!(f, "exec:{command}"),
        }
    }
}

impl FromStr for Seat {
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
        Preset::ALL
            .into_iter()
            .find(|preset| preset.as_str() == text)
            .map(Self::Preset)
            .ok_or_else(|| {
                ValueError(format!(
                    "unknown seat `{text}`: expected claude, codex, gemini, aider, opencode, \
                     script or exec:COMMAND"
                ))
            })
    }
}

impl TryFrom<String> for Seat {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        text.parse()
    }
}

impl From<Seat> for String {
    fn from(seat: Seat) -> Self {
        seat.to_string()
    }
}

impl JsonSchema for Seat {
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
    /// The number.
    pub(crate) fn get(self) -> u32 {
        self.0
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

/// A timeout in whole seconds, from 1 to [`MAX_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u64")]
pub(crate) struct Seconds(u64);

impl Seconds {
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

/// A string with something other than whitespace in it (a revision, a branch, a command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct NonBlank(String);

impl NonBlank {
    /// The string.
    pub(crate) fn into_string(self) -> String {
        self.0
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
        let location = error.span().map(|span| line_column(text, span.start));
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
            .map(|known| (edit_distance(unknown, known), known))
            .filter(|&(distance, known)| distance <= 2.max(known.len() / 4))
            .min_by_key(|&(distance, _)| distance)
            .map(|(_, known)| known.as_str())
    }
}

impl From<ConfigError> for CliError {
    fn from(error: ConfigError) -> Self {
        let hints: Vec<String> = match &error {
            ConfigError::Read { .. } => vec!["check the file's permissions".into()],
            ConfigError::NotUtf8 { .. } => vec!["save it as UTF-8 text".into()],
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
            .fold(Self::new(Kind::Config, error), CliError::hint)
    }
}

/// The line and column (from 1, in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// The `` `names` `` in a serde message, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    /// The run flags of a command line, as `epic run` will parse them.
    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        flags: RunFlags,
    }

    fn flags(args: &[&str]) -> RunFlags {
        Flags::try_parse_from(std::iter::once("epic").chain(args.iter().copied()))
            .unwrap()
            .flags
    }

    fn seat(text: &str) -> Seat {
        text.parse().unwrap()
    }

    #[test]
    fn defaults_follow_the_contract() {
        let options =
            RunOptions::resolve(Config::default(), &flags(&["--coder", "claude"])).unwrap();
        assert_eq!(
            options,
            RunOptions {
                base: "HEAD".into(),
                epic_branch: None,
                concurrency: 3,
                fail_fast: false,
                coder: Seat::Preset(Preset::Claude),
                judge: None,
                reviewers: vec![],
                gates: vec![],
                judge_rounds: 2,
                max_rounds: 3,
                turn_timeout: Duration::from_mins(30),
                gate_timeout: Duration::from_mins(30),
                setup: vec![],
                keep_worktrees: false,
                allow_red_baseline: false,
                schedule: Schedule::CriticalPath,
                test_patterns: epic_executor::DEFAULT_TEST_PATTERNS
                    .iter()
                    .map(|pattern| (*pattern).to_owned())
                    .collect(),
                prices: BTreeMap::new(),
            }
        );
        let options = RunOptions::resolve(
            Config::default(),
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
        assert_eq!(options.test_patterns, ["qa/", "*.t"]);
        assert_eq!(
            options.run_config("e").test_patterns,
            ["qa/", "*.t"],
            "--test-pattern reaches the executor"
        );
        assert_eq!(options.epic_branch_for("checkout"), "epic/checkout");
    }

    #[test]
    fn the_coder_is_required() {
        let error = RunOptions::resolve(Config::default(), &flags(&[])).unwrap_err();
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
gate = ["cargo test", "cargo clippy"]
judge_rounds = 1
max_rounds = 4
turn_timeout = 600
gate_timeout = 300
setup = ["npm ci"]
keep_worktrees = true
allow_red_baseline = true
schedule = "waves"
test_pattern = ["qa/", "*.t"]

[prices]
aider = { input = 0.5, output = 1.5 }
"claude-opus" = { input = 15, output = 75 }
"#;

    #[test]
    fn every_key_parses() {
        let config = Config::parse(FULL).unwrap();
        assert_eq!(config.keys_set(), KEYS);
        let options = RunOptions::resolve(config, &flags(&[])).unwrap();
        assert_eq!(options.base, "main");
        assert_eq!(options.epic_branch_for("x"), "integration/checkout");
        assert_eq!(options.concurrency, 5);
        assert!(options.fail_fast && options.keep_worktrees && options.allow_red_baseline);
        assert_eq!(options.coder, Seat::Exec("./agent.sh --fast".into()));
        assert_eq!(options.judge, Some(seat("codex")));
        assert_eq!(options.test_patterns, ["qa/", "*.t"]);
        assert_eq!(options.reviewers, [seat("gemini"), seat("claude")]);
        assert_eq!(options.gates, ["cargo test", "cargo clippy"]);
        assert_eq!((options.judge_rounds, options.max_rounds), (1, 4));
        assert_eq!(options.turn_timeout, Duration::from_mins(10));
        assert_eq!(options.gate_timeout, Duration::from_mins(5));
        assert_eq!(options.setup, ["npm ci"]);
        assert_eq!(options.schedule, Schedule::Waves);
        let prices = options.price_table();
        assert_eq!(
            prices.price_of("aider"),
            Some(epic_report::Price::new(0.5, 1.5).unwrap())
        );
        assert_eq!(
            prices.price_of("claude-opus-4-1"),
            Some(epic_report::Price::new(15.0, 75.0).unwrap())
        );
        // Not overridden: the built-in price.
        assert_eq!(
            prices.price_of("claude"),
            Some(epic_report::Price::new(3.0, 15.0).unwrap())
        );
    }

    #[test]
    fn the_longest_price_prefix_wins() {
        let config = Config::parse(
            "[prices]\nclaude = { input = 1, output = 2 }\n\"claude-x\" = { input = 7, output = 8 }\n",
        )
        .unwrap();
        let options = RunOptions::resolve(config, &flags(&["--coder", "script"])).unwrap();
        let prices = options.price_table();
        assert_eq!(
            prices.price_of("claude-x1"),
            Some(epic_report::Price::new(7.0, 8.0).unwrap())
        );
        assert_eq!(
            prices.price_of("claude"),
            Some(epic_report::Price::new(1.0, 2.0).unwrap())
        );
    }

    #[test]
    fn flags_win_over_the_config() {
        let config = Config::parse(FULL).unwrap();
        let options = RunOptions::resolve(
            config,
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
        assert_eq!(options.base, "v2");
        assert_eq!(options.concurrency, 1);
        assert!(!options.fail_fast && !options.keep_worktrees);
        assert_eq!(options.coder, seat("claude"));
        // A list flag replaces the whole list.
        assert_eq!(options.reviewers, [seat("aider")]);
        assert_eq!(options.gates, ["make check"]);
        assert_eq!(options.turn_timeout, Duration::from_mins(1));
        assert_eq!(options.schedule, Schedule::PlanOrder);
        // Not given as flags: the config's.
        assert_eq!(options.judge, Some(seat("codex")));
        assert_eq!(options.setup, ["npm ci"]);
        assert_eq!(options.gate_timeout, Duration::from_mins(5));
        assert!(options.allow_red_baseline);
    }

    #[test]
    fn a_boolean_flag_turns_on_what_the_config_leaves_off() {
        let options = RunOptions::resolve(
            Config::parse("fail_fast = false").unwrap(),
            &flags(&[
                "--coder",
                "claude",
                "--fail-fast",
                "--keep-worktrees",
                "--allow-red-baseline",
            ]),
        )
        .unwrap();
        assert!(options.fail_fast && options.keep_worktrees && options.allow_red_baseline);
    }

    #[test]
    fn bad_values_are_refused_by_flags_too() {
        for args in [
            &["--concurrency", "0"][..],
            &["--concurrency", "-2"],
            &["--max-rounds", "x"],
            &["--turn-timeout", "0"],
            &["--gate-timeout", "99999999999"],
            &["--coder", "claud"],
            &["--judge", "exec: "],
            &["--schedule", "random"],
            &["--gate", " "],
        ] {
            let argv = std::iter::once("epic").chain(args.iter().copied());
            assert!(Flags::try_parse_from(argv).is_err(), "{args:?}");
        }
    }

    fn parse_error(text: &str) -> ParseError {
        Config::parse(text).unwrap_err()
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
            drop(Config::parse(text));
        }
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("concurency", "concurrency"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("gate", "gate"), 0);
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é\nx", 99), (2, 2));
    }
}
