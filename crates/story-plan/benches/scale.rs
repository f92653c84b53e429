//! How plan operations scale: parsing, validating, waves and the critical path of a generated
//! 10,000-story plan against a 1,000-story one, as a ratio measured in one run.
//!
//! The plan has about five dependency edges a story (≈50,000 at 10,000 stories), each on an
//! earlier story, and one to three owned paths a story under a shared tree, so the owned-overlap
//! check sees many siblings. Near-linear scaling means a ratio near 10; the goal is at most 15.
//!
//! Prints a Markdown section for `cargo xtask bench` to put in BENCHMARKS.md. `--quick` takes
//! fewer samples.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use epic_story_plan::{PlanFormat, Story, StoryPlan};
use epic_test_support::Rng;

fn generate(stories: usize) -> String {
    // The seeded generator of the tests: the same plan on every machine.
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let plan = StoryPlan {
        epic_id: "scale".into(),
        epic: "A generated plan.".into(),
        stories: (0..stories)
            .map(|i| {
                let owned: Vec<String> = (0..=rng.index(3))
                    .map(|k| format!("src/area{}/story{i}/part{k}", i % 50))
                    .collect();
                let mut story = Story::new(format!("story-{i}"), format!("Story {i}"), owned);
                if i > 0 {
                    let mut deps: Vec<String> = (0..rng.index(11))
                        .map(|_| format!("story-{}", rng.index(i)))
                        .collect();
                    deps.sort_unstable();
                    deps.dedup();
                    story.depends_on = deps;
                }
                story.shared_read_only = vec![format!("src/shared{}", i % 7)];
                story
            })
            .collect(),
    };
    serde_json::to_string(&plan).unwrap_or_default()
}

#[derive(Default, Clone, Copy)]
struct Phases {
    parse: Duration,
    validate: Duration,
    waves: Duration,
    critical_path: Duration,
}

impl Phases {
    fn total(self) -> Duration {
        self.parse + self.validate + self.waves + self.critical_path
    }
}

fn measure(text: &str) -> (Phases, usize) {
    let start = Instant::now();
    let plan = StoryPlan::parse(text, PlanFormat::Json).expect("the generated plan parses");
    let parse = start.elapsed();
    let edges = plan.stories.iter().map(|s| s.depends_on.len()).sum();

    let start = Instant::now();
    let valid = plan.validate().expect("the generated plan is valid");
    let validate = start.elapsed();

    let start = Instant::now();
    let waves = valid.waves();
    let waves_time = start.elapsed();
    assert!(!waves.is_empty());

    let start = Instant::now();
    let path = valid.critical_path();
    let critical_path = start.elapsed();
    assert!(!path.stories.is_empty());

    let phases = Phases {
        parse,
        validate,
        waves: waves_time,
        critical_path,
    };
    (phases, edges)
}

fn median(mut samples: Vec<Phases>) -> Phases {
    let pick = |samples: &mut Vec<Phases>, key: fn(&Phases) -> Duration| {
        samples.sort_by_key(key);
        key(&samples[samples.len() / 2])
    };
    Phases {
        parse: pick(&mut samples, |p| p.parse),
        validate: pick(&mut samples, |p| p.validate),
        waves: pick(&mut samples, |p| p.waves),
        critical_path: pick(&mut samples, |p| p.critical_path),
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64() * 1e3)
}

fn ratio(big: Duration, small: Duration) -> String {
    format!("{:.1}", big.as_secs_f64() / small.as_secs_f64().max(1e-9))
}

fn main() {
    // `cargo bench` passes `--bench`; any other runner (`cargo test --all-targets`) gets a note
    // instead of minutes of measuring.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("plan-scale: a benchmark; run it with `cargo xtask bench plan-scale`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let rounds = if quick { 3 } else { 15 };
    let small_text = generate(1_000);
    let big_text = generate(10_000);

    // Interleave the two sizes so that noise from the shared machine falls on both alike.
    let (mut small, mut big) = (Vec::new(), Vec::new());
    let (mut small_edges, mut big_edges) = (0, 0);
    for _ in 0..rounds {
        for _ in 0..5 {
            let (phases, edges) = measure(&small_text);
            small.push(phases);
            small_edges = edges;
        }
        let (phases, edges) = measure(&big_text);
        big.push(phases);
        big_edges = edges;
    }
    let small_median = median(small);
    let big_median = median(big);
    let total_ratio = big_median.total().as_secs_f64() / small_median.total().as_secs_f64();

    let mut out = String::new();
    let _ = writeln!(out, "## Plan operations at scale\n");
    let _ = writeln!(
        out,
        "Median of {} runs (1,000 stories: {small_edges} edges) and {rounds} runs (10,000 stories: \
         {big_edges} edges); milliseconds. Goal: 10,000 / 1,000 at most 15 (linear is 10).\n",
        rounds * 5
    );
    let _ = writeln!(out, "| phase | 1,000 stories | 10,000 stories | ratio |");
    let _ = writeln!(out, "| --- | ---: | ---: | ---: |");
    for (name, key) in [
        (
            "parse (JSON)",
            (|p: &Phases| p.parse) as fn(&Phases) -> Duration,
        ),
        ("validate (incl. overlap check, cycles)", |p| p.validate),
        ("waves", |p| p.waves),
        ("critical path", |p| p.critical_path),
        ("total", |p| p.total()),
    ] {
        let (a, b) = (key(&small_median), key(&big_median));
        let _ = writeln!(out, "| {name} | {} | {} | {} |", ms(a), ms(b), ratio(b, a));
    }
    let verdict = if total_ratio <= 15.0 { "met" } else { "MISSED" };
    let _ = writeln!(out, "\nTotal ratio {total_ratio:.1}: goal {verdict}.");
    print!("{out}");
}
