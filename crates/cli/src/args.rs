//! The command line of `epic`, declared with clap's derive API.
//!
//! Global options live in [`GlobalArgs`] and apply to every command; each command is one variant
//! of [`Command`]. Which `--format` a command accepts is checked when it runs
//! ([`GlobalArgs::format_for`]), so the error names the command and the formats it does support.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::error::{CliError, Kind, Message};

const ABOUT: &str = "Run the stories of an epic in parallel with coding agents.";

const LONG_ABOUT: &str = "\
Run the stories of an epic in parallel with coding agents, each in its own git worktree and \
branch. A plan lists the epic's stories with the stories each depends on and the paths each \
owns; `epic` checks the plan up front, starts every story whose dependencies have merged, and \
merges a story into the epic branch only once its checks pass.";

const EXAMPLES: &str = "\
Examples:
  epic validate plan.md                 check a plan and list every violation
  epic graph plan.md                    show the waves and the critical path
  epic graph --format mermaid plan.md   draw the dependency graph as a Mermaid flowchart
  epic schema plan                      print the JSON Schema of a plan file";

const EXIT_STATUS: &str = "\
Exit status:
  0    success (the plan is valid)
  1    the plan has violations
  2    bad usage, or an unreadable or unparsable plan
  3    another run holds the epic's lock
  130  interrupted";

/// `epic`: the whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "epic",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    after_long_help = format!("{EXAMPLES}\n\n{EXIT_STATUS}"),
    arg_required_else_help = true,
    propagate_version = true,
    max_term_width = 100
)]
pub(crate) struct Cli {
    /// Options every command accepts.
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command accepts.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// The repository to work in [default: the repository of the current directory]
    #[arg(long, global = true, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub(crate) repo: Option<PathBuf>,

    /// How to print the command's data: text or json; `graph` also prints mermaid and dot
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// Do not draw live progress (commands that run stories)
    #[arg(long, global = true)]
    pub(crate) no_progress: bool,

    /// Print only data and errors: no summaries, notes or hints
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,

    /// Say more about what is going on; repeat for more detail
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// An output format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Text for people
    Text,
    /// JSON for scripts
    Json,
    /// A Mermaid flowchart (graph only)
    Mermaid,
    /// A Graphviz digraph (graph only)
    Dot,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::Mermaid => "mermaid",
            Self::Dot => "dot",
        }
    }
}

impl GlobalArgs {
    /// The `--format` given, if `command` supports it; a usage error otherwise.
    pub(crate) fn format_for(
        &self,
        command: &str,
        supported: &[Format],
    ) -> Result<Format, CliError> {
        if supported.contains(&self.format) {
            return Ok(self.format);
        }
        let names: Vec<&str> = supported.iter().map(|f| f.name()).collect();
        let error = CliError::new(
            Kind::Usage,
            Message::new(format!(
                "`epic {command}` cannot print --format {}",
                self.format.name()
            )),
        )
        .hint(format!(
            "`epic {command}` prints --format {}",
            names.join(" or ")
        ));
        Err(
            if matches!(self.format, Format::Mermaid | Format::Dot) && command != "graph" {
                error.hint(format!(
                    "to draw the dependency graph, run `epic graph --format {} PLAN`",
                    self.format.name()
                ))
            } else {
                error
            },
        )
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check a plan and list every violation
    #[command(
        long_about = "Check a plan and list every violation at once: duplicate or malformed ids, \
                      unknown dependencies, cycles, stories owning overlapping paths, unsafe paths. \
                      Exits 0 when the plan is valid, 1 when it has violations, 2 when the file \
                      cannot be read or parsed.",
        after_help = "Examples:\n  \
                      epic validate plan.md\n  \
                      epic validate --format json plan.json | jq -r '.violations[].message'"
    )]
    Validate(PlanArgs),

    /// Show a plan's waves and critical path, or draw its dependency graph
    #[command(
        long_about = "Show a valid plan's waves (the stories that can run together, each after \
                      the waves before it) and its critical path (the longest dependency chain). \
                      --format mermaid or dot draws the dependency graph instead, with the \
                      critical path highlighted. Exits like `epic validate`.",
        after_help = "Examples:\n  \
                      epic graph plan.md\n  \
                      epic graph --format mermaid plan.md > graph.mmd\n  \
                      epic graph --format dot plan.toml | dot -Tsvg > graph.svg"
    )]
    Graph(PlanArgs),

    /// Print the JSON Schema of a document epic reads or writes
    #[command(after_help = "Examples:\n  epic schema plan > plan.schema.json")]
    Schema(SchemaArgs),
}

/// The plan file a command reads.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The plan file: .json, .toml, or .md (Markdown holding a json storyplan fenced block)
    #[arg(value_name = "PLAN", value_hint = clap::ValueHint::FilePath)]
    pub(crate) plan: PathBuf,
}

/// `epic schema [NAME]`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// The document whose schema to print
    #[arg(value_enum, default_value_t = SchemaName::Plan)]
    pub(crate) name: SchemaName,
}

/// A document with a JSON Schema. Adding one is a variant here and an arm in
/// [`commands::schema`](crate::commands::schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaName {
    /// The plan file (`epic validate`, `epic graph`, `epic run`)
    Plan,
    /// A story's state file, `<git-dir>/epic/<epic>/stories/<id>.json`
    State,
    /// The report of a run, `<git-dir>/epic/<epic>/report.json`
    Report,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
