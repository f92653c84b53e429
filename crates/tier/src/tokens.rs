//! `cargo xtask bench tokens`: what a story costs in model requests, through the real agent
//! CLIs and the scripted model server (`crates/model-server`).
//!
//! Not a cargo bench target: it needs the CLIs `cargo xtask agents` installs (the versions of
//! `xtask/agents.txt`) and the server. For each preset, as coder and judge (`--judge` the same
//! preset), it runs `epic run` on an epic of one story, in epic's sandbox, one story at a time,
//! and counts from the server's request log the model requests the story caused (each CLI's own
//! side requests included: they are what a user pays for too) and their bodies' bytes (the
//! prompt bytes):
//!
//! - **one task**: a small story (description at most 800 characters), under the default
//!   `--planner auto`: no planner turn, the coder's tool call, its reply, the judge;
//! - **one task, `--planner always`**: the same story planned first, to show the difference;
//! - **three tasks**: a story whose description is longer than 800 characters, planned (the
//!   server's planner answers three tasks), each task one file written.
//!
//! The figures go to the `<!-- bench:tokens -->` section of `BENCHMARKS.md`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::agents::{VERSIONS, cache_dir, install, pypi_bin, read_versions, target_dir};
use crate::cases::run_with_deadline;
use crate::json::{Report, requests, steps};
use crate::scratch::{epic_run, served_scratch};
use crate::{Result, root, run_cargo, say};

/// How the default keeps a small story to three requests, under the table.
pub(crate) const HOW: &str = "How: under the default `--planner auto` a story whose description and \
acceptance criteria are at most 800 characters is one task with no planner turn, so a one-task \
story costs the coder's tool call, the coder's reply once the tool ran, and the judge: three \
model requests (two with aider, which writes from its one reply; plus whatever the CLI asks on \
its own, counted apart: Gemini CLI's model router, opencode's title and summaries). `--planner always` adds the planner turn back, a \
request that cannot change a one-task story's outcome. A longer story keeps its planner turn: its \
tasks are the checkpoints a killed run resumes at, and each task's gates and review run on its own.";

/// The presets measured: the tier's (aider when it installed).
const PRESETS: [&str; 5] = ["claude", "codex", "gemini", "opencode", "aider"];

/// A small story: one file, a description well under 800 characters.
const SMALL: &str = r#"{
  "epic_id": "t",
  "epic": "What a story costs in model requests.",
  "stories": [
    {"id": "s", "title": "Write one file", "description": "Write the file.\n\n```file src/s/one.txt\none\n```\n", "owned": ["src/s"]}
  ]
}
"#;

/// The large story's description, past 800 characters: its prose, then three file blocks.
fn large_plan() -> String {
    let prose = "This story adds three small files under src/s, each written by its own task so \
        that a task can be checked on its own and a run killed half way resumes at the next \
        task rather than from the start. "
        .repeat(5);
    let description = format!(
        "{prose}\n\n```file src/s/one.txt\none\n```\n\n```file src/s/two.txt\ntwo\n```\n\n\
         ```file src/s/three.txt\nthree\n```\n"
    );
    plan_of("Write three files", &description)
}

/// The plan of one story, `s`, titled `title`, with `description`, owning `src/s`.
fn plan_of(title: &str, description: &str) -> String {
    let plan = json!({
        "epic_id": "t",
        "epic": "What a story costs in model requests.",
        "stories": [
            {"id": "s", "title": title, "description": description, "owned": ["src/s"]},
        ],
    });
    format!("{plan:#}\n")
}

/// The large story's steps: three tasks planned, each task's coder writing its own file:
/// `turn` requests a task (a tool call and the reply after it: 2; aider, which writes from
/// its one reply: 1).
fn large_steps(turn: u32) -> String {
    let mut all = vec![json!({
        "when": "plan",
        "do": "plan",
        "tasks": ["Write one.txt", "Write two.txt", "Write three.txt"],
    })];
    for name in ["one", "two", "three"] {
        all.push(json!({
            "when": "code",
            "do": "write",
            "files": {format!("src/s/{name}.txt"): format!("{name}\n")},
            "times": turn,
        }));
    }
    steps(&all)
}

/// One measurement: a story, a planner policy.
struct Scenario {
    name: &'static str,
    plan: String,
    planner: &'static str,
}

/// What the server saw of one run.
#[derive(Default)]
struct Count {
    requests: u64,
    plan: u64,
    code: u64,
    judge: u64,
    other: u64,
    bytes: u64,
}

/// Runs the bench: the table, as Markdown.
pub(crate) fn run() -> Result<String> {
    let root = root();
    let packages = read_versions(&root.join(VERSIONS))?;
    let cache = cache_dir(&packages);
    install(&cache, &packages)?;
    run_cargo(&["build", "--locked", "-p", "epic"])?;
    run_cargo(&["build", "--locked", "-p", "epic-model-server"])?;
    let debug = target_dir(&root).join("debug");
    let bins = [cache.join("node_modules").join(".bin"), pypi_bin(&cache)];
    let scratch = target_dir(&root).join(format!("epic-tokens-{}", std::process::id()));
    let scenarios = [
        Scenario {
            name: "one task",
            plan: SMALL.to_owned(),
            planner: "auto",
        },
        Scenario {
            name: "one task",
            plan: SMALL.to_owned(),
            planner: "always",
        },
        Scenario {
            name: "three tasks",
            plan: large_plan(),
            planner: "auto",
        },
    ];
    let mut table = String::from(
        "Model requests and prompt bytes (request bodies) per story, through the real CLIs \
         against the scripted model server; the preset is coder and judge.\n\n\
         | preset | story | `--planner` | requests | planner | coder | judge | CLI's own | prompt bytes |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut failed = Vec::new();
    for preset in PRESETS {
        if !bins.iter().any(|bin| bin.join(preset).exists()) {
            say(&format!("skip {preset}: not installed"));
            continue;
        }
        for (n, scenario) in scenarios.iter().enumerate() {
            let dir = scratch.join(format!("{preset}-{n}"));
            fs::remove_dir_all(&dir).ok();
            match measure(preset, scenario, &debug, &bins, &dir) {
                Ok(count) => {
                    say(&format!(
                        "{preset}, {}, --planner {}: {} requests, {} bytes",
                        scenario.name, scenario.planner, count.requests, count.bytes
                    ));
                    let _ = writeln!(
                        table,
                        "| {preset} | {} | {} | {} | {} | {} | {} | {} | {} |",
                        scenario.name,
                        scenario.planner,
                        count.requests,
                        count.plan,
                        count.code,
                        count.judge,
                        count.other,
                        count.bytes
                    );
                    fs::remove_dir_all(&dir).ok();
                }
                Err(why) => {
                    say(&format!(
                        "FAIL {preset}, {}, --planner {}: {why}\n(kept in {})",
                        scenario.name,
                        scenario.planner,
                        dir.display()
                    ));
                    failed.push(format!("{preset} {} {}", scenario.name, scenario.planner));
                }
            }
        }
    }
    if !failed.is_empty() {
        return Err(format!("the story was not done: {}", failed.join(", ")));
    }
    fs::remove_dir_all(&scratch).ok();
    Ok(table)
}

/// One `epic run` of `scenario` with `preset` as coder and judge: what the server saw.
fn measure(
    preset: &str,
    scenario: &Scenario,
    debug: &Path,
    bins: &[std::path::PathBuf],
    dir: &Path,
) -> Result<Count> {
    fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    // The large story's steps, as many requests a task as the preset's turn takes.
    let steps = if scenario.name == "three tasks" {
        large_steps(if preset == "aider" { 1 } else { 2 })
    } else {
        String::new()
    };
    let (server, repo, home) =
        served_scratch(&debug.join("epic-model-server"), preset, &steps, bins, dir)?;
    fs::write(repo.join("plan.json"), &scenario.plan).map_err(|error| error.to_string())?;
    let mut command = epic_run(&debug.join("epic"), &repo, &home, bins, &server)?;
    command.args([
        "--concurrency",
        "1",
        "--coder",
        preset,
        "--judge",
        preset,
        "--planner",
        scenario.planner,
    ]);
    let (code, printed) = run_with_deadline(command, Duration::from_mins(5))?;
    let logged = server.logged();
    drop(server);
    let report = Report::read(&repo.join(".git/epic/t/report.json"));
    if code != Some(0) || report.stories_with("done") != 1 {
        return Err(format!("exit {code:?}, the story not done:\n{printed}"));
    }
    let mut count = Count::default();
    for request in requests(&logged) {
        count.requests += 1;
        count.bytes += request.bytes;
        if request.is("plan") {
            count.plan += 1;
        } else if request.is("code") {
            count.code += 1;
        } else if request.is("judge") {
            count.judge += 1;
        } else {
            count.other += 1;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::{SMALL, large_plan, large_steps, plan_of};

    #[test]
    fn a_plan_with_a_tab_and_control_characters_is_valid_json() {
        // The hand-written escape this replaced let a tab through raw, which JSON refuses in a
        // string.
        let description =
            "Write\tthe file \"q\" \\ \r\u{0}\u{1f} é\n\n```file src/s/one.txt\none\n```\n";
        let plan = plan_of("Write one file", description);
        assert!(plan.chars().all(|c| c >= ' ' || c == '\n'));
        let parsed: Value = serde_json::from_str(&plan).expect("valid JSON");
        assert_eq!(parsed["stories"][0]["description"], description);
        assert_eq!(parsed["stories"][0]["owned"][0], "src/s");
    }

    #[test]
    fn the_plans_and_steps_are_what_the_bench_describes() {
        let small: Value = serde_json::from_str(SMALL).expect("valid JSON");
        let large: Value = serde_json::from_str(&large_plan()).expect("valid JSON");
        assert_eq!(small["epic_id"], large["epic_id"]);
        let description = large["stories"][0]["description"].as_str().expect("text");
        // Past the 800 characters under which a story is one task with no planner turn.
        assert!(description.len() > 800);
        assert_eq!(description.matches("```file src/s/").count(), 3);
        let steps: Vec<Value> = large_steps(2)
            .lines()
            .map(|line| serde_json::from_str(line).expect("a step a line"))
            .collect();
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[0]["tasks"].as_array().map(Vec::len), Some(3));
        assert_eq!(steps[3]["files"]["src/s/three.txt"], "three\n");
        assert_eq!(steps[3]["times"], 2);
    }
}
