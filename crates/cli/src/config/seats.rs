//! The seats of the run options: one agent ([`SeatSpec`]: a preset, `script`, `exec:COMMAND`,
//! or a seat named in `epic.toml`), a role's roster of them ([`RosterSpec`]: `--coder
//! claude,codex`), and the named seats of `[seats.NAME]` ([`NamedSeat`]: a preset or command
//! with environment variables of its own, such as a second account of one CLI).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use epic_agents::{AcpPreset, CommandSeat, Preset, Roster, ScriptSeat, Seat};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::seat_env::SeatEnv;
use super::values::ValueError;

/// The named seats of `epic.toml`, by name.
pub(crate) type NamedSeats = BTreeMap<String, NamedSeat>;

/// An agent seat: a preset, the built-in script seat, `exec:COMMAND`, a shell command, or the
/// name of a seat of `[seats]` in `epic.toml`; what `--coder`, `--judge` and `--reviewer` name
/// ([`to_seat`](Self::to_seat) makes it the executor's [`Seat`], the agent that runs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub(crate) enum SeatSpec {
    /// A preset agent CLI.
    Preset(Preset),
    /// The built-in script seat (`epic demo`, tests): runs no model.
    Script,
    /// `exec:COMMAND`: the command, run with `sh -c`, never blank.
    Exec(String),
    /// A known agent spoken to over the Agent Client Protocol (`gemini-acp`, `claude-acp`,
    /// `codex-acp`).
    AcpPreset(AcpPreset),
    /// `acp:COMMAND`: the command, run with `sh -c` and spoken to over ACP, never blank.
    Acp(String),
    /// A seat of `[seats]` in `epic.toml`, by name.
    Named(String),
}

impl SeatSpec {
    /// The agent this seat names: a preset's command line, the built-in script seat, the
    /// `exec:` command run with `sh -c`, or the named seat of `named`. A name `named` lacks is
    /// refused in words.
    pub(crate) fn to_seat(&self, named: &NamedSeats) -> Result<Arc<dyn Seat>, ValueError> {
        Ok(match self {
            Self::Preset(preset) => Arc::new(CommandSeat::preset(*preset)),
            Self::Script => Arc::new(ScriptSeat),
            Self::Exec(command) => Arc::new(CommandSeat::shell(command.clone())),
            Self::AcpPreset(preset) => Arc::new(CommandSeat::acp_preset(*preset)),
            Self::Acp(command) => Arc::new(CommandSeat::acp(command.clone())),
            Self::Named(name) => {
                let Some(seat) = named.get(name) else {
                    return Err(unknown(name));
                };
                seat.to_seat(name)?
            }
        })
    }
}

/// What a seat that is no preset, `script` nor `exec:` is told at once: its text is not a name a
/// seat of `[seats]` could have, or it is a preset's name misspelt (`claud`).
fn not_a_seat(text: &str) -> ValueError {
    ValueError(format!(
        "unknown seat `{text}`: expected claude, codex, gemini, aider, opencode, gemini-acp, \
         claude-acp, codex-acp, script, exec:COMMAND or acp:COMMAND"
    ))
}

/// Whether `name` is a preset's or `script`'s name misspelt: within two edits of one (and not a
/// name that only starts with one, such as `claude-work`).
fn misspelt(name: &str) -> bool {
    const KNOWN: [&str; 6] = ["claude", "codex", "gemini", "aider", "opencode", "script"];
    KNOWN
        .iter()
        .any(|known| !name.starts_with(known) && strsim::levenshtein(name, known) <= 2)
}

/// What a name no seat of `[seats]` has is told, once the named seats are known.
fn unknown(name: &str) -> ValueError {
    ValueError(format!(
        "unknown seat `{name}`: expected claude, codex, gemini, aider, opencode, gemini-acp, \
         claude-acp, codex-acp, script, exec:COMMAND, acp:COMMAND, or a seat named in epic.toml's [seats] (`[seats.{name}]` with \
         `seat = \"claude\"`)"
    ))
}

impl fmt::Display for SeatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Preset(preset) => f.write_str(preset.name()),
            Self::Script => f.write_str("script"),
            Self::Exec(command) => write!(f, "exec:{command}"),
            Self::AcpPreset(preset) => f.write_str(preset.name()),
            Self::Acp(command) => write!(f, "acp:{command}"),
            Self::Named(name) => f.write_str(name),
        }
    }
}

/// Whether `text` can name a seat of `[seats]`: a letter or digit, then letters, digits, `-`,
/// `_` or `.`.
fn is_seat_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
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
        if let Some(command) = text.strip_prefix("acp:") {
            return if command.trim().is_empty() {
                Err(ValueError(
                    "`acp:` needs a command after it, such as `acp:./my-agent --acp`".into(),
                ))
            } else {
                Ok(Self::Acp(command.to_owned()))
            };
        }
        if text == "script" {
            return Ok(Self::Script);
        }
        if let Ok(preset) = text.parse() {
            return Ok(Self::AcpPreset(preset));
        }
        if let Ok(preset) = text.parse() {
            return Ok(Self::Preset(preset));
        }
        if is_seat_name(text) && !misspelt(text) {
            return Ok(Self::Named(text.to_owned()));
        }
        Err(not_a_seat(text))
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
            "description": "An agent: a preset (claude, codex, gemini, aider, opencode, script), \
                            `exec:COMMAND`, a shell command, an ACP agent (gemini-acp, \
                            claude-acp, codex-acp, or `acp:COMMAND`), or the name of a seat of \
                            [seats].",
            "type": "string",
            "pattern": "^((exec|acp):.*\\S.*|[A-Za-z0-9][A-Za-z0-9._-]*)$"
        })
    }
}

/// A role's roster: its seats in order of preference, each turn on the first not paused.
///
/// Written as a list (`coder = ["claude", "codex"]`) or with commas (`--coder claude,codex`);
/// with commas, an `exec:` seat takes the rest of the text, commas and all (`--coder
/// claude,exec:./agent.sh a,b` is two seats): an `exec:` command holding a comma stands last,
/// or is a named seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RosterText", into = "String")]
pub(crate) struct RosterSpec(Vec<SeatSpec>);

impl RosterSpec {
    /// The seats, in order.
    #[cfg(test)]
    pub(crate) fn seats(&self) -> &[SeatSpec] {
        &self.0
    }

    /// The executor's roster of these seats, the named ones from `named`.
    pub(crate) fn to_roster(&self, named: &NamedSeats) -> Result<Roster, ValueError> {
        let seats = self
            .0
            .iter()
            .map(|seat| seat.to_seat(named))
            .collect::<Result<Vec<_>, _>>()?;
        Roster::new(seats).ok_or_else(|| ValueError("a roster needs a seat".into()))
    }
}

impl From<SeatSpec> for RosterSpec {
    fn from(seat: SeatSpec) -> Self {
        Self(vec![seat])
    }
}

impl fmt::Display for RosterSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for RosterSpec {
    type Err = ValueError;

    fn from_str(text: &str) -> Result<Self, ValueError> {
        let mut seats = Vec::new();
        let mut rest = text;
        loop {
            let trimmed = rest.trim_start();
            if trimmed.starts_with("exec:") || trimmed.starts_with("acp:") {
                seats.push(trimmed.parse()?);
                break;
            }
            let (seat, after) = match rest.split_once(',') {
                Some((seat, after)) => (seat, Some(after)),
                None => (rest, None),
            };
            let seat = seat.trim();
            if seat.is_empty() {
                return Err(ValueError(format!(
                    "`{text}` has an empty seat: write seats separated by single commas, such \
                     as `claude,codex`"
                )));
            }
            seats.push(seat.parse()?);
            match after {
                Some(after) => rest = after,
                None => break,
            }
        }
        Ok(Self(seats))
    }
}

impl From<RosterSpec> for String {
    fn from(roster: RosterSpec) -> Self {
        roster.to_string()
    }
}

/// A roster as `epic.toml` writes it: a string (commas between seats) or a list of seats.
#[derive(Deserialize)]
#[serde(untagged)]
enum RosterText {
    One(String),
    List(Vec<String>),
}

impl TryFrom<RosterText> for RosterSpec {
    type Error = ValueError;

    fn try_from(text: RosterText) -> Result<Self, ValueError> {
        match text {
            RosterText::One(text) => text.parse(),
            RosterText::List(list) if list.is_empty() => Err(ValueError(
                "a roster needs a seat: the list is empty".into(),
            )),
            RosterText::List(list) => list
                .iter()
                .map(|seat| seat.parse())
                .collect::<Result<_, _>>()
                .map(Self),
        }
    }
}

impl JsonSchema for RosterSpec {
    fn schema_name() -> Cow<'static, str> {
        "Roster".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let seat = generator.subschema_for::<SeatSpec>();
        json_schema!({
            "description": "Seats in order of preference, each turn on the first not paused by \
                            a usage limit or an outage: a list, or one string with commas \
                            (`claude,codex`; an `exec:` seat there takes the rest of the text).",
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": seat, "minItems": 1}
            ]
        })
    }
}

/// A seat of `[seats.NAME]` in `epic.toml`: a preset or command under a name of its own, with
/// environment variables of its own (a second Claude Code account through `CLAUDE_CONFIG_DIR`,
/// say). It stands in any roster by its name, and is paused, reported and priced under it
/// (a name that starts with the preset's, `claude-work`, is priced as the preset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NamedSeat {
    /// The agent: a preset (claude, codex, gemini, aider, opencode), `script` or
    /// `exec:COMMAND`.
    pub(crate) seat: SeatSpec,
    /// Environment variables set for its processes, on top of the inherited ones. `${NAME}` in
    /// a value is the value of variable NAME of the environment epic runs in (unset: the seat
    /// is refused); a value that starts with `~/` is read against `HOME`. A variable whose name
    /// says it holds a secret (a word KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASS, CREDENTIAL,
    /// AUTH, …, the last word not FILE, PATH, DIR, HOME, SOCK, SOCKET or URL) takes references
    /// only, never a value written out: `ANTHROPIC_API_KEY = "${WORK_KEY}"`.
    #[serde(default, skip_serializing_if = "SeatEnv::is_empty")]
    pub(crate) env: SeatEnv,
}

impl NamedSeat {
    /// The agent this named seat runs, named `name`, its variables' references read from
    /// epic's environment: one that is not set there is refused.
    fn to_seat(&self, name: &str) -> Result<Arc<dyn Seat>, ValueError> {
        let Some(command) = self.command(name)? else {
            return Ok(Arc::new(ScriptSeat));
        };
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let env = self
            .env
            .expanded(name, |key| std::env::var_os(key), home.as_deref())?;
        let seat = env
            .into_iter()
            .fold(command.named(name), |seat, (key, value)| {
                seat.with_env(key, value)
            });
        Ok(Arc::new(seat))
    }

    /// The command this named seat runs, named `name`, without its variables; `None` for the
    /// built-in script seat. Refused: a script seat with variables, a seat naming another.
    fn command(&self, name: &str) -> Result<Option<CommandSeat>, ValueError> {
        let command = match &self.seat {
            SeatSpec::Preset(preset) => CommandSeat::preset(*preset),
            SeatSpec::Exec(command) => CommandSeat::shell(command.clone()),
            SeatSpec::AcpPreset(preset) => CommandSeat::acp_preset(*preset),
            SeatSpec::Acp(command) => CommandSeat::acp(command.clone()),
            SeatSpec::Script if self.env.is_empty() => return Ok(None),
            SeatSpec::Script => {
                return Err(ValueError(format!(
                    "[seats.{name}]: the built-in `script` seat runs no process, so `env` \
                     does nothing for it"
                )));
            }
            SeatSpec::Named(other) => {
                return Err(ValueError(format!(
                    "[seats.{name}]: `seat = \"{other}\"` names another named seat; a named \
                     seat is a preset, script or exec:COMMAND"
                )));
            }
        };
        Ok(Some(command))
    }
}

/// Checks the named seats themselves: a name a preset or `script` already is would be
/// unreachable. The references of their variables are read when a roster names them
/// ([`RosterSpec::to_roster`]): a seat left out may reference a variable not set here.
pub(crate) fn check_named(named: &NamedSeats) -> Result<(), ValueError> {
    for name in named.keys() {
        if matches!(
            name.parse::<SeatSpec>(),
            Ok(SeatSpec::Preset(_) | SeatSpec::AcpPreset(_) | SeatSpec::Script)
        ) {
            return Err(ValueError(format!(
                "[seats.{name}]: `{name}` is already a preset's name; name the seat otherwise, \
                 such as `{name}-work`"
            )));
        }
        if !is_seat_name(name) {
            return Err(ValueError(format!(
                "[seats.\"{name}\"]: a seat's name is letters, digits, `-`, `_` and `.`"
            )));
        }
        named[name].command(name)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(text: &str) -> Vec<String> {
        text.parse::<RosterSpec>()
            .unwrap()
            .seats()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_roster_is_split_at_commas_but_an_exec_seat_takes_the_rest() {
        assert_eq!(roster("claude"), ["claude"]);
        assert_eq!(roster("claude,codex"), ["claude", "codex"]);
        assert_eq!(roster(" claude , work "), ["claude", "work"]);
        assert_eq!(
            roster("claude,exec:./agent.sh a,b"),
            ["claude", "exec:./agent.sh a,b"]
        );
        assert_eq!(roster("exec:x --list a,b"), ["exec:x --list a,b"]);
        let error = "claude,,codex".parse::<RosterSpec>().unwrap_err();
        assert!(error.to_string().contains("empty seat"), "{error}");
        let error = "claude,co dex".parse::<RosterSpec>().unwrap_err();
        assert!(
            error.to_string().contains("unknown seat `co dex`"),
            "{error}"
        );
    }

    #[test]
    fn a_named_seat_runs_its_preset_under_its_name_with_its_environment() {
        let named: NamedSeats = toml::from_str::<BTreeMap<String, NamedSeat>>(
            "[work]\nseat = \"claude\"\nenv = { CLAUDE_CONFIG_DIR = \"/home/me/.claude-work\" }\n",
        )
        .unwrap();
        check_named(&named).unwrap();
        let roster = "claude,work"
            .parse::<RosterSpec>()
            .unwrap()
            .to_roster(&named)
            .unwrap();
        assert_eq!(roster.names(), ["claude", "work"]);
        let error = "claude,home"
            .parse::<RosterSpec>()
            .unwrap()
            .to_roster(&named)
            .unwrap_err();
        assert!(error.to_string().contains("[seats]"), "{error}");
    }

    #[test]
    fn a_seats_references_are_read_only_when_a_roster_names_it() {
        let named: NamedSeats = toml::from_str(
            "[work]\nseat = \"claude\"\nenv = { ANTHROPIC_API_KEY = \"${EPIC_TEST_NEVER_SET}\" }\n",
        )
        .unwrap();
        check_named(&named).unwrap();
        let roster = |text: &str| text.parse::<RosterSpec>().unwrap().to_roster(&named);
        assert!(roster("claude").is_ok());
        let error = roster("claude,work").unwrap_err().to_string();
        assert!(
            error.contains("[seats.work]") && error.contains("`${EPIC_TEST_NEVER_SET}`"),
            "{error}"
        );
    }

    #[test]
    fn a_named_seat_may_not_take_a_presets_name_or_name_another() {
        let named = |text: &str| toml::from_str::<NamedSeats>(text).unwrap();
        let error = check_named(&named("[claude]\nseat = \"codex\"\n")).unwrap_err();
        assert!(error.to_string().contains("already a preset"), "{error}");
        let error = check_named(&named("[a]\nseat = \"b\"\n")).unwrap_err();
        assert!(error.to_string().contains("another named seat"), "{error}");
        assert!(toml::from_str::<NamedSeats>("[a]\nseat = \"claude\"\nkey = 1\n").is_err());
    }
}
