//! The merge queue: ten stories ready at once behind a gate of G seconds, batched (several
//! `--merge-batch` sizes) against one at a time (`--merge-batch 1`), all green and with one
//! culprit, in one run of the benchmark.
//!
//! The agent is an `exec:` script: as planner it replies one task; as coder it waits (up to 20 s,
//! a fallback) until all ten stories reached their coder turn (a barrier of files), then writes
//! its story's one owned file: `ok`, or `bad` for the culprit. The gate sleeps G seconds on the
//! epic worktree only (story worktrees pass at once, so only integration waits on it) and fails
//! on a `bad` file. No judge. Each run is on a fresh repository at `--concurrency 10`; the
//! figures are the wall time of the whole `epic run`, the integration time (the first story
//! joining the merge queue to the last story's end, from `events.jsonl`), and the gate runs on
//! the epic head (the baseline's left out).
//!
//! Then, at the default batch: one semantic collision (`s01` changes an interface, `s02` uses
//! the old one: each green alone, red together; on a merge revision the coder adapts its
//! story), with `--merge-revisions 0` (a red merge fails its story, as before revisions) and the
//! default; and one flaky epic gate (red once, green run again), with `--gate-reruns 0` and the
//! default, against all green: what a flake costs.
//!
//! Prints a Markdown section for `cargo xtask bench merge-queue`; measures only under `--bench`;
//! `--quick` makes G 0.5 s instead of 3 s.

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              tests and benchmarks are the user here: they build repositories and write agents"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use common::{Env, epic_bin};
use epic_test_support::{executable as script, write};

const STORIES: usize = 10;
/// The batch sizes measured against one at a time; 16 holds every story.
const BATCHES: [usize; 4] = [1, 4, 8, 16];
/// The goal: all green, batched at the default, at most this share of one at a time.
const GOAL: f64 = 0.4;
/// The default the benchmark stands for (`epic_executor::DEFAULT_MERGE_BATCH`).
const DEFAULT: usize = 16;

const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"one","description":"the file"}]}' ;;
coder)
  touch "$BENCH/barrier/$EPIC_STORY"
  n=0; while [ "$(ls "$BENCH/barrier" | wc -l)" -lt 10 ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done
  mkdir -p "$EPIC_STORY"
  if [ "$EPIC_STORY" = "$(cat "$BENCH/culprit")" ]; then word=bad; else word=ok; fi
  extra=
  if [ -e "$BENCH/collision" ]; then
    case "$EPIC_STORY" in s01) extra=' api-v2' ;; s02) extra=' uses-v1' ;; esac
    case "$prompt" in *"Merge revision"*)
      case "$EPIC_STORY" in s01) extra=' api-v2 keeps-v1' ;; s02) extra=' uses-v2' ;; esac ;;
    esac
  fi
  echo "$word $EPIC_STORY$extra" > "$EPIC_STORY/one.txt"
  echo "wrote $EPIC_STORY/one.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

fn plan_json() -> String {
    let stories: Vec<String> = (1..=STORIES)
        .map(|n| format!(r#"{{"id":"s{n:02}","title":"Story {n}","owned":["s{n:02}"]}}"#))
        .collect();
    format!(r#"{{"epic_id":"q","stories":[{}]}}"#, stories.join(","))
}

/// One measured run.
struct Figures {
    wall: f64,
    integration: f64,
    gates: usize,
    done: usize,
    failed: usize,
}

/// What a run meets besides its batch size.
#[derive(Clone, Copy, Default)]
struct Case<'a> {
    /// The story whose file the gate rejects, if any.
    culprit: Option<&'a str>,
    /// `s01` and `s02` collide: each green alone, red together.
    collision: bool,
    /// The epic gate is red on its first run with a story on the epic head, green run again.
    flaky: bool,
    /// More flags for `epic run`.
    flags: &'a [&'a str],
}

/// Runs the epic on a fresh repository under `dir` with `--merge-batch batch`, meeting `case`.
fn measure(env: &Env, dir: &Path, gate: f64, batch: usize, case: Case<'_>) -> Figures {
    let bench = tempfile::tempdir_in(dir).expect("run directory");
    let root = bench.path();
    std::fs::create_dir_all(root.join("barrier")).expect("barrier");
    write(&root.join("culprit"), case.culprit.unwrap_or("none"));
    if case.collision {
        write(&root.join("collision"), "");
    }
    // The flaky gate's one red run: the first gate run on the epic head with a story on it.
    let flake = if case.flaky {
        format!(
            "if ls */one.txt >/dev/null 2>&1 && [ ! -e '{0}/flaked' ]; then touch '{0}/flaked'; exit 1; fi\n",
            root.display()
        )
    } else {
        String::new()
    };
    let agent = root.join("agent.sh");
    script(&agent, AGENT);
    let plan = root.join("plan.json");
    write(&plan, plan_json());
    let repo = root.join("repo");
    env.repo(
        &repo,
        &[(
            "gate.sh".to_owned(),
            format!(
                "case \"$(pwd)\" in */_epic) sleep {gate} ;; *) exit 0 ;; esac\n\
                 {flake}\
                 for f in */*.txt; do [ -e \"$f\" ] || continue; grep -q '^ok ' \"$f\" || exit 1; done\n\
                 if grep -qx 'ok s01 api-v2' s01/one.txt 2>/dev/null && grep -qx 'ok s02 uses-v1' s02/one.txt 2>/dev/null; then\n\
                 echo 's02 calls the v1 interface that s01 replaced' >&2; exit 1; fi\n"
            ),
        )],
    );
    let start = Instant::now();
    let status = env
        .command(epic_bin(), &repo)
        .arg("run")
        .arg(&plan)
        .arg("--coder")
        .arg(format!(
            "exec:env BENCH={} sh {}",
            root.display(),
            agent.display()
        ))
        .args(["--gate", "sh gate.sh"])
        .args(["--concurrency", &STORIES.to_string()])
        .args(["--merge-batch", &batch.to_string()])
        .args(case.flags)
        .args(["--no-progress", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run epic");
    let wall = start.elapsed().as_secs_f64();
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "epic run ended {status}"
    );
    let log = std::fs::read_to_string(repo.join(".git/epic/q/events.jsonl")).expect("events");
    let events: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let at = |event: &serde_json::Value| {
        event["at"]
            .as_str()
            .and_then(|at| at.parse::<jiff::Timestamp>().ok())
    };
    let kind = |event: &serde_json::Value, kinds: &[&str]| {
        event["kind"]
            .as_str()
            .is_some_and(|kind| kinds.contains(&kind))
    };
    let first = events
        .iter()
        .find(|event| kind(event, &["merge_queued"]))
        .and_then(at);
    let last = events
        .iter()
        .rev()
        .find(|event| kind(event, &["story_merged", "story_failed"]))
        .and_then(at);
    let integration = match (first, last) {
        (Some(first), Some(last)) => last.duration_since(first).as_secs_f64(),
        _ => f64::NAN,
    };
    let gates = events
        .iter()
        .filter(|event| kind(event, &["epic_gate"]) && event["story"].is_string())
        .count();
    let count = |kinds: &[&str]| events.iter().filter(|event| kind(event, kinds)).count();
    Figures {
        wall,
        integration,
        gates,
        done: count(&["story_merged"]),
        failed: count(&["story_failed"]),
    }
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("merge-queue: a benchmark; run it with `cargo xtask bench merge-queue`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let gate = if quick { 0.5 } else { 3.0 };
    let env = Env::new();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Merge queue: ten stories ready at once\n\n\
         {STORIES} independent stories whose coder turns wait for each other (a barrier), so \
         that they join the merge queue together, at `--concurrency {STORIES}`; the gate sleeps \
         {gate} s on the epic worktree (story worktrees pass at once) and fails on the culprit's \
         file. Wall = the whole `epic run`; integration = the first story joining the queue to \
         the last story's end; gates = gate runs on the epic head. Goal: all green at \
         `--merge-batch {DEFAULT}` (the default) in at most {GOAL} of the one-at-a-time wall \
         time.\n"
    );
    out.push_str(
        "| `--merge-batch` | all green: wall | integration | gates | vs 1 | one culprit: wall | integration | gates | failed | vs 1 |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut single: Option<(f64, f64)> = None;
    let mut verdict = String::new();
    for batch in BATCHES {
        let green = measure(&env, dir.path(), gate, batch, Case::default());
        let red = measure(
            &env,
            dir.path(),
            gate,
            batch,
            Case {
                culprit: Some("s05"),
                ..Case::default()
            },
        );
        let (green_one, red_one) = *single.get_or_insert((green.wall, red.wall));
        let _ = writeln!(
            out,
            "| {batch} | {:.1} s | {:.1} s | {} | {:.2} | {:.1} s | {:.1} s | {} | {} | {:.2} |",
            green.wall,
            green.integration,
            green.gates,
            green.wall / green_one,
            red.wall,
            red.integration,
            red.gates,
            red.failed,
            red.wall / red_one,
        );
        if batch == DEFAULT {
            let ratio = green.wall / green_one;
            verdict = format!(
                "\nAt the default ({DEFAULT}): all green {ratio:.2} of one at a time (goal ≤ \
                 {GOAL}: {}); one culprit {:.2}.\n",
                if ratio <= GOAL { "met" } else { "**not met**" },
                red.wall / red_one
            );
        }
    }
    out.push_str(&verdict);
    repairs(&env, dir.path(), gate, &mut out);
    print!("{out}");
}

/// The second table: a semantic collision and a flaky gate at the default batch, each with the
/// repair off and on.
fn repairs(env: &Env, dir: &Path, gate: f64, out: &mut String) {
    let rows: [(&str, Case<'_>); 5] = [
        ("all green", Case::default()),
        (
            "one collision, `--merge-revisions 0` (before revisions)",
            Case {
                collision: true,
                flags: &["--merge-revisions", "0"],
                ..Case::default()
            },
        ),
        (
            "one collision, merge revisions on (default 1)",
            Case {
                collision: true,
                ..Case::default()
            },
        ),
        (
            "one flaky epic gate, `--gate-reruns 0`",
            Case {
                flaky: true,
                flags: &["--gate-reruns", "0"],
                ..Case::default()
            },
        ),
        (
            "one flaky epic gate, reruns on (default 1)",
            Case {
                flaky: true,
                ..Case::default()
            },
        ),
    ];
    let _ = writeln!(
        out,
        "\n### A collision and a flaky gate, at `--merge-batch {DEFAULT}`\n\n\
         The collision: `s01` replaces an interface, `s02` uses the old one; each is green \
         alone and the gate is red on both (the later merge is the culprit). On a merge \
         revision the coder reads the gate's output and adapts its story. The flaky gate: red \
         on its first run with a story on the epic head, green when run again.\n\n\
         | case | wall | integration | epic gate runs | done | failed |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |"
    );
    let mut walls = Vec::new();
    for (name, case) in rows {
        let figures = measure(env, dir, gate, DEFAULT, case);
        let _ = writeln!(
            out,
            "| {name} | {:.1} s | {:.1} s | {} | {} | {} |",
            figures.wall, figures.integration, figures.gates, figures.done, figures.failed
        );
        walls.push(figures.wall);
    }
    let _ = writeln!(
        out,
        "\nA repaired collision costs {:.1} s over all green (a revision: a coder turn and \
         the gates again); a flaky gate rerun costs {:.1} s over all green.",
        walls[2] - walls[0],
        walls[4] - walls[0]
    );
}
