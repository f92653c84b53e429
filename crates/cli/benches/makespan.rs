//! Makespan of the real `epic run` (the release binary) against the lower bound, per scheduling
//! policy, on seeded random plans of 40 stories whose agent only sleeps.
//!
//! The agent is an `exec:` script: as planner it replies one task; as coder it sleeps its story's
//! duration (0.2–2 s, seeded, read from a file named after `EPIC_STORY`) and writes the one file
//! the story owns; no gates, no judge. The sleep is the work; everything else is `epic`'s own
//! cost. The lower bound is max(longest duration-weighted dependency chain, total work /
//! concurrency). The makespan is read from the run's `report.json`: the first story's start to
//! the last story's finish (so the run's fixed setup, the lock, the epic worktree and the
//! baseline, is left out; the wall time is printed beside it).
//!
//! Every run is on a fresh repository; the cold run (no previous report, every story weighted
//! the same) is the primary figure. "rerun" is critical-path again on a fresh repository that
//! carries the cold run's `report.json`, so the previous durations weight the chains.
//!
//! Prints a Markdown section for `cargo xtask bench makespan`; measures only under `--bench`;
//! `--quick` runs one seed. `--replay` runs nothing: it replays seeds 1–20 through the executor's
//! scheduler with no per-story cost, to tell a policy's own worth from `epic`'s overhead.

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

use common::{Env, Rng, epic_bin, fs_type, max, median, places, script, write};

const STORIES: usize = 40;
const CONCURRENCIES: [usize; 3] = [2, 4, 8];
/// Three seeds: each seed is 12 runs of 10–30 s; five would take the full run past 15 minutes.
const SEEDS: [u64; 3] = [1, 2, 3];
/// The goal: critical-path within this factor of the lower bound at the median.
const GOAL: f64 = 1.10;

/// A random plan: each story depends on up to three of the ten stories before it (so the plan
/// is listed in a dependency order, as people write plans), and sleeps 0.2–2 s.
struct Dag {
    deps: Vec<Vec<usize>>,
    millis: Vec<u64>,
}

impl Dag {
    fn generate(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut deps = Vec::with_capacity(STORIES);
        let mut millis = Vec::with_capacity(STORIES);
        for i in 0..STORIES {
            let mut mine: Vec<usize> = Vec::new();
            let window = i.min(10);
            let count = usize::try_from(rng.below(4)).unwrap_or(0).min(window);
            while mine.len() < count {
                let d = i - 1 - usize::try_from(rng.below(window as u64)).unwrap_or(0);
                if !mine.contains(&d) {
                    mine.push(d);
                }
            }
            mine.sort_unstable();
            deps.push(mine);
            // 0.2–2.0 s in 10 ms steps.
            millis.push(200 + rng.below(181) * 10);
        }
        Self { deps, millis }
    }

    fn id(i: usize) -> String {
        format!("s{i:02}")
    }

    /// The longest chain weighted by duration, in milliseconds.
    fn chain(&self) -> u64 {
        let mut finish = vec![0u64; STORIES];
        for i in 0..STORIES {
            let start = self.deps[i].iter().map(|&d| finish[d]).max().unwrap_or(0);
            finish[i] = start + self.millis[i];
        }
        finish.into_iter().max().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        self.millis.iter().sum()
    }

    fn lower_bound(&self, concurrency: usize) -> f64 {
        let work = self.total() as f64 / concurrency as f64;
        (self.chain() as f64).max(work) / 1000.0
    }

    fn plan_json(&self) -> String {
        let stories: Vec<serde_json::Value> = (0..STORIES)
            .map(|i| {
                serde_json::json!({
                    "id": Self::id(i),
                    "title": format!("story {i}"),
                    "owned": [format!("s/{}.txt", Self::id(i))],
                    "depends_on": self.deps[i].iter().map(|&d| Self::id(d)).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({ "epic_id": "bench", "stories": stories }).to_string()
    }
}

/// The makespan `policy` would reach with no per-story cost at all: each story takes exactly
/// its sleep, a freed slot is filled at once. The scheduler is the executor's own
/// ([`executor::Schedule`]); `weighted` gives it the true durations (a rerun), otherwise every
/// story weighs 1 (a cold run). In seconds.
fn replay(dag: &Dag, concurrency: usize, policy: executor::Policy, weighted: bool) -> f64 {
    let plan = story_plan::StoryPlan::parse(&dag.plan_json(), story_plan::PlanFormat::Json)
        .expect("the generated plan parses")
        .validate()
        .expect("the generated plan is valid");
    let mut schedule = executor::Schedule::new(
        &plan,
        policy,
        |story| {
            if weighted {
                dag.millis[plan.index_of(&story.id).expect("a story of the plan")]
            } else {
                1
            }
        },
        &std::collections::HashSet::new(),
        concurrency,
    );
    let mut now = 0;
    let mut running: Vec<(u64, usize)> = Vec::new();
    loop {
        for i in schedule.start_ready(concurrency - running.len()) {
            running.push((now + dag.millis[i], i));
        }
        let Some(next) = running.iter().map(|&(end, _)| end).min() else {
            break;
        };
        now = next;
        for &(_, i) in running.iter().filter(|&&(end, _)| end == next) {
            schedule.done(i);
        }
        running.retain(|&(end, _)| end != next);
    }
    now as f64 / 1000.0
}

/// Seeds 1–20 replayed at every concurrency with no per-story cost: what each policy is worth
/// by itself, apart from `epic`'s overhead and the machine's noise (`--replay`; nothing runs).
fn replays() -> String {
    let mut out = String::from(
        "| concurrency | seed | plan order | critical-path (cold) | critical-path (rerun) |\n\
         | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut trails = [0, 0];
    for &concurrency in &CONCURRENCIES {
        for seed in 1..=20 {
            let dag = Dag::generate(seed);
            let bound = dag.lower_bound(concurrency);
            let plan = replay(&dag, concurrency, executor::Policy::PlanOrder, false) / bound;
            let cold = replay(&dag, concurrency, executor::Policy::CriticalPath, false) / bound;
            let rerun = replay(&dag, concurrency, executor::Policy::CriticalPath, true) / bound;
            for (count, ratio) in trails.iter_mut().zip([cold, rerun]) {
                *count += usize::from(ratio > plan + 1e-9);
            }
            let _ = writeln!(
                out,
                "| {concurrency} | {seed} | {plan:.3} | {cold:.3} | {rerun:.3} |"
            );
        }
    }
    let _ = writeln!(
        out,
        "\nOf {} replays, critical-path trails plan order in {} cold and {} rerun.",
        CONCURRENCIES.len() * 20,
        trails[0],
        trails[1]
    );
    out
}

const AGENT: &str = r#"#!/bin/sh
# The benchmark's agent: plans one task, then sleeps the story's duration and writes its file.
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"write the file","description":"sleep, then write the file"}]}' ;;
coder)
  read -r seconds < "$BENCH_DIR/durations/$EPIC_STORY"
  sleep "$seconds"
  echo "written by $EPIC_STORY" > "s/$EPIC_STORY.txt"
  echo "wrote s/$EPIC_STORY.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

#[derive(Clone, Copy, PartialEq)]
enum Run {
    PlanOrder,
    Waves,
    Cold,
    Rerun,
}

impl Run {
    const ALL: [Self; 4] = [Self::PlanOrder, Self::Waves, Self::Cold, Self::Rerun];

    fn schedule(self) -> &'static str {
        match self {
            Self::PlanOrder => "plan-order",
            Self::Waves => "waves",
            Self::Cold | Self::Rerun => "critical-path",
        }
    }
}

/// One measured run: the makespan from the report and the wall time, in seconds.
struct Measured {
    makespan: f64,
    wall: f64,
}

/// Runs the epic on a fresh repository under `base`; `previous` is a `report.json` to put in
/// place first. Returns the figures and the run's `report.json`.
fn run_once(
    env: &Env,
    base: &Path,
    dag: &Dag,
    concurrency: usize,
    schedule: &str,
    previous: Option<&str>,
) -> (Measured, String) {
    let dir = tempfile::tempdir_in(base).expect("temporary directory");
    let repo = dir.path().join("repo");
    env.repo(
        &repo,
        &[("s/README".to_owned(), "one file per story\n".to_owned())],
    );
    for i in 0..STORIES {
        write(
            &dir.path().join("durations").join(Dag::id(i)),
            &format!("{:.2}\n", dag.millis[i] as f64 / 1000.0),
        );
    }
    let agent = dir.path().join("agent.sh");
    script(&agent, AGENT);
    let plan = dir.path().join("plan.json");
    write(&plan, &dag.plan_json());
    let state = repo.join(".git/epic/bench");
    if let Some(previous) = previous {
        write(&state.join("report.json"), previous);
    }
    let start = Instant::now();
    let output = env
        .command(epic_bin(), &repo)
        .arg("run")
        .arg(&plan)
        .arg("--coder")
        .arg(format!("exec:{}", agent.display()))
        .args(["--concurrency", &concurrency.to_string()])
        .args(["--schedule", schedule, "--no-progress", "-q"])
        .env("BENCH_DIR", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run epic");
    let wall = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "epic run failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(state.join("report.json")).expect("report.json");
    (
        Measured {
            makespan: makespan(&report),
            wall,
        },
        report,
    )
}

/// The first story's start to the last story's finish, in seconds.
fn makespan(report: &str) -> f64 {
    let value: serde_json::Value = serde_json::from_str(report).expect("report.json is JSON");
    let stories = value["data"]["stories"].as_array().expect("stories");
    assert_eq!(stories.len(), STORIES, "every story reported");
    let at = |story: &serde_json::Value, key: &str| -> jiff::Timestamp {
        story[key]
            .as_str()
            .unwrap_or_else(|| panic!("story without {key}"))
            .parse()
            .expect("a timestamp")
    };
    let first = stories
        .iter()
        .map(|story| at(story, "started_at"))
        .min()
        .expect("a story");
    let last = stories
        .iter()
        .map(|story| at(story, "finished_at"))
        .max()
        .expect("a story");
    last.duration_since(first).as_secs_f64()
}

/// Ratios (makespan / lower bound) and wall-minus-makespan per run kind.
#[derive(Default)]
struct Cell {
    ratios: Vec<f64>,
    setup: Vec<f64>,
}

#[expect(
    clippy::too_many_lines,
    reason = "one linear report: measure, then print"
)]
fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("makespan: a benchmark; run it with `cargo xtask bench makespan`");
        return;
    }
    if std::env::args().any(|arg| arg == "--replay") {
        print!("{}", replays());
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let seeds: &[u64] = if quick { &SEEDS[..1] } else { &SEEDS };
    let env = Env::new();
    // tmpfs where there is one: the schedule is what is measured, not the disk's fsync latency
    // (the disk gets its own rows below).
    let places = places();
    let (place, base) = places
        .first()
        .cloned()
        .expect("the temporary directory at least");
    let disk = places.iter().find(|(name, _)| *name == "disk").cloned();
    let mut out = String::new();
    let mut rows = Vec::new();
    let mut per_seed = String::new();
    let started = Instant::now();
    for &concurrency in &CONCURRENCIES {
        let mut cells: Vec<Cell> = Run::ALL.iter().map(|_| Cell::default()).collect();
        let mut bounds = Vec::new();
        let mut losses = Vec::new();
        for &seed in seeds {
            let dag = Dag::generate(seed);
            let bound = dag.lower_bound(concurrency);
            bounds.push(bound);
            let mut cold_report = String::new();
            let mut makespans = [0.0; 4];
            for (k, kind) in Run::ALL.into_iter().enumerate() {
                let previous = (kind == Run::Rerun).then_some(cold_report.as_str());
                let (measured, report) =
                    run_once(&env, &base, &dag, concurrency, kind.schedule(), previous);
                if kind == Run::Cold {
                    cold_report = report;
                }
                makespans[k] = measured.makespan;
                cells[k].ratios.push(measured.makespan / bound);
                cells[k].setup.push(measured.wall - measured.makespan);
            }
            if makespans[2] > makespans[0] {
                losses.push(format!(
                    "seed {seed}: {:.2} s against {:.2} s",
                    makespans[2], makespans[0]
                ));
            }
            let _ = writeln!(
                per_seed,
                "| {concurrency} | {seed} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                dag.chain() as f64 / 1000.0,
                bound,
                makespans[0],
                makespans[1],
                makespans[2],
                makespans[3],
            );
        }
        rows.push((concurrency, median(&bounds), cells, losses));
    }
    // The cold critical-path run again with the repository on the disk.
    let mut on_disk = Vec::new();
    if let Some((_, disk)) = disk.as_ref().filter(|_| place != "disk") {
        for &concurrency in &CONCURRENCIES {
            let ratios: Vec<f64> = seeds
                .iter()
                .map(|&seed| {
                    let dag = Dag::generate(seed);
                    let (measured, _) =
                        run_once(&env, disk, &dag, concurrency, "critical-path", None);
                    measured.makespan / dag.lower_bound(concurrency)
                })
                .collect();
            on_disk.push((concurrency, ratios));
        }
    }
    let _ = writeln!(
        out,
        "## Makespan: `epic run` against the lower bound\n\n\
         Repositories on {} (`{}`, {}). The release `epic` binary on seeded random plans of {STORIES} stories (each depends on \
         up to three of the ten before it), {} seed(s) per concurrency; the agent sleeps each \
         story's duration (0.2–2 s, seeded) and writes its one owned file; no gates, no judge. \
         Makespan: first story start to last story finish, from `report.json`. Lower bound: \
         max(longest duration-weighted chain, total work / concurrency). Each cell: makespan / \
         lower bound, median and worst over the seeds. Cold: a fresh repository, no previous \
         report (every story weighs the same, so critical-path orders by chain length in \
         stories); rerun: critical-path with the cold run's `report.json` in place, whose \
         durations weight the chains. Goal: cold critical-path ≤ {GOAL:.2} at the median and \
         never slower than plan order. Measured in {:.0} s.\n",
        place,
        base.display(),
        fs_type(&base),
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    out.push_str(
        "| concurrency | lower bound (median) | plan order | waves | critical-path (cold) | critical-path (rerun) | setup outside the makespan | goal met |\n\
         | ---: | ---: | --- | --- | --- | --- | ---: | --- |\n",
    );
    let mut all_met = true;
    for (concurrency, bound, cells, losses) in &rows {
        let cell = |c: &Cell| format!("{:.2} (worst {:.2})", median(&c.ratios), max(&c.ratios));
        let met = median(&cells[2].ratios) <= GOAL && losses.is_empty();
        all_met &= met;
        let why = if losses.is_empty() {
            String::new()
        } else {
            format!("; slower than plan order on {}", losses.join(", "))
        };
        let _ = writeln!(
            out,
            "| {concurrency} | {bound:.2} s | {} | {} | {} | {} | {:.2} s | {}{why} |",
            cell(&cells[0]),
            cell(&cells[1]),
            cell(&cells[2]),
            cell(&cells[3]),
            median(&cells[2].setup),
            if met { "yes" } else { "**no**" },
        );
    }
    let _ = writeln!(
        out,
        "\nGoal {}.\n\nPer seed (seconds):\n\n\
         | concurrency | seed | longest chain | lower bound | plan order | waves | critical-path (cold) | critical-path (rerun) |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n{per_seed}",
        if all_met { "met" } else { "**missed**" }
    );
    if let (Some((_, disk)), false) = (&disk, on_disk.is_empty()) {
        let _ = writeln!(
            out,
            "\nThe same cold critical-path runs with the repository on the disk (`{}`, {}), where \
             each of a story's five durable state writes waits for two fsyncs:\n\n\
             | concurrency | critical-path (cold), median | worst |\n| ---: | ---: | ---: |",
            disk.display(),
            fs_type(disk)
        );
        for (concurrency, ratios) in &on_disk {
            let _ = writeln!(
                out,
                "| {concurrency} | {:.2} | {:.2} |",
                median(ratios),
                max(ratios)
            );
        }
    }
    out.push_str(NOTES);
    print!("{out}");
}

/// Why the figures are what they are.
const NOTES: &str = "\nNotes: the lower bound counts only the agents' sleep; every story also costs `epic` its own git work (worktree add, status, commit, merge), its state writes and two agent spawns, on 2 cores shared by up to 8 stories. A story ends, and its dependents start, as soon as its merge is recorded (the worktree is removed afterwards), and the report and board are written off the stories' path, which brought critical-path from 1.12–1.30 to 1.08–1.09 of the bound at the median. Critical-path and plan order are within 1.6 % of each other on the seeds where plan order wins. A replay with no per-story cost at all, through the executor's own scheduler (`cargo bench -p cli --bench makespan -- --bench --replay`, seeds 1–20), tells the two causes apart: at concurrency 8, seeds 1–3 tie at the bound under every policy, so the measured gap there is overhead and noise; at concurrency 2, cold critical-path trails plan order by 0.3–0.5 % on seeds 1 and 3 even with no overhead. A cold run knows no durations, so it orders by chain length in stories, and when the schedule is bound by total work the tail decides; over the 60 replays cold critical-path trails plan order in 12 (by up to 2.9 %) and the rerun, with true durations, in 5 (by up to 1.5 %), since list scheduling is not optimal even then. So \"never slower than plan order on any seed\" is not reachable by ordering alone. On the disk, each story's five durable state writes wait for two fsyncs each (about 6 ms apiece here), which the rows above show.
";
