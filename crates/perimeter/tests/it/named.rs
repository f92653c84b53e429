//! `paths_named_in` and `owner_of`.

use epic_perimeter::{owner_of, paths_named_in};
use epic_story_plan::{Story, StoryPlan};

use crate::support::bank;

fn owner(plan: &StoryPlan, path: &str) -> Option<String> {
    owner_of(plan, path).map(|story| story.id.clone())
}

#[test]
fn prose_names_plan_paths_and_owned_file_names() {
    assert_eq!(
        paths_named_in(
            &bank(),
            "Register contoOverviewFeature in App.tsx and read src/kit/api.ts, en/it."
        ),
        ["src/App.tsx", "src/kit/api.ts"]
    );
}

#[test]
fn urls_name_nothing() {
    assert!(paths_named_in(&bank(), "see https://example.com/src/x.ts").is_empty());
    assert!(paths_named_in(&bank(), "see https://src/kit/x.ts and file:///src/App.tsx").is_empty());
    assert_eq!(
        paths_named_in(&bank(), "see http://x.org/a then src/kit/b.ts"),
        ["src/kit/b.ts"]
    );
}

#[test]
fn words_are_cut_at_punctuation_and_normalised() {
    assert_eq!(
        paths_named_in(
            &bank(),
            "Edit `src/kit/a.ts`; (src\\features\\bonifico\\form.tsx), ./src/kit/b.ts: done..."
        ),
        [
            "src/kit/a.ts",
            "src/features/bonifico/form.tsx",
            "src/kit/b.ts"
        ]
    );
}

#[test]
fn directories_count_and_unknown_roots_do_not() {
    assert_eq!(
        paths_named_in(
            &bank(),
            "work inside src/features/conto, not in lib/x.ts or docs/"
        ),
        ["src/features/conto"]
    );
}

#[test]
fn repeats_are_named_once_in_first_seen_order() {
    assert_eq!(
        paths_named_in(
            &bank(),
            "src/kit/b.ts then App.tsx then src/App.tsx then src/kit/b.ts."
        ),
        ["src/kit/b.ts", "src/App.tsx"]
    );
}

#[test]
fn a_bare_file_name_stands_for_every_owned_file_of_that_name() {
    let plan = StoryPlan {
        epic_id: "two-apps".into(),
        epic: String::new(),
        stories: vec![
            Story::new("web", "Web", ["web/App.tsx"]),
            Story::new("mobile", "Mobile", ["mobile/App.tsx", "mobile/screens"]),
        ],
    };
    assert_eq!(
        paths_named_in(&plan, "touch App.tsx"),
        ["web/App.tsx", "mobile/App.tsx"]
    );
    // Only owned files resolve: a bare directory name or an unowned file name names nothing.
    assert!(paths_named_in(&plan, "screens and index.ts").is_empty());
    // File-like: a dot and one to five letters or digits.
    assert!(paths_named_in(&plan, "App.tsxtsx App. App").is_empty());
}

#[test]
fn nothing_is_named_in_prose_without_paths() {
    assert!(paths_named_in(&bank(), "").is_empty());
    assert!(paths_named_in(&bank(), "Make the overview pretty.").is_empty());
    assert!(paths_named_in(&bank(), "... ., :; / // \\").is_empty());
}

#[test]
fn the_owner_is_the_first_story_owning_a_prefix() {
    let plan = bank();
    assert_eq!(
        owner(&plan, "src/features/conto/overview/page.tsx").as_deref(),
        Some("conto-overview")
    );
    assert_eq!(
        owner(&plan, "src/contracts/accounts.ts").as_deref(),
        Some("conto-overview")
    );
    assert_eq!(owner(&plan, "./src/App.tsx").as_deref(), Some("home"));
    assert_eq!(
        owner(&plan, "src/features/bonifico/route.tsx").as_deref(),
        Some("bonifico-form")
    );
    assert_eq!(owner(&plan, "src/kit/a.ts"), None, "shared is not owned");
    assert_eq!(
        owner(&plan, "src/features/conto"),
        None,
        "above an owned prefix"
    );
    assert_eq!(owner(&plan, "README.md"), None);

    let overlapping = StoryPlan {
        epic_id: "overlap".into(),
        epic: String::new(),
        stories: vec![
            Story::new("outer", "Outer", ["src"]),
            Story::new("inner", "Inner", ["src/inner"]),
        ],
    };
    assert_eq!(owner(&overlapping, "src/inner/x").as_deref(), Some("outer"));
}
