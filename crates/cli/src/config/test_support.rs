//! What the unit tests of the options share: a command line parsed as `epic run` parses it.

use clap::Parser as _;

use super::{NonBlank, RosterSpec, RunOptions};

/// The run options of a command line, as `epic run` will parse them.
#[derive(Debug, clap::Parser)]
pub(crate) struct Flags {
    #[command(flatten)]
    pub(crate) options: RunOptions,
}

pub(crate) fn flags(args: &[&str]) -> RunOptions {
    Flags::try_parse_from(std::iter::once("epic").chain(args.iter().copied()))
        .unwrap()
        .options
}

pub(crate) fn seat(text: &str) -> RosterSpec {
    text.parse().unwrap()
}

pub(crate) fn texts(texts: &[&str]) -> Vec<NonBlank> {
    texts.iter().map(|text| text.parse().unwrap()).collect()
}

pub(crate) const FULL: &str = r#"
base = "main"
epic_branch = "integration/checkout"
concurrency = 5
fail_fast = true
coder = "exec:./agent.sh --fast"
judge = "codex"
reviewer = ["gemini", "claude"]
architect = "claude"
gate = ["cargo test", "cargo clippy"]
judge_rounds = 1
max_rounds = 4
max_tasks = 12
planner = "always"
turn_timeout = 600
gate_timeout = 300
gate_reruns = 0
gate_junit = ["target/junit.xml=cargo test"]
setup = ["npm ci"]
keep_worktrees = true
allow_red_baseline = true
schedule = "waves"
merge_batch = 2
merge_revisions = 3
test_pattern = ["qa/", "*.t"]
sandbox = "off"
expose = ["~/.ssh", "~/.config/gh"]
budget_usd = 12.5
noop = "fail"
verifier = "gemini"
board_hook = "./sync-tracker.sh"
on_blocked = "ask"
notify = "./page-me.sh"
rules = ["CONTRIBUTING.md", "docs/style.md"]
worktrees = "fresh"
preflight = false
max_wait = "1h30m"
outage_wait = "45s"
stall_timeout = "0"

[prices]
aider = { input = 0.5, output = 1.5 }
"claude-opus" = { input = 15, output = 75 }

[seats.claude-work]
seat = "claude"
env = { CLAUDE_CONFIG_DIR = "/home/me/.claude-work" }
"#;
