//! The epic directory layout, and ids that try to leave it.

use std::path::{Component, Path};

use epic_state_store::{EpicDir, IdKind, UnsafeId, save};

use crate::support::story;

#[test]
fn paths_follow_the_contract() {
    let dir = EpicDir::new("/src/shop/.git", "checkout").unwrap();
    let root = Path::new("/src/shop/.git/epic/checkout");
    assert_eq!(dir.epic_id(), "checkout");
    assert_eq!(dir.root(), root);
    assert_eq!(dir.stories_dir(), root.join("stories"));
    assert_eq!(
        dir.story_state("cart-api").unwrap(),
        root.join("stories/cart-api.json")
    );
    assert_eq!(
        dir.story_plan("cart-api").unwrap(),
        root.join("stories/cart-api.plan.md")
    );
    assert_eq!(
        dir.rejected_patch("cart-api").unwrap(),
        root.join("stories/cart-api.rejected.patch")
    );
    assert_eq!(
        dir.story_revisions("cart-api").unwrap(),
        root.join("revisions/cart-api.json")
    );
    assert_eq!(dir.transcripts_dir(), root.join("transcripts"));
    assert_eq!(
        dir.transcripts("cart-api").unwrap(),
        root.join("transcripts/cart-api")
    );
    assert_eq!(dir.events(), root.join("events.jsonl"));
    assert_eq!(dir.board(), root.join("board.md"));
    assert_eq!(dir.report_json(), root.join("report.json"));
    assert_eq!(dir.report_md(), root.join("report.md"));
    assert_eq!(dir.lock(), root.join("lock"));
    assert_eq!(dir.merge_journal(), root.join("merging.json"));
    assert_eq!(dir.proven_head(), root.join("proven.json"));
}

const HOSTILE: &[&str] = &[
    "",
    ".",
    "..",
    "../x",
    "../../hooks/pre-commit",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "..\\x",
    "C:",
    "c:\\windows",
    "a\0b",
    "a\nb",
    "\u{7f}",
];

#[test]
fn hostile_ids_are_rejected_everywhere() {
    let dir = EpicDir::new("/repo/.git", "checkout").unwrap();
    for &id in HOSTILE {
        assert!(
            EpicDir::new("/repo/.git", id).is_err(),
            "epic id {id:?} accepted"
        );
        assert!(dir.story_state(id).is_err(), "story id {id:?} accepted");
        assert!(dir.story_plan(id).is_err(), "story id {id:?} accepted");
        assert!(dir.story_revisions(id).is_err(), "story id {id:?} accepted");
        assert!(dir.transcripts(id).is_err(), "story id {id:?} accepted");
    }
}

#[test]
fn errors_say_which_id_and_why() {
    let dir = EpicDir::new("/repo/.git", "checkout").unwrap();
    assert_eq!(
        dir.story_state("").unwrap_err(),
        UnsafeId::Empty {
            kind: IdKind::Story
        }
    );
    assert_eq!(
        EpicDir::new("/repo/.git", "..").unwrap_err().to_string(),
        "epic id `..` names a directory, not a file in the epic's directory"
    );
    assert_eq!(
        dir.story_state("../x").unwrap_err().to_string(),
        "story id `../x` contains a path separator or drive colon"
    );
    assert_eq!(
        dir.story_state("a\nb").unwrap_err().to_string(),
        "story id \"a\\nb\" contains a control character"
    );
}

#[test]
fn accepted_ids_stay_one_component_inside_the_epic_dir() {
    let dir = EpicDir::new("/repo/.git", "checkout").unwrap();
    let odd = [
        "cart-api",
        "a..b",
        "...",
        ".hidden",
        "x.json",
        "ünïcode",
        "a b",
    ];
    for id in odd.iter().chain(HOSTILE) {
        for path in [
            dir.story_state(id),
            dir.story_plan(id),
            dir.rejected_patch(id),
            dir.story_revisions(id),
            dir.transcripts(id),
        ]
        .into_iter()
        .flatten()
        {
            let rest = path.strip_prefix(dir.root()).unwrap();
            let components: Vec<_> = rest.components().collect();
            assert_eq!(components.len(), 2, "{id:?} gives {}", path.display());
            assert!(
                components
                    .iter()
                    .all(|component| matches!(component, Component::Normal(_))),
                "{id:?} gives {}",
                path.display()
            );
        }
    }
}

#[test]
fn listing_stories_and_epics() {
    let git = tempfile::tempdir().unwrap();
    assert_eq!(EpicDir::epic_ids(git.path()).unwrap(), Vec::<String>::new());
    let checkout = EpicDir::new(git.path(), "checkout").unwrap();
    assert_eq!(checkout.story_ids().unwrap(), Vec::<String>::new());

    for id in ["cart-ui", "cart-api"] {
        save(
            checkout.story_state(id).unwrap(),
            &story(id, epic_state_store::StoryStage::Started),
        )
        .unwrap();
        std::fs::write(checkout.story_plan(id).unwrap(), "- [ ] task\n").unwrap();
    }
    let search = EpicDir::new(git.path(), "search").unwrap();
    std::fs::create_dir_all(search.root()).unwrap();
    std::fs::write(git.path().join("epic/not-an-epic.txt"), "").unwrap();

    assert_eq!(checkout.story_ids().unwrap(), ["cart-api", "cart-ui"]);
    assert_eq!(search.story_ids().unwrap(), Vec::<String>::new());
    assert_eq!(
        EpicDir::epic_ids(git.path()).unwrap(),
        ["checkout", "search"]
    );
}
