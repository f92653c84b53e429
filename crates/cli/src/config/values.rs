//! The value types of the run options ([`Count`], [`Reruns`], [`GateJunit`], [`Seconds`], [`Wait`], [`Silence`], [`Dollars`],
//! [`NonBlank`], [`StorePath`], [`PriceOverride`]): each checks itself the same way
//! from a flag (`FromStr`) and from `epic.toml` (serde), so a value is refused for the same reason
//! and in the same words wherever it is written; each has its JSON Schema.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use std::time::Duration;

use epic_process::sandbox::UserHome;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The longest timeout accepted, in seconds (30 days): far beyond any sensible turn, and far
/// below what would overflow a deadline computed from it.
pub(crate) const MAX_TIMEOUT: u64 = 30 * 24 * 60 * 60;

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

/// How many times something is tried again, a whole number from 0 to [`MAX_RERUNS`]: a red gate
/// command run again (`gate_reruns`), a story whose merge is red sent back to its coder
/// (`merge_revisions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u32")]
pub(crate) struct Reruns(u32);

/// The most reruns accepted: each is a whole run of a gate command (or a coder's revision), and a command red eleven
/// times in a row is red.
pub(crate) const MAX_RERUNS: u32 = 10;

impl Reruns {
    /// `n`, if it is at most [`MAX_RERUNS`].
    pub(crate) fn new(n: u32) -> Option<Self> {
        (n <= MAX_RERUNS).then_some(Self(n))
    }

    /// The number.
    pub(crate) fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<i64> for Reruns {
    type Error = ValueError;

    fn try_from(n: i64) -> Result<Self, ValueError> {
        u32::try_from(n).ok().and_then(Self::new).ok_or_else(|| {
            ValueError(format!(
                "expected a whole number from 0 to {MAX_RERUNS}, not {n}"
            ))
        })
    }
}

impl FromStr for Reruns {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let n: i64 = text.trim().parse().map_err(|_| {
            ValueError(format!(
                "expected a whole number from 0 to {MAX_RERUNS}, not `{text}`"
            ))
        })?;
        n.try_into()
    }
}

impl From<Reruns> for u32 {
    fn from(reruns: Reruns) -> Self {
        reruns.0
    }
}

impl JsonSchema for Reruns {
    fn schema_name() -> Cow<'static, str> {
        "Reruns".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 0, "maximum": MAX_RERUNS})
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
/// `m`, `h`, `d`, largest first (`90m`, `1h30m`, `1h 30m`); written back in the largest whole
/// unit (`6h`).
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
        if !compact(trimmed) {
            return Err(invalid());
        }
        epic_agents::classify::duration(trimmed)
            .and_then(Self::new)
            .ok_or_else(invalid)
    }
}

/// The schema's pattern of a [`Wait`] (and a [`Silence`] other than `0`): whole seconds, or
/// numbers with units largest first, each once ([`compact`], without the spaces it allows).
const DURATION_PATTERN: &str = "^([0-9]+|[0-9]+d([0-9]+h)?([0-9]+m)?([0-9]+s)?|[0-9]+h([0-9]+m)?([0-9]+s)?|[0-9]+m([0-9]+s)?|[0-9]+s)$";

/// Whether `text` is a duration in the contract's form with units: whole numbers, each right
/// before one of `s`, `m`, `h`, `d` (`90m`, `1h30m`), spaces only between them (`1h 30m`).
///
/// The durations themselves are read by jiff's friendly format
/// ([`epic_agents::classify::duration`], as agents' messages are), which also takes what the
/// contract does not promise and `epic config` would not write back (`6 hours`, `1.5h`, `5m
/// ago`, `1w`, `01:30:00`); this holds a flag and `epic.toml` to the documented form. jiff's
/// format takes the units largest first, each once (`1h30m`, not `30m1h`).
fn compact(text: &str) -> bool {
    text.split_whitespace().all(|group| {
        group.starts_with(|c: char| c.is_ascii_digit())
            && group.ends_with(['s', 'm', 'h', 'd'])
            && group
                .split(|c: char| c.is_ascii_digit())
                .all(|unit| matches!(unit, "" | "s" | "m" | "h" | "d"))
    })
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
            "pattern": DURATION_PATTERN,
            "description": "whole seconds, or numbers with units s, m, h, d, largest first (`90m`, `6h`, `1h30m`), from 1 second to 30 days"
        })
    }
}

/// How long an agent turn may print nothing (`--stall-timeout`): `0`, never ended for silence, or
/// a duration as [`Wait`] takes it; written back as `0` or as [`Wait`] writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct Silence(Option<Wait>);

impl Silence {
    /// `duration`, if it is zero (off) or a [`Wait`].
    pub(crate) fn new(duration: Duration) -> Option<Self> {
        if duration.is_zero() {
            return Some(Self(None));
        }
        Wait::new(duration).map(|wait| Self(Some(wait)))
    }

    /// The silence; zero when off.
    pub(crate) fn duration(self) -> Duration {
        self.0.map_or(Duration::ZERO, Wait::duration)
    }
}

impl FromStr for Silence {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        if text.trim() == "0" {
            return Ok(Self(None));
        }
        text.parse::<Wait>()
            .map(|wait| Self(Some(wait)))
            .map_err(|_| {
                ValueError(format!(
                    "expected `0` (off) or a duration such as `10m`, `90s`, `1h30m` or whole \
                 seconds, from 1 second to 30 days, not `{text}`"
                ))
            })
    }
}

impl TryFrom<String> for Silence {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        text.parse()
    }
}

impl From<Silence> for String {
    fn from(silence: Silence) -> Self {
        silence.0.map_or_else(|| "0".to_owned(), String::from)
    }
}

impl JsonSchema for Silence {
    fn schema_name() -> Cow<'static, str> {
        "Silence".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "`0` (off), or whole seconds, or numbers with units s, m, h, d, largest first (`10m`, `90s`, `1h30m`), from 1 second to 30 days"
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

/// A JUnit XML file a gate command writes (`--gate-junit PATH=COMMAND`): `PATH`, relative to
/// the directory the command runs in (a story's worktree, the epic worktree), then `=`, then the
/// command exactly as given to `gate`. Its failing tests are read from that file rather than from
/// the command's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) struct GateJunit {
    /// The file, relative to where the command runs.
    pub(crate) path: String,
    /// The gate command.
    pub(crate) command: String,
}

impl GateJunit {
    /// `files` as the run takes them: each path by its command (the last one named wins).
    pub(crate) fn by_command(files: &[Self]) -> std::collections::BTreeMap<String, String> {
        files
            .iter()
            .map(|junit| (junit.command.clone(), junit.path.clone()))
            .collect()
    }
}

impl fmt::Display for GateJunit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.path, self.command)
    }
}

impl TryFrom<String> for GateJunit {
    type Error = ValueError;

    fn try_from(text: String) -> Result<Self, ValueError> {
        let Some((path, command)) = text.split_once('=') else {
            return Err(ValueError(format!(
                "expected PATH=COMMAND (the JUnit file, then the gate command that writes it), \
                 not `{text}`"
            )));
        };
        let (path, command) = (path.trim(), command.trim());
        let inside =
            !path.is_empty() && !path.starts_with('/') && path.split('/').all(|part| part != "..");
        if !inside {
            return Err(ValueError(format!(
                "expected a path relative to the gate's directory, with no `..`, not `{path}`"
            )));
        }
        if command.is_empty() {
            return Err(ValueError(format!(
                "expected the gate command after `{path}=`"
            )));
        }
        Ok(Self {
            path: path.to_owned(),
            command: command.to_owned(),
        })
    }
}

impl FromStr for GateJunit {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        text.to_owned().try_into()
    }
}

impl From<GateJunit> for String {
    fn from(junit: GateJunit) -> Self {
        junit.to_string()
    }
}

impl JsonSchema for GateJunit {
    fn schema_name() -> Cow<'static, str> {
        "GateJunit".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[^=/][^=]*=.*\\S"})
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
pub(crate) struct ValueError(pub(super) String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

#[cfg(test)]
mod tests {

    use std::time::Duration;

    use clap::Parser as _;

    use super::*;
    use crate::config::test_support::Flags;

    #[test]
    fn a_gate_junit_is_a_relative_path_then_its_command() {
        let junit = "report.xml=pytest --junitxml=report.xml"
            .parse::<GateJunit>()
            .expect("valid");
        assert_eq!(
            (junit.path.as_str(), junit.command.as_str()),
            ("report.xml", "pytest --junitxml=report.xml")
        );
        assert_eq!(
            String::from(junit),
            "report.xml=pytest --junitxml=report.xml"
        );
        for bad in [
            "report.xml",
            "=pytest",
            "/tmp/r.xml=pytest",
            "../r.xml=pytest",
            "r.xml=  ",
        ] {
            assert!(bad.parse::<GateJunit>().is_err(), "{bad}");
        }
    }

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
    fn a_wait_is_held_to_the_contracts_form() {
        let wait = |text: &str| text.parse::<Wait>().map(Wait::duration);
        for (text, secs) in [
            ("1", 1),
            (" 90 ", 90),
            ("+5", 5),
            ("90s", 90),
            ("90m", 90 * 60),
            ("6h", 6 * 3600),
            ("2d", 2 * 86_400),
            ("30d", MAX_TIMEOUT),
            ("1h30m", 90 * 60),
            ("1h 30m", 90 * 60),
            ("1d2h3m4s", 93_784),
            ("0h30m", 30 * 60),
            ("2592000", MAX_TIMEOUT),
        ] {
            assert_eq!(wait(text), Ok(Duration::from_secs(secs)), "{text}");
        }
        // What jiff's friendly format takes and the contract does not promise; units out of
        // order or twice; nothing, no unit, out of range.
        for text in [
            "6 hours",
            "90 s",
            "1.5h",
            "1h30",
            "5m ago",
            "-5m",
            "1w",
            "1mo",
            "01:30:00",
            "5ms",
            "1s500ms",
            "1h, 30m",
            "30m1h",
            "1h1h",
            "0",
            "0m",
            "",
            " ",
            "h",
            "m5",
            "2592001",
            "30d1s",
            "31d",
            "99999999999999999999",
            "99999999999999999999d",
        ] {
            let refused = wait(text).expect_err(text).to_string();
            assert!(
                refused.starts_with("expected a duration such as `90m`"),
                "{text}: {refused}"
            );
        }
    }

    proptest::proptest! {
        /// A wait written back (`epic config`, the schema's defaults) reads as the same wait.
        #[test]
        fn a_wait_reads_back_as_written(secs in 1..=MAX_TIMEOUT) {
            let wait = Wait::new(Duration::from_secs(secs)).unwrap();
            proptest::prop_assert_eq!(String::from(wait).parse::<Wait>(), Ok(wait));
        }

        /// Any numbers with units, largest first, each once, with or without spaces between
        /// them, are their sum, refused only out of range.
        #[test]
        fn units_largest_first_add_up(
            parts in proptest::collection::vec(proptest::option::of(0_u64..100_000), 4),
            spaced in proptest::bool::ANY,
        ) {
            let units = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)];
            let written: Vec<String> = parts
                .iter()
                .zip(units)
                .filter_map(|(n, (unit, _))| n.map(|n| format!("{n}{unit}")))
                .collect();
            proptest::prop_assume!(!written.is_empty());
            let text = written.join(if spaced { " " } else { "" });
            let secs: u64 = parts
                .iter()
                .zip(units)
                .map(|(n, (_, secs))| n.unwrap_or(0) * secs)
                .sum();
            let parsed = text.parse::<Wait>().map(Wait::duration).ok();
            let expected = (1..=MAX_TIMEOUT).contains(&secs).then(|| Duration::from_secs(secs));
            proptest::prop_assert_eq!(parsed, expected, "{}", text);
        }
    }

    #[test]
    fn a_stall_timeout_is_zero_or_a_wait() {
        let silence = |text: &str| text.parse::<Silence>().map(Silence::duration);
        assert_eq!(silence("0"), Ok(Duration::ZERO));
        assert_eq!(silence("10m"), Ok(Duration::from_mins(10)));
        assert_eq!(silence("5s"), Ok(Duration::from_secs(5)));
        let refused = silence("soon").unwrap_err().to_string();
        assert!(
            refused.contains("expected `0` (off) or a duration"),
            "{refused}"
        );
        assert!(silence("31d").is_err() && silence("").is_err());
        assert_eq!(String::from(Silence::new(Duration::ZERO).unwrap()), "0");
        assert_eq!(
            String::from(Silence::new(Duration::from_mins(10)).unwrap()),
            "10m"
        );
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
}
