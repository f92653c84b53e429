//! [`CommandError`]: every way a command can end other than success, with the exit code of each.
//!
//! A command returns `Err(CommandError)`; `main` prints it as `error: <cause>` followed by
//! `hint: <what to do>` lines and exits with [`CommandError::exit_code`]. The exit codes of every
//! command are chosen here and nowhere else ([`Kind::exit_code`]), and documented in
//! [`exit_code`].

use std::error::Error;
use std::fmt;
use std::io;

/// The exit codes of `epic`, as docs/contract.md documents them.
pub(crate) mod exit_code {
    /// The command did what was asked (a plan is valid, every story is done).
    pub(crate) const SUCCESS: u8 = 0;
    /// The command ran but its answer is "no": a plan has violations, a story failed or was
    /// skipped.
    pub(crate) const FAILURE: u8 = 1;
    /// Bad input: a usage error, an unreadable or unparsable plan, a bad config or repository.
    pub(crate) const BAD_INPUT: u8 = 2;
    /// Another run holds the epic's lock.
    pub(crate) const LOCK_HELD: u8 = 3;
    /// Interrupted (Ctrl-C): the state is kept and a rerun resumes. 128 + SIGINT, as shells do.
    pub(crate) const INTERRUPTED: u8 = 130;
}

/// What kind of failure a [`CommandError`] is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A plan has violations (the command printed them as its data).
    Violations,
    /// The command line is wrong: an unknown option, a format the command cannot print.
    Usage,
    /// An input file is unreadable or unparsable.
    Input,
    /// `epic.toml` is unreadable or invalid, or a required option is missing.
    Config,
    /// Not a git repository, no such epic or report, an unreadable state file, or a file
    /// `epic init` would overwrite.
    Repository,
    /// Writing the command's output failed for a reason other than a closed pipe.
    Output,
    /// The reader of stdout went away (`epic schema plan | head -1`): stop quietly.
    BrokenPipe,
    /// A run ended with a story failed or skipped (or the demo did not run as designed).
    NotDone,
    /// `epic verify` found a commit of the epic branch without its attestation, or against it.
    Unverified,
    /// `epic land` did not land the epic (the target untouched).
    NotLanded,
    /// Another run holds the epic's lock.
    LockHeld,
    /// The run was interrupted (Ctrl-C, or a seat's pause past `--max-wait`).
    Interrupted,
    /// A seat cannot run: it is not logged in.
    SeatUnusable,
}

impl Kind {
    /// The process exit code of this kind of failure: the one place they are chosen.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Violations | Self::NotDone | Self::Unverified | Self::NotLanded => {
                exit_code::FAILURE
            }
            Self::Usage
            | Self::Input
            | Self::Config
            | Self::Repository
            | Self::Output
            | Self::SeatUnusable => exit_code::BAD_INPUT,
            // Like ripgrep: a reader that stopped reading is not an error of ours.
            Self::BrokenPipe => exit_code::SUCCESS,
            Self::LockHeld => exit_code::LOCK_HELD,
            Self::Interrupted => exit_code::INTERRUPTED,
        }
    }
}

/// A failed command: its [`Kind`], the cause, and hints on what to do about it.
#[derive(Debug)]
pub(crate) struct CommandError {
    kind: Kind,
    /// The cause, printed as `error: …` with its source chain; `None` when the command already
    /// reported it (violations printed as data, a clap usage message, a closed pipe).
    source: Option<Box<dyn Error + Send + Sync>>,
    /// Printed as `hint: …` lines after the error.
    hints: Vec<String>,
}

impl CommandError {
    /// An error of `kind` caused by `source`.
    pub(crate) fn new(kind: Kind, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self {
            kind,
            source: Some(source.into()),
            hints: Vec::new(),
        }
    }

    /// An error of `kind` the command has already reported: nothing more is printed.
    pub(crate) fn reported(kind: Kind) -> Self {
        Self {
            kind,
            source: None,
            hints: Vec::new(),
        }
    }

    /// This error with one more hint.
    #[must_use]
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        self.kind.exit_code()
    }

    /// The hints, in order.
    pub(crate) fn hints(&self) -> &[String] {
        &self.hints
    }

    /// The cause and its sources joined by `: `, or `None` if already reported.
    pub(crate) fn cause(&self) -> Option<String> {
        let source = self.source.as_deref()?;
        let mut text = source.to_string();
        let mut next = source.source();
        while let Some(inner) = next {
            let shown = inner.to_string();
            // Some errors repeat their source's text in their own message; say it once.
            if !text.ends_with(&shown) {
                text.push_str(": ");
                text.push_str(&shown);
            }
            next = inner.source();
        }
        Some(text)
    }
}

/// Writing to stdout failed: a closed pipe ends quietly, anything else is reported.
impl From<io::Error> for CommandError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Self::reported(Kind::BrokenPipe)
        } else {
            Self::new(
                Kind::Output,
                WithSource {
                    message: "failed to write the output".into(),
                    source: error,
                },
            )
        }
    }
}

/// A plain message as an error, for causes no library type describes.
#[derive(Debug)]
pub(crate) struct Message(String);

impl Message {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Message {}

/// A message with an underlying cause, shown as `message: cause`.
#[derive(Debug)]
pub(crate) struct WithSource<E> {
    pub(crate) message: String,
    pub(crate) source: E,
}

impl<E: Error + 'static> fmt::Display for WithSource<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: Error + 'static> Error for WithSource<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(Kind::Violations.exit_code(), 1);
        assert_eq!(Kind::NotDone.exit_code(), 1);
        assert_eq!(Kind::Usage.exit_code(), 2);
        assert_eq!(Kind::Input.exit_code(), 2);
        assert_eq!(Kind::Config.exit_code(), 2);
        assert_eq!(Kind::Repository.exit_code(), 2);
        assert_eq!(Kind::LockHeld.exit_code(), 3);
        assert_eq!(Kind::Interrupted.exit_code(), 130);
        assert_eq!(Kind::BrokenPipe.exit_code(), 0);
    }

    #[test]
    fn the_cause_joins_the_source_chain() {
        let error = CommandError::new(
            Kind::Input,
            WithSource {
                message: "failed to read plan file `plan.md`".into(),
                source: io::Error::new(io::ErrorKind::NotFound, "no such file"),
            },
        );
        assert_eq!(
            error.cause().as_deref(),
            Some("failed to read plan file `plan.md`: no such file")
        );
        assert_eq!(CommandError::reported(Kind::Violations).cause(), None);
    }

    #[test]
    fn a_broken_pipe_is_quiet() {
        let error = CommandError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(error.kind, Kind::BrokenPipe);
        assert_eq!(error.cause(), None);
        let error = CommandError::from(io::Error::other("disk full"));
        assert_eq!(error.kind, Kind::Output);
        assert_eq!(
            error.cause().as_deref(),
            Some("failed to write the output: disk full")
        );
    }
}
