//! The command line of `epic`, declared with clap's derive API.
//!
//! Global options live in [`GlobalArgs`] and apply to every command; each command is one variant
//! of [`Command`]. Which `--format` a command accepts is checked when it runs
//! ([`GlobalArgs::format_for`]), so the error names the command and the formats it does support.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::config::{ForLanding, ForPlanning, ForRun, OptionsOf};
use crate::error::{CommandError, Kind, Message};

const ABOUT: &str = "Run the stories of an epic in parallel with coding agents.";

const LONG_ABOUT: &str = "\
Run the stories of an epic in parallel with coding agents, each in its own git worktree and \
branch. A plan lists the epic's stories with the stories each depends on and the paths each \
owns; `epic` checks the plan up front, starts every story whose dependencies have merged, and \
merges a story into the epic branch only once its checks pass.";

const EXAMPLES: &str = "\
Examples:
  epic demo                             run a sample epic on a throwaway repository
  epic init                             write a commented epic.toml and an example plan
  epic run plan.md --coder claude --gate 'cargo test'
                                        run the epic: every story by an agent, merged when green
  epic plan 'Add a shopping cart' --architect claude
                                        an agent splits the epic into epic-plan.md
  epic validate plan.md                 check a plan and list every violation
  epic graph plan.md                    show the waves and the critical path
  epic graph --format mermaid plan.md   draw the dependency graph as a Mermaid flowchart
  epic status                           each story's state, and whether a run is going on
  epic report --format json             the last run's report, for scripts
  epic clean --branches                 remove the epic's worktrees and story branches
  epic land                             land the finished epic on the branch it started from
  epic answer cart-api 'use port 8080'  answer the question a story waits on
  epic stop cart-api                    stop a story of the running epic
  epic schema plan                      print the JSON Schema of a plan file";

const EXIT_STATUS: &str = "\
Exit status:
  0    success (the plan is valid; every story is done)
  1    the plan has violations; a story failed or was skipped; `epic plan`'s plan is still
       invalid after its rounds; `epic land` did not land (the target untouched)
  2    bad usage, an unreadable, unparsable or invalid plan (`epic run`), a bad epic.toml, not a
       repository, no such epic or report, or a file `epic init` or `epic plan` would overwrite
  3    another run holds the epic's lock
  130  interrupted (the state is kept: a rerun resumes)";

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

    /// How to print the command's data: text or json; `graph` also prints mermaid and dot,
    /// `report` md and html
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
    /// Markdown (report only)
    Md,
    /// One HTML page with pictures (report only)
    Html,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::Mermaid => "mermaid",
            Self::Dot => "dot",
            Self::Md => "md",
            Self::Html => "html",
        }
    }
}

impl GlobalArgs {
    /// The `--format` given, if `command` supports it; a usage error otherwise.
    pub(crate) fn format_for(
        &self,
        command: &str,
        supported: &[Format],
    ) -> Result<Format, CommandError> {
        if supported.contains(&self.format) {
            return Ok(self.format);
        }
        let names: Vec<&str> = supported.iter().map(|f| f.name()).collect();
        let error = CommandError::new(
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
    #[command(after_help = "Examples:\n  epic schema plan > plan.schema.json\n  \
                            epic schema config > epic.schema.json\n  \
                            epic schema events > events.schema.json")]
    Schema(SchemaArgs),

    /// Run an epic: every story by an agent in its own worktree, merged when proven good
    #[command(
        long_about = "Run the epic of a plan: each story is implemented by the coder seat in its \
                      own git worktree and branch (story/<epic>/<story>), checked by the gates \
                      and the optional judge and reviewers, and merged into the epic branch \
                      (epic/<epic> by default) only when proven good; a merge that turns the \
                      gates red on the epic branch is undone. Stories whose dependencies have \
                      merged run in parallel (--concurrency). Every option is also settable in \
                      epic.toml at the repository root; flags win.\n\n\
                      Progress goes to stderr (live on a terminal, plain timestamped lines \
                      otherwise or with --no-progress; -v adds each agent's output); the \
                      summary goes to stdout (the report's JSON with --format json). The state \
                      is kept in <git-common-dir>/epic/<epic>/: rerun the same command after a \
                      crash or Ctrl-C and merged stories are skipped, started ones resume at \
                      their first open task, and a story whose plan entry changed starts over.",
        after_help = "Examples:\n  \
                      epic run plan.md --coder claude --gate 'cargo test'\n  \
                      epic run plan.md --coder codex --judge claude --concurrency 4\n  \
                      epic run plan.json --coder 'exec:./my-agent.sh' --no-progress\n\n\
                      Exit status: 0 every story done, 1 a story failed or was skipped, 2 bad \
                      plan, config or repository, 3 another run holds the epic's lock, 130 \
                      interrupted."
    )]
    Run(RunArgs),

    /// Remove an epic's worktrees (and with --branches its story branches)
    #[command(
        long_about = "Remove the worktrees of an epic's run: the story worktrees and the epic \
                      branch's own (_epic), under <repo-parent>/<repo-name>.worktrees/<epic>/, \
                      and their git registrations. The epic branch is never touched, and the \
                      state is kept: merged stories stay merged. --branches also deletes the \
                      story branches (story/<epic>/*); a story that had not merged then starts \
                      over on the next run (its state and task checkpoint are removed with its \
                      branch). Refuses (exit 3) while a run holds the epic's lock.",
        after_help = "Examples:\n  epic clean\n  epic clean checkout --branches"
    )]
    Clean(CleanArgs),

    /// Run a sample epic on a throwaway repository, live
    #[command(
        long_about = "Build a small shell project with real tests in a temporary git \
                      repository, write a plan of six stories in three waves (one of which is \
                      designed to fail its tests), and run it with the built-in script seat and \
                      the project's test suite as the gate, live. Ends with the report and what \
                      happened. Needs only git and sh. --keep DIR keeps the repository (and \
                      its worktrees beside it) to look at afterwards.",
        after_help = "Examples:\n  epic demo\n  epic demo --keep /tmp/epic-demo"
    )]
    Demo(DemoArgs),

    /// Show each story's state, and whether a run is going on
    #[command(
        long_about = "Show each story's state in the repository's epic state directory \
                      (<git-common-dir>/epic/<epic>/): started, merged or failed, its branch and \
                      worktree; whether a run holds the epic's lock (and which process); and, when \
                      a run has finished, each story's outcome in its report. Reads only: safe \
                      while a run is going. Without EPIC: the only epic that has run here, or a \
                      list of them. With --plan, every story of the plan is listed in plan \
                      order, also those no run has started yet, and the epic is the plan's.\n\n\
                      --format json prints {\"epic_id\", \"running\", \"holder\": {\"pid\", \
                      \"host\", \"started_at\", \"command\"} or null, \"stories\": [{\"id\", \
                      \"status\", \"branch\", \"worktree\", \"outcome\", \"reason\"}], \
                      \"report\": {\"epic_branch\", \"done\", \"failed\", \"skipped\"} or null}; \
                      without EPIC and with several epics, {\"epics\": [{\"epic_id\", \
                      \"running\"}]}.",
        after_help = "Examples:\n  \
                      epic status\n  \
                      epic status checkout --format json | jq -r '.stories[] | \"\\(.id) \\(.status)\"'\n  \
                      epic status --plan plan.md"
    )]
    Status(StatusArgs),

    /// Watch an epic live, full screen: its stories, seats, merge queue and spend
    #[command(
        long_about = "Show an epic live on the whole terminal: a line per story (status, wave, \
                      the seat and role of its turn, elapsed time, the agent's latest action, \
                      judge rounds and merge revisions, tokens and cost; stories that wait on \
                      a person, failed or were stopped first and marked `!`), a header (the \
                      epic, done/total, the batch being merged, the seats and their pauses, the \
                      spend and --budget-usd) and the selected story's tasks, latest transcript, \
                      last gate failure, judge issues and rejected patch. It only reads the \
                      epic's state, never takes its lock, follows it as it changes, and shows \
                      the last run when none is going. Keys: up/down or j/k select, a answer, t \
                      tell, s stop, r retry (f there: --fresh) (as `epic answer`, `tell`, `stop`, `retry`: a prompt \
                      line, Enter sends, Esc cancels), ? the keys, q leaves (the run goes on). \
                      NO_COLOR draws without colour.\n\n\
                      When standard output is not a terminal it prints the table once as plain \
                      text; --format json prints it as JSON: {\"epic_id\", \"running\", \
                      \"done\", \"total\", \"merging\", \"seats\", \"spent_usd\", \
                      \"budget_usd\", \"stories\": [{\"id\", \"status\", \"wave\", \"seat\", \
                      \"role\", \"elapsed_secs\", \"doing\", \"rounds\", \"revisions\", \
                      \"tokens\", \"cost_usd\", \"reason\"}]}.",
        after_help = "Examples:\n  \
                      epic watch\n  \
                      epic watch checkout | cat\n  \
                      epic watch checkout --format json | jq '.stories[] | select(.status == \"waiting\")'"
    )]
    Watch(WatchArgs),

    /// Print the last report of an epic's run
    #[command(
        long_about = "Print the report the last run of an epic wrote: Markdown (report.md) by \
                      default or with --format md, the report's JSON data (report.json's \
                      \"data\") with --format json, or one self-contained HTML page with \
                      --format html: the dependency graph coloured by outcome with the critical \
                      path, a timeline of the stories, their turns, gates, merges, pauses and \
                      waits (from events.jsonl), tokens and cost as bars, then the report's text. \
                      --open writes the page to report.html in the epic's state directory and \
                      opens it in the browser (xdg-open, or open on macOS), printing its path. \
                      Token and cost figures are the agents' own or estimates. Exits 2 when the \
                      epic has no report yet.",
        after_help = "Examples:\n  \
                      epic report\n  \
                      epic report checkout --format json | jq '.stories[] | select(.status != \"done\")'\n  \
                      epic report --format html > report.html\n  \
                      epic report --open"
    )]
    Report(ReportArgs),

    /// Check that every merge on the epic branch carries its proof
    #[command(
        long_about = "Check each commit of the epic branch's first-parent line, from where the \
                      branch started, against the attestation `epic run` recorded when it proved \
                      the merge: a git note under refs/notes/epic, backed by a copy in the epic's \
                      state. An attestation names the story commit that was checked, the \
                      perimeter and test-guard result, the judge's verdict, each gate with its \
                      exit code, and the tree the gates passed on. A commit without one (made by \
                      hand, or by a stray process), a note the state does not back, a note that \
                      contradicts its commit, or a story whose state claims a merge no \
                      attestation backs is named. Exits 0 when every commit is attested and \
                      consistent, 1 otherwise, 2 when the epic or its branch does not exist.\n\n\
                      --format json prints {\"epic\", \"branch\", \"base\", \"base_from\", \
                      \"commits\": [{\"commit\", \"summary\", \"author\", \"story\", \"kind\", \
                      \"problems\"}], \"claims\"}.",
        after_help = "Examples:\n  \
                      epic verify\n  \
                      epic verify checkout --format json | jq '.commits[] | select(.problems != [])'\n  \
                      git push origin refs/notes/epic   # the attestations travel with the branch"
    )]
    Verify(EpicArgs),

    /// Show the options `epic run` would use: epic.toml with the flags over it
    #[command(
        long_about = "Show the options `epic run` would use, and where each comes from: a flag, \
                      epic.toml at the repository root, or the default. Takes the same options as \
                      `epic run`, so it checks a command line and the config file without running \
                      anything. Exits 2 when epic.toml is invalid or no coder seat is set. \
                      --format json prints the resolved options with the config file's keys \
                      (timeouts in seconds).",
        after_help = "Examples:\n  \
                      epic config\n  \
                      epic config --coder claude --concurrency 6 --format json"
    )]
    Config(ConfigArgs),

    /// Have an agent (the architect) split an epic into a plan that validates
    #[command(
        long_about = "Have an agent, the architect seat, split an epic into a plan: it is \
                      given the epic (TEXT, or --from FILE), the repository's tracked files, the \
                      head of its README, the plan format, every validation rule and the plan's \
                      JSON Schema, and replies with the plan. A reply that cannot be read or \
                      breaks a rule goes back to it with every violation, for up to --rounds \
                      rounds. The architect runs in the repository's root with \
                      EPIC_ROLE=architect, in the sandbox (as `--sandbox` or epic.toml says) with \
                      the whole repository read-only.\n\n\
                      A valid plan is written to epic-plan.md at the repository root (-o PATH \
                      chooses: .md, .json or .toml, by extension) and its waves and critical \
                      path are printed. Its turns are kept as transcripts, with their estimated \
                      usage, under <git-common-dir>/epic-plans/. Exits 0 when the plan is \
                      written, 1 when it is still invalid after the rounds (the violations are \
                      printed, nothing is written), 2 on bad usage or when the file exists \
                      (--force overwrites it).",
        after_help = "Examples:\n  \
                      epic plan 'Add a shopping cart with quantities and a total' --architect claude\n  \
                      epic plan --from brief.md -o plans/cart.json --rounds 5\n  \
                      epic plan 'Dark mode' && epic run epic-plan.md"
    )]
    Plan(PlanEpicArgs),

    /// Land a finished epic on its target branch, proven
    #[command(
        long_about = "Land a finished epic on --target (default: the branch the epic was started \
                      from, else the current branch). The target comes to the epic first: in the \
                      epic worktree, the target is merged into the epic branch; each conflicted \
                      path goes to a coder turn of the story that owns it (EPIC_ROLE=lander, \
                      EPIC_STORY the story), the paths no story owns to a final turn; then the \
                      gates run on the merged tree, red gates going back to the coder \
                      (--max-rounds). Green, the target moves by one merge commit `<epic>: land \
                      epic/<id>` (first parent the target), by compare-and-swap: a target that \
                      moved meanwhile is merged again (at most twice). Giving up puts the epic \
                      branch back; the target is untouched. Afterwards the epic's worktrees and \
                      the story branches the target holds are removed (--keep keeps them). The \
                      seat, gate and sandbox options default to the epic's last run.",
        after_help = "Examples:\n  \
                      epic land\n  \
                      epic land --dry-run\n  \
                      epic land checkout --target main --gate 'cargo test'\n  \
                      epic land --pr --draft\n\n\
                      Exit status: 0 landed, already landed, or dry run; 1 not landed (unmerged \
                      stories, unresolved conflict, red gates, unattested commits), target \
                      untouched; 2 bad usage or repository; 3 the epic's lock is held."
    )]
    Land(LandArgs),

    /// Answer the question a story waits on
    #[command(
        long_about = "Answer the question a story's coder asked (a story `epic status` shows \
                      waiting on a person): the answer is the coder's next turn. The command is \
                      queued in the epic's inbox (<git-common-dir>/epic/<epic>/inbox/), which \
                      the running epic takes within a second, or the next `epic run`; it never \
                      takes the epic's lock. Exits 2 when the story waits on no answer, saying \
                      what it is doing instead.",
        after_help = "Examples:\n  \
                      epic answer cart-api 'use port 8080'\n  \
                      epic answer cart-api \"$(cat answer.md)\" --epic checkout"
    )]
    Answer(MessageArgs),

    /// Leave a note for a story's next coder turn
    #[command(
        long_about = "Leave a note for the story's next coder turn: it is in that turn's \
                      prompt, marked as a person's words, once, after the notes given before \
                      it. Queued in the epic's inbox like `epic answer`; never takes the lock. \
                      Exits 2 for a story already merged.",
        after_help = "Examples:\n  epic tell cart-api 'the prices are in cents'"
    )]
    Tell(MessageArgs),

    /// Stop a story (or, with --all, the whole run as Ctrl-C does)
    #[command(
        long_about = "Stop a story: its current turn ends now, it is `stopped`, and the stories \
                      that depend on it are skipped; `epic retry STORY` runs it again. --all \
                      stops the whole run as Ctrl-C does (the state is kept; a rerun resumes). \
                      Queued in the epic's inbox; never takes the lock. Exits 2 for a story \
                      merged, failed or already stopped, and for --all when no run is going.",
        after_help = "Examples:\n  epic stop cart-api\n  epic stop --all"
    )]
    Stop(StopArgs),

    /// Run a failed or stopped story again
    #[command(
        long_about = "Run a failed or stopped story again: in the running epic at its \
                      checkpoint, or at the next `epic run`; --fresh starts it over from the \
                      epic head. Queued in the epic's inbox; never takes the lock. Exits 2 for a \
                      story that is neither failed nor stopped.",
        after_help = "Examples:\n  epic retry cart-api\n  epic retry cart-api --fresh"
    )]
    Retry(RetryArgs),

    /// Write a commented epic.toml and an example plan at the repository root
    #[command(
        long_about = "Write epic.toml (every option of `epic run`, commented out, with its default \
                      and what it does) and epic-plan.md (an example plan to edit) at the \
                      repository root. Never overwrites: exits 2 if either file exists.",
        after_help = "Examples:\n  epic init\n  epic init --repo ../shop"
    )]
    Init,

    /// Print shell completions
    #[command(
        long_about = "Print the completion script of a shell to stdout.",
        after_help = "Examples:\n  \
                      epic completions bash > ~/.local/share/bash-completion/completions/epic\n  \
                      epic completions zsh > ~/.zfunc/_epic\n  \
                      epic completions fish > ~/.config/fish/completions/epic.fish"
    )]
    Completions(CompletionsArgs),
}

/// The epic a command reads the state of.
#[derive(Debug, Args)]
pub(crate) struct EpicArgs {
    /// The epic's id [default: the only epic that has run in this repository]
    #[arg(value_name = "EPIC")]
    pub(crate) epic: Option<String>,
}

/// `epic report [EPIC] [--open]`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    pub(crate) epic: EpicArgs,

    /// Write the HTML page to report.html in the epic's state directory and open it in the
    /// browser (implies --format html)
    #[arg(long)]
    pub(crate) open: bool,
}

/// `epic status [EPIC] [--plan PLAN]`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// The epic's id [default: the plan's, with --plan; else the only epic that has run in this
    /// repository]
    #[arg(value_name = "EPIC")]
    pub(crate) epic: Option<String>,
    /// List every story of this plan, in plan order, started or not
    #[arg(long, value_name = "PLAN", value_hint = clap::ValueHint::FilePath)]
    pub(crate) plan: Option<PathBuf>,
}

/// `epic watch [EPIC]`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// The epic's id [default: the only epic that has run in this repository]
    #[arg(value_name = "EPIC")]
    pub(crate) epic: Option<String>,
}

/// The epic a person's command is for (`--epic ID`).
#[derive(Debug, Args)]
pub(crate) struct EpicOption {
    /// The epic's id [default: the only epic that has run in this repository]
    #[arg(long, value_name = "ID")]
    pub(crate) epic: Option<String>,
}

/// `epic answer STORY TEXT` and `epic tell STORY TEXT`.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    /// The story's id
    #[arg(value_name = "STORY")]
    pub(crate) story: String,
    /// The words for its coder
    #[arg(value_name = "TEXT")]
    pub(crate) text: String,
    /// The epic.
    #[command(flatten)]
    pub(crate) epic: EpicOption,
}

/// `epic stop STORY | --all`.
#[derive(Debug, Args)]
pub(crate) struct StopArgs {
    /// The story's id
    #[arg(
        value_name = "STORY",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub(crate) story: Option<String>,
    /// Stop the whole run, as Ctrl-C does
    #[arg(long)]
    pub(crate) all: bool,
    /// The epic.
    #[command(flatten)]
    pub(crate) epic: EpicOption,
}

/// `epic retry STORY [--fresh]`.
#[derive(Debug, Args)]
pub(crate) struct RetryArgs {
    /// The story's id
    #[arg(value_name = "STORY")]
    pub(crate) story: String,
    /// Start over from the epic head instead of the story's checkpoint
    #[arg(long)]
    pub(crate) fresh: bool,
    /// The epic.
    #[command(flatten)]
    pub(crate) epic: EpicOption,
}

/// `epic run PLAN [RUN OPTIONS]`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The plan file: .json, .toml, or .md (Markdown holding a json storyplan fenced block)
    #[arg(value_name = "PLAN", value_hint = clap::ValueHint::FilePath)]
    pub(crate) plan: PathBuf,
    /// The options of the run.
    #[command(flatten)]
    pub(crate) options: OptionsOf<ForRun>,
}

/// `epic land [EPIC]`.
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches of the command line, each its own flag"
)]
pub(crate) struct LandArgs {
    /// The epic's id [default: the only epic that has run in this repository]
    #[arg(value_name = "EPIC")]
    pub(crate) epic: Option<String>,
    /// The branch to land on [default: the branch the epic was started from, else the current
    /// branch]
    #[arg(long, value_name = "BRANCH")]
    pub(crate) target: Option<String>,
    /// Land what is merged although some stories are not; the report lists those left out
    #[arg(long)]
    pub(crate) partial: bool,
    /// Push the epic branch and open (or update) a pull request with `gh` instead of moving
    /// the target
    #[arg(long)]
    pub(crate) pr: bool,
    /// Open the pull request as a draft (with --pr)
    #[arg(long, requires = "pr")]
    pub(crate) draft: bool,
    /// The remote to push to (with --pr) [default: the target's upstream remote, else origin]
    #[arg(long, value_name = "REMOTE", requires = "pr")]
    pub(crate) remote: Option<String>,
    /// Say what a landing would do (whether the target moved, which paths would conflict and
    /// who owns each) and change nothing
    #[arg(long, conflicts_with = "pr")]
    pub(crate) dry_run: bool,
    /// Keep the epic's worktrees and story branches after landing
    #[arg(long)]
    pub(crate) keep: bool,
    /// Land although commits of the epic branch carry no attestation (listed in the landing
    /// commit's message)
    #[arg(long)]
    pub(crate) allow_unattested: bool,
    /// The epic's plan [default: the plan its last run recorded]
    #[arg(long, value_name = "PLAN", value_hint = clap::ValueHint::FilePath)]
    pub(crate) plan: Option<PathBuf>,
    /// The options landing reads: the seat, gate and sandbox options [default: the epic's last
    /// run's]
    #[command(flatten)]
    pub(crate) options: OptionsOf<ForLanding>,
}

/// `epic clean [EPIC] [--branches]`.
#[derive(Debug, Args)]
pub(crate) struct CleanArgs {
    /// The epic's id [default: the only epic that has run in this repository]
    #[arg(value_name = "EPIC")]
    pub(crate) epic: Option<String>,
    /// Also delete the story branches (`story/<epic>/*`); never the epic branch
    #[arg(long)]
    pub(crate) branches: bool,
}

/// `epic demo [--keep DIR]`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Keep the demo repository in DIR (created if missing; must be empty)
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub(crate) keep: Option<PathBuf>,
}

/// `epic config [RUN OPTIONS]`.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The options of `epic run`.
    #[command(flatten)]
    pub(crate) options: OptionsOf<ForRun>,
}

/// `epic completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub(crate) shell: clap_complete::Shell,
}

/// `epic plan TEXT | --from FILE [OPTIONS]`.
#[derive(Debug, Args)]
pub(crate) struct PlanEpicArgs {
    /// The epic, in a sentence or more
    #[arg(
        value_name = "TEXT",
        required_unless_present = "from",
        conflicts_with = "from"
    )]
    pub(crate) text: Option<String>,
    /// Read the epic from FILE (a longer brief) instead of TEXT
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub(crate) from: Option<PathBuf>,
    /// Rounds in all: a reply that is not a valid plan goes back with every violation while
    /// rounds are left
    #[arg(long, value_name = "N", default_value = "3")]
    pub(crate) rounds: crate::config::Count,
    /// Where to write the plan; its extension (.md, .json, .toml) is its format [default:
    /// epic-plan.md at the repository root]
    #[arg(short, long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub(crate) output: Option<PathBuf>,
    /// Overwrite the plan file if it exists
    #[arg(long)]
    pub(crate) force: bool,
    /// The architect and its sandbox.
    #[command(flatten)]
    pub(crate) options: OptionsOf<ForPlanning>,
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
    /// The config file, `epic.toml` at the repository root
    Config,
    /// One line of the event log, `<git-dir>/epic/<epic>/events.jsonl`
    Events,
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
