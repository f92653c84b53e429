//! The `epic` binary: runs the stories of an epic in parallel with coding agents, each in its own
//! git worktree and branch.
//!
//! `main` stays thin: parse the arguments ([`args`]), run the command ([`commands`]), report an
//! error ([`error`]) and turn the outcome into the process's exit status (chosen in one place,
//! [`error::Kind::exit_code`]).

mod args;
mod commands;
mod config;
mod epics;
mod error;
mod output;
mod plan_file;
mod progress;
mod repo;
mod revision;

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::Cli;
use crate::error::{CommandError, exit_code};
use crate::output::Output;

fn main() -> ExitCode {
    let (outcome, out) = match Cli::try_parse() {
        Ok(cli) => {
            let out = Output::new(&cli.global);
            (commands::run(&cli, out), out)
        }
        Err(error) => (output::clap_error(&error), Output::default()),
    };
    ExitCode::from(exit_status(outcome.as_ref(), out))
}

/// Prints the error, if any and not reported already, and returns the exit code.
fn exit_status(outcome: Result<&(), &CommandError>, out: Output) -> u8 {
    match outcome {
        Ok(()) => exit_code::SUCCESS,
        Err(error) => {
            out.error(error);
            error.exit_code()
        }
    }
}
