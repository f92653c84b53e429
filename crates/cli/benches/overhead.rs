//! `epic run`'s cost per story against a shell script doing the same git steps with the git
//! command line, on a generated repository of 20,000 files, on tmpfs (`/dev/shm`) and on the
//! ordinary disk (the system's temporary directory).
//!
//! Independent stories (20 on tmpfs, 5 on the disk); the agent (an `exec:` script) plans one task and writes the story's
//! one owned file at once; no gates, no judge. The script does per story what a person would:
//! `git worktree add -b` from the epic branch, write the file, `git add -A` + `git commit`,
//! `git diff --name-only` against the epic branch, `git merge --no-ff` in the epic branch's
//! worktree, `git worktree remove --force`; it also creates the epic branch's worktree first, as
//! `epic run` does. Each side gets a fresh copy of the same repository; the wall time of the
//! whole run divided by the story count is the per-story figure. `epic run` runs at
//! `--concurrency 1` (the script is sequential: the same work, one story at a time) and, for
//! information, at its default 3.
//!
//! Prints a Markdown section for `cargo xtask bench overhead`; measures only under `--bench`;
//! `--quick` runs 10 and 3.

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

use common::{Env, epic_bin, fs_type, places};
use epic_test_support::{executable as script, write};

const DIRS: usize = 2_000;
const FILES_PER_DIR: usize = 10;
const GOAL: f64 = 1.0;

const AGENT: &str = r#"#!/bin/sh
# The benchmark's agent: plans one task, then writes the story's file at once.
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"write the file","description":"write the file"}]}' ;;
coder) echo "written by $EPIC_STORY" > "s/$EPIC_STORY.txt"; echo "wrote s/$EPIC_STORY.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

/// The same git steps, one story at a time. `$1`: the story count.
const BASELINE: &str = r#"#!/bin/sh
set -e
wt="$(dirname "$PWD")/repo.worktrees/bench"
git worktree add -q -b epic/bench "$wt/_epic" HEAD
i=0
while [ "$i" -lt "$1" ]; do
  id=$(printf 's%02d' "$i")
  git worktree add -q -b "story/bench/$id" "$wt/$id" epic/bench
  echo "written by $id" > "$wt/$id/s/$id.txt"
  git -C "$wt/$id" add -A
  git -C "$wt/$id" commit -q -m "$id: write the file"
  git -C "$wt/$id" diff --name-only epic/bench...HEAD > /dev/null
  git -C "$wt/_epic" merge -q --no-ff -m "bench: merge story $id" "story/bench/$id"
  git worktree remove --force "$wt/$id"
  i=$((i + 1))
done
"#;

fn id(i: usize) -> String {
    format!("s{i:02}")
}

fn plan_json(stories: usize) -> String {
    let stories: Vec<serde_json::Value> = (0..stories)
        .map(|i| {
            serde_json::json!({
                "id": id(i),
                "title": format!("story {i}"),
                "owned": [format!("s/{}.txt", id(i))],
            })
        })
        .collect();
    serde_json::json!({ "epic_id": "bench", "stories": stories }).to_string()
}

/// The generated repository at `dir/template/repo`.
fn template(env: &Env, dir: &Path) {
    let repo = dir.join("template/repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    for d in 0..DIRS {
        for f in 0..FILES_PER_DIR {
            write(
                &repo.join(format!("src/d{d:04}/f{f}.txt")),
                format!("file {f} of directory {d}\n"),
            );
        }
    }
    write(&repo.join("s/README"), "one file per story\n");
    env.git(&repo, &["init", "-q", "-b", "main"]);
    env.git(&repo, &["add", "-A"]);
    // No background auto-gc racing the copies below; pack once instead, as a real repository
    // of this size would be.
    env.git(
        &repo,
        &[
            "-c",
            "maintenance.auto=false",
            "commit",
            "-q",
            "-m",
            "initial",
        ],
    );
    env.git(&repo, &["gc", "--quiet"]);
}

/// A fresh copy of the template as `dir/<name>/repo`.
fn copy(dir: &Path, name: &str) -> std::path::PathBuf {
    let side = dir.join(name);
    std::fs::create_dir_all(&side).expect("mkdir");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(dir.join("template/repo"))
        .arg(&side)
        .status()
        .expect("cp");
    assert!(status.success(), "cp -a failed");
    side.join("repo")
}

fn timed(mut command: std::process::Command) -> f64 {
    let start = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .output()
        .expect("run the command");
    let elapsed = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    elapsed
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("overhead: a benchmark; run it with `cargo xtask bench overhead`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    // On this disk one `git worktree add` of 20,000 files takes seconds (about 10 s a story on
    // either side), so the disk gets fewer stories than tmpfs.
    let (tmpfs, disk) = if quick { (10, 3) } else { (20, 5) };
    let env = Env::new();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Overhead per story: `epic run` against the git CLI\n\n\
         A generated repository of {} files in {DIRS} directories; {tmpfs} independent stories \
         on tmpfs, {disk} on the disk (a worktree of 20,000 files takes seconds there), \
         each story's agent writes its one owned file at once; no gates, no judge. The \
         baseline is a shell script doing the same git steps per story (worktree add -b, write, \
         add + commit, diff against the epic branch, merge --no-ff in the epic worktree, \
         worktree remove --force), after creating the epic worktree as `epic run` does. Each \
         side runs on a fresh copy of the same repository; per story = wall time / stories. \
         Goal: `epic run --concurrency 1` / script ≤ {GOAL:.1}.\n",
        DIRS * FILES_PER_DIR
    );
    out.push_str(
        "| file system | script | `epic run --concurrency 1` | ratio | goal met | `epic run` (default --concurrency 3) | ratio |\n\
         | --- | ---: | ---: | ---: | --- | ---: | ---: |\n",
    );
    for (label, base) in places() {
        let stories = if label == "tmpfs" { tmpfs } else { disk };
        let dir = tempfile::tempdir_in(&base).expect("temporary directory");
        template(&env, dir.path());
        let agent = dir.path().join("agent.sh");
        script(&agent, AGENT);
        let baseline = dir.path().join("baseline.sh");
        script(&baseline, BASELINE);
        let plan = dir.path().join("plan.json");
        write(&plan, plan_json(stories));
        let shell = {
            let repo = copy(dir.path(), "script");
            let mut command = env.command("sh", &repo);
            command.arg(&baseline).arg(stories.to_string());
            timed(command)
        };
        let epic = |name: &str, concurrency: usize| {
            let repo = copy(dir.path(), name);
            let mut command = env.command(epic_bin(), &repo);
            command
                .arg("run")
                .arg(&plan)
                .arg("--coder")
                .arg(format!("exec:{}", agent.display()))
                .args(["--concurrency", &concurrency.to_string()])
                .args(["--no-progress", "-q"]);
            timed(command)
        };
        let one = epic("epic-1", 1);
        let three = epic("epic-3", 3);
        let per = |total: f64| total * 1000.0 / stories as f64;
        let ratio = one / shell;
        let _ = writeln!(
            out,
            "| {label}: `{}` ({}) | {:.0} ms | {:.0} ms | {ratio:.2} | {} | {:.0} ms | {:.2} |",
            base.display(),
            fs_type(&base),
            per(shell),
            per(one),
            if ratio <= GOAL { "yes" } else { "**no**" },
            per(three),
            three / shell,
        );
    }
    print!("{out}");
}
