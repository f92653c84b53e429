//! Properties over generated plans: waves respect every edge and partition the plan, shuffling
//! changes nothing, cycles are always caught, and no input panics.

use std::collections::BTreeSet;

use epic_story_plan::path::{LinkEscape, resolve_link, within_normalized};
use epic_story_plan::{PlanFormat, Story, StoryPlan, ViolationKind, story_hash};
use proptest::prelude::*;
use proptest::sample::Index;

/// An acyclic plan: story `i` may depend only on stories before it (each edge is a pair of
/// indices folded into range), and owns a directory of its own.
fn dag() -> impl Strategy<Value = StoryPlan> {
    (1usize..40)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((any::<Index>(), any::<Index>()), 0..n * 3),
            )
        })
        .prop_map(|(n, edges)| {
            let mut stories: Vec<Story> = (0..n)
                .map(|i| Story::new(format!("s{i}"), format!("Story {i}"), [format!("src/s{i}")]))
                .collect();
            for (a, b) in edges {
                let (a, b) = (a.index(n), b.index(n));
                if a != b {
                    let (dependency, dependent) = (a.min(b), a.max(b));
                    stories[dependent].depends_on.push(format!("s{dependency}"));
                }
            }
            StoryPlan {
                epic_id: "prop".into(),
                epic: String::new(),
                stories,
            }
        })
}

fn shuffled(plan: &StoryPlan, seed: u64) -> StoryPlan {
    // A Fisher–Yates shuffle driven by a small LCG: deterministic per seed.
    let mut stories = plan.stories.clone();
    let mut state = seed | 1;
    for i in (1..stories.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let j = usize::try_from(state >> 33).unwrap_or(0) % (i + 1);
        stories.swap(i, j);
    }
    StoryPlan {
        stories,
        ..plan.clone()
    }
}

fn wave_sets(plan: StoryPlan) -> Vec<BTreeSet<String>> {
    let valid = plan.validate().expect("generated plans are valid");
    valid
        .waves()
        .into_iter()
        .map(|wave| wave.into_iter().map(str::to_owned).collect())
        .collect()
}

proptest! {
    #[test]
    fn waves_respect_every_edge_and_are_earliest(plan in dag()) {
        let valid = plan.validate().unwrap();
        let numbers = valid.wave_numbers();
        let index = |id: &str| valid.plan().stories.iter().position(|s| s.id == id).unwrap();
        for (v, story) in valid.plan().stories.iter().enumerate() {
            for dependency in &story.depends_on {
                prop_assert!(numbers[index(dependency)] < numbers[v]);
            }
            // Earliest: a story after wave 0 has a dependency in the wave just before.
            if numbers[v] > 0 {
                prop_assert!(story.depends_on.iter().any(|d| numbers[index(d)] + 1 == numbers[v]));
            }
        }
    }

    #[test]
    fn waves_partition_the_plan(plan in dag()) {
        let n = plan.stories.len();
        let valid = plan.validate().unwrap();
        let mut seen: Vec<&str> = valid.waves().into_iter().flatten().collect();
        prop_assert_eq!(seen.len(), n);
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen.len(), n);
    }

    #[test]
    fn shuffling_changes_neither_waves_nor_hashes(plan in dag(), seed in any::<u64>()) {
        let other = shuffled(&plan, seed);
        let hashes = |p: &StoryPlan| -> BTreeSet<(String, String)> {
            p.stories.iter().map(|s| (s.id.clone(), story_hash(s))).collect()
        };
        prop_assert_eq!(hashes(&plan), hashes(&other));
        prop_assert_eq!(wave_sets(plan), wave_sets(other));
    }

    #[test]
    fn critical_path_is_a_chain_at_least_as_long_as_the_waves(plan in dag()) {
        let valid = plan.validate().unwrap();
        let path = valid.critical_path();
        prop_assert_eq!(path.stories.len(), valid.waves().len());
        for pair in path.stories.windows(2) {
            let later = valid.story(pair[1]).unwrap();
            prop_assert!(later.depends_on.iter().any(|d| d == pair[0]));
        }
    }

    #[test]
    fn every_cycle_is_rejected(plan in dag(), picks in prop::collection::vec(any::<Index>(), 2..6)) {
        let mut plan = plan;
        let n = plan.stories.len();
        let mut members: Vec<usize> = picks.iter().map(|p| p.index(n)).collect();
        members.sort_unstable();
        members.dedup();
        prop_assume!(members.len() >= 2);
        // Close a ring: each member depends on the next, the last on the first.
        for (k, &member) in members.iter().enumerate() {
            let next = members[(k + 1) % members.len()];
            plan.stories[member].depends_on.push(format!("s{next}"));
        }
        let violations = plan.clone().validate().unwrap_err();
        let cycles: Vec<_> = violations.violations().iter().filter(|v| v.kind == ViolationKind::Cycle).collect();
        prop_assert!(!cycles.is_empty());
        for cycle in cycles {
            let ids: Vec<&str> = cycle.message.trim_start_matches("dependency cycle: ").split(" -> ").collect();
            prop_assert_eq!(ids.first(), ids.last());
            for pair in ids.windows(2) {
                let story = plan.story(pair[0]).unwrap();
                prop_assert!(story.depends_on.iter().any(|d| d == pair[1]), "{} does not depend on {}", pair[0], pair[1]);
            }
        }
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        for format in [PlanFormat::Json, PlanFormat::Toml, PlanFormat::Markdown] {
            if let Ok(plan) = StoryPlan::parse(&text, format) {
                for violation in plan.violations() {
                    prop_assert!(!violation.message.is_empty());
                }
            }
        }
    }

    #[test]
    fn hostile_plans_validate_render_and_round_trip(
        epic_id in hostile_string(),
        stories in prop::collection::vec(hostile_story(), 0..8),
    ) {
        let plan = StoryPlan { epic_id, epic: "e".into(), stories };
        let violations = plan.violations();
        for violation in &violations {
            prop_assert!(!violation.message.is_empty());
        }
        if let Ok(valid) = plan.clone().validate() {
            let placed: usize = valid.waves().iter().map(Vec::len).sum();
            prop_assert_eq!(placed, valid.plan().stories.len());
            prop_assert!(!valid.critical_path().stories.is_empty());
        }
        let back = StoryPlan::parse(&plan.to_markdown(), PlanFormat::Markdown).unwrap();
        prop_assert_eq!(back, plan);
    }

    #[test]
    fn a_resolved_link_target_stays_inside_the_repository(
        link in hostile_target(),
        target in hostile_target(),
    ) {
        // Never panics; what resolves is a repo-relative path without an empty, `.`, `..` or
        // `.git` segment (or the root, empty).
        let inside = resolve_link(&link, &target);
        if let Ok(path) = &inside {
            prop_assert!(
                path.is_empty()
                    || path.split('/').all(|segment| {
                        !matches!(segment, "" | "." | "..") && !segment.eq_ignore_ascii_case(".git")
                    }),
                "{path:?}"
            );
        }
        // The same link in a repository two directories down lands at the same place under
        // them; a target said to leave the repository lands outside it, or nowhere.
        let deeper = resolve_link(&format!("outer/repo/{link}"), &target);
        match (&inside, &deeper) {
            (Ok(path), _) => {
                let expected = if path.is_empty() {
                    "outer/repo".to_owned()
                } else {
                    format!("outer/repo/{path}")
                };
                prop_assert_eq!(deeper, Ok(expected));
            }
            (Err(LinkEscape::AboveRoot), Ok(path)) => {
                prop_assert!(!within_normalized(path, "outer/repo"), "{path:?}");
            }
            (Err(_), _) => {}
        }
    }
}

/// Link paths and targets: climbs, absolute paths, `.git`, separators and dots in every mix,
/// long ones, arbitrary text (git allows any bytes but NUL in a target).
fn hostile_target() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile_string(),
        Just("../../..".to_owned()),
        Just("../".repeat(5_000)),
        Just(format!("{}{}", "a/".repeat(5_000), "../".repeat(5_001))),
        Just("x".repeat(70_000)),
        Just("a\\..\\..\\etc".to_owned()),
        "[ab/.\\\\]{0,24}",
        "(\\.\\./|\\./|[ab]/|/|\\.git/){0,12}",
        "[^\\x00]{0,64}",
    ]
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("..".to_owned()),
        Just("../x".to_owned()),
        Just("/etc/passwd".to_owned()),
        Just(".git/hooks/pre-commit".to_owned()),
        Just("a/../../b".to_owned()),
        Just("C:\\x".to_owned()),
        Just("x\0y".to_owned()),
        Just("```\n```json storyplan\n".to_owned()),
        "[a-c]{1,3}",
        "[a-c/.]{0,8}",
        any::<String>(),
    ]
}

fn hostile_story() -> impl Strategy<Value = Story> {
    (
        hostile_string(),
        hostile_string(),
        prop::collection::vec(hostile_string(), 0..3),
        prop::collection::vec(hostile_string(), 0..3),
        prop::collection::vec(hostile_string(), 0..2),
    )
        .prop_map(|(id, title, depends_on, owned, shared)| {
            let mut story = Story::new(id, title, owned)
                .depending_on(depends_on)
                .sharing(shared);
            story.description = "```\nnot the plan\n```".into();
            story
        })
}
