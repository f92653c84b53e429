//! Everything `epic` prints goes through here.
//!
//! Data goes to stdout with [`data`], written to a locked handle so a closed pipe turns
//! into [`Kind::BrokenPipe`] (a quiet exit) rather than a panic
//! from `println!`. Errors, hints and notes go to stderr; `-q` silences the optional ones.

use std::io::{self, Write as _};

use crate::args::GlobalArgs;
use crate::error::{CommandError, Kind};

/// Where and how much a command prints.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Output {
    quiet: bool,
    verbose: u8,
}

#[cfg(test)]
impl Output {
    /// The output `-q` (`quiet`) and `-v` given `verbose` times ask for, without parsing them.
    pub(crate) fn with(quiet: bool, verbose: u8) -> Self {
        Self { quiet, verbose }
    }
}

impl Output {
    /// The output the global options ask for.
    pub(crate) fn new(global: &GlobalArgs) -> Self {
        Self {
            quiet: global.quiet,
            verbose: global.verbose,
        }
    }

    /// Whether `-q` was given: print data and errors only.
    pub(crate) fn quiet(self) -> bool {
        self.quiet
    }

    /// How many times `-v` was given.
    pub(crate) fn verbose(self) -> u8 {
        self.verbose
    }

    /// A `note: …` line on stderr, shown with `-v`.
    pub(crate) fn note(self, text: &str) {
        if self.verbose > 0 {
            diagnostic(&format!("note: {text}\n"));
        }
    }

    /// A `hint: …` line on stderr, not shown with `-q`.
    pub(crate) fn hint(self, text: &str) {
        if !self.quiet {
            diagnostic(&format!("hint: {text}\n"));
        }
    }

    /// Prints an error as `error: <cause>` and `hint: …` lines (hints not with `-q`); nothing
    /// for an error the command already reported.
    pub(crate) fn error(self, error: &CommandError) {
        let Some(cause) = error.cause() else { return };
        let mut text = format!("error: {cause}\n");
        if !self.quiet {
            for hint in error.hints() {
                text.push_str("hint: ");
                text.push_str(hint);
                text.push('\n');
            }
        }
        diagnostic(&text);
    }
}

/// Writes the command's data to stdout.
pub(crate) fn data(text: &str) -> Result<(), CommandError> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Writes a diagnostic to stderr. A failure to write it is ignored: there is nowhere left to
/// report it.
pub(crate) fn diagnostic(text: &str) {
    let mut stderr = io::stderr().lock();
    stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush())
        .ok();
}

/// Prints clap's message for `error`: help and version on stdout (a success), usage errors on
/// stderr (a [`Kind::Usage`] error, already reported).
pub(crate) fn clap_error(error: &clap::Error) -> Result<(), CommandError> {
    use clap::error::ErrorKind;
    // clap prints help to stdout and errors to stderr, in colour where the stream is a terminal.
    // A closed pipe while printing help is not worth reporting.
    error.print().ok();
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Ok(()),
        _ => Err(CommandError::reported(Kind::Usage)),
    }
}
