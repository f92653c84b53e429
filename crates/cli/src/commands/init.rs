//! `epic init`: a commented `epic.toml` and an example plan at the repository root.
//!
//! Neither file is ever overwritten: both are checked before either is written, and each is
//! created with `create_new`, so a file that appears meanwhile is not clobbered either.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::Path;

use epic_story_plan::{Story, StoryPlan};

use crate::args::{Format, GlobalArgs};
use crate::config::FILE_NAME;
use crate::error::{CommandError, Kind, Message, WithSource};
use crate::output::{self, Output};
use crate::repo;

/// The example plan's file name, at the repository root.
pub(crate) const PLAN_FILE: &str = "epic-plan.md";

/// `epic.toml` as `epic init` writes it: every option commented out at its default (or, for the
/// options without one, an example), each with what it does. Uncommented, every line parses.
pub(crate) const CONFIG_TEMPLATE: &str = r#"# epic.toml: the options of `epic run` for this repository, written by `epic init`.
#
# Every option is commented out at its default; uncomment a line to change it. A flag given to
# `epic run` wins over this file (`--concurrency 6` over `concurrency = 4`), and a list flag
# (`--gate`, `--reviewer`, `--setup`) replaces the whole list.
#   epic config          shows the options a run would use, and where each comes from
#   epic schema config   prints the JSON Schema of this file

# The agent that plans and implements each story: required, here or as --coder. A seat is a
# preset (claude, codex, gemini, aider, opencode, script) or "exec:COMMAND", a shell command that
# reads its prompt on stdin and replies on stdout, run in the story's worktree.
# coder = "claude"

# The story-level judge, a seat like coder. Default: no judge.
# judge = "codex"

# Per-task reviewers, seats like coder. Default: none.
# reviewer = ["gemini"]

# The architect of `epic plan`, which splits an epic into a plan, a seat like coder.
# Default: the coder.
# architect = "claude"

# Checks run with `sh -c`, per task in the story's worktree and on the epic head after each merge.
# Default: none.
# gate = ["cargo test"]

# Commands run with `sh -c` in every fresh or caught-up story worktree (dependency installs).
# Default: none.
# setup = ["npm ci"]

# Where the epic branch starts if it does not exist yet: a git revision.
# base = "HEAD"

# The integration branch the stories merge into. Default: "epic/<epic_id>".
# epic_branch = "epic/example"

# How many stories are implemented at once.
# concurrency = 3

# Stop at the first failed story, instead of skipping only the stories that depend on it.
# fail_fast = false

# Judge attempts, each but the last followed by one coder feedback round.
# judge_rounds = 2

# Review rounds per task.
# max_rounds = 3

# The most tasks a story's plan may have; a longer plan is sent back to the planner once, then
# fails the story.
# max_tasks = 30

# Whether a story's tasks are planned by a planner turn first: "auto" takes a small story
# (description and acceptance criteria at most 800 characters) as one task with no planner turn,
# one model request fewer; "always" plans every story (checkpoints and gates per task).
# planner = "auto"

# Deadline of one agent turn, in seconds; the turn's whole process group is killed when it passes.
# turn_timeout = 1800

# Deadline of one gate command, in seconds.
# gate_timeout = 1800

# How many more times a red gate command runs on the same tree before it counts as red; green on
# a rerun, it is flaky (the event `gate_flaky`) and passed. 0: no reruns.
# gate_reruns = 1

# The JUnit XML file each gate command writes, as "PATH=COMMAND" (the path relative to the
# directory the gate runs in, the command as in `gate`), e.g. "report.xml=pytest
# --junitxml=report.xml": a red command's failing tests are read from it, so a story is charged
# only with the tests it turned red. Without one, the command's output is read.
# gate_junit = []

# The longest a seat's pause may last: an agent at its usage limit pauses until the reset, an
# outage until a probe gets through; a pause that would end later stops the run (exit 130, a
# rerun resumes). Whole seconds, or with units: "90m", "6h", "1h30m", "2d".
# max_wait = "6h"

# How long an agent turn may print only "cannot reach the service" (Codex retries for ever
# without a network) before it counts as an outage of its seat, which then pauses with probes.
# outage_wait = "2m"

# How long an agent turn may print nothing before it is ended as stalled (its processes killed);
# the request runs again once, a second stall fails the story. "0": never.
# stall_timeout = "10m"

# Keep a story's worktree after it merged (by default it is removed; its branch always stays).
# keep_worktrees = false

# Start although the gates fail on the epic head; a merge is then undone only if a gate that
# passed on the baseline fails.
# allow_red_baseline = false

# Check each seat before the first story, without spending a token: installed and, for claude,
# codex and gemini, logged in. A seat that fails its check stops the run before anything starts.
# preflight = true

# The order among ready stories: "critical-path" (longest remaining chain first), "plan-order",
# or "waves" (each wave waits for the previous one).
# schedule = "critical-path"

# The most stories proven together by one gate run on the epic head: stories ready to integrate
# at once are merged in turn and gated once, a red batch bisected to its culprits; 1 integrates
# one at a time.
# merge_batch = 16

# How many times a story whose merge is red on the epic head goes back to its coder (caught up,
# told the gates' output and the stories it now meets) before it fails. 0: it fails at once.
# merge_revisions = 1

# What a test file looks like: a directory (`tests/`) anywhere in a path, or a glob on the file
# name (`*_test.*`). A story that deletes such a file, or adds a skip marker (#[ignore],
# @pytest.mark.skip, t.Skip(, xit(, it.skip(, ...), fails unless its plan entry sets
# "tests_change": true. Setting the list replaces the defaults.
# test_pattern = ["tests/", "test/", "__tests__/", "spec/", "*_test.*", "*.test.*", "*-test.*", "test_*.py", "*_spec.*", "*.spec.*", "*Test.java", "*Tests.cs"]

# Agents, gates and setup commands run in a bubblewrap sandbox that keeps the repository, the
# other worktrees and the epic's state read-only: "auto" (where bwrap is installed; a note says
# when it is not), "on" (refuse to run without it), or "off" (agents are not contained). Install it
# with `apt-get install bubblewrap` (Debian/Ubuntu).
# sandbox = "auto"

# In the sandbox your credential stores read as empty to agents, gates and setup commands
# (~/.ssh, ~/.gnupg, ~/.aws, ~/.azure, ~/.kube, ~/.docker/config.json, ~/.netrc,
# ~/.git-credentials, ~/.config/gh, ~/.config/git/credentials, and the tokens that publish
# packages). Each one listed here is shown as it is. Default: none.
# expose = []

# The most the epic may spend on agent turns, in US dollars, across its runs (the agents' own
# reported costs, else estimates). Once reached no agent turn starts; unfinished stories end not
# started, and a rerun with a larger budget carries on. Default: none (unlimited).
# budget_usd = 20.0
# A task whose coder changed nothing, even when asked again, and did not confirm it was already
# satisfied: "complete" ticks it with a warning while its gates are green, "fail" fails the
# story.
# noop = "complete"

# Settles the BLOCKED_ON claims the plan cannot settle, in a read-only turn: a seat like coder.
# Default: none (such a claim fails its story).
# verifier = "claude"
# A command run with `sh -c` in the epic's worktree on every move of a story on the board, the
# story's card as JSON on its standard input (epic's docs/running.md: "The board hook"), to
# sync a tracker.
# board_hook = "./scripts/sync-tracker.sh"

# What a coder's BLOCKED_ON that the plan and the verifier do not settle does: "fail" fails the
# story; "ask" leaves it waiting for `epic answer STORY TEXT` (at most max_wait).
# on_blocked = "fail"
# A command run with `sh -c` in the sandbox whenever a story needs a person (waiting, failed,
# stopped, every seat of a roster paused): EPIC_EPIC, EPIC_STORY, EPIC_ATTENTION set, the question or the
# reason on its standard input.
# notify = "notify-send epic \"$EPIC_STORY: $EPIC_ATTENTION\""

# Files of house rules whose text every agent's prompt carries, read when the run starts (a
# relative path is from the repository root).
# rules = ["CONTRIBUTING.md"]

# Where stories work: "warm" runs them in at most `concurrency` slot worktrees, each switched to
# the next story's branch (ignored build caches and dependencies stay, so setup and gates are
# incremental); "fresh" adds a new worktree per story. Either way the ignored files that
# `.worktreeinclude` at the repository root names (gitignore patterns: .env, local settings) are
# copied from the main checkout into each new worktree.
# worktrees = "warm"

# Prices for the report's cost estimates (which are estimates from character counts), in US
# dollars per million input and output tokens, by seat or model name prefix; the longest matching
# prefix wins, then the built-in prices of the presets.
# [prices]
# aider = { input = 3.0, output = 15.0 }

# Named seats: a preset or `exec:COMMAND` (`seat`) with environment variables of its own (`env`),
# such as a second account of one CLI. A roster names it like a preset, and its turns go to the
# first seat not paused by a usage limit or an outage: `coder = ["claude", "claude-work"]`.
# `${NAME}` in a value is variable NAME of the environment epic runs in. A variable whose name
# says it holds a secret (a key, token, password, credential) takes such references only, never
# its value, which this file must not hold: `ANTHROPIC_API_KEY = "${WORK_ANTHROPIC_API_KEY}"`.
# [seats.claude-work]
# seat = "claude"
# env = { CLAUDE_CONFIG_DIR = "~/.claude-work" }
"#;

/// The example plan: a small service in three stories and two waves.
pub(crate) fn example_plan() -> StoryPlan {
    let mut config = Story::new("config", "Configuration loading", ["src/config"]);
    config.description = "Load the service's settings from `service.toml` and the environment \
                          (`GREETER_PORT` wins over the file), with defaults for every setting."
        .into();
    config.provides = vec!["config::Settings::load".into()];
    config.acceptance = vec![
        "a missing service.toml yields the defaults".into(),
        "GREETER_PORT overrides the file's port".into(),
    ];
    config.read_first = vec!["src/main.rs".into()];

    let mut api = Story::new("greeting-api", "Greeting endpoint", ["src/api"])
        .depending_on(["config"])
        .sharing(["src/config"]);
    api.description = "Serve `GET /greet?name=NAME` answering `{\"greeting\": \"Hello, NAME!\"}`, \
                       on the port the settings name."
        .into();
    api.provides = vec!["GET /greet".into()];
    api.acceptance = vec![
        "GET /greet?name=Ada answers 200 with {\"greeting\": \"Hello, Ada!\"}".into(),
        "a missing name answers 400".into(),
    ];

    let mut docs = Story::new("docs", "User guide", ["docs"]);
    docs.description = "Write docs/guide.md: how to configure, start and call the service.".into();
    docs.acceptance = vec!["every setting of the service is documented".into()];

    StoryPlan {
        epic_id: "example".into(),
        epic: "An example plan written by `epic init`: a small greeting service. Replace the \
               stories with your own, check them with `epic validate epic-plan.md` and \
               `epic graph epic-plan.md`, then run them with `epic run epic-plan.md`."
            .into(),
        stories: vec![config, api, docs],
    }
}

/// Runs `epic init`.
pub(crate) fn run(global: &GlobalArgs, out: Output) -> Result<(), CommandError> {
    global.format_for("init", &[Format::Text])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let files = [
        (FILE_NAME, CONFIG_TEMPLATE.to_owned()),
        (PLAN_FILE, example_plan().to_markdown()),
    ];
    for (name, _) in &files {
        let path = repo.root.join(name);
        // `symlink_metadata`: a dangling symlink exists too, and writing through it would create
        // a file elsewhere.
        if fs::symlink_metadata(&path).is_ok() {
            return Err(exists(name, &repo.root));
        }
    }
    for (name, text) in &files {
        write_new(&repo.root, name, text)?;
    }
    if !out.quiet() {
        output::data(&format!(
            "wrote {FILE_NAME} and {PLAN_FILE} in {}\n\n\
             next:\n  \
             edit {PLAN_FILE}: the epic's stories, what each owns and depends on\n  \
             set `coder` in {FILE_NAME} (or pass --coder), and your gates\n  \
             epic validate {PLAN_FILE}\n  \
             epic run {PLAN_FILE}\n",
            repo.root.display()
        ))?;
    }
    Ok(())
}

fn exists(name: &str, root: &Path) -> CommandError {
    CommandError::new(
        Kind::Repository,
        Message::new(format!("`{name}` already exists in `{}`", root.display())),
    )
    .hint(format!(
        "epic init never overwrites a file; edit `{name}`, or move it away and run `epic init` again"
    ))
}

/// Writes `text` to the new file `root/name`; an existing file is never overwritten.
#[expect(
    clippy::disallowed_methods,
    reason = "`epic init` writes the user's own files (epic.toml, a plan), not epic's state"
)]
fn write_new(root: &Path, name: &str, text: &str) -> Result<(), CommandError> {
    let path = root.join(name);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(exists(name, root)),
        Err(error) => Err(CommandError::new(
            Kind::Repository,
            WithSource {
                message: format!("failed to write `{}`", path.display()),
                source: error,
            },
        )
        .hint("check that the repository root is writable")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunOptions, keys, resolve};

    /// The template with every option line uncommented.
    fn uncommented() -> String {
        CONFIG_TEMPLATE
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                Some(rest)
                    if rest.starts_with('[')
                        || rest
                            .split_once(" = ")
                            .is_some_and(|(key, _)| !key.contains(' ')) =>
                {
                    rest
                }
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_template_parses_and_sets_nothing() {
        assert_eq!(
            RunOptions::parse(CONFIG_TEMPLATE).unwrap(),
            RunOptions::default()
        );
    }

    #[test]
    fn the_template_names_every_key_at_its_default() {
        let written = RunOptions::parse(&uncommented()).unwrap();
        assert_eq!(written.keys_set(), keys(), "every key, in contract order");
        let options = resolve(&written, &RunOptions::default()).unwrap().options;
        let defaults = resolve(
            &RunOptions::parse("coder = \"claude\"").unwrap(),
            &RunOptions::default(),
        )
        .unwrap()
        .options;
        // The options without a default show an example; every other line is the default.
        let examples = RunOptions {
            judge: options.judge.clone(),
            verifier: options.verifier.clone(),
            reviewer: options.reviewer.clone(),
            architect: options.architect.clone(),
            gate: options.gate.clone(),
            setup: options.setup.clone(),
            epic_branch: options.epic_branch.clone(),
            budget_usd: options.budget_usd,
            prices: options.prices.clone(),
            seats: options.seats.clone(),
            board_hook: options.board_hook.clone(),
            notify: options.notify.clone(),
            rules: options.rules.clone(),
            ..defaults
        };
        assert_eq!(options, examples);
    }

    #[test]
    fn the_example_plan_is_valid() {
        let plan = example_plan();
        let valid = plan.clone().validate().unwrap();
        assert_eq!(
            valid.waves(),
            [vec!["config", "docs"], vec!["greeting-api"]]
        );
        let markdown = plan.to_markdown();
        assert_eq!(
            StoryPlan::parse(&markdown, epic_story_plan::PlanFormat::Markdown).unwrap(),
            plan
        );
    }
}
