//! The story hash through the public API.

use epic_story_plan::{PlanFormat, Story, StoryPlan, story_hash};

#[test]
fn normalised_owned_paths_hash_the_same() {
    let a = Story::new("x", "X", ["src/x"]);
    let b = Story::new("x", "X", ["./src/x/"]);
    assert_eq!(story_hash(&a), story_hash(&b));
}

#[test]
fn changing_dependencies_changes_the_hash() {
    let y = Story::new("x", "X", ["src/x"]).depending_on(["y"]);
    let z = Story::new("x", "X", ["src/x"]).depending_on(["z"]);
    assert_ne!(story_hash(&y), story_hash(&z));
}

#[test]
fn optional_fields_at_their_default_leave_the_hash_alone() {
    // An entry written before `acceptance`, `read_first` and `tests_change` existed hashes the
    // same as one that spells them out empty.
    let old = r#"{"epic_id":"e","stories":[{"id":"x","title":"X","description":"d","dependsOn":[],"owned":["src/x"],"sharedReadOnly":[],"provides":[]}]}"#;
    let new = r#"{"epic_id":"e","stories":[{"id":"x","title":"X","description":"d","depends_on":[],"owned":["src/x"],"shared_read_only":[],"provides":[],"acceptance":[],"read_first":[],"tests_change":false}]}"#;
    let old = StoryPlan::parse(old, PlanFormat::Json).unwrap();
    let new = StoryPlan::parse(new, PlanFormat::Json).unwrap();
    assert_eq!(story_hash(&old.stories[0]), story_hash(&new.stories[0]));

    let mut changed = new.stories[0].clone();
    changed.tests_change = true;
    assert_ne!(story_hash(&changed), story_hash(&new.stories[0]));
}

#[test]
fn an_estimate_is_not_hashed() {
    let plain = Story::new("x", "X", ["src/x"]);
    let estimated = plain.clone().estimated("20m");
    assert_eq!(story_hash(&plain), story_hash(&estimated));
    assert_eq!(
        story_hash(&estimated),
        story_hash(&plain.estimated("2h")),
        "revising an estimate restarts nothing"
    );
}

#[test]
fn hash_is_64_hex_digits() {
    let hash = story_hash(&Story::new("x", "X", ["src"]));
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}
