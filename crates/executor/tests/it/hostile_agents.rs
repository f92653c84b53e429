//! Whole runs with agents that break every rule they can reach: strays outside the perimeter, a
//! shared read-only edit, hanging, crashing, moving the epic branch, writing into the epic
//! worktree, deleting worktrees, deleting or skipping tests, `BLOCKED_ON`, unreadable verdicts,
//! background processes, and symbolic links out of the repository or into a sibling's paths
//! (committed by a coder, or in the base under a story's path). Each asserts what must happen;
//! none may reach the epic branch or lose a merged story.

use std::path::Path;
use std::time::{Duration, Instant};

use epic_branch::RunError;
use epic_events::Event;
use epic_process::sandbox::SandboxMode;
use epic_story_plan::ValidPlan;

use crate::epic_support::{
    EpicFixture, commit_on_main, epic_files, lock_as_if_adding, merges, plan, reason, statuses,
};
use crate::support::{Events, PATIENCE, wait_dead};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_outside_owned_are_put_back_and_the_story_merges() {
    let ep = EpicFixture::new();
    // Every coder turn writes outside `src/a`, and never reverts it when told.
    ep.hook(
        "a",
        "echo stray >> README.md; mkdir -p src/b; echo sneaked > src/b/sneak.txt\n",
    );
    let mut config = ep.config();
    config.max_rounds = 2;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::PerimeterRestored { story, paths } if story == "a" && paths.iter().any(|p| p == "README.md")
    )));
    assert_eq!(epic_files(&ep), ["README.md", "src/a/done.txt"]);
    assert_eq!(
        ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:README.md"]),
        "hello\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_read_only_change_in_a_task_fails_the_story() {
    let ep = EpicFixture::new();
    let mut plan = plan(&[("a", &[])]).into_plan();
    plan.stories[0].shared_read_only = vec!["README.md".into()];
    let plan = plan.validate().expect("valid");
    ep.hook("a", "echo changed >> README.md\n");
    let mut config = ep.config();
    config.max_rounds = 2;
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    assert!(
        reason(&outcome, 0).contains("shared read-only"),
        "{}",
        reason(&outcome, 0)
    );
    assert!(merges(&ep).is_empty());
    assert_eq!(epic_files(&ep), ["README.md"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_agent_is_killed_at_its_deadline_with_its_children() {
    let ep = EpicFixture::new();
    let pid_file = ep.fx.root.join("child.pid");
    // a forks a child and sleeps far longer than any test runs: only the kill at the deadline
    // ends its turn. The deadline also bounds every other turn (a's planner, b's), so it leaves
    // them ample time.
    ep.hook(
        "a",
        "sleep 1000 & echo $! > \"$ROOT/child.pid\"; sleep 1000\n",
    );
    let mut config = ep.config();
    config.turn_timeout = Duration::from_secs(10);
    // With the sandbox off: the agent writes pids as it sees them, which in the sandbox are its
    // PID namespace's, not the host's. What this holds (the process group and the tag killed
    // with the turn) is what contains processes without the sandbox; the sandbox's own case is
    // `sandbox::an_env_cleared_daemon_dies_with_the_turns_namespace`.
    config.sandbox = SandboxMode::Off;
    let outcome = tokio::time::timeout(
        config.turn_timeout + PATIENCE,
        ep.run(&plan(&[("a", &[]), ("b", &[])]), config, &Events::default()),
    )
    .await
    .expect("a's turn was stopped at its deadline, not left to sleep")
    .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("deadline") || why.contains("timed out"),
        "{why}"
    );
    let pid: u32 = std::fs::read_to_string(pid_file)
        .expect("the agent forked a child")
        .trim()
        .parse()
        .expect("pid");
    assert!(wait_dead(pid), "the forked child {pid} outlived the turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_crash_is_retried_and_any_other_fails_the_story() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; echo '429 Too Many Requests: rate limit' >&2; exit 1; fi\n",
    );
    ep.hook("b", "echo 'segmentation fault' >&2; exit 139\n");
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), ep.config(), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    assert!(
        reason(&outcome, 1).contains("segmentation fault"),
        "{}",
        reason(&outcome, 1)
    );
    assert!(
        events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TurnRetried { story, .. } if story == "a")),
        "a's transient failure was retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_moves_the_epic_branch_back_has_it_put_back_and_nothing_merged_is_lost() {
    let ep = EpicFixture::new();
    // b runs after a merged, and moves the epic branch back to main: a's merge is off it.
    ep.hook("b", "git update-ref refs/heads/epic/e main\n");
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let events = Events::default();
    // Sandbox off: in it, every ref but the coder's own story branch is read-only and the move
    // fails (cli: `sandbox.rs::no_turn_moves_a_ref_epic_relies_on`); this is what epic does
    // when the move lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert_eq!(merges(&ep), ["e: merge story a", "e: merge story b"]);
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::Note { story, message } if story == "b" && message.contains("something other than epic moved it")
        )),
        "a note says the branch was put back before b's merge"
    );

    // Moved back between runs, a rerun refuses it and says how to put it back; with the
    // record of the proven head removed, it still refuses to build on a branch that lost a
    // merged story, naming it.
    let head = ep.rev("epic/e");
    ep.fx
        .git_in(&ep.fx.repo, &["update-ref", "refs/heads/epic/e", "main"]);
    let error = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect_err("refused");
    assert!(matches!(error, RunError::EpicBranchMoved { .. }), "{error}");
    std::fs::remove_file(ep.dir().proven_head()).expect("remove proven.json");
    let error = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect_err("refused");
    let RunError::MergedStoriesMissing { stories, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(stories, &["a", "b"]);

    // Put back as the message says, the rerun has nothing left to do.
    ep.fx
        .git_in(&ep.fx.repo, &["update-ref", "refs/heads/epic/e", &head]);
    ep.fx
        .git_in(&ep.epic_worktree(), &["reset", "-q", "--hard"]);
    let rerun = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert_eq!(merges(&ep), ["e: merge story a", "e: merge story b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_points_the_epic_branch_at_its_own_work_has_it_put_back() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "mkdir -p src/a; echo unproven > src/a/wip.txt; git add -A; git commit -qm wip; git update-ref refs/heads/epic/e HEAD\n",
    );
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    // Sandbox off, where the move lands (in it, the epic branch is read-only to every turn).
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    // The branch is put back before a's merge: the wip commit reaches the epic branch only as
    // part of a's judged and merged work, never as its head.
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert_eq!(merges(&ep), ["e: merge story a", "e: merge story b"]);
    let first_parents = ep.fx.git_in(
        &ep.fx.repo,
        &["log", "--first-parent", "--format=%s", "epic/e"],
    );
    assert!(!first_parents.contains("wip"), "{first_parents}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_into_the_epic_worktree_stops_new_launches_naming_the_paths() {
    let ep = EpicFixture::new();
    ep.hook("a", "echo x > \"$ROOT/repo.worktrees/e/_epic/stray.txt\"\n");
    let mut config = ep.config();
    config.concurrency = 1;
    // With the sandbox off: in it, the epic worktree is read-only
    // (`sandbox::sandboxed_writes_outside_the_own_worktree_fail_and_the_story_merges`). This
    // holds what epic does when the write lands.
    config.sandbox = SandboxMode::Off;
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("uncommitted changes") && why.contains("stray.txt"),
        "{why}"
    );
    assert!(
        reason(&outcome, 1).contains("stray.txt"),
        "{}",
        reason(&outcome, 1)
    );
    assert!(merges(&ep).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_deletes_its_own_worktree_fails_and_a_rerun_recovers() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; rm -rf \"$EPIC_WORKTREE\"; echo gone; exit 0; fi\n",
    );
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    let rerun = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(&ep), ["e: merge story b", "e: merge story a"]);
    let list = ep
        .fx
        .git_in(&ep.fx.repo, &["worktree", "list", "--porcelain"]);
    assert!(!list.contains("prunable"), "{list}");
}

/// An agent deletes its own story branch (`git update-ref -d`): its worktree's HEAD names a
/// branch that is gone. The story fails; the rerun starts it over from the proven epic head
/// instead of failing the same way every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_deletes_its_story_branch_fails_and_a_rerun_starts_it_over() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; \
         git update-ref -d refs/heads/story/e/a; echo gone; exit 3; fi\n",
    );
    let plan = plan(&[("a", &[]), ("b", &[])]);
    // With the sandbox off: in it, deleting a branch reaches nothing (the turn's refs are its
    // own; epic refuses the deletion and fails the story). This holds the rerun's
    // recovery when the deletion lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan, config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    let events = Events::default();
    let rerun = ep.run(&plan, config, &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(&ep), ["e: merge story b", "e: merge story a"]);
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::StoryPrepared { story, how, .. } if story == "a" && how == "restarted"
        )),
        "a started over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_deleted_during_the_run_is_pruned_and_added_again() {
    let ep = EpicFixture::new();
    // First run: b fails, keeping its worktree and branch.
    ep.fail_b_once().await;
    // Second run: a, first, deletes b's worktree by hand after the run's one prune; it is still
    // registered when b resumes, so b's add fails, prunes and tries again.
    ep.hook("a", "rm -rf \"$ROOT/repo.worktrees/e/b\"\n");
    let mut config = ep.config();
    config.concurrency = 1;
    let both = plan(&[("a", &[]), ("b", &[])]);
    let rerun = ep
        .run(&both, config, &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(&ep), ["e: merge story a", "e: merge story b"]);
    let list = ep
        .fx
        .git_in(&ep.fx.repo, &["worktree", "list", "--porcelain"]);
    assert!(!list.contains("prunable"), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_whose_re_add_was_killed_half_way_is_added_again_not_worked_in() {
    let ep = EpicFixture::new();
    // b owns a file that is on main, so a partial checkout of b's worktree lacks a file of b's.
    std::fs::create_dir_all(ep.fx.repo.join("src/b")).expect("dir");
    std::fs::write(ep.fx.repo.join("src/b/keep.txt"), "keep\n").expect("write");
    ep.fx.git_in(&ep.fx.repo, &["add", "-A"]);
    ep.fx
        .git_in(&ep.fx.repo, &["commit", "-q", "-m", "b's file"]);
    // First run: b fails, keeping its worktree and branch.
    let (only_b, worktree) = ep.fail_b_once().await;
    // What a `git worktree add` of it killed during its checkout leaves: the add's lock, and
    // files not checked out yet.
    lock_as_if_adding(&worktree);
    std::fs::remove_file(worktree.join("src/b/keep.txt")).expect("remove");
    assert!(epic_git_ops::add_interrupted(&worktree));

    let rerun = ep
        .run(&only_b, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    // Not committed as deleted: the worktree was added again.
    assert!(
        epic_files(&ep).contains(&"src/b/keep.txt".to_owned()),
        "{:?}",
        epic_files(&ep)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_a_dead_run_left_unfinished_in_a_worktree_is_aborted_on_resume() {
    let ep = EpicFixture::new();
    // First run: b fails, keeping its worktree and branch.
    let (only_b, worktree) = ep.fail_b_once().await;
    // What a catch-up merge killed before its commit leaves: the merge state, its result staged.
    ep.fx.git_in(&ep.fx.repo, &["branch", "side", "main"]);
    let side = ep.fx.root.join("side");
    ep.fx.git_in(
        &ep.fx.repo,
        &["worktree", "add", "-q", &side.display().to_string(), "side"],
    );
    std::fs::write(side.join("side.txt"), "side\n").expect("write");
    ep.fx.git_in(&side, &["add", "-A"]);
    ep.fx.git_in(&side, &["commit", "-q", "-m", "side"]);
    ep.fx.git_in(
        &worktree,
        &["merge", "--no-ff", "--no-commit", "-q", "side"],
    );

    let events = Events::default();
    let rerun = ep.run(&only_b, ep.config(), &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert!(!epic_files(&ep).contains(&"side.txt".to_owned()));
    assert!(
        events
            .steps()
            .iter()
            .any(|event| format!("{event:?}").contains("aborted an unfinished merge")),
        "{:?}",
        events.steps()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_removes_a_siblings_worktree_loses_nothing() {
    let ep = EpicFixture::new();
    // a waits until b's worktree exists, removes it, and tells b; b waits to be told, then for
    // a to have failed, so that a's turn is the one that ends first (each gives up after 25 s,
    // inside its turn's 30 s deadline).
    ep.hook(
        "a",
        r#"if [ ! -f "$ROOT/removed" ]; then
  n=0; while [ ! -e "$ROOT/b-working" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
  git worktree remove --force "$ROOT/repo.worktrees/e/b"; touch "$ROOT/removed"
fi
"#,
    );
    ep.hook(
        "b",
        r#"if [ ! -f "$ROOT/b-working" ]; then
  touch "$ROOT/b-working"
  n=0; while [ ! -e "$ROOT/removed" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
  n=0; while ! grep -q '"kind":"story_failed".*"story":"a"' "$ROOT/repo/.git/epic/e/events.jsonl" && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
fi
"#,
    );
    // Fresh worktrees: a removes b's own worktree by its path.
    let mut config = ep.fresh_config();
    config.concurrency = 2;
    // With the sandbox off: in it, a sibling's worktree and the worktree registrations are
    // read-only (`sandbox::sandboxed_writes_outside_the_own_worktree_fail_and_the_story_merges`).
    // This holds what epic does when the removal lands.
    config.sandbox = SandboxMode::Off;
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let outcome = ep
        .run(&plan, config.clone(), &Events::default())
        .await
        .expect("run");
    // Removing b's worktree removed its registration, which the guard on epic's files puts back
    // and fails a for (guarded_files.rs); b lost its worktree.
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:failed"],
        "{:?}",
        outcome.report
    );
    assert!(
        reason(&outcome, 0).contains("worktrees/b"),
        "{:?}",
        outcome.report
    );
    let rerun = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    let mut merged = merges(&ep);
    merged.sort();
    assert_eq!(merged, ["e: merge story a", "e: merge story b"]);
}

/// A plan of story `a` owning `src/a`, which holds a test and a library file on `main`.
fn tested(ep: &EpicFixture, tests_change: bool) -> ValidPlan {
    commit_on_main(
        ep,
        &[
            ("src/a/tests/a_test.sh", "test 1 -eq 1\n"),
            ("src/a/checks/extra.sh", "true\n"),
            ("src/a/lib.rs", "pub fn f() {}\n"),
        ],
    );
    let mut plan = plan(&[("a", &[])]).into_plan();
    plan.stories[0].tests_change = tests_change;
    plan.validate().expect("valid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_or_skipping_tests_fails_the_story_unless_its_plan_allows_it() {
    for (hook, found) in [
        (
            "rm src/a/tests/a_test.sh\n",
            "src/a/tests/a_test.sh: test file deleted",
        ),
        (
            "printf '#[test]\\n#[ignore]\\nfn slow() {}\\n' >> src/a/lib.rs\n",
            "src/a/lib.rs: adds the skip marker `#[ignore`",
        ),
        (
            "printf 'xit(\"adds\", () => {});\\n' > src/a/cart.js\n",
            "src/a/cart.js: adds the skip marker `xit(`",
        ),
    ] {
        let ep = EpicFixture::new();
        let plan = tested(&ep, false);
        ep.hook("a", hook);
        let outcome = ep
            .run(&plan, ep.config(), &Events::default())
            .await
            .expect("run");
        assert_eq!(statuses(&outcome), ["a:failed"], "{hook}");
        let why = reason(&outcome, 0);
        assert!(why.contains(found) && why.contains("tests_change"), "{why}");
        assert!(merges(&ep).is_empty());

        // The same story with `tests_change: true` merges.
        let ep = EpicFixture::new();
        let plan = tested(&ep, true);
        ep.hook("a", hook);
        let outcome = ep
            .run(&plan, ep.config(), &Events::default())
            .await
            .expect("run");
        assert_eq!(
            statuses(&outcome),
            ["a:done"],
            "{hook}: {:?}",
            outcome.report
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_patterns_are_configurable() {
    let ep = EpicFixture::new();
    let plan = tested(&ep, false);
    ep.hook("a", "rm src/a/checks/extra.sh\n");
    // Not a test by the defaults: merges.
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);

    let ep = EpicFixture::new();
    let plan = tested(&ep, false);
    ep.hook("a", "rm src/a/checks/extra.sh\n");
    let mut config = ep.config();
    config.test_patterns = vec!["checks/".into()];
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    assert!(reason(&outcome, 0).contains("src/a/checks/extra.sh: test file deleted"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_on_fails_the_story_and_skips_its_dependents() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "echo 'I need a payments API'; echo 'BLOCKED_ON: payments::charge'; exit 0\n",
    );
    let plan = plan(&[("a", &[]), ("b", &["a"]), ("c", &[])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped", "c:done"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("missing dependency") && why.contains("payments::charge"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_verdicts_count_as_not_clean() {
    let ep = EpicFixture::new();
    // a's judge replies garbage; b's reviewer replies garbage but its judge clears it.
    ep.hook("a.judge", "echo '{\"clean\": tru'; exit 0\n");
    ep.hook(
        "b.judge",
        "if [ \"$EPIC_ROLE\" = reviewer ]; then echo 'LGTM!'; exit 0; fi\n",
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.reviewers = vec![ep.agent().into()];
    config.max_rounds = 2;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    assert!(
        reason(&outcome, 0).contains("judge not cleared"),
        "{}",
        reason(&outcome, 0)
    );
    // b's unreadable review was a red round, and did not block the task.
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::ReviewRound { story, clean: false, .. } if story == "b"
    )));
    assert_eq!(merges(&ep), ["e: merge story b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_process_left_behind_dies_with_the_turn() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "sleep 1000 > /dev/null 2>&1 & echo $! > \"$ROOT/bg.pid\"\n",
    );
    // The process outlives the turn's deadline: a turn that waited for it would end there.
    let mut config = ep.config();
    config.turn_timeout = Duration::from_mins(2);
    // With the sandbox off: the agent writes pids as it sees them, which in the sandbox are its
    // PID namespace's, not the host's. What this holds (the process group and the tag killed
    // with the turn) is what contains processes without the sandbox; the sandbox's own case is
    // `sandbox::an_env_cleared_daemon_dies_with_the_turns_namespace`.
    config.sandbox = SandboxMode::Off;
    let deadline = config.turn_timeout;
    let began = Instant::now();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    assert!(began.elapsed() < deadline, "the turn did not wait for it");
    let pid: u32 = std::fs::read_to_string(ep.fx.root.join("bg.pid"))
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(
        wait_dead(pid),
        "the background process {pid} outlived its turn"
    );
}

/// A daemon (`setsid`: a new session, out of the turn's process group, as a dev server started
/// in the background does) still dies with the turn: every process of a turn carries its tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_that_left_the_process_group_dies_with_the_turn() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "setsid sh -c 'echo $$ > \"$ROOT/daemon.tmp\"; mv \"$ROOT/daemon.tmp\" \"$ROOT/daemon.pid\"; \
         exec sleep 1000' > /dev/null 2>&1 < /dev/null &\n\
         while [ ! -s \"$ROOT/daemon.pid\" ]; do sleep 0.05; done\n",
    );
    let mut config = ep.config();
    // With the sandbox off: the agent writes pids as it sees them, which in the sandbox are its
    // PID namespace's, not the host's. What this holds (the process group and the tag killed
    // with the turn) is what contains processes without the sandbox; the sandbox's own case is
    // `sandbox::an_env_cleared_daemon_dies_with_the_turns_namespace`.
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", outcome.report);
    let pid: u32 = std::fs::read_to_string(ep.fx.root.join("daemon.pid"))
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(wait_dead(pid), "the daemon {pid} outlived its turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_a_symlink_in_an_owned_path_counts_for_its_target() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/b/file", "b's\n")]);
    std::fs::create_dir_all(ep.fx.repo.join("src/a")).expect("mkdir");
    std::os::unix::fs::symlink("../b/file", ep.fx.repo.join("src/a/link")).expect("symlink");
    ep.fx.git_in(&ep.fx.repo, &["add", "-A"]);
    ep.fx
        .git_in(&ep.fx.repo, &["commit", "-q", "-m", "a link into b"]);
    // a owns src/a and writes through src/a/link: src/b/file is what changes.
    ep.hook("a", "echo hijacked > src/a/link\n");
    let mut config = ep.config();
    config.max_rounds = 1;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("run");
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::PerimeterRestored { story, paths } if story == "a" && paths == &["src/b/file"]
    )));
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert_eq!(
        ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:src/b/file"]),
        "b's\n",
        "the change through the link never reached the epic branch"
    );
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["cat-file", "-p", "epic/e:src/a/link"]),
        "../b/file"
    );
}

/// The symbolic links (mode `120000`) of the epic branch's tree.
fn epic_symlinks(ep: &EpicFixture) -> Vec<String> {
    ep.fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "epic/e"])
        .lines()
        .filter(|line| line.starts_with("120000"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_symlinks_out_of_the_repository_into_git_or_into_a_sibling_fail_the_story() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/d/file", "d's\n")]);
    std::fs::write(ep.fx.root.join("outside.txt"), "outside\n").expect("write");
    // Each coder commits a link of its own: to /etc/passwd, to a file beside the repository,
    // into story d's owned paths, and into `.git`.
    for (story, link, target) in [
        ("a", "src/a/passwd", "/etc/passwd"),
        ("b", "src/b/outside", "../../../outside.txt"),
        ("c", "src/c/sibling", "../d/file"),
        ("g", "src/g/hooks", "../../.git/hooks"),
    ] {
        ep.hook(
            story,
            &format!(
                "mkdir -p src/{story}; ln -sfn {target} {link}; git add -A; git commit -qm 'a link'\n"
            ),
        );
    }
    let outcome = ep
        .run(
            &plan(&[("a", &[]), ("b", &[]), ("c", &[]), ("d", &[]), ("g", &[])]),
            ep.config(),
            &Events::default(),
        )
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:failed", "c:failed", "d:done", "g:failed"],
        "{:?}",
        outcome.report
    );
    for (index, link, why) in [
        (0, "src/a/passwd -> /etc/passwd", "absolute"),
        (
            1,
            "src/b/outside -> ../../../outside.txt",
            "above the repository",
        ),
        (2, "src/c/sibling -> ../d/file", "story `d`"),
        (4, "src/g/hooks -> ../../.git/hooks", "`.git`"),
    ] {
        let reason = reason(&outcome, index);
        assert!(reason.contains("perimeter"), "{reason}");
        assert!(reason.contains(link), "{reason}");
        assert!(reason.contains("symbolic link"), "{reason}");
        assert!(reason.contains(why), "{reason}");
    }
    assert!(epic_symlinks(&ep).is_empty(), "{:?}", epic_symlinks(&ep));
    assert_eq!(
        epic_files(&ep),
        ["README.md", "src/d/done.txt", "src/d/file"]
    );
    assert_eq!(
        std::fs::read_to_string(ep.fx.root.join("outside.txt")).expect("read"),
        "outside\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_path_under_a_symlink_in_the_base_tree_is_refused_before_any_agent_runs() {
    let ep = EpicFixture::new();
    // `src` on main is a link to a directory outside the repository: story a owns `src/a`, so
    // its coder would write `src/a/done.txt` out there.
    let outside = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(outside.path(), ep.fx.repo.join("src")).expect("symlink");
    ep.fx.git_in(&ep.fx.repo, &["add", "-A"]);
    ep.fx
        .git_in(&ep.fx.repo, &["commit", "-q", "-m", "src is a link"]);
    let error = ep
        .run(&plan(&[("a", &[])]), ep.config(), &Events::default())
        .await
        .expect_err("refused before any story");
    let RunError::SymlinkedPath {
        story,
        path,
        shared,
        link,
        target,
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(
        (story.as_str(), path.as_str(), *shared, link.as_str()),
        ("a", "src/a", false, "src")
    );
    assert_eq!(Path::new(target), outside.path());
    let message = error.to_string();
    for part in [
        "story `a`",
        "`src/a`",
        "`src`",
        outside.path().to_str().expect("utf-8"),
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert!(
        !ep.fx.root.join("agents.log").exists(),
        "no agent ran before the refusal"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("read").count(),
        0,
        "nothing was written through the link"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_committed_in_a_judge_feedback_turn_fails_the_story() {
    let ep = EpicFixture::new();
    // The judge asks for more once; the coder's answer commits a link to /etc/passwd, after
    // the task loop's gates.
    ep.hook(
        "a.judge",
        r#"if [ ! -f "$ROOT/judged-$EPIC_STORY" ]; then
  touch "$ROOT/judged-$EPIC_STORY"
  echo '{"clean":false,"issues":[{"severity":"major","title":"more","description":"do more"}]}'
  exit 0
fi
"#,
    );
    ep.hook(
        "a",
        r#"if [ "$EPIC_TASK" = "address judge feedback" ]; then ln -s /etc/passwd src/a/passwd; git add -A; git commit -qm 'a link'; fi
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("src/a/passwd -> /etc/passwd (a symbolic link: its target is absolute"),
        "{why}"
    );
    assert!(why.contains("remove or repoint it"), "{why}");
    assert!(merges(&ep).is_empty());
    assert!(epic_symlinks(&ep).is_empty());
}

/// An agent points its worktree's `.git` at the epic worktree's administrative directory: git
/// there then acts on the epic worktree. The story fails (its worktree reads as on the epic
/// branch) and nothing reaches the epic branch; the rerun points the `.git` back at the story's
/// own registration and merges the story, instead of failing the same way every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_whose_git_file_an_agent_redirected_is_relinked_on_the_rerun() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; \
         echo \"gitdir: $(git rev-parse --git-common-dir)/worktrees/_epic\" > \"$EPIC_WORKTREE/.git\"; fi\n",
    );
    let plan = plan(&[("a", &[]), ("b", &[])]);
    // Fresh worktrees: the rerun finds a's redirected link where the run left it (a warm run
    // moves a failed story's slot out of the rotation, and the move rewrites the link).
    let outcome = ep
        .run(&plan, ep.fresh_config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    assert_eq!(merges(&ep), ["e: merge story b"]);
    let events = Events::default();
    let rerun = ep
        .run(&plan, ep.fresh_config(), &events)
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(&ep), ["e: merge story b", "e: merge story a"]);
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::Note { story, message } if story == "a" && message.contains("pointed it back")
        )),
        "the rerun says what it repaired"
    );
}

/// The same redirection made once a sibling has merged: the epic worktree's index then holds the
/// sibling's files, which the story's worktree lacks. Epic runs no git in a worktree linked to
/// another one's registration (it would have staged the sibling's files as deleted in the epic
/// worktree, and the rerun would refuse the epic worktree as dirty): the story fails saying
/// so, the epic worktree stays clean, and the rerun relinks it and merges the story.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_file_redirected_after_a_sibling_merged_leaves_the_epic_worktree_alone() {
    let ep = EpicFixture::new();
    // a waits (a turn of its own, so it is not rushed) for b's merge, then redirects.
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; \
         n=0; while ! git log --format=%s epic/e | grep -q 'merge story b' && [ $n -lt 2000 ]; do sleep 0.05; n=$((n+1)); done; \
         echo \"gitdir: $(git rev-parse --git-common-dir)/worktrees/_epic\" > \"$EPIC_WORKTREE/.git\"; fi\n",
    );
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let mut config = ep.config();
    // Room for a loaded machine: a's turn lasts through b's whole story.
    config.turn_timeout = Duration::from_mins(2);
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    let why = reason(&outcome, 0);
    assert!(
        why.contains("is linked to the worktree") && why.contains("_epic"),
        "{why}"
    );
    assert_eq!(merges(&ep), ["e: merge story b"]);
    assert_eq!(
        ep.fx
            .git_in(&ep.epic_worktree(), &["status", "--porcelain"]),
        "",
        "the epic worktree was not touched"
    );
    let events = Events::default();
    let rerun = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(&ep), ["e: merge story b", "e: merge story a"]);
}
