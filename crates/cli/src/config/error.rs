//! What is wrong with an `epic.toml` ([`ConfigError`], [`ParseError`]: where, which key, the known
//! key nearest a misspelt one) and the hints the command error carries.

use std::io;
use std::path::PathBuf;

use super::FILE_NAME;
use crate::error::{CommandError, Kind};

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
    pub(super) fn new(text: &str, error: &toml::de::Error, path: Option<String>) -> Self {
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
    pub(super) fn in_file(self, path: PathBuf) -> ConfigError {
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

    use super::*;
    use crate::config::RunOptions;

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
}
