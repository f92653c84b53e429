//! What an attempt that never replied leaves in its worktree: the next attempt is told, and
//! nothing of it is committed until a turn that was told replies. Here the attempts a seat's
//! own retry and a stopped run's rerun take up (a stall's and a usage limit's are in
//! `stalls.rs` and `roster.rs`, a killed task loop's in `resume.rs`): a run stopped in story
//! a's coder turn, half way through a file, while the epic moves on (story b merges); the rerun
//! resumes a, whose catch-up must not commit the half file as work in progress.

use std::time::Duration;

use epic_events::Event;
use epic_executor::{ManualClock, RunOutcome};
use jiff::Timestamp;

use crate::epic_support::{
    EpicFixture, KEEP_PROMPTS, LEFTOVERS_NOTE, cancelled_once, plan, statuses,
};
use crate::support::Events;

/// After [`KEEP_PROMPTS`]: the first coder turn of a writes half a file, says so in a marker,
/// and waits to be stopped; a later turn fails while `$ROOT/fail` exists, else finishes the file
/// when its prompt names it.
const HALF_A_FILE_THEN_STOPPED: &str = r#"if [ "$n" = 1 ]; then
  mkdir -p src/a && printf 'fn half(' > src/a/half.rs
  touch "$ROOT/a-half-written"
  exec sleep 1000
fi
if [ -f "$ROOT/fail" ]; then echo "the model is confused" >&2; exit 1; fi
case "$prompt" in *'- added `src/a/half.rs`'*) echo 'fn half() {}' > src/a/half.rs ;; esac
"#;

/// Runs story a until its first coder turn has written half a file, then stops the run (as
/// Ctrl-C does: the state and the worktree kept for a rerun); then runs story b alone, which
/// merges, so the epic branch moves on before a resumes.
async fn stop_a_half_way_then_merge_b(ep: &EpicFixture) {
    ep.hook("a", &format!("{KEEP_PROMPTS}{HALF_A_FILE_THEN_STOPPED}"));
    let cancel = cancelled_once(ep.fx.root.join("a-half-written"));
    let outcome = ep
        .run_with(
            &plan(&[("a", &[])]),
            ep.config(),
            &Events::default(),
            cancel,
        )
        .await
        .expect("run");
    assert!(outcome.interrupted);
    let outcome = ep
        .run(&plan(&[("b", &[])]), ep.config(), &Events::default())
        .await
        .expect("run b");
    assert_eq!(statuses(&outcome), ["b:done"]);
}

/// Resumes story a, after [`stop_a_half_way_then_merge_b`]: its outcome and events.
async fn resume_a(ep: &EpicFixture) -> (RunOutcome, Vec<Event>) {
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .expect("rerun");
    (outcome, events.steps())
}

/// The story branch's commit subjects since the epic branch's start (`main`).
fn story_log(ep: &EpicFixture) -> String {
    ep.fx
        .git_in(&ep.fx.repo, &["log", "--format=%s", "main..story/e/a"])
}

/// Whether the catch-up said it waits for the tasks.
fn catch_up_waited(steps: &[Event]) -> bool {
    steps.iter().any(|event| {
        matches!(event, Event::Note { story, message }
            if story == "a" && message.contains("the catch-up with epic/e waits until after the tasks"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_runs_half_file_is_told_to_the_resumed_task_and_merges_once_it_replies() {
    let ep = EpicFixture::new();
    stop_a_half_way_then_merge_b(&ep).await;
    let (outcome, steps) = resume_a(&ep).await;
    assert_eq!(statuses(&outcome), ["a:done"]);
    assert!(catch_up_waited(&steps), "{steps:#?}");
    let resumed = ep.coder_prompt(2);
    assert!(
        resumed.contains(LEFTOVERS_NOTE) && resumed.contains("- added `src/a/half.rs`\n"),
        "{resumed}"
    );
    // Told, the resumed turn finished the file; it merged whole, after b, and no commit of the
    // story is work in progress.
    let show = |path: &str| {
        ep.fx
            .git_in(&ep.fx.repo, &["show", &format!("epic/e:{path}")])
    };
    assert_eq!(show("src/a/half.rs"), "fn half() {}\n");
    assert!(show("src/b/done.txt").starts_with("b "));
    let log = story_log(&ep);
    assert!(!log.contains("work in progress"), "{log}");
}

/// The resumed task's turn fails: nothing the stopped run left is on the story branch (a catch-up
/// that committed it as work in progress put it below the task's checkpoint, where the failed
/// task's rollback did not reach, and the next rerun merged it); it is kept aside instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_task_whose_turn_fails_commits_nothing_the_stopped_run_left() {
    let ep = EpicFixture::new();
    stop_a_half_way_then_merge_b(&ep).await;
    std::fs::write(ep.fx.root.join("fail"), "").expect("make the resumed turn fail");
    let (outcome, steps) = resume_a(&ep).await;
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let log = story_log(&ep);
    assert!(!log.contains("work in progress"), "{log}");
    let tree = ep
        .fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "story/e/a"]);
    assert!(!tree.contains("half.rs"), "{tree}");
    let patch = std::fs::read_to_string(ep.dir().rejected_patch("a").expect("path"))
        .expect("the half file is kept aside");
    assert!(patch.contains("src/a/half.rs"), "{patch}");
    assert!(catch_up_waited(&steps), "{steps:#?}");
}

/// Where the tests' clock starts.
fn start() -> Timestamp {
    "2030-01-01T08:00:00Z".parse().expect("a time")
}

/// An attempt that fails with a transient error after writing half a file is retried by its
/// seat (after a backoff on the run's clock): the retry is told what the failed attempt left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seats_retry_after_a_transient_failure_is_told_what_the_failed_attempt_left() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        &format!(
            r#"{KEEP_PROMPTS}if [ "$n" = 1 ]; then
  mkdir -p src/a && printf 'fn half(' > src/a/half.rs
  echo "503 Service Unavailable" >&2
  exit 1
fi
case "$prompt" in *'- added `src/a/half.rs`'*) echo 'fn half() {{}}' > src/a/half.rs ;; esac
"#
        ),
    );
    let manual = ManualClock::new(start());
    let mut config = ep.config();
    config.clock = manual.clock();
    // Nothing else waits on the clock: the backoff is the one waiter.
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events
            .until(
                "the retry's backoff",
                |event| matches!(event, Event::TurnRetried { story, .. } if story == "a"),
            )
            .await;
        // The backoff of the first retry: 5 s, less up to half at random.
        let until = manual.waiter().await;
        assert!(until <= start() + Duration::from_secs(5), "{until}");
        manual.advance(Duration::from_secs(5));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let (failed, retried) = (ep.coder_prompt(1), ep.coder_prompt(2));
    assert!(!failed.contains(LEFTOVERS_NOTE), "{failed}");
    assert!(
        retried.contains(LEFTOVERS_NOTE) && retried.contains("- added `src/a/half.rs`\n"),
        "{retried}"
    );
    assert_eq!(
        ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:src/a/half.rs"]),
        "fn half() {}\n"
    );
}
