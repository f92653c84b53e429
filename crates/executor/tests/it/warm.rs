//! Warm worktrees (`--worktrees warm`, the default): stories run in slot worktrees
//! `repo.worktrees/e/_slot-<i>` switched from story to story, proven clean before each; a failed
//! story's slot leaves the rotation; `--worktrees fresh` keeps a worktree per story; the ignored
//! files `.worktreeinclude` names are copied into each new worktree.

use std::path::{Path, PathBuf};

use epic_events::Event;
use epic_executor::WorktreeMode;
use epic_state_store::StoryState;

use crate::epic_support::{EpicFixture, merges, plan, statuses};
use crate::support::Events;

/// The slot worktree `i` of epic `e`.
fn slot(ep: &EpicFixture, i: usize) -> PathBuf {
    ep.fx.root.join(format!("repo.worktrees/e/_slot-{i}"))
}

/// Commits `files` (path, contents) on `main`.
fn commit_on_main(ep: &EpicFixture, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = ep.fx.repo.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }
    ep.fx.git_in(&ep.fx.repo, &["add", "-A"]);
    ep.fx
        .git_in(&ep.fx.repo, &["commit", "-q", "-m", "base files"]);
}

/// The problems the agents' checks wrote to `$ROOT/problems`, if any.
fn problems(ep: &EpicFixture) -> String {
    std::fs::read_to_string(ep.fx.root.join("problems")).unwrap_or_default()
}

/// A hook line: `check` must hold, else `story: what` goes to `$ROOT/problems`.
fn check(story: &str, check: &str, what: &str) -> String {
    format!("{check} || echo \"{story}: {what}\" >> \"$ROOT/problems\"\n")
}

/// The worktree each story was prepared in, from its `story_prepared` event.
fn prepared_in(events: &Events, id: &str) -> Vec<(String, String)> {
    events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::StoryPrepared {
                story,
                worktree,
                how,
                ..
            } if story == id => Some((worktree, how)),
            _ => None,
        })
        .collect()
}

fn state(ep: &EpicFixture, id: &str) -> StoryState {
    epic_state_store::load::<StoryState>(ep.dir().story_state(id).expect("path"))
        .expect("readable")
        .expect("saved")
}

/// Three stories one after another in one slot: the second deletes, renames and adds files of
/// the base and leaves what the first left; each starts in the same slot, on its own branch at
/// the epic head, with nothing of the previous story's but its ignored files (the setup's log
/// and a build cache grow story after story).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_slot_carries_ignored_caches_and_nothing_else_from_story_to_story() {
    let ep = EpicFixture::new();
    commit_on_main(
        &ep,
        &[
            (".gitignore", "target/\n"),
            ("src/b/old.txt", "old\n"),
            ("src/b/move-me.txt", "move me\n"),
        ],
    );
    let mut hooks =
        String::from("echo \"$EPIC_STORY $EPIC_SLOT $EPIC_WORKTREE\" >> \"$ROOT/where.log\"\n");
    hooks.push_str(&check(
        "$EPIC_STORY",
        "test -z \"$(git status --porcelain)\"",
        "not clean at its start",
    ));
    ep.hook(
        "a",
        &format!(
            "{hooks}mkdir -p target && echo built > target/cache.bin\nmkdir -p src/a && echo left > src/a/left.txt\n"
        ),
    );
    ep.hook(
        "b",
        &format!(
            "{hooks}{}git rm -q src/b/old.txt && git mv src/b/move-me.txt src/b/moved.txt && echo new > src/b/new.txt\n",
            check("b", "test -f target/cache.bin", "a's build cache is gone")
        ),
    );
    ep.hook(
        "c",
        &format!(
            "{hooks}{}{}{}{}{}",
            check("c", "test -f target/cache.bin", "the build cache is gone"),
            check("c", "test ! -e src/b/old.txt", "b's deletion is not there"),
            check(
                "c",
                "test ! -e src/b/move-me.txt",
                "b's rename left the old name"
            ),
            check(
                "c",
                "test -f src/b/moved.txt && test -f src/b/new.txt",
                "b's files are missing"
            ),
            check("c", "test -f src/a/left.txt", "a's file is missing"),
        ),
    );
    let mut config = ep.config();
    config.concurrency = 1;
    config.setup = vec!["mkdir -p target && echo \"$EPIC_STORY\" >> target/setup.log".to_owned()];
    let plan = plan(&[("a", &[]), ("b", &["a"]), ("c", &["b"])]);
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    assert_eq!(problems(&ep), "");
    let slot0 = slot(&ep, 0);
    let log = std::fs::read_to_string(ep.fx.root.join("where.log")).expect("log");
    for story in ["a", "b", "c"] {
        assert!(
            log.contains(&format!("{story} 0 {}", slot0.display())),
            "{story} ran in slot 0: {log}"
        );
        assert_eq!(
            prepared_in(&events, story)[0].0,
            slot0.display().to_string()
        );
    }
    // The setup ran in every story and its ignored log stayed; the slot stays for the next run.
    assert_eq!(
        std::fs::read_to_string(slot0.join("target/setup.log")).expect("setup log"),
        "a\nb\nc\n"
    );
    assert!(slot0.join(".git").exists());
    for id in ["a", "b", "c"] {
        assert!(!ep.fx.root.join(format!("repo.worktrees/e/{id}")).exists());
    }
    let switched = events
        .steps()
        .into_iter()
        .filter(|event| matches!(event, Event::SlotSwitched { slot: 0, .. }))
        .count();
    assert_eq!(switched, 2, "b and c switched the slot a's add made");
    // Every switch is a checkout of only what differs: the epic tree is what the stories made.
    let tree = ep
        .fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"]);
    assert!(!tree.contains("target/"), "{tree}");
    assert!(
        tree.contains("src/b/moved.txt") && !tree.contains("src/b/old.txt"),
        "{tree}"
    );
}

/// Whatever a slot holds when the next story comes (a previous story's edits and untracked
/// files, a deleted tracked file, a merge in progress, a lock file of a git killed there, a
/// switch killed after its checkout) is gone before the story starts; its ignored files stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dirty_slot_is_cleaned_and_proven_before_the_next_story() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[(".gitignore", "target/\n")]);
    let mut config = ep.config();
    config.concurrency = 1;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config.clone(), &Events::default())
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    let slot0 = slot(&ep, 0);
    // What a killed run, an agent's leftover process or a user may leave in an idle slot.
    std::fs::write(slot0.join("stray.txt"), "stray\n").expect("stray");
    std::fs::create_dir_all(slot0.join("nested")).expect("nested");
    std::fs::write(slot0.join("nested/deep.txt"), "deep\n").expect("deep");
    std::fs::write(slot0.join("README.md"), "edited\n").expect("edit");
    std::fs::remove_file(slot0.join("src/a/done.txt")).expect("delete");
    std::fs::create_dir_all(slot0.join("target")).expect("target");
    std::fs::write(slot0.join("target/keep.bin"), "cache\n").expect("cache");
    // A switch to b's branch killed after its checkout: b has no state, its branch is there.
    ep.fx.git_in(&slot0, &["checkout", "-q", "-b", "story/e/b"]);
    let admin = ep.fx.repo.join(".git/worktrees/_slot-0");
    std::fs::write(admin.join("MERGE_HEAD"), format!("{}\n", ep.rev("main"))).expect("merge head");
    std::fs::write(admin.join("index.lock"), "").expect("index lock");
    ep.hook(
        "b",
        &format!(
            "{}{}{}{}{}",
            check("b", "test -z \"$(git status --porcelain)\"", "not clean"),
            check(
                "b",
                "test ! -e stray.txt && test ! -e nested",
                "untracked files stayed"
            ),
            check(
                "b",
                "test \"$(cat README.md)\" = hello",
                "the tracked edit stayed"
            ),
            check(
                "b",
                "test -f src/a/done.txt",
                "the deleted file is still gone"
            ),
            check("b", "test -f target/keep.bin", "the ignored cache is gone"),
        ),
    );
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("rerun");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    assert_eq!(problems(&ep), "");
    assert_eq!(prepared_in(&events, "b")[0].0, slot0.display().to_string());
    assert!(!admin.join("MERGE_HEAD").exists());
    let tree = ep
        .fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"]);
    assert!(
        !tree.contains("stray.txt") && !tree.contains("nested"),
        "{tree}"
    );
    assert_eq!(
        ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:README.md"]),
        "hello\n"
    );
}

/// A failed story's slot leaves the rotation: moved to the story's own place, where its state
/// says it is, and the next story gets a new slot worktree; the rerun resumes the failed story
/// there, as with fresh worktrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_storys_slot_leaves_the_rotation_until_its_rerun() {
    let ep = EpicFixture::new();
    ep.hook(
        "b",
        "echo wip > b-wip.txt\nif [ ! -f \"$ROOT/b-once\" ]; then touch \"$ROOT/b-once\"; exit 1; fi\n",
    );
    ep.hook(
        "c",
        &check("c", "test ! -e b-wip.txt", "b's work is in c's slot"),
    );
    let mut config = ep.config();
    config.concurrency = 1;
    let plan = plan(&[("a", &[]), ("b", &[]), ("c", &[])]);
    let events = Events::default();
    let outcome = ep.run(&plan, config.clone(), &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed", "c:done"]);
    assert_eq!(problems(&ep), "");
    let own = ep.fx.root.join("repo.worktrees/e/b");
    assert!(own.join(".git").exists());
    assert_eq!(
        ep.fx
            .git_in(&own, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/b"
    );
    assert_eq!(state(&ep, "b").worktree, own);
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::SlotRetired { story, worktree, .. } if story == "b" && Path::new(worktree) == own
    )));
    // c got slot 0 anew: added, not switched.
    assert_eq!(
        prepared_in(&events, "c")[0].0,
        slot(&ep, 0).display().to_string()
    );

    let events = Events::default();
    let rerun = ep.run(&plan, config, &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(
        prepared_in(&events, "b"),
        [(own.display().to_string(), "resumed".to_owned())]
    );
    assert_eq!(merges(&ep).len(), 3);
    // Merged, it is removed as a fresh worktree is; the slot stays.
    assert!(!own.exists());
    assert!(slot(&ep, 0).join(".git").exists());
}

/// With `--keep-worktrees`, a merged story's slot stays as that story's kept worktree, at its
/// own place, and a new slot takes its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_worktree_leaves_the_rotation() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.concurrency = 1;
    config.keep_worktrees = true;
    let outcome = ep
        .run(
            &plan(&[("a", &[]), ("b", &["a"])]),
            config,
            &Events::default(),
        )
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    for id in ["a", "b"] {
        let kept = ep.fx.root.join(format!("repo.worktrees/e/{id}"));
        assert!(
            kept.join(format!("src/{id}/done.txt")).exists(),
            "{id} kept"
        );
        assert_eq!(
            ep.fx
                .git_in(&kept, &["rev-parse", "--abbrev-ref", "HEAD"])
                .trim(),
            format!("story/e/{id}")
        );
    }
    assert!(!slot(&ep, 0).exists());
}

/// `--worktrees fresh`: a worktree per story at its own place, removed once merged; no slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_worktrees_are_one_per_story_as_before() {
    let ep = EpicFixture::new();
    ep.hook("b", "echo \"$EPIC_WORKTREE\" > \"$ROOT/b-worktree\"\n");
    let mut config = ep.fresh_config();
    config.concurrency = 1;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &["a"])]), config, &events)
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    let own = ep.fx.root.join("repo.worktrees/e/b");
    assert_eq!(
        std::fs::read_to_string(ep.fx.root.join("b-worktree")).expect("b ran"),
        format!("{}\n", own.display())
    );
    assert_eq!(prepared_in(&events, "b")[0].0, own.display().to_string());
    assert!(!slot(&ep, 0).exists() && !own.exists());
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::SlotSwitched { .. }))
    );
}

/// `.worktreeinclude` names ignored files of the main checkout that each new worktree gets, slot
/// or fresh: ignored ones it matches, never tracked ones or ignored ones it does not name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worktreeinclude_files_are_copied_into_each_new_worktree() {
    for mode in [WorktreeMode::Warm, WorktreeMode::Fresh] {
        let ep = EpicFixture::new();
        commit_on_main(
            &ep,
            &[
                (".gitignore", ".env\nsecrets/\n*.local\ntarget/\n"),
                (".worktreeinclude", ".env\nsecrets/\n"),
            ],
        );
        let main = &ep.fx.repo;
        std::fs::write(main.join(".env"), "KEY=1\n").expect(".env");
        std::fs::create_dir_all(main.join("secrets/deep")).expect("secrets");
        std::fs::write(main.join("secrets/deep/key.pem"), "pem\n").expect("key");
        std::fs::write(main.join("other.local"), "not named\n").expect("local");
        std::fs::create_dir_all(main.join("target")).expect("target");
        std::fs::write(main.join("target/big.bin"), "not named\n").expect("target");
        let body = format!(
            "{}{}{}",
            check(
                "$EPIC_STORY",
                "test \"$(cat .env)\" = KEY=1",
                ".env not copied"
            ),
            check(
                "$EPIC_STORY",
                "test -f secrets/deep/key.pem",
                "secrets/ not copied"
            ),
            check(
                "$EPIC_STORY",
                "test ! -e other.local && test ! -e target",
                "unnamed files copied"
            ),
        );
        ep.hook("a", &body);
        ep.hook("b", &body);
        let mut config = ep.config();
        config.worktrees = mode;
        config.concurrency = 1;
        let events = Events::default();
        let outcome = ep
            .run(&plan(&[("a", &[]), ("b", &["a"])]), config, &events)
            .await
            .expect("run");
        assert!(outcome.all_done(), "{mode:?}: {:?}", outcome.report);
        assert_eq!(problems(&ep), "", "{mode:?}");
        let seeded: Vec<Vec<String>> = events
            .steps()
            .into_iter()
            .filter_map(|event| match event {
                Event::WorktreeSeeded { paths, .. } => Some(paths),
                _ => None,
            })
            .collect();
        // Fresh: both new worktrees. Warm: the slot's add; its switch finds them there.
        let expected = [".env".to_owned(), "secrets/deep/key.pem".to_owned()];
        let want = if mode == WorktreeMode::Fresh { 2 } else { 1 };
        assert_eq!(seeded, vec![expected.to_vec(); want], "{mode:?}");
        let tree = ep
            .fx
            .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"]);
        assert!(
            !tree.contains(".env") && !tree.contains("secrets"),
            "{tree}"
        );
    }
}

/// A slot whose `.git` something pointed at the epic worktree's registration (a process a story
/// left behind) is pointed back before its switch: the forced checkout never acts on the epic
/// worktree, and the next story works in its slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_whose_git_file_was_redirected_is_relinked_before_its_switch() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.concurrency = 1;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config.clone(), &Events::default())
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    let slot0 = slot(&ep, 0);
    let epic_admin = ep.fx.repo.join(".git/worktrees/_epic");
    std::fs::write(
        slot0.join(".git"),
        format!("gitdir: {}\n", epic_admin.display()),
    )
    .expect("redirect");
    let epic_head = ep.rev("epic/e");
    ep.hook(
        "b",
        &check(
            "b",
            "test \"$(git rev-parse --abbrev-ref HEAD)\" = story/e/b",
            "not on its branch",
        ),
    );
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &Events::default())
        .await
        .expect("rerun");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    assert_eq!(problems(&ep), "");
    assert_eq!(merges(&ep).len(), 2);
    // The epic worktree stayed on the epic branch, which moved only by b's merge.
    let epic = ep.epic_worktree();
    assert_eq!(
        ep.fx
            .git_in(&epic, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "epic/e"
    );
    assert_eq!(ep.rev("epic/e^1"), epic_head);
    assert!(
        std::fs::read_to_string(slot0.join(".git"))
            .expect(".git")
            .contains("worktrees/_slot-0")
    );
}
