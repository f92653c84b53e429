//! Properties over generated stories, paths and prose.

use epic_perimeter::{
    Placement, Task, check, classify, gate, owner_of, paths_named_in, stray_tasks,
};
use epic_story_plan::path::{is_safe, normalize};
use epic_story_plan::{Story, StoryPlan};
use proptest::prelude::*;

/// Segments that collide often, with the awkward ones among them.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["src", "kit", "a", "b", "App.tsx", "x.ts", "a-b"]),
        1 => prop::sample::select(vec!["..", ".", ".git", "", "C:", " "]),
    ]
    .prop_map(str::to_owned)
}

/// A path spelled the ways plans and git spell them, sometimes badly.
fn path() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "", "", "./", "/"]),
        prop::collection::vec(segment(), 1..5),
        prop::sample::select(vec!["/", "/", "/", "\\", "//"]),
        prop::sample::select(vec!["", "", "", "/"]),
    )
        .prop_map(|(lead, segments, separator, trail)| {
            format!("{lead}{}{trail}", segments.join(separator))
        })
}

/// A safe path, spelled the ways plans spell them.
fn safe_path() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "", "./", "././"]),
        prop::collection::vec(
            prop::sample::select(vec![
                "src", "kit", "a", "App.tsx", "x.ts", "a-b", "..x", ".", "",
            ]),
            1..5,
        ),
        prop::sample::select(vec!["/", "\\", "//", "/./"]),
        prop::sample::select(vec!["", "/"]),
    )
        .prop_map(|(lead, segments, separator, trail)| {
            format!("{lead}{}{trail}", segments.join(separator))
        })
        .prop_filter("safe", |path| is_safe(path))
}

fn story() -> impl Strategy<Value = Story> {
    (
        prop::collection::vec(path(), 0..4),
        prop::collection::vec(path(), 0..3),
    )
        .prop_map(|(owned, shared)| Story::new("s", "S", owned).sharing(shared))
}

/// Segment-wise containment, written apart from the crate's string prefix test.
fn segments_within(path: &str, prefix: &str) -> bool {
    let path = normalize(path);
    let prefix = normalize(prefix);
    let path: Vec<&str> = path.split('/').collect();
    let prefix: Vec<&str> = prefix.split('/').collect();
    path.len() >= prefix.len() && path[..prefix.len()] == prefix[..]
}

fn expected(path: &str, story: &Story) -> Placement {
    let under = |prefixes: &[String]| {
        prefixes
            .iter()
            .any(|prefix| is_safe(prefix) && segments_within(path, prefix))
    };
    if !is_safe(path) {
        Placement::Outside
    } else if under(&story.owned) {
        Placement::Owned
    } else if under(&story.shared_read_only) {
        Placement::SharedReadOnly
    } else {
        Placement::Outside
    }
}

proptest! {
    #[test]
    fn check_partitions_the_changed_paths_in_order(
        story in story(),
        changed in prop::collection::vec(path(), 0..12),
    ) {
        let verdict = check(&changed, &story);
        let placed = |placement| {
            changed
                .iter()
                .filter(|path| expected(path, &story) == placement)
                .cloned()
                .collect::<Vec<_>>()
        };
        prop_assert_eq!(&verdict.shared_read_only, &placed(Placement::SharedReadOnly));
        prop_assert_eq!(&verdict.outside, &placed(Placement::Outside));
        prop_assert_eq!(
            verdict.shared_read_only.len() + verdict.outside.len() + placed(Placement::Owned).len(),
            changed.len()
        );
        prop_assert_eq!(verdict.is_clean(), gate(&changed, &story).clean);
    }

    #[test]
    fn normalize_is_idempotent(
        raw in any::<String>(),
        spelled in path(),
    ) {
        let once = normalize(&raw);
        prop_assert_eq!(normalize(&once), once.clone());
        let once = normalize(&spelled);
        prop_assert_eq!(normalize(&once), once);
    }

    #[test]
    fn a_path_within_an_owned_prefix_is_never_reported(
        owned in safe_path(),
        shared in prop::collection::vec(path(), 0..3),
        suffix in prop::collection::vec(
            prop::sample::select(vec!["src", "kit", "x.ts", "A b", "日本"]), 0..4),
    ) {
        let story = Story::new("s", "S", [owned.clone()]).sharing(shared);
        let mut changed = normalize(&owned);
        for segment in suffix {
            changed.push('/');
            changed.push_str(segment);
        }
        prop_assert_eq!(classify(&changed, &story), Placement::Owned);
        prop_assert!(check([&changed], &story).is_clean());
        prop_assert!(gate([&changed], &story).clean);
    }

    #[test]
    fn arbitrary_text_never_panics_and_names_normalised_paths_once(
        text in any::<String>(),
        noisy in prop::collection::vec(prop_oneof![path(), any::<String>()], 0..8),
        owned in prop::collection::vec(path(), 1..4),
        other in prop::collection::vec(any::<String>(), 0..3),
    ) {
        let plan = StoryPlan {
            epic_id: "p".into(),
            epic: String::new(),
            stories: vec![
                Story::new("s", "S", owned).sharing(other.clone()),
                Story::new("t", "T", other),
            ],
        };
        let prose = format!("{text} {}", noisy.join(" "));
        let named = paths_named_in(&plan, &prose);
        for (i, path) in named.iter().enumerate() {
            prop_assert_eq!(&normalize(path), path);
            prop_assert!(!path.is_empty());
            prop_assert!(!named[..i].contains(path), "{path:?} named twice");
        }
        let tasks = [Task::new(text.clone(), prose.clone()), Task::new(prose, text).done()];
        let stray = stray_tasks(&plan, &plan.stories[0], &tasks);
        prop_assert!(stray.len() <= 1);
        for task in &stray {
            prop_assert!(!task.paths.is_empty());
        }
        for path in &noisy {
            if owner_of(&plan, path).is_some() {
                prop_assert!(is_safe(path), "{path:?} has an owner");
            }
            prop_assert_eq!(
                gate([path], &plan.stories[1]).clean,
                classify(path, &plan.stories[1]) == Placement::Owned
            );
        }
    }
}
