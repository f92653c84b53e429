//! Whole runs where things go wrong: a failure skips exactly its transitive dependents,
//! fail-fast, gates that turn red only on the merged tree, a merge conflict, strays put back, a
//! shared read-only change, a red baseline, a held lock, and an interrupted run that a rerun
//! finishes.

use std::time::Duration;

use epic_branch::RunError;
use epic_events::Event;
use epic_state_store::{EpicLock, StoryStage, StoryState};

use crate::epic_support::{
    EpicFixture, cancelled_once, diamond, lock_as_if_adding, plan, statuses,
};
use crate::support::Events;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_skips_exactly_its_transitive_dependents() {
    let ep = EpicFixture::new();
    let plan = plan(&[
        ("a", &[]),
        ("b", &[]),
        ("c", &["a"]),
        ("d", &["b", "c"]),
        ("e", &[]),
    ]);
    ep.hook("a", "echo 'broken' >&2; exit 1\n");
    let events = Events::default();
    let outcome = ep.run(&plan, ep.config(), &events).await.expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done", "c:skipped", "d:skipped", "e:done"],
        "{:#?}",
        outcome.report.stories
    );
    let report = &outcome.report;
    assert_eq!(report.stories[2].reason.as_deref(), Some("blocked by a"));
    assert_eq!(report.stories[3].reason.as_deref(), Some("blocked by a"));
    assert!(
        report.stories[0]
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains("coder turn")),
        "{:?}",
        report.stories[0].reason
    );
    let state: StoryState = epic_state_store::load(ep.dir().story_state("a").expect("path"))
        .expect("load")
        .expect("state");
    assert_eq!(state.status, StoryStage::Failed);
    assert!(!outcome.all_done());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_fast_cancels_the_running_stories_and_still_reports() {
    let ep = EpicFixture::new();
    // a fails once b's coder runs; b would sleep far beyond its turn's deadline.
    ep.hook(
        "a",
        r#"n=0; while [ ! -e "$ROOT/b-started" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
exit 1
"#,
    );
    ep.hook("b", "touch \"$ROOT/b-started\"; sleep 1000\n");
    let mut config = ep.config();
    config.fail_fast = true;
    config.concurrency = 2;
    config.turn_timeout = Duration::from_mins(2);
    let deadline = config.turn_timeout;
    let events = Events::default();
    let began = std::time::Instant::now();
    let outcome = ep.run(&diamond(), config, &events).await.expect("run");
    assert!(began.elapsed() < deadline, "b was cancelled, not timed out");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:skipped", "c:skipped", "d:skipped"]
    );
    assert!(
        outcome.report.stories[1]
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains("fail-fast")),
        "{:?}",
        outcome.report.stories[1]
    );
    assert!(ep.dir().report_json().is_file());
    // b's state stays resumable.
    let state: StoryState = epic_state_store::load(ep.dir().story_state("b").expect("path"))
        .expect("load")
        .expect("state");
    assert_eq!(state.status, StoryStage::Started);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_red_only_on_the_merged_tree_undo_the_merge() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let mut config = ep.config();
    config.concurrency = 2;
    config.gates = vec!["test $(ls src 2>/dev/null | wc -l) -lt 2".into()];
    // Today's failure: no merge revision (`merge_revisions.rs` has them).
    config.merge_revisions = 0;
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    let statuses = statuses(&outcome);
    assert!(
        statuses == ["a:done", "b:failed"] || statuses == ["a:failed", "b:done"],
        "{statuses:?}"
    );
    let failed = outcome
        .report
        .stories
        .iter()
        .find(|story| story.status == epic_report::OutcomeStatus::Failed)
        .expect("one failed");
    assert!(
        failed
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains("merge undone")),
        "{failed:?}"
    );
    // The epic head is the one good merge, and the epic worktree is clean.
    let log = ep.epic_log();
    assert_eq!(
        log.iter()
            .filter(|line| line.starts_with("e: merge story"))
            .count(),
        1,
        "{log:?}"
    );
    assert!(
        ep.fx
            .git_in(&ep.epic_worktree(), &["status", "--porcelain"])
            .is_empty()
    );
    // Merged alone, its merge is rolled back; ready together with the other, the two are
    // gated as one batch and bisection pins it (its merge undone with the batch's).
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::StoryRolledBack { story, .. } | Event::CulpritPinned { story, .. }
                if *story == failed.id
        )),
        "{:#?}",
        events.steps()
    );
}

/// A judge that does not clear a story in round 1 and clears it in round 2.
const JUDGE_ONCE: &str = r#"if [ ! -f "$ROOT/judged-$EPIC_STORY" ]; then
  touch "$ROOT/judged-$EPIC_STORY"
  echo '{"clean":false,"issues":[{"severity":"major","title":"more","description":"do more"}]}'
  exit 0
fi
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strays_from_a_judge_round_are_put_back() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[])]);
    ep.hook("a.judge", JUDGE_ONCE);
    ep.hook(
        "a",
        r#"if [ "$EPIC_TASK" = "address judge feedback" ]; then echo stray >> README.md; fi
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    assert_eq!(
        outcome.report.stories[0].judge.as_deref(),
        Some("judge cleared (round 2)")
    );
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::PerimeterRestored { paths, .. } if paths == &["README.md"]
    )));
    let readme = std::fs::read_to_string(ep.epic_worktree().join("README.md")).expect("readme");
    assert_eq!(readme, "hello\n");
    let subjects = ep
        .fx
        .git_in(&ep.fx.repo, &["log", "--format=%s", "epic/e~1..story/e/a"]);
    assert!(subjects.contains("a: address judge feedback"), "{subjects}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_read_only_change_fails_the_story() {
    let ep = EpicFixture::new();
    let mut plan = plan(&[("a", &[])]).into_plan();
    plan.stories[0].shared_read_only = vec!["README.md".into()];
    let plan = plan.validate().expect("valid");
    ep.hook("a.judge", JUDGE_ONCE);
    ep.hook(
        "a",
        r#"if [ "$EPIC_TASK" = "address judge feedback" ]; then echo changed >> README.md; fi
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let reason = outcome.report.stories[0].reason.clone().expect("reason");
    assert!(reason.contains("README.md (shared read-only"), "{reason}");
    assert!(
        !ep.epic_log()
            .iter()
            .any(|line| line.contains("merge story a"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_red_baseline_refuses_to_start_unless_allowed() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let mut config = ep.config();
    config.gates = vec![
        "test -f ok.txt".into(),
        "test $(ls src 2>/dev/null | wc -l) -lt 2".into(),
    ];
    let events = Events::default();
    let error = ep.run(&plan, config.clone(), &events).await.unwrap_err();
    let RunError::RedBaseline { failing, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(failing, &["- test -f ok.txt"]);
    assert!(ep.turns().is_empty(), "no story started");

    // Allowed: the stories are held to the gate that passes; a merge that breaks it is undone,
    // the red one is ignored (and the story fails: no merge revision).
    config.allow_red_baseline = true;
    config.merge_revisions = 0;
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    let statuses = statuses(&outcome);
    assert!(
        statuses == ["a:done", "b:failed"] || statuses == ["a:failed", "b:done"],
        "{statuses:?}"
    );
    let reason = outcome
        .report
        .stories
        .iter()
        .find_map(|story| story.reason.clone())
        .expect("reason");
    assert!(reason.contains("passed before this merge"), "{reason}");
    assert!(!reason.contains("ok.txt"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_is_an_error_naming_the_holder() {
    let ep = EpicFixture::new();
    let _held = EpicLock::acquire(&ep.dir()).expect("lock");
    let events = Events::default();
    let error = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .unwrap_err();
    assert!(error.is_locked(), "{error}");
    let RunError::Locked {
        holder: Some(holder),
        ..
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(holder.pid, std::process::id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_checkout_on_the_epic_branch_is_refused() {
    let ep = EpicFixture::new();
    ep.fx.git_in(&ep.fx.repo, &["switch", "-q", "-c", "epic/e"]);
    let events = Events::default();
    let error = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .unwrap_err();
    assert!(
        matches!(error, RunError::EpicBranchCheckedOut { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("git switch"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dirty_epic_worktree_stops_the_run() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[])]);
    let events = Events::default();
    assert!(
        ep.run(&plan, ep.config(), &events)
            .await
            .expect("run")
            .all_done()
    );
    std::fs::write(ep.epic_worktree().join("stray.txt"), "x").expect("write");
    let mut changed = plan.plan().clone();
    changed.stories[0].description = "again".into();
    let error = ep
        .run(&changed.validate().expect("valid"), ep.config(), &events)
        .await
        .unwrap_err();
    let RunError::DirtyEpicWorktree { paths, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(paths, &["stray.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_worktree_whose_add_was_killed_half_way_is_added_again() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[])]);
    let events = Events::default();
    assert!(
        ep.run(&plan, ep.config(), &events)
            .await
            .expect("run")
            .all_done()
    );
    // What a `git worktree add` of it killed during its checkout leaves: the add's lock, and
    // files not checked out yet (which would read as deleted: a dirty epic worktree).
    let worktree = ep.epic_worktree();
    lock_as_if_adding(&worktree);
    std::fs::remove_file(worktree.join("README.md")).expect("remove");
    let mut changed = plan.plan().clone();
    changed.stories[0].description = "again".into();
    let rerun = ep
        .run(&changed.validate().expect("valid"), ep.config(), &events)
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert!(worktree.join("README.md").is_file());
    assert!(!epic_git_ops::add_interrupted(&worktree));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_keeps_resumable_state_and_a_rerun_finishes() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    ep.hook(
        "b",
        r#"if [ ! -f "$ROOT/b-once" ]; then touch "$ROOT/b-once" "$ROOT/b-started"; sleep 1000; fi
"#,
    );
    let mut config = ep.config();
    config.turn_timeout = Duration::from_mins(2);
    let deadline = config.turn_timeout;
    let marker = ep.fx.root.join("b-started");
    let cancel = cancelled_once(marker);
    let events = Events::default();
    let began = std::time::Instant::now();
    let outcome = ep
        .run_with(&plan, config, &events, cancel)
        .await
        .expect("run");
    assert!(began.elapsed() < deadline, "b was cancelled, not timed out");
    assert!(outcome.interrupted);
    assert_eq!(statuses(&outcome), ["a:done", "b:skipped"]);
    let state: StoryState = epic_state_store::load(ep.dir().story_state("b").expect("path"))
        .expect("load")
        .expect("state");
    assert_eq!(state.status, StoryStage::Started);
    assert!(ep.dir().report_json().is_file());

    let events = Events::default();
    let rerun = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::StoryPrepared { story, how, .. } if story == "b" && how == "resumed"
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_never_clears_fails_the_story_and_a_failing_hook_fails_nothing() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &[])]);
    ep.hook(
        "a.judge",
        r#"echo '{"clean":false,"issues":[{"severity":"critical","title":"missing","description":"no tests"}]}'; exit 0
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.board_hook = Some("cat > /dev/null; exit 3".into());
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    let reason = outcome.report.stories[0].reason.clone().expect("reason");
    assert!(
        reason.contains("judge not cleared after 2 round(s):\n- missing: no tests"),
        "{reason}"
    );
    assert_eq!(
        outcome.report.stories[1].judge.as_deref(),
        Some("judge cleared (round 1)")
    );
    let steps = events.steps();
    assert!(steps.iter().any(
        |event| matches!(event, Event::HookFailed { status, .. } if status.contains("exit code 3"))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_setup_fails_the_story() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[])]);
    let mut config = ep.config();
    config.setup = vec!["echo installing; test \"$EPIC_STORY\" != a".into()];
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let reason = outcome.report.stories[0].reason.clone().expect("reason");
    assert!(reason.contains("worktree setup failed"), "{reason}");
    assert!(ep.turns().is_empty(), "no coder ran");
}
