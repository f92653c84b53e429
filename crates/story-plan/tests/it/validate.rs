//! Validation: every violation, each once, with its kind, stories and paths.

use epic_story_plan::{Story, ViolationKind as K};

use crate::support::{demo, kinds, plan};

#[test]
fn demo_plan_is_valid() {
    assert_eq!(demo().violations(), []);
    assert!(demo().validate().is_ok());
}

#[test]
fn every_violation_is_reported_at_once() {
    // a <-> b cycle with nested ownership, an unknown dependency, a duplicate owning nothing, a
    // bad id that both owns and shares one area.
    let p = plan(
        "mixed",
        vec![
            Story::new("a", "A", ["src/a"]).depending_on(["b"]),
            Story::new("b", "B", ["src/a/inner"]).depending_on(["a"]),
            Story::new("c", "C", ["src/c"]).depending_on(["missing"]),
            Story::new("c", "C again", Vec::<String>::new()),
            Story::new("Not_Kebab", "N", ["src/n"]).sharing(["src/n/part"]),
        ],
    );
    let violations = p.violations();
    let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    let has = |needle: &str| messages.iter().any(|m| m.contains(needle));
    assert!(has("dependency cycle: a -> b -> a"), "{messages:#?}");
    assert!(has("unknown story 'missing'"), "{messages:#?}");
    assert!(has("both own 'src/a' / 'src/a/inner'"), "{messages:#?}");
    assert!(has("duplicate story id 'c'"), "{messages:#?}");
    assert!(has("owns no paths"), "{messages:#?}");
    assert!(has("not kebab-case"), "{messages:#?}");
    assert!(has("shared read-only"), "{messages:#?}");
    assert_eq!(
        kinds(&p),
        [
            K::UnknownDependency,
            K::DuplicateId,
            K::NoOwnedPaths,
            K::InvalidId,
            K::OwnedSharedOverlap,
            K::OwnedOverlap,
            K::Cycle,
        ]
    );
    let errors = p.validate().unwrap_err();
    assert_eq!(errors.violations().len(), 7);
    assert!(
        errors
            .to_string()
            .starts_with("plan is invalid (7 violations):\n- ")
    );
}

#[test]
fn self_dependency_and_overlap_are_exactly_two() {
    let p = plan(
        "x",
        vec![
            Story::new("a", "A", ["src/a"]).depending_on(["a"]),
            Story::new("b", "B", ["src/a"]),
        ],
    );
    let errors = p.validate().unwrap_err();
    assert_eq!(errors.violations().len(), 2, "{errors}");
    assert!(errors.to_string().contains("depends on itself"));
    assert_eq!(errors.violations()[0].kind, K::SelfDependency);
    assert_eq!(errors.violations()[1].kind, K::OwnedOverlap);
    assert_eq!(errors.violations()[1].stories, ["a", "b"]);
}

#[test]
fn violations_name_their_stories_and_paths() {
    let p = plan(
        "x",
        vec![
            Story::new("a", "A", ["./src/a/"]),
            Story::new("b", "B", ["src/a/deep/file.rs"]),
        ],
    );
    let [violation] = p.violations().try_into().unwrap();
    assert_eq!(violation.kind, K::OwnedOverlap);
    assert_eq!(violation.stories, ["a", "b"]);
    assert_eq!(violation.paths, ["src/a", "src/a/deep/file.rs"]);
}

#[test]
fn owned_overlap_is_by_segment_not_by_text() {
    let p = plan(
        "x",
        vec![
            Story::new("a", "A", ["src/kit"]),
            Story::new("b", "B", ["src/kit.ts", "src/kit-old", "src/kits"]),
        ],
    );
    assert_eq!(p.violations(), []);
}

#[test]
fn many_owners_of_one_path_are_one_violation() {
    let p = plan(
        "x",
        vec![
            Story::new("a", "A", ["src"]),
            Story::new("b", "B", ["src/"]),
            Story::new("c", "C", ["./src"]),
        ],
    );
    let violations = p.violations();
    assert_eq!(violations.len(), 1, "{violations:#?}");
    assert_eq!(violations[0].stories, ["a", "b", "c"]);
    assert!(violations[0].message.contains("all own 'src'"));
}

#[test]
fn a_story_may_own_nested_paths_of_its_own() {
    let p = plan("x", vec![Story::new("a", "A", ["src", "src/a", "src"])]);
    assert_eq!(p.violations(), []);
}

#[test]
fn overlap_between_three_levels_reports_each_pair() {
    let p = plan(
        "x",
        vec![
            Story::new("a", "A", ["src"]),
            Story::new("b", "B", ["src/b"]),
            Story::new("c", "C", ["src/b/c"]),
        ],
    );
    let pairs: Vec<Vec<String>> = p.violations().into_iter().map(|v| v.stories).collect();
    assert_eq!(pairs, [vec!["a", "b"], vec!["a", "c"], vec!["b", "c"]]);
}

#[test]
fn unsafe_paths_are_rejected_with_the_reason() {
    for (path, reason) in [
        ("", "empty"),
        (".", "empty"),
        ("/etc/passwd", "absolute"),
        ("C:\\x", "drive letter"),
        ("../x", "`..`"),
        ("a/../../b", "`..`"),
        (".git/hooks/pre-commit", "`.git`"),
        ("src/\0nul", "control character"),
    ] {
        let p = plan("x", vec![Story::new("a", "A", [path]).sharing([path])]);
        let violations = p.violations();
        let unsafe_paths: Vec<_> = violations
            .iter()
            .filter(|v| v.kind == K::UnsafePath)
            .collect();
        assert_eq!(unsafe_paths.len(), 2, "{path:?}: {violations:#?}");
        assert!(
            unsafe_paths[0].message.contains(reason),
            "{path:?}: {}",
            unsafe_paths[0].message
        );
        assert!(unsafe_paths[0].message.contains("owns"));
        assert!(unsafe_paths[1].message.contains("shared read-only"));
        assert!(unsafe_paths[1].message.contains(reason));
        assert_eq!(unsafe_paths[0].paths, [path]);
    }
}

#[test]
fn estimates_must_be_positive_durations() {
    for estimate in ["20m", "1h 30m", "90s", "1.5s", "PT20M", " 2 hours "] {
        let story = Story::new("a", "A", ["a"]).estimated(estimate);
        assert!(story.estimated_duration().is_some(), "{estimate:?}");
        assert_eq!(plan("x", vec![story]).violations(), [], "{estimate:?}");
    }
    for (estimate, reason) in [
        ("", "not a duration"),
        ("soon", "not a duration"),
        ("20", "not a duration"),
        ("0s", "not positive"),
        ("-5m", "not positive"),
    ] {
        let story = Story::new("a", "A", ["a"]).estimated(estimate);
        assert_eq!(story.estimated_duration(), None, "{estimate:?}");
        let p = plan("x", vec![story]);
        assert_eq!(kinds(&p), [K::InvalidEstimate], "{estimate:?}");
        let violations = p.violations();
        assert!(violations[0].message.contains(reason), "{violations:#?}");
        assert!(
            violations[0]
                .message
                .starts_with("story 'a' has estimated_time"),
            "{violations:#?}"
        );
        assert_eq!(violations[0].stories, ["a"]);
    }
}

#[test]
fn ids_must_be_kebab_case_and_short() {
    let long = "a".repeat(65);
    let ok_long = "a".repeat(64);
    for (id, valid) in [
        ("cart-api", true),
        ("a1", true),
        ("9lives", true),
        ("trailing-", true),
        ("double--hyphen", true),
        (ok_long.as_str(), true),
        (long.as_str(), false),
        ("", false),
        ("-lead", false),
        ("Upper", false),
        ("under_score", false),
        ("dot.ted", false),
        ("spa ce", false),
        ("ünï", false),
        ("a/b", false),
    ] {
        let p = plan("epic", vec![Story::new(id, "T", ["src"])]);
        assert_eq!(!kinds(&p).contains(&K::InvalidId), valid, "{id:?}");
        let p = plan(id, vec![Story::new("s", "T", ["src"])]);
        assert_eq!(!kinds(&p).contains(&K::InvalidId), valid, "epic {id:?}");
    }
}

#[test]
fn hostile_ids_are_quoted_safely_in_messages() {
    let id = format!("x\n{}", "é".repeat(10_000));
    let p = plan("e", vec![Story::new(id.as_str(), "T", ["src"])]);
    let [violation] = p.violations().try_into().unwrap();
    assert_eq!(violation.kind, K::InvalidId);
    assert!(violation.message.len() < 400, "{}", violation.message.len());
    assert!(!violation.message.contains('\n'));
    assert_eq!(violation.stories, [id]);
}

#[test]
fn empty_plan_is_a_violation() {
    assert_eq!(kinds(&plan("e", Vec::new())), [K::EmptyPlan]);
}

#[test]
fn each_cycle_is_reported_once_as_a_path() {
    let p = plan(
        "e",
        vec![
            Story::new("a", "A", ["a"]).depending_on(["b"]),
            Story::new("b", "B", ["b"]).depending_on(["c"]),
            Story::new("c", "C", ["c"]).depending_on(["a"]),
            Story::new("d", "D", ["d"]).depending_on(["e"]),
            Story::new("e", "E", ["e"]).depending_on(["d", "a"]),
            Story::new("f", "F", ["f"]).depending_on(["e"]),
        ],
    );
    let cycles: Vec<String> = p
        .violations()
        .into_iter()
        .filter(|v| v.kind == K::Cycle)
        .map(|v| v.message)
        .collect();
    assert_eq!(
        cycles,
        [
            "dependency cycle: a -> b -> c -> a",
            "dependency cycle: d -> e -> d"
        ]
    );
}

#[test]
fn duplicate_dependencies_are_harmless() {
    let p = plan(
        "e",
        vec![
            Story::new("a", "A", ["a"]),
            Story::new("b", "B", ["b"]).depending_on(["a", "a", "ghost", "ghost"]),
        ],
    );
    assert_eq!(kinds(&p), [K::UnknownDependency]);
}
