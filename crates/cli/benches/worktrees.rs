//! `--worktrees warm` against `--worktrees fresh`, in one run.
//!
//! Scale: `epic run` with the built-in `script` seat (each story writes its one owned file), no
//! gate, concurrency 8, on a generated repository of 0, 10,000 or 100,000 base files in the
//! system's temporary directory; per story = the run's wall time / stories. While a run goes, a
//! thread counts the worktree directories under the epic's worktree root (the epic's own
//! included) every few milliseconds: the most seen at once.
//!
//! Gate: a small Cargo workspace (a dependency-free `heavy` library of generated code whose
//! debug build takes seconds, and an `app` on it), two stories one after the other at
//! concurrency 1, each adding an integration test to `app/tests/`, with `cargo test --offline`
//! as the gate: each story's gate time, from its `gate_passed` event. Warm, the second story's
//! gate finds `heavy` built in its slot's ignored `target/`; fresh, it builds it again.
//!
//! Prints a Markdown section for `cargo xtask bench worktrees`; measures only under `--bench`;
//! `--quick` runs fewer stories and no 100,000-file base.

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              tests and benchmarks are the user here: they build repositories and write agents"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(
    clippy::cast_precision_loss,
    reason = "milliseconds, file and story counts are far below 2^52"
)]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Env, epic_bin};
use epic_test_support::write;

const CONCURRENCY: usize = 8;
/// Goals: per-story cost flat within 25 % from the fewest to the most stories; warm at most a
/// tenth of fresh on 10,000 base files; the second gate at most 0.3 of the first.
const FLAT: f64 = 1.25;
const WARM_OF_FRESH: f64 = 0.1;
const SECOND_GATE: f64 = 0.3;

fn id(i: usize) -> String {
    format!("s{i:03}")
}

/// A plan of `stories` independent stories, each writing `s/<id>.txt` (the script seat writes
/// the description's file block).
fn scale_plan(stories: usize) -> String {
    let stories: Vec<serde_json::Value> = (0..stories)
        .map(|i| {
            let id = id(i);
            serde_json::json!({
                "id": id,
                "title": format!("story {i}"),
                "description": format!("Write the file.\n\n```file s/{id}.txt\nwritten by {id}\n```\n"),
                "owned": [format!("s/{id}.txt")],
            })
        })
        .collect();
    serde_json::json!({ "epic_id": "bench", "stories": stories }).to_string()
}

/// A repository at `dir` with `files` generated base files (100 a directory) and `s/README`.
fn base_repo(env: &Env, dir: &Path, files: usize) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for f in 0..files {
        write(
            &dir.join(format!("src/d{:04}/f{:02}.txt", f / 100, f % 100)),
            format!("file {f}\n"),
        );
    }
    write(&dir.join("s/README"), "one file per story\n");
    env.git(dir, &["init", "-q", "-b", "main"]);
    env.git(dir, &["add", "-A"]);
    env.git(
        dir,
        &[
            "-c",
            "maintenance.auto=false",
            "commit",
            "-q",
            "-m",
            "initial",
        ],
    );
    env.git(dir, &["gc", "--quiet"]);
}

/// A fresh copy of `template` (a repository directory) as `<dir>/<name>/repo`.
fn copy(template: &Path, dir: &Path, name: &str) -> PathBuf {
    let side = dir.join(name);
    std::fs::create_dir_all(&side).expect("mkdir");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(side.join("repo"))
        .status()
        .expect("cp");
    assert!(status.success(), "cp -a failed");
    side.join("repo")
}

/// Counts the directories under `root` every few milliseconds until stopped: the most at once.
struct Watch {
    stop: Arc<AtomicBool>,
    most: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Watch {
    fn start(root: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let most = Arc::new(AtomicUsize::new(0));
        let thread = {
            let (stop, most) = (Arc::clone(&stop), Arc::clone(&most));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let count = std::fs::read_dir(&root).map_or(0, |entries| {
                        entries
                            .filter_map(Result::ok)
                            .filter(|entry| entry.path().is_dir())
                            .count()
                    });
                    most.fetch_max(count, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        Self { stop, most, thread }
    }

    fn finish(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("watch");
        self.most.load(Ordering::Relaxed)
    }
}

/// Puts each mode on the same footing: the file system's dirty blocks written and the kernel's
/// caches dropped (as root; elsewhere only the first). ext4 without a journal (this machine's)
/// will not reuse an inode freed in the last minutes while its inode table block is cached: each
/// file made then skips them one by one, so after a mass deletion (the last mode's worktrees, the
/// last cell) every file made costs more, and a mode measured next would pay for the other's
/// deletions. Each pays for its own.
fn settle() {
    let synced = std::process::Command::new("sync").status();
    assert!(synced.is_ok_and(|status| status.success()), "sync failed");
    // Not root: the caches stay (the figures then depend on the order a little).
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").ok();
}

/// Runs `epic run plan --worktrees mode` in `repo`: (wall seconds, most worktrees at once).
fn epic_run(env: &Env, repo: &Path, plan: &Path, mode: &str, extra: &[&str]) -> (f64, usize) {
    let root = repo
        .parent()
        .expect("parent")
        .join("repo.worktrees")
        .join(epic_id(plan));
    let watch = Watch::start(root);
    let mut command = env.command(epic_bin(), repo);
    command
        .arg("run")
        .arg(plan)
        .args(["--worktrees", mode, "--no-progress", "-q", "--no-preflight"])
        .args(extra)
        .stdin(Stdio::null());
    let start = Instant::now();
    let output = command.output().expect("run epic");
    let elapsed = start.elapsed().as_secs_f64();
    let most = watch.finish();
    assert!(
        output.status.success(),
        "epic run --worktrees {mode} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    (elapsed, most)
}

fn epic_id(plan: &Path) -> String {
    let text = std::fs::read_to_string(plan).expect("plan");
    let json: serde_json::Value = serde_json::from_str(&text).expect("plan json");
    json["epic_id"].as_str().expect("epic id").to_owned()
}

/// One scale row: (stories, base files) → per-story ms warm and fresh, most worktrees each.
struct Row {
    stories: usize,
    files: usize,
    /// The first run's, which adds the slots.
    warm_first: f64,
    /// A second run's, of as many more stories of the same epic, in the slots the first left.
    warm: f64,
    fresh: f64,
    warm_most: usize,
    fresh_most: usize,
}

fn scale(env: &Env, dir: &Path, stories: usize, files: usize) -> Row {
    let cell = dir.join(format!("scale-{stories}-{files}"));
    let template = cell.join("template");
    base_repo(env, &template, files);
    let (plan, more) = (cell.join("plan.json"), cell.join("more.json"));
    write(&plan, scale_plan(stories));
    write(&more, scale_plan(2 * stories));
    let args = ["--coder", "script", "--concurrency", "8"];
    settle();
    let warm_repo = copy(&template, &cell, "warm");
    let (first, first_most) = epic_run(env, &warm_repo, &plan, "warm", &args);
    // The same epic, `stories` more stories: its slots are there.
    let (warm, warm_most) = epic_run(env, &warm_repo, &more, "warm", &args);
    settle();
    let (fresh, fresh_most) =
        epic_run(env, &copy(&template, &cell, "fresh"), &plan, "fresh", &args);
    std::fs::remove_dir_all(&cell).ok();
    let per_story = |seconds: f64| seconds * 1000.0 / stories as f64;
    Row {
        stories,
        files,
        warm_first: per_story(first),
        warm: per_story(warm),
        fresh: per_story(fresh),
        warm_most: warm_most.max(first_most),
        fresh_most,
    }
}

/// The Cargo workspace of the gate benchmark at `dir`: `heavy`, generated code that takes
/// seconds to build in debug, and `app` on it; `target/` ignored.
fn cargo_repo(env: &Env, dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"heavy\", \"app\"]\nresolver = \"2\"\n",
    );
    write(&dir.join(".gitignore"), "target/\n");
    write(
        &dir.join("heavy/Cargo.toml"),
        "[package]\nname = \"heavy\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    let mut heavy = String::new();
    for i in 0..400 {
        let _ = writeln!(
            heavy,
            "#[derive(Debug, Clone, PartialEq, Default)]\npub struct S{i} {{ pub a: u64, pub b: \
             Vec<u64>, pub c: String }}\nimpl S{i} {{\n    pub fn work(&self, n: u64) -> u64 {{\n        \
             let mut x = self.a ^ n;\n        for (k, v) in self.b.iter().enumerate() {{ x = \
             x.wrapping_mul(31).wrapping_add(*v ^ k as u64); }}\n        x ^ self.c.len() as u64\n    \
             }}\n}}\n"
        );
    }
    heavy.push_str("pub fn all(n: u64) -> u64 {\n    let mut x = 0u64;\n");
    for i in 0..400 {
        let _ = writeln!(
            heavy,
            "    x ^= S{i} {{ a: {i}, b: vec![n; 3], c: format!(\"{{:?}}\", S{i}::default()) }}.work(n);"
        );
    }
    heavy.push_str("    x\n}\n");
    write(&dir.join("heavy/src/lib.rs"), &heavy);
    write(
        &dir.join("app/Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nheavy = { path = \"../heavy\" }\n",
    );
    write(
        &dir.join("app/src/lib.rs"),
        "pub fn answer(n: u64) -> u64 {\n    heavy::all(n)\n}\n",
    );
    write(
        &dir.join("app/tests/base.rs"),
        "#[test]\nfn base() {\n    let _ = app::answer(1);\n}\n",
    );
    env.git(dir, &["init", "-q", "-b", "main"]);
    env.git(dir, &["add", "-A"]);
    env.git(dir, &["commit", "-q", "-m", "initial"]);
}

/// Two stories, the second after the first, each adding a test to `app/tests/`.
fn gate_plan() -> String {
    let story = |id: &str, after: &[&str]| {
        serde_json::json!({
            "id": id,
            "title": format!("test {id}"),
            "description": format!(
                "Add a test.\n\n```file app/tests/{id}.rs\n#[test]\nfn {id}() {{\n    assert_eq!(app::answer(2), app::answer(2));\n}}\n```\n"
            ),
            "owned": [format!("app/tests/{id}.rs")],
            "depends_on": after,
        })
    };
    serde_json::json!({
        "epic_id": "gate",
        "stories": [story("first", &[]), story("second", &["first"])],
    })
    .to_string()
}

/// Each story's gate time in seconds, in plan order, from the run's `gate_passed` events.
fn gate_times(repo: &Path) -> Vec<f64> {
    let log = std::fs::read_to_string(repo.join(".git/epic/gate/events.jsonl")).expect("events");
    ["first", "second"]
        .iter()
        .map(|story| {
            log.lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .filter(|event| event["kind"] == "gate_passed" && event["story"] == *story)
                .filter_map(|event| event["duration_ms"].as_u64())
                .map(|ms| ms as f64 / 1000.0)
                .sum()
        })
        .collect()
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("worktrees: a benchmark; run it with `cargo xtask bench worktrees`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let env = Env::new();
    let dir = tempfile::tempdir().expect("temporary directory");
    let (counts, sizes): (&[usize], &[(usize, usize)]) = if quick {
        (&[25, 100], &[(10_000, 10)])
    } else {
        (&[25, 100, 400], &[(10_000, 50), (100_000, 8)])
    };
    let mut rows = Vec::new();
    for &stories in counts {
        rows.push(scale(&env, dir.path(), stories, 0));
    }
    for &(files, stories) in sizes {
        rows.push(scale(&env, dir.path(), stories, files));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Warm and fresh worktrees\n\n\
         `epic run` with the built-in `script` seat (each story writes its one owned file), no \
         gate, `--concurrency {CONCURRENCY}`, in the system's temporary directory, on a \
         generated repository of 0 to 100,000 base files; per story = wall time / stories, \
         both modes in this one run on fresh copies of the same repository, each after the \
         file system's dirty blocks are written and (as root) the kernel's caches dropped, so \
         neither pays for the other's deletions (ext4 without a journal makes files slowly for \
         minutes after many were deleted). Warm runs twice: \
         the first run adds the slots (up to {CONCURRENCY} new worktrees, each a whole \
         checkout, as fresh adds one per story), the second runs as many more stories of the \
         same epic in the slots the first left (slots outlive runs): \"warm\" is the second's \
         per-story cost, the first's is shown beside it. Most worktrees: \
         the most directories seen at once under the epic's worktree root (the epic's own \
         included), counted every 5 ms. Goals: warm per story flat within {:.0} % from {} to \
         {} stories; on 10,000 base files warm ≤ {WARM_OF_FRESH} × fresh; at most \
         concurrency + 1 = {} worktrees.\n",
        (FLAT - 1.0) * 100.0,
        counts[0],
        counts[counts.len() - 1],
        CONCURRENCY + 1,
    );
    out.push_str(
        "| stories | base files | warm per story | fresh per story | warm / fresh | warm, first run (adds the slots) | most worktrees warm | most worktrees fresh |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} ms | {:.0} ms | {:.3} | {:.0} ms | {} | {} |",
            row.stories,
            row.files,
            row.warm,
            row.fresh,
            row.warm / row.fresh,
            row.warm_first,
            row.warm_most,
            row.fresh_most,
        );
    }
    let flat = {
        let base: Vec<&Row> = rows.iter().filter(|row| row.files == 0).collect();
        base[base.len() - 1].warm / base[0].warm
    };
    let ten_k = rows
        .iter()
        .find(|row| row.files == 10_000)
        .map_or(f64::NAN, |row| row.warm / row.fresh);
    let most = rows.iter().map(|row| row.warm_most).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\nWarm per story at {} stories / at {}: {flat:.2} (goal ≤ {FLAT}: {}). On 10,000 base \
         files warm / fresh: {ten_k:.3} (goal ≤ {WARM_OF_FRESH}: {}). Most worktrees warm: {most} \
         (goal ≤ {}: {}).\n",
        counts[counts.len() - 1],
        counts[0],
        if flat <= FLAT { "met" } else { "not met" },
        if ten_k <= WARM_OF_FRESH {
            "met"
        } else {
            "not met"
        },
        CONCURRENCY + 1,
        if most <= CONCURRENCY + 1 {
            "met"
        } else {
            "not met"
        },
    );

    out.push_str(&gate_section(&env, dir.path()));
    print!("{out}");
}

/// The gate benchmark: a Cargo workspace, `cargo test` as the gate of two stories in one slot.
fn gate_section(env: &Env, dir: &Path) -> String {
    let mut out = String::new();
    // The gate: a Cargo workspace, `cargo test` per story.
    let cell = dir.join("gate");
    let template = cell.join("template");
    cargo_repo(env, &template);
    let plan = cell.join("plan.json");
    write(&plan, gate_plan());
    let args = [
        "--coder",
        "script",
        "--concurrency",
        "1",
        "--gate",
        "cargo test --offline -q",
        "--sandbox",
        "off",
    ];
    let mut gates = Vec::new();
    for mode in ["warm", "fresh"] {
        let repo = copy(&template, &cell, mode);
        epic_run(env, &repo, &plan, mode, &args);
        gates.push((mode, gate_times(&repo)));
    }
    let _ = writeln!(
        out,
        "Gate: a Cargo workspace (`heavy`, 400 generated structs, no dependencies; `app` on it), \
         two stories one after the other at `--concurrency 1`, each adding a test under \
         `app/tests/`, `--gate 'cargo test --offline -q'` (`--sandbox off`: cargo's own home); \
         each story's gate time. Goal: warm, the second story's gate ≤ {SECOND_GATE} × the \
         first's.\n\n\
         | worktrees | first story's gate | second story's gate | second / first |\n\
         | --- | ---: | ---: | ---: |"
    );
    let mut second_of_first = f64::NAN;
    for (mode, times) in &gates {
        let ratio = times[1] / times[0];
        if *mode == "warm" {
            second_of_first = ratio;
        }
        let _ = writeln!(
            out,
            "| {mode} | {:.2} s | {:.2} s | {ratio:.2} |",
            times[0], times[1]
        );
    }
    let _ = writeln!(
        out,
        "\nWarm second / first: {second_of_first:.2} (goal ≤ {SECOND_GATE}: {}).",
        if second_of_first <= SECOND_GATE {
            "met"
        } else {
            "not met"
        }
    );
    out
}
