//! `epic demo [--keep DIR]`: a sample epic, run for real on a throwaway repository.
//!
//! # The demo's design
//!
//! The project is `textkit`, a few POSIX shell functions with real tests: `lib/*.sh` holds the
//! functions, `tests/*_test.sh` the checks, and `sh run-tests.sh` runs them all: that is the
//! gate, run per task in each story's worktree and on the epic branch after each merge. Only git
//! and sh are needed; nothing is fetched.
//!
//! The plan has six stories in three waves, each story's description carrying the files it
//! writes as `file <path>` blocks, which the built-in script seat applies (one task per file):
//!
//! | wave | story | depends on | what happens |
//! | --- | --- | --- | --- |
//! | 1 | `strings` | | `upper`, `lower`: merged |
//! | 1 | `math` | | `add`, `mul`: merged |
//! | 2 | `slug` | `strings` | `slugify`: merged |
//! | 2 | `stats` | `math` | `mean` in shell arithmetic truncates 3/2 to 1, and its own test expects 1.5: the gate stays red through every review round, so the story **fails** and nothing of it reaches the epic branch |
//! | 3 | `banner` | `slug` | `banner`: merged |
//! | 3 | `summary` | `stats` | **skipped**: its dependency failed |
//!
//! `epic.toml` in the repository sets the coder (`script`), the gate and two review rounds, so
//! `epic run epic-plan.json` reruns it as is. The demo exits 0 when it ran as designed (four
//! stories merged, `stats` failed, `summary` skipped), 1 otherwise.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use epic_agents::{Reply, SeatError};
use epic_report::OutcomeStatus;
use serde_json::json;

use crate::args::{DemoArgs, GlobalArgs};
use crate::commands::render;
use crate::commands::run::{execute, summary};
use crate::config::{self, RunOptions};
use crate::error::{CommandError, Kind, Message, WithSource};
use crate::output::{self, Output};
use crate::progress::Mode;
use crate::repo;

/// The demo repository's directory name (a temporary one is `<tmp>/epic-demo-*/textkit`).
const PROJECT: &str = "textkit";

/// The plan file written into the demo repository.
const PLAN_FILE: &str = "epic-plan.json";

/// The gate: the project's whole test suite.
const GATE: &str = "sh run-tests.sh";

const RUN_TESTS: &str = r#"#!/bin/sh
# Runs every tests/*_test.sh from the repository root; fails when any of them fails.
cd "$(dirname "$0")" || exit 2
ran=0
failing=0
for test in tests/*_test.sh; do
  [ -e "$test" ] || continue
  ran=$((ran + 1))
  if ! sh "$test"; then
    echo "FAIL $test"
    failing=$((failing + 1))
  fi
done
echo "tests: $ran run, $failing failing"
[ "$failing" -eq 0 ]
"#;

const CHECK: &str = r#"# check NAME ACTUAL EXPECTED: ends the test file with a message when they differ.
check() {
  if [ "$2" != "$3" ]; then
    echo "  $1: expected '$3', got '$2'"
    exit 1
  fi
}
"#;

const README: &str = "# textkit\n\nSmall POSIX shell helpers. `sh run-tests.sh` runs the tests.\n";

const CONFIG: &str = r#"# The demo's run options (see `epic init` for every option).
coder = "script"
gate = ["sh run-tests.sh"]
max_rounds = 2
"#;

/// One story of the demo plan: id, title, dependencies, prose, and the files it writes.
struct DemoStory {
    id: &'static str,
    title: &'static str,
    depends_on: &'static [&'static str],
    prose: &'static str,
    files: &'static [(&'static str, &'static str)],
}

const STORIES: &[DemoStory] = &[
    DemoStory {
        id: "strings",
        title: "Case helpers",
        depends_on: &[],
        prose: "Add `upper` and `lower`, which print their argument in upper or lower case.",
        files: &[
            (
                "lib/strings.sh",
                "upper() { printf '%s' \"$1\" | tr '[:lower:]' '[:upper:]'; }\n\
                 lower() { printf '%s' \"$1\" | tr '[:upper:]' '[:lower:]'; }\n",
            ),
            (
                "tests/strings_test.sh",
                ". lib/strings.sh\n. tests/check.sh\n\
                 check upper \"$(upper 'Hello, World')\" 'HELLO, WORLD'\n\
                 check lower \"$(lower 'Hello, World')\" 'hello, world'\n",
            ),
        ],
    },
    DemoStory {
        id: "math",
        title: "Arithmetic helpers",
        depends_on: &[],
        prose: "Add `add` and `mul` for whole numbers.",
        files: &[
            (
                "lib/math.sh",
                "add() { echo $(($1 + $2)); }\nmul() { echo $(($1 * $2)); }\n",
            ),
            (
                "tests/math_test.sh",
                ". lib/math.sh\n. tests/check.sh\n\
                 check add \"$(add 2 3)\" 5\ncheck mul \"$(mul 4 5)\" 20\n",
            ),
        ],
    },
    DemoStory {
        id: "slug",
        title: "Slugs",
        depends_on: &["strings"],
        prose: "Add `slugify`: lower case, every run of other characters one dash, no dash at \
                either end.",
        files: &[
            (
                "lib/slug.sh",
                ". lib/strings.sh\n\
                 slugify() { lower \"$1\" | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//'; }\n",
            ),
            (
                "tests/slug_test.sh",
                ". lib/slug.sh\n. tests/check.sh\n\
                 check slugify \"$(slugify 'Hello, World!')\" hello-world\n",
            ),
        ],
    },
    DemoStory {
        id: "stats",
        title: "Mean",
        depends_on: &["math"],
        prose: "Add `mean`, the arithmetic mean of its arguments. (Designed to fail: shell \
                arithmetic is whole numbers only, so `mean 1 2` prints 1, and the test expects \
                1.5.)",
        files: &[
            (
                "lib/stats.sh",
                ". lib/math.sh\n\
                 mean() {\n  sum=0\n  for x in \"$@\"; do sum=$(add \"$sum\" \"$x\"); done\n  \
                 echo $((sum / $#))\n}\n",
            ),
            (
                "tests/stats_test.sh",
                ". lib/stats.sh\n. tests/check.sh\n\
                 check 'mean of 2 4' \"$(mean 2 4)\" 3\n\
                 check 'mean of 1 2' \"$(mean 1 2)\" 1.5\n",
            ),
        ],
    },
    DemoStory {
        id: "banner",
        title: "Banners",
        depends_on: &["slug"],
        prose: "Add `banner`: the title in upper case, framed, with its slug.",
        files: &[
            (
                "lib/banner.sh",
                ". lib/slug.sh\n\
                 banner() { printf '== %s == (%s)\\n' \"$(upper \"$1\")\" \"$(slugify \"$1\")\"; }\n",
            ),
            (
                "tests/banner_test.sh",
                ". lib/banner.sh\n. tests/check.sh\n\
                 check banner \"$(banner 'Big news')\" '== BIG NEWS == (big-news)'\n",
            ),
        ],
    },
    DemoStory {
        id: "summary",
        title: "Summary line",
        depends_on: &["stats"],
        prose: "Add `summary`, which prints the mean of its arguments as a sentence.",
        files: &[
            (
                "lib/summary.sh",
                ". lib/stats.sh\nsummary() { echo \"mean: $(mean \"$@\")\"; }\n",
            ),
            (
                "tests/summary_test.sh",
                ". lib/summary.sh\n. tests/check.sh\n\
                 check summary \"$(summary 2 4)\" 'mean: 3'\n",
            ),
        ],
    },
];

/// The demo plan, as JSON: each story's description carries its files as `file` blocks.
fn plan_json() -> serde_json::Value {
    let stories: Vec<serde_json::Value> = STORIES
        .iter()
        .map(|story| {
            let mut description = format!("{}\n", story.prose);
            for (path, content) in story.files {
                let _ = write!(description, "\n```file {path}\n{content}```\n");
            }
            let mut shared = vec!["run-tests.sh".to_owned(), "tests/check.sh".to_owned()];
            for dependency in story.depends_on {
                if let Some(upstream) = STORIES.iter().find(|s| s.id == *dependency) {
                    shared.push(upstream.files[0].0.to_owned());
                }
            }
            json!({
                "id": story.id,
                "title": story.title,
                "description": description,
                "depends_on": story.depends_on,
                "owned": story.files.iter().map(|(path, _)| *path).collect::<Vec<_>>(),
                "shared_read_only": shared,
                "acceptance": [format!("`{GATE}` passes")],
            })
        })
        .collect();
    json!({
        "epic_id": "demo",
        "epic": "textkit: small shell helpers, each with its tests.",
        "stories": stories,
    })
}

/// Runs `epic demo`.
pub(crate) fn run(global: &GlobalArgs, args: &DemoArgs, out: Output) -> Result<(), CommandError> {
    // Kept alive to the end: dropping it removes the repository and its worktrees.
    let mut temporary = None;
    let root = match &args.keep {
        Some(dir) => keep_dir(dir)?,
        None => {
            let dir = tempfile::Builder::new()
                .prefix("epic-demo-")
                .tempdir()
                .map_err(|error| io_error("create a temporary directory", error))?;
            let root = dir.path().join(PROJECT);
            temporary = Some(dir);
            root
        }
    };
    build_project(&root)?;
    let repo = repo::discover(Some(&root))?;
    let file = RunOptions::load(&repo.root)?.map(|(_, file)| file);
    let options = config::resolve(&file.unwrap_or_default(), &RunOptions::default())?;
    let plan = crate::commands::run::load_valid(&repo.root.join(PLAN_FILE), out)?;
    let mut config = options.run_config();
    // The demo shows the planned loop: one task per file block of a story, each checked.
    config.planner = epic_executor::PlannerPolicy::Always;
    config.guarded_files = crate::commands::run::guarded_files(&repo, &repo.root.join(PLAN_FILE));
    // Recorded as `epic run` records it: `epic report --format html` draws its dependencies, and
    // `epic land` works on a kept demo.
    let state = epic_state_store::EpicDir::new(&repo.common_dir, &plan.plan().epic_id)
        .map_err(|error| CommandError::new(Kind::Input, error))?;
    crate::commands::run::record_plan(&repo, &state, plan.plan(), &config.base);
    let mode = Mode::choose(global.no_progress, out.quiet());
    if mode == Mode::Live {
        // The script seat answers in microseconds; paced, the live view can be followed.
        config.coder = std::sync::Arc::new(Paced {
            pause: std::time::Duration::from_millis(400),
        })
        .into();
    }
    if !out.quiet() {
        output::diagnostic(&format!(
            "epic demo: a six-story epic on a fresh repository `{}`\n\n",
            repo.root.display()
        ));
    }
    let outcome = execute(&repo, plan, config, mode, out)?;
    let rerun = format!("cd {} && epic run {PLAN_FILE}", repo.root.display());
    if !out.quiet() {
        // A throwaway repository is gone when the demo ends: no report path, no rerun.
        let rerun = args.keep.is_some().then_some(rerun.as_str());
        output::data(&summary(&outcome, rerun))?;
        output::data(&what_happened(&outcome, &repo.root, args.keep.is_some()))?;
    }
    if outcome.interrupted {
        return Err(CommandError::reported(Kind::Interrupted));
    }
    let as_designed = STORIES.iter().all(|story| {
        let expected = match story.id {
            "stats" => OutcomeStatus::Failed,
            "summary" => OutcomeStatus::Skipped,
            _ => OutcomeStatus::Done,
        };
        outcome.report.story(story.id).map(|s| s.status) == Some(expected)
    });
    drop(temporary);
    if as_designed {
        Ok(())
    } else {
        Err(CommandError::new(
            Kind::NotDone,
            Message::new(
                "the demo did not run as designed: it expects four stories merged, `stats` \
                 failed and `summary` skipped",
            ),
        )
        .hint("`epic demo --keep DIR -v` keeps the repository and shows every step"))
    }
}

/// The script seat, pausing before each turn: what the demo runs with on a terminal, so the live
/// view shows the stories at work rather than only their end.
#[derive(Debug)]
struct Paced {
    pause: std::time::Duration,
}

impl epic_agents::Seat for Paced {
    fn name(&self) -> &'static str {
        "script"
    }

    fn turn<'a>(
        &'a self,
        request: &'a epic_agents::TurnRequest,
        progress: epic_agents::ProgressFn<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Reply, SeatError>> + Send + 'a>> {
        Box::pin(async move {
            tokio::select! {
                () = tokio::time::sleep(self.pause) => {}
                () = request.context.cancel.cancelled() => {
                    return Err(epic_agents::SeatError::Cancelled);
                }
            }
            epic_agents::ScriptSeat.turn(request, progress).await
        })
    }
}

/// `--keep DIR`: created if missing, refused unless empty; the absolute path.
#[expect(
    clippy::disallowed_methods,
    reason = "the directory the user named for the demo's throwaway project, not epic's state"
)]
fn keep_dir(dir: &Path) -> Result<PathBuf, CommandError> {
    std::fs::create_dir_all(dir)
        .map_err(|error| io_error(&format!("create the directory `{}`", dir.display()), error))?;
    let mut entries = std::fs::read_dir(dir)
        .map_err(|error| io_error(&format!("read the directory `{}`", dir.display()), error))?;
    if entries.next().is_some() {
        return Err(CommandError::new(
            Kind::Repository,
            Message::new(format!(
                "`{}` is not empty; --keep needs an empty or new directory",
                dir.display()
            )),
        )
        .hint("name a new directory, such as `--keep /tmp/epic-demo`"));
    }
    dir.canonicalize()
        .map_err(|error| io_error(&format!("resolve `{}`", dir.display()), error))
}

/// Writes the project, the plan and `epic.toml` into `root` and commits them on `main`.
#[expect(
    clippy::disallowed_methods,
    reason = "the demo's throwaway project is the user's files, written before epic runs on it"
)]
fn build_project(root: &Path) -> Result<(), CommandError> {
    let plan = crate::commands::json(&plan_json());
    let files: [(&str, &str); 5] = [
        ("README.md", README),
        ("run-tests.sh", RUN_TESTS),
        ("tests/check.sh", CHECK),
        ("epic.toml", CONFIG),
        (PLAN_FILE, &plan),
    ];
    for (name, content) in files {
        let path = root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|error| io_error(&format!("create `{}`", parent.display()), error))?;
        }
        std::fs::write(&path, content)
            .map_err(|error| io_error(&format!("write `{}`", path.display()), error))?;
    }
    epic_git_ops::init_repository(
        root,
        &epic_git_ops::FirstCommit {
            branch: "main",
            name: "epic demo",
            email: "demo@epic.invalid",
            message: "textkit: the test runner",
        },
    )
    .map_err(|error| {
        let not_started = error.not_started();
        let error = CommandError::new(
            Kind::Repository,
            Message::new(format!(
                "failed to make `{}` a git repository: {error}",
                root.display()
            )),
        );
        if not_started {
            error.hint("`epic demo` needs git (and sh) on PATH")
        } else {
            error
        }
    })
}

fn io_error(action: &str, error: std::io::Error) -> CommandError {
    CommandError::new(
        Kind::Repository,
        WithSource {
            message: format!("failed to {action}"),
            source: error,
        },
    )
}

/// The paragraph that tells what just happened.
fn what_happened(outcome: &epic_executor::RunOutcome, root: &Path, kept: bool) -> String {
    let report = &outcome.report;
    let ids = |status: OutcomeStatus| -> Vec<&str> {
        report
            .stories
            .iter()
            .filter(|story| story.status == status)
            .map(|story| story.id.as_str())
            .collect()
    };
    let merged = ids(OutcomeStatus::Done);
    let number = match merged.len() {
        4 => "Four".to_owned(),
        n => n.to_string(),
    };
    let worktrees = epic_branch::worktrees_root(root, "demo");
    let text = render(|w| {
        writeln!(w, "\nWhat just happened")?;
        write!(
            w,
            "Six stories ran in three waves, each in its own worktree and branch \
             (story/demo/<id>), at most three at once. The script seat wrote each story's files \
             task by task, and after every task the gate `{GATE}` ran in the story's worktree. \
             {} stories ({}) passed and merged into the epic branch `{}`, where the gate ran \
             again after each merge. `stats` failed: its `mean` uses shell arithmetic, which truncates 3/2 \
             to 1, so its own test (expecting 1.5) kept the gate red through both review rounds, \
             and nothing of it reached the epic branch. `summary` depends on `stats`, so it was \
             skipped; stories that did not depend on it carried on.",
            number,
            merged.join(", "),
            report.epic_branch,
        )?;
        if kept {
            write!(
                w,
                " The repository is kept at {} (`git log --graph {}` shows the merges; the \
                 failed story's worktree and the epic's are under {}). Fix lib/stats.sh in the \
                 plan's `stats` story, then `cd {} && epic run {PLAN_FILE}`: the merged stories \
                 are skipped, and `stats` starts over because its plan entry changed.",
                root.display(),
                report.epic_branch,
                worktrees.display(),
                root.display(),
            )?;
        } else {
            write!(
                w,
                " The repository was temporary and is gone; `epic demo --keep DIR` keeps it, \
                 to look at the branches (`git log --graph {}`), read the report (`epic report`) \
                 and rerun (`epic run {PLAN_FILE}` skips the merged stories).",
                report.epic_branch,
            )?;
        }
        Ok(())
    });
    let mut wrapped = "\nWhat just happened\n".to_owned();
    wrapped.push_str(&wrap(text.trim_start_matches("\nWhat just happened\n"), 96));
    wrapped
}

/// `text` wrapped at `width` columns, on word boundaries, with a final newline.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_valid_with_three_waves() {
        let plan: epic_story_plan::StoryPlan = serde_json::from_value(plan_json()).unwrap();
        let plan = plan.validate().unwrap();
        assert_eq!(
            plan.waves(),
            [
                vec!["strings", "math"],
                vec!["slug", "stats"],
                vec!["banner", "summary"]
            ]
        );
        for story in &plan.plan().stories {
            assert_eq!(epic_agents::file_blocks(&story.description).len(), 2);
        }
    }
}
