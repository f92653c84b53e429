//! `epic completions SHELL`: the completion script of a shell, generated from the command line's
//! own declaration so it never falls out of date.

use clap::CommandFactory as _;

use crate::args::{Cli, CompletionsArgs, Format, GlobalArgs};
use crate::error::CommandError;
use crate::output;

/// Prints the completion script of `args.shell`.
pub(crate) fn run(global: &GlobalArgs, args: &CompletionsArgs) -> Result<(), CommandError> {
    global.format_for("completions", &[Format::Text])?;
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "epic", &mut script);
    output::data(&String::from_utf8_lossy(&script))
}
