//! An epic of up to ten thousand one-file stories: a story's cost, and `epic run`'s memory, do
//! not grow with the epic, and every command stays fast on it.
//!
//! `epic run` with the built-in `script` seat (each story writes its one owned file), no gate, no
//! judge, `--concurrency 8`, on a repository of one file, with 50, 400, 2,000 and 10,000
//! independent stories, on tmpfs and on the disk; per story = the run's wall time / stories.
//! Each story writes `s/<hundreds>/<id>.txt`, a hundred to a directory, as a migration's files
//! lie in a source tree. Peak RSS is the `VmHWM` of the `epic` process alone, polled every
//! 5 ms. On the 10,000-story epic each run leaves, `epic status`, `epic watch` (one frame, as
//! text), `epic report`, `epic verify`, `epic validate` and `epic graph` are timed (the median
//! of three).
//!
//! Prints a Markdown section for `cargo xtask bench scale`; measures only under `--bench`;
//! `--quick` runs 50 and 200 stories on tmpfs alone.

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              tests and benchmarks are the user here: they build repositories and write agents"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(clippy::print_stderr, reason = "its progress goes to the terminal")]
#![expect(
    clippy::cast_precision_loss,
    reason = "milliseconds, megabytes and story counts are far below 2^52"
)]

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use common::{Env, epic_bin, fs_type, median, peak_until_exit, places};
use epic_test_support::write;

/// Goals: per story at the most stories at most this times per story at the fewest; peak RSS
/// at the most stories at most this times the peak at 400; each command under a second.
const FLAT: f64 = 1.25;
const MEMORY: f64 = 2.0;
const COMMAND_MS: f64 = 1000.0;

fn id(i: usize) -> String {
    format!("s{i:05}")
}

/// A plan of `stories` independent stories, each writing `s/<i / 100>/<id>.txt`.
fn plan(stories: usize) -> String {
    let stories: Vec<serde_json::Value> = (0..stories)
        .map(|i| {
            let id = id(i);
            let path = format!("s/{:03}/{id}.txt", i / 100);
            serde_json::json!({
                "id": id,
                "title": format!("story {i}"),
                "description": format!("Write the file.\n\n```file {path}\nwritten by {id}\n```\n"),
                "owned": [path],
            })
        })
        .collect();
    serde_json::json!({ "epic_id": "bench", "stories": stories }).to_string()
}

/// One run: per story in ms, peak RSS in MB.
struct Run {
    stories: usize,
    per_story: f64,
    peak_mb: f64,
}

/// Runs an epic of `stories` in a new repository under `base`; the directory is kept for the
/// commands when `keep`.
fn run(env: &Env, base: &Path, stories: usize) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir_in(base).expect("temporary directory");
    let repo = dir.path().join("repo");
    env.repo(
        &repo,
        &[("s/README".to_owned(), "one file per story\n".to_owned())],
    );
    let plan_path = dir.path().join("plan.json");
    write(&plan_path, plan(stories));
    let start = Instant::now();
    let mut child = env
        .command(epic_bin(), &repo)
        .arg("run")
        .arg(&plan_path)
        .args(["--coder", "script", "--concurrency", "8"])
        .args(["--no-progress", "-q", "--no-preflight"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start epic run");
    let peak = peak_until_exit(&mut child);
    let elapsed = start.elapsed().as_secs_f64();
    let output = child.wait_with_output().expect("epic run");
    assert!(
        output.status.success(),
        "epic run of {stories} stories failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        Run {
            stories,
            per_story: elapsed * 1000.0 / stories as f64,
            peak_mb: peak as f64 / 1024.0,
        },
        dir,
    )
}

/// Each command on the epic in `dir`: (command, median ms of three).
fn commands(env: &Env, dir: &Path) -> Vec<(&'static str, f64)> {
    let repo = dir.join("repo");
    let plan = dir.join("plan.json");
    let plan = plan.to_str().expect("plan path");
    let all: [(&str, Vec<&str>); 6] = [
        ("epic status", vec!["status"]),
        // Not on a terminal, `epic watch` draws one frame as text: what it reads and renders
        // each time the epic changes.
        ("epic watch", vec!["watch"]),
        ("epic report", vec!["report"]),
        ("epic verify", vec!["verify"]),
        ("epic validate", vec!["validate", plan]),
        ("epic graph", vec!["graph", plan]),
    ];
    all.into_iter()
        .map(|(name, args)| {
            let times: Vec<f64> = (0..3)
                .map(|_| {
                    let start = Instant::now();
                    let output = env
                        .command(epic_bin(), &repo)
                        .args(&args)
                        .stdin(Stdio::null())
                        .output()
                        .expect("run epic");
                    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                    assert!(
                        output.status.success(),
                        "{name} failed: {}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                    elapsed
                })
                .collect();
            (name, median(&times))
        })
        .collect()
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("scale: a benchmark; run it with `cargo xtask bench scale`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let env = Env::new();
    let counts: &[usize] = if quick {
        &[50, 200]
    } else {
        &[50, 400, 2000, 10_000]
    };
    let mut places = places();
    if quick {
        places.truncate(1);
    }
    let most = counts[counts.len() - 1];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Scale: ten thousand one-file stories\n\n\
         `epic run` with the built-in `script` seat (each story writes its one owned file, \
         `s/<hundreds>/<id>.txt`), no gate, no judge, `--concurrency 8`, independent stories \
         on a repository of one file; per story = wall time / stories; peak RSS of the `epic` \
         process alone (`VmHWM`, polled every 5 ms). Goals: per story at {most} stories at \
         most {FLAT} × per story at {}; peak RSS at {most} at most {MEMORY} × the peak at 400; \
         on the {most}-story epic every command under a second.\n",
        counts[0],
    );
    let mut verdicts = Vec::new();
    for (label, base) in places {
        out.push_str(&place(&env, label, &base, counts, &mut verdicts));
    }
    let _ = writeln!(
        out,
        "Goals {}.",
        if verdicts.iter().all(|met| *met) {
            "met"
        } else {
            "**not all met**"
        }
    );
    print!("{out}");
}

/// The section of one place: each run, then the commands on the largest epic; each goal's
/// verdict pushed to `verdicts`.
fn place(
    env: &Env,
    label: &str,
    base: &Path,
    counts: &[usize],
    verdicts: &mut Vec<bool>,
) -> String {
    let most = counts[counts.len() - 1];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {label}: `{}` ({})\n\n\
         | stories | per story | / per story at {} | peak RSS |\n\
         | ---: | ---: | ---: | ---: |",
        base.display(),
        fs_type(base),
        counts[0]
    );
    let mut runs = Vec::new();
    let mut last = None;
    for &stories in counts {
        let (measured, dir) = run(env, base, stories);
        eprintln!(
            "scale: {label} {stories} stories: {:.1} ms a story, {:.0} MB",
            measured.per_story, measured.peak_mb
        );
        runs.push(measured);
        last = Some(dir);
    }
    let first = runs[0].per_story;
    for measured in &runs {
        let _ = writeln!(
            out,
            "| {} | {:.1} ms | {:.2} | {:.0} MB |",
            measured.stories,
            measured.per_story,
            measured.per_story / first,
            measured.peak_mb
        );
    }
    let flat = runs[runs.len() - 1].per_story / first;
    let at_400 = runs
        .iter()
        .find(|run| run.stories == 400)
        .map_or(runs[0].peak_mb, |run| run.peak_mb);
    let memory = runs[runs.len() - 1].peak_mb / at_400;
    let _ = writeln!(
        out,
        "\nPer story at {most} / at {}: {flat:.2} (goal ≤ {FLAT}: {}). Peak RSS at {most} / \
         at 400: {memory:.2} (goal ≤ {MEMORY}: {}).\n",
        counts[0],
        met(flat <= FLAT),
        met(memory <= MEMORY),
    );
    verdicts.push(flat <= FLAT && memory <= MEMORY);
    if let Some(dir) = last {
        let timed = commands(env, dir.path());
        let _ = writeln!(
            out,
            "On the {most}-story epic it left (median of three):\n\n\
             | command | time |\n| --- | ---: |"
        );
        for (name, ms) in &timed {
            let _ = writeln!(out, "| `{name}` | {ms:.0} ms |");
        }
        let slowest = timed.iter().map(|(_, ms)| *ms).fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "\nSlowest: {slowest:.0} ms (goal < {COMMAND_MS:.0} ms: {}).\n",
            met(slowest < COMMAND_MS)
        );
        verdicts.push(slowest < COMMAND_MS);
    }
    out
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "not met" }
}
