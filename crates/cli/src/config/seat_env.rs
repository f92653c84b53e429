//! A named seat's environment variables (`env` of `[seats.NAME]` in `epic.toml`, [`SeatEnv`]):
//! which of them hold a secret, judged by the name ([`is_secret`]), the references to epic's own
//! environment a value may hold (`${NAME}`), and the values the seat's processes get
//! ([`SeatEnv::expanded`]).
//!
//! `epic.toml` is a file of the user's checkout, untracked and readable by every agent, so it
//! holds no secret: a secret variable's value is references only (`"${WORK_KEY}"`), read from the
//! environment epic runs in when the seat is made. A value written out is refused as the file is
//! read, and no message ever shows it (docs/contract.md, "Run options and `epic.toml`").

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::Path;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::values::ValueError;

/// The words of a name that say its variable holds a secret: `ANTHROPIC_API_KEY`,
/// `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`, `ANTHROPIC_AUTH_TOKEN`.
const SECRET_WORDS: [&str; 17] = [
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
    "PASS",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "AUTH",
    "COOKIE",
];

/// The last words of a name that say its variable tells where a secret is, not the secret:
/// `SSH_AUTH_SOCK`, `TLS_KEY_FILE`, `OS_AUTH_URL`.
const PLACE_WORDS: [&str; 7] = ["FILE", "PATH", "DIR", "HOME", "SOCK", "SOCKET", "URL"];

/// Whether variable `name` holds a secret, by its name: one of its words is one of
/// [`SECRET_WORDS`] (`KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PASS`, `CREDENTIAL`,
/// `AUTH`, …), and its last word is none of [`PLACE_WORDS`] (`FILE`, `PATH`, `DIR`, `HOME`,
/// `SOCK`, `SOCKET`, `URL`).
///
/// The words are the name's runs of ASCII letters and digits, split also where a lower-case
/// letter or a digit meets an upper-case one (`apiKey`), compared in upper case without their
/// trailing digits (`KEY2`); so `KEYBOARD_LAYOUT`, `GIT_AUTHOR_NAME` and `MONKEY` hold none.
pub(crate) fn is_secret(name: &str) -> bool {
    let words = words(name);
    let Some(last) = words.last() else {
        return false;
    };
    !PLACE_WORDS.contains(&last.as_str())
        && words
            .iter()
            .any(|word| SECRET_WORDS.contains(&word.as_str()))
}

/// The words of `name`, as [`is_secret`] reads them: upper case, trailing digits dropped.
fn words(name: &str) -> Vec<String> {
    /// Ends `word`, adding it to `words` without its trailing digits.
    fn end(word: &mut String, words: &mut Vec<String>) {
        let trimmed = word.trim_end_matches(|c: char| c.is_ascii_digit());
        if !trimmed.is_empty() {
            words.push(trimmed.to_owned());
        }
        word.clear();
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut after_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            end(&mut word, &mut words);
            after_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && after_lower {
            end(&mut word, &mut words);
        }
        after_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_uppercase());
    }
    end(&mut word, &mut words);
    words
}

/// A piece of a value: text as written, or a reference to a variable of epic's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Reference(&'a str),
}

/// The pieces of `value`, or `None` when a `${` in it opens no reference: a reference is
/// `${NAME}`, NAME a letter or `_`, then letters, digits and `_`.
fn pieces(value: &str) -> Option<Vec<Piece<'_>>> {
    let mut pieces = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            pieces.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let end = after.find('}')?;
        let name = &after[..end];
        let mut chars = name.chars();
        let well_formed = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            return None;
        }
        pieces.push(Piece::Reference(name));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Some(pieces)
}

/// What is wrong with variable `name`'s `value`, if anything: a `${` that opens no reference,
/// or a secret variable ([`is_secret`]) whose value holds text beyond references. An empty value
/// holds nothing and is allowed (it keeps an inherited key from the seat). The message never
/// shows the value.
fn check(name: &str, value: &str) -> Result<(), String> {
    let Some(pieces) = pieces(value) else {
        return Err(
            "a `${` opens no reference: write `${NAME}`, NAME of letters, digits and `_`, for \
             the value of variable NAME of the environment epic runs in"
                .to_owned(),
        );
    };
    if is_secret(name) && pieces.iter().any(|piece| matches!(piece, Piece::Text(_))) {
        return Err(format!(
            "`{name}` holds a secret by its name (a key, token, password or credential), and \
             epic.toml holds none, only references to the environment epic runs in: write \
             `{name} = \"${{{name}}}\"` and set {name} in that environment"
        ));
    }
    Ok(())
}

/// A named seat's variables, as `epic.toml` writes them (`env = { … }`), each value checked as
/// it is read: a `${` opens a reference (`${NAME}`), and a secret variable's value is references
/// only ([`is_secret`]). Serialised as written, references and all: `epic config` shows no value
/// of epic's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct SeatEnv(BTreeMap<String, String>);

impl SeatEnv {
    /// Whether the seat sets no variable.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each variable with the value the seat's processes get: every reference replaced by the
    /// value `lookup` (epic's environment) gives its variable, and a value written with a
    /// leading `~/` read against `home`, when there is one. A reference to a variable `lookup`
    /// lacks is refused, naming seat `seat`, the variable and the reference, never a value.
    pub(crate) fn expanded(
        &self,
        seat: &str,
        lookup: impl Fn(&str) -> Option<OsString>,
        home: Option<&Path>,
    ) -> Result<Vec<(String, OsString)>, ValueError> {
        self.0
            .iter()
            .map(|(name, written)| {
                let (tilde, rest) = match (written.strip_prefix("~/"), home) {
                    (Some(rest), Some(_)) => (true, rest),
                    _ => (false, written.as_str()),
                };
                let mut value = OsString::new();
                // Checked as the file was read: every `${` opens a reference.
                for piece in pieces(rest).unwrap_or_default() {
                    match piece {
                        Piece::Text(text) => value.push(text),
                        Piece::Reference(reference) => {
                            let Some(found) = lookup(reference) else {
                                return Err(ValueError(format!(
                                    "[seats.{seat}]: `{name}` references `${{{reference}}}`, \
                                     which is not set in the environment epic runs in: set \
                                     {reference} there, or leave the seat out"
                                )));
                            };
                            value.push(found);
                        }
                    }
                }
                if let (true, Some(home)) = (tilde, home) {
                    value = home.join(value).into_os_string();
                }
                Ok((name.clone(), value))
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for SeatEnv {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Variables)
    }
}

/// Reads the table of variables, each value through [`Value`], so that a refused value's error
/// carries its key and its position in the file.
struct Variables;

impl<'de> Visitor<'de> for Variables {
    type Value = SeatEnv;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of environment variables, each a string")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SeatEnv, A::Error> {
        let mut env = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let value = map.next_value_seed(Value { name: &name })?;
            env.insert(name, value);
        }
        Ok(SeatEnv(env))
    }
}

/// The value of variable `name`, [`check`]ed.
struct Value<'a> {
    name: &'a str,
}

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        let value = String::deserialize(deserializer)?;
        check(self.name, &value).map_err(D::Error::custom)?;
        Ok(value)
    }
}

impl JsonSchema for SeatEnv {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SeatEnv".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": {"type": "string"}
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_holds_a_secret_when_a_word_of_it_says_so() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "DB_PASSWORD",
            "SMTP_PASS",
            "MYSQL_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "NPM_CONFIG__AUTH",
            "openai_apiKey",
            "apiKey",
            "OPENAI_APIKEY",
            "KEY",
            "ANTHROPIC_API_KEY_2",
            "SECRET2",
        ] {
            assert!(is_secret(name), "{name} holds a secret");
        }
        for name in [
            "PATH",
            "HOME",
            "MODEL",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "KEYBOARD_LAYOUT",
            "MONKEY",
            "GIT_AUTHOR_NAME",
            "AUTHOR",
            "SSH_AUTH_SOCK",
            "TLS_KEY_FILE",
            "AWS_SHARED_CREDENTIALS_FILE",
            "GIT_SSH_KEY_PATH",
            "OS_AUTH_URL",
            "PASSAGE",
            "TOKENIZER_MODEL",
            "",
            "__",
        ] {
            assert!(!is_secret(name), "{name:?} holds no secret");
        }
    }

    #[test]
    fn a_value_is_text_and_references() {
        use Piece::{Reference, Text};
        assert_eq!(pieces(""), Some(vec![]));
        assert_eq!(pieces("plain $HOME"), Some(vec![Text("plain $HOME")]));
        assert_eq!(pieces("${WORK_KEY}"), Some(vec![Reference("WORK_KEY")]));
        assert_eq!(
            pieces("${A}${_b2}"),
            Some(vec![Reference("A"), Reference("_b2")])
        );
        assert_eq!(
            pieces("~/x/${A}/y"),
            Some(vec![Text("~/x/"), Reference("A"), Text("/y")])
        );
        for bad in [
            "${",
            "${A",
            "${}",
            "${2A}",
            "${A B}",
            "a ${A-b} c",
            "${A:-x}",
        ] {
            assert_eq!(pieces(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_secret_takes_references_only_and_no_message_shows_its_value() {
        assert!(check("ANTHROPIC_API_KEY", "${WORK_KEY}").is_ok());
        assert!(check("ANTHROPIC_API_KEY", "${A}${B}").is_ok());
        assert!(check("ANTHROPIC_API_KEY", "").is_ok());
        assert!(check("CLAUDE_CONFIG_DIR", "~/.claude-work").is_ok());
        assert!(check("PATH", "${HOME}/bin:${PATH}").is_ok());
        for literal in [
            "sk-ant-api03-secret",
            "Bearer ${TOKEN}",
            "${A}sk-ant-secret",
            "$X",
        ] {
            let error = check("ANTHROPIC_API_KEY", literal).unwrap_err();
            assert!(
                error.contains("`ANTHROPIC_API_KEY`")
                    && error.contains("epic.toml")
                    && error.contains("`ANTHROPIC_API_KEY = \"${ANTHROPIC_API_KEY}\"`"),
                "{error}"
            );
            assert!(
                !error.contains("sk-ant") && !error.contains("Bearer"),
                "{error}"
            );
        }
        let error = check("MODEL", "${sk-ant-secret}").unwrap_err();
        assert!(
            error.contains("opens no reference") && !error.contains("sk-ant"),
            "{error}"
        );
    }

    #[test]
    fn references_are_read_from_the_environment_and_an_unset_one_is_named() {
        let env: SeatEnv = toml::from_str::<BTreeMap<String, SeatEnv>>(
            "env = { ANTHROPIC_API_KEY = \"${WORK_KEY}\", CLAUDE_CONFIG_DIR = \"~/.c-${WHO}\", \
             MODEL = \"opus\" }",
        )
        .unwrap()
        .remove("env")
        .unwrap();
        let lookup = |name: &str| match name {
            "WORK_KEY" => Some(OsString::from("sk-work")),
            "WHO" => Some(OsString::from("ada")),
            _ => None,
        };
        let expanded = env
            .expanded("work", lookup, Some(Path::new("/home/ada")))
            .unwrap();
        assert_eq!(
            expanded,
            [
                ("ANTHROPIC_API_KEY".to_owned(), OsString::from("sk-work")),
                (
                    "CLAUDE_CONFIG_DIR".to_owned(),
                    OsString::from("/home/ada/.c-ada")
                ),
                ("MODEL".to_owned(), OsString::from("opus")),
            ]
        );
        let without_home = env.expanded("work", lookup, None).unwrap();
        assert_eq!(without_home[1].1, "~/.c-ada");
        let error = env
            .expanded("work", |_| None, Some(Path::new("/home/ada")))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("[seats.work]")
                && error.contains("`ANTHROPIC_API_KEY`")
                && error.contains("`${WORK_KEY}`")
                && error.contains("not set"),
            "{error}"
        );
    }

    #[test]
    fn a_literal_secret_is_refused_as_the_file_is_read() {
        let error = toml::from_str::<BTreeMap<String, SeatEnv>>(
            "env = { ANTHROPIC_API_KEY = \"sk-ant-secret\" }",
        )
        .unwrap_err();
        assert!(
            error.message().contains("`ANTHROPIC_API_KEY`") && !error.message().contains("sk-ant"),
            "{error}"
        );
    }
}
