//! Differential fuzzing of parse and validate, a million cases and more: no input panics, and
//! every violation a plan has is found.
//!
//! Two generators, both seeded so a failure replays:
//!
//! - **Text**: JSON-ish, TOML-ish and Markdown-ish fragments glued at random, and raw bytes,
//!   through [`StoryPlan::parse`] in all three formats; whatever parses is validated and rendered.
//! - **Plans**: small plans with hostile ids (escapes, NUL, 10 kB, look-alikes), hostile paths
//!   (`../x`, `/etc/passwd`, `.git/hooks`, `C:\x`, …), random dependencies and overlapping owned
//!   paths. Each plan's violations are checked against an oracle written here the slow, obvious
//!   way (all pairs, a plain depth-first search), so a violation the real validator misses, or
//!   one it invents, fails the run.
//!
//! Prints a Markdown section for `cargo xtask bench fuzz`; `--quick` runs 50,000 cases.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use epic_story_plan::path::{check_safe, normalize, overlaps_normalized};
use epic_story_plan::{PlanFormat, Story, StoryPlan, ViolationKind as K};
use epic_test_support::Rng;

const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\"epic_id\"",
    "\"stories\"",
    "\"id\"",
    "\"owned\"",
    "\"depends_on\"",
    "\"dependsOn\"",
    "\"title\"",
    "\"a\"",
    "\"src\"",
    "null",
    "true",
    "1e999",
    "-0",
    "\\u0000",
    "\\ud800",
    "\n",
    "\r\n",
    " ",
    "epic_id = \"x\"",
    "[[stories]]",
    "id = ",
    "owned = [",
    "```json storyplan\n",
    "```\n",
    "```json\n",
    "# Epic\n",
    "\u{feff}",
    "é",
    "💥",
    "\0",
    "'",
    "=",
    "#",
    "\t",
];

fn text(rng: &mut Rng) -> String {
    if rng.chance(50) {
        // A real plan, as JSON or as its Markdown rendering, then a few mutations: the inputs
        // that get past the syntax and exercise decoding.
        let plan = plan(rng);
        let mut text = if rng.chance(50) {
            serde_json::to_string_pretty(&plan).unwrap_or_default()
        } else {
            plan.to_markdown()
        };
        for _ in 0..rng.index(3) {
            mutate(rng, &mut text);
        }
        return text;
    }
    if rng.chance(10) {
        let bytes: Vec<u8> = (0..rng.index(200))
            .map(|_| rng.next_u64().to_le_bytes()[0])
            .collect();
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mut out = String::new();
    for _ in 0..rng.index(60) {
        out.push_str(rng.pick(FRAGMENTS));
    }
    out
}

fn mutate(rng: &mut Rng, text: &mut String) {
    let mut at = rng.index(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match rng.index(3) {
        0 => text.insert_str(at, rng.pick(FRAGMENTS)),
        1 => {
            let mut end = (at + rng.index(8)).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(at..end, "");
        }
        _ => text.truncate(at),
    }
}

const IDS: &[&str] = &[
    "a", "b", "c", "d", "e", "a-b", "a1", "-a", "A", "a_b", "a.b", "", "a/b", "../a", "a\0b", "ａ",
    "а", "a ", "a\n", "9", "a--", "é",
];

const PATHS: &[&str] = &[
    "src",
    "src/a",
    "src/a/b",
    "src/a-b",
    "src/b",
    "lib",
    "lib/x.rs",
    "./src/",
    "src\\a",
    "src//a",
    "",
    ".",
    "/",
    "/etc/passwd",
    "../x",
    "a/../../b",
    "src/a/..",
    ".git",
    ".git/hooks/pre-commit",
    "sub/.GIT/x",
    "C:\\x",
    "c:x",
    "src/\0x",
    "src/ /",
    " src ",
    "ｓｒｃ",
    "src/é",
];

fn id(rng: &mut Rng) -> String {
    if rng.chance(1) {
        return "x".repeat(10_000);
    }
    rng.pick(IDS).to_owned()
}

fn plan(rng: &mut Rng) -> StoryPlan {
    let n = rng.index(7);
    let stories = (0..n)
        .map(|_| {
            let owned: Vec<&str> = (0..rng.index(3)).map(|_| rng.pick(PATHS)).collect();
            let shared: Vec<&str> = (0..rng.index(2)).map(|_| rng.pick(PATHS)).collect();
            let deps: Vec<String> = (0..rng.index(3)).map(|_| id(rng)).collect();
            Story::new(id(rng), "T", owned)
                .sharing(shared)
                .depending_on(deps)
        })
        .collect();
    StoryPlan {
        epic_id: if rng.chance(90) {
            "epic".into()
        } else {
            id(rng)
        },
        epic: String::new(),
        stories,
    }
}

/// The violation kinds a plan must have, each with the set of stories involved, worked out the
/// slow, obvious way.
fn oracle(plan: &StoryPlan) -> BTreeSet<(K, Vec<String>)> {
    let mut expected = BTreeSet::new();
    let kebab = |id: &str| {
        !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('-')
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    if plan.stories.is_empty() {
        expected.insert((K::EmptyPlan, vec![]));
    }
    if !kebab(&plan.epic_id) {
        expected.insert((K::InvalidId, vec![]));
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, story) in plan.stories.iter().enumerate() {
        let me = vec![story.id.clone()];
        if first.contains_key(story.id.as_str()) {
            expected.insert((K::DuplicateId, me.clone()));
        }
        first.entry(&story.id).or_insert(i);
        if !kebab(&story.id) {
            expected.insert((K::InvalidId, me.clone()));
        }
        if story.owned.is_empty() {
            expected.insert((K::NoOwnedPaths, me.clone()));
        }
        for path in story.owned.iter().chain(&story.shared_read_only) {
            if check_safe(path).is_err() {
                expected.insert((K::UnsafePath, me.clone()));
            }
        }
        for owned in &story.owned {
            for shared in &story.shared_read_only {
                if overlaps_normalized(&normalize(owned), &normalize(shared)) {
                    expected.insert((K::OwnedSharedOverlap, me.clone()));
                }
            }
        }
    }
    for story in &plan.stories {
        for dep in &story.depends_on {
            if *dep == story.id {
                expected.insert((K::SelfDependency, vec![story.id.clone()]));
            } else if !first.contains_key(dep.as_str()) {
                expected.insert((K::UnknownDependency, vec![story.id.clone()]));
            }
        }
    }
    for (i, a) in plan.stories.iter().enumerate() {
        for b in &plan.stories[i + 1..] {
            let overlap = a.owned.iter().any(|p| {
                b.owned
                    .iter()
                    .any(|q| overlaps_normalized(&normalize(p), &normalize(q)))
            });
            if overlap {
                expected.insert((K::OwnedOverlap, vec![]));
            }
        }
    }
    if has_cycle(plan, &first) {
        expected.insert((K::Cycle, vec![]));
    }
    expected
}

/// A plain depth-first search over the first story of each id, self-edges left out.
fn has_cycle(plan: &StoryPlan, first: &HashMap<&str, usize>) -> bool {
    fn visit(i: usize, plan: &StoryPlan, first: &HashMap<&str, usize>, mark: &mut [u8]) -> bool {
        mark[i] = 1;
        for dep in &plan.stories[i].depends_on {
            let Some(&d) = first.get(dep.as_str()) else {
                continue;
            };
            if d == i {
                continue;
            }
            if mark[d] == 1 || (mark[d] == 0 && visit(d, plan, first, mark)) {
                return true;
            }
        }
        mark[i] = 2;
        false
    }
    let mut mark = vec![0u8; plan.stories.len()];
    (0..plan.stories.len()).any(|i| mark[i] == 0 && visit(i, plan, first, &mut mark))
}

/// What the validator reported, in the oracle's shape: stories only where the oracle names them.
fn found(plan: &StoryPlan) -> BTreeSet<(K, Vec<String>)> {
    plan.violations()
        .into_iter()
        .map(|v| match v.kind {
            K::OwnedOverlap | K::Cycle | K::EmptyPlan => (v.kind, vec![]),
            K::InvalidId if v.stories.is_empty() => (v.kind, vec![]),
            _ => (v.kind, v.stories),
        })
        .collect()
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("fuzz: a benchmark; run it with `cargo xtask bench fuzz`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let cases: usize = if quick { 50_000 } else { 1_000_000 };
    let mut rng = Rng::from_env("FUZZ_SEED", 0x5eed);
    let seed = rng.seed();
    let start = Instant::now();
    let (mut parsed, mut valid, mut violations) = (0usize, 0usize, 0usize);
    for case in 0..cases {
        if case % 2 == 0 {
            let input = text(&mut rng);
            for format in [PlanFormat::Json, PlanFormat::Toml, PlanFormat::Markdown] {
                if let Ok(plan) = StoryPlan::parse(&input, format) {
                    parsed += 1;
                    violations += plan.violations().len();
                    let _rendered = plan.to_markdown();
                }
            }
        } else {
            let plan = plan(&mut rng);
            let (expected, got) = (oracle(&plan), found(&plan));
            assert_eq!(
                expected, got,
                "case {case} (FUZZ_SEED={seed}): the validator and the oracle disagree on {plan:#?}"
            );
            violations += got.len();
            if got.is_empty() {
                valid += 1;
            }
            let back = StoryPlan::parse(&plan.to_markdown(), PlanFormat::Markdown)
                .expect("a rendered plan parses back");
            assert_eq!(back, plan, "case {case}: the rendering does not round-trip");
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!("## Fuzzing parse and validate\n");
    println!(
        "{cases} cases (seed {seed:#x}) in {seconds:.1} s: half text through the three parsers \
         ({parsed} parsed), half generated plans with hostile ids and paths, each checked against \
         an all-pairs oracle ({valid} valid, {violations} violations found in all). No panic, no \
         disagreement, every rendering parsed back."
    );
}
