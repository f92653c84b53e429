//! Peak resident memory of the `epic run` process while its agents print a lot: 50 stories
//! whose coder prints 10 MB each, against the same with 1 MB each.
//!
//! The peak is the `VmHWM` line of `/proc/<pid>/status` of the `epic` process alone (not its
//! agents or git), polled every 5 ms until it exits; the high-water mark only grows, so the
//! last reading is the peak up to 5 ms before exit. Goal: at most 100 MB, and independent of
//! the output size.
//!
//! Prints a Markdown section for `cargo xtask bench memory`; measures only under `--bench`;
//! `--quick` runs 10 stories.

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              tests and benchmarks are the user here: they build repositories and write agents"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(
    clippy::cast_precision_loss,
    reason = "milliseconds, megabytes and story counts are far below 2^52"
)]

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use common::{Env, epic_bin, peak_until_exit};
use epic_test_support::{executable as script, write};

const GOAL_MB: f64 = 100.0;
const CONCURRENCY: usize = 4;

const AGENT: &str = r#"#!/bin/sh
# The benchmark's agent: plans one task; as coder prints $BENCH_MB MB and writes its file.
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"write the file","description":"write the file"}]}' ;;
coder)
  yes 'agent output: a line of the kind a coding agent prints while it works, 80 bytes long' \
    | head -c "$((BENCH_MB * 1000000))"
  echo "written by $EPIC_STORY" > "s/$EPIC_STORY.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

fn plan_json(stories: usize) -> String {
    let stories: Vec<serde_json::Value> = (0..stories)
        .map(|i| {
            serde_json::json!({
                "id": format!("s{i:02}"),
                "title": format!("story {i}"),
                "owned": [format!("s/s{i:02}.txt")],
            })
        })
        .collect();
    serde_json::json!({ "epic_id": "bench", "stories": stories }).to_string()
}

/// Runs the epic with agents printing `mb` MB each; the peak RSS in MB and the wall time.
fn measure(env: &Env, base: &Path, stories: usize, mb: u64) -> (f64, f64) {
    let dir = tempfile::tempdir_in(base).expect("temporary directory");
    let repo = dir.path().join("repo");
    env.repo(
        &repo,
        &[("s/README".to_owned(), "one file per story\n".to_owned())],
    );
    let agent = dir.path().join("agent.sh");
    script(&agent, AGENT);
    let plan = dir.path().join("plan.json");
    write(&plan, plan_json(stories));
    let start = Instant::now();
    let mut child = env
        .command(epic_bin(), &repo)
        .arg("run")
        .arg(&plan)
        .arg("--coder")
        .arg(format!("exec:{}", agent.display()))
        .args(["--concurrency", &CONCURRENCY.to_string()])
        .args(["--no-progress", "-q"])
        .env("BENCH_MB", mb.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start epic");
    let peak = peak_until_exit(&mut child);
    let status = child.wait().expect("wait for epic");
    let wall = start.elapsed().as_secs_f64();
    assert!(status.success(), "epic run failed ({status})");
    (peak as f64 / 1024.0, wall)
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("memory: a benchmark; run it with `cargo xtask bench memory`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let stories = if quick { 10 } else { 50 };
    let env = Env::new();
    let base = std::env::temp_dir();
    let (small, small_wall) = measure(&env, &base, stories, 1);
    let (large, large_wall) = measure(&env, &base, stories, 10);
    let ratio = large / small;
    let met = large <= GOAL_MB && ratio <= 1.2;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Peak memory of `epic run` with talkative agents\n\n\
         {stories} independent stories at `--concurrency {CONCURRENCY}`; each coder prints N MB \
         (80-byte lines) and writes its one owned file; no gates, no judge. Peak RSS of the \
         `epic` process alone: `VmHWM` from `/proc/<pid>/status`, polled every 5 ms until it \
         exits. Goal: ≤ {GOAL_MB:.0} MB and independent of the output size (10 MB / 1 MB ≤ \
         1.2).\n\n\
         | output per agent | total output | peak RSS | wall time |\n\
         | ---: | ---: | ---: | ---: |\n\
         | 1 MB | {} MB | {small:.1} MB | {small_wall:.1} s |\n\
         | 10 MB | {} MB | {large:.1} MB | {large_wall:.1} s |\n\n\
         10 MB / 1 MB: {ratio:.2}; goal {}. A reply keeps its first and last 256 KiB in \
         memory and a transcript file at most 8 MiB of it; the rest is counted and streamed \
         through.",
        stories,
        stories * 10,
        if met { "met" } else { "**missed**" }
    );
    print!("{out}");
}
