//! A run killed with SIGKILL in the middle of a task, then run again: only the open task is
//! redone, and its first turn is told what the killed turn left uncommitted. The first run is a child process (this test binary again, running
//! [`child_runner`]), so it can be killed like a crashing `epic run`.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use epic_test_support::wait_until;

use crate::support::{Events, Fixture, Run, task_list};

/// Tells [`child_runner`] where the fixture is.
const ROOT_VAR: &str = "EXECUTOR_IT_RESUME_ROOT";

/// [`child_runner`]'s full name in this test binary.
const CHILD_RUNNER: &str = "resume::child_runner";

fn coder_body() -> String {
    format!(
        r#"prompt=$(cat)
echo "$EPIC_ROLE $EPIC_TASK" >> "$ROOT/turns.log"
case "$EPIC_ROLE" in
planner) echo '{}' ;;
*) n=$(( $(cat "$ROOT/coder-turns" 2>/dev/null || echo 0) + 1 ))
   echo "$n" > "$ROOT/coder-turns"
   printf '%s' "$prompt" > "$ROOT/coder-prompt-$n"
   mkdir -p src; echo x > "src/$EPIC_TASK.txt"
   if [ "$EPIC_TASK" = two ] && [ -f "$ROOT/hang-once" ]; then
     rm "$ROOT/hang-once"
     read -r _ _ _ _ pgrp _ < /proc/$$/stat
     echo "$pgrp" > "$ROOT/agent.pgid"
     touch "$ROOT/hanging"
     sleep 1000
   fi
   echo ok ;;
esac
"#,
        task_list(&["one", "two"])
    )
}

/// Helper, not a test: the first run, in a child process that
/// [`a_run_killed_mid_task_reruns_only_that_task`] starts and kills; runs the loop on the fixture
/// named by [`ROOT_VAR`].
#[tokio::test]
#[ignore = "helper: run by resume::a_run_killed_mid_task_reruns_only_that_task"]
async fn child_runner() {
    let root = std::env::var(ROOT_VAR).unwrap_or_else(|_| {
        panic!("{ROOT_VAR} is unset: this helper runs only as a child of its parent test")
    });
    let fixture = Fixture::at(Path::new(&root));
    let seat = Arc::new(fixture.seat_for(&fixture.bin.join("coder").display().to_string()));
    let run = Run::new(seat).on(&fixture, &Events::default()).await;
    drop(run);
}

#[tokio::test]
async fn a_run_killed_mid_task_reruns_only_that_task() {
    let fixture = Fixture::new();
    fixture.script("coder", &coder_body());
    std::fs::write(fixture.root.join("hang-once"), "").expect("marker");

    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([CHILD_RUNNER, "--exact", "--ignored", "--nocapture"])
        .env(ROOT_VAR, &fixture.root)
        .spawn()
        .expect("spawn the first run");
    // Until its agent hangs in task two; a child that ends first (the helper did not run, or
    // failed) fails the test at once.
    wait_until("the first run reaching task two", || {
        if fixture.root.join("hanging").exists() {
            return true;
        }
        if let Some(status) = child.try_wait().expect("poll the first run") {
            panic!("the first run ended ({status}) before its agent reached task two");
        }
        false
    });
    child.kill().expect("SIGKILL the first run");
    child.wait().expect("reap it");
    // The killed run could not kill its agent's group: do what a person (or the OS) would.
    let pgid = std::fs::read_to_string(fixture.root.join("agent.pgid")).expect("pgid");
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", pgid.trim())])
        .status()
        .expect("kill");
    assert!(killed.success());

    assert_eq!(fixture.story_commits(), ["s: one"]);
    let checkpoint = fixture.checkpoint().expect("checkpoint");
    assert!(
        checkpoint.contains("- [x] one") && checkpoint.contains("- [ ] two"),
        "{checkpoint}"
    );

    let seat = Arc::new(fixture.seat_for(&fixture.bin.join("coder").display().to_string()));
    let done = Run::new(seat)
        .on(&fixture, &Events::default())
        .await
        .result
        .expect("the rerun finishes");
    assert_eq!(done.committed, ["two"]);
    assert_eq!(done.already_done, 1);
    assert_eq!(fixture.story_commits(), ["s: one", "s: two"]);
    let log = std::fs::read_to_string(fixture.root.join("turns.log")).expect("log");
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["planner ", "coder one", "coder two", "coder two"],
        "not re-planned, task one not redone"
    );
    // The rerun's first turn of task two takes up the killed turn's: it is told what that
    // turn left uncommitted. No other turn takes anything up.
    let prompt = |n: u32| {
        std::fs::read_to_string(fixture.root.join(format!("coder-prompt-{n}"))).expect("prompt")
    };
    let note = "Note: an earlier attempt at this work was stopped before it replied";
    assert!(!prompt(1).contains(note) && !prompt(2).contains(note));
    let resumed = prompt(3);
    assert!(
        resumed.contains(note) && resumed.contains("- added `src/two.txt`\n"),
        "{resumed}"
    );
    assert_eq!(
        fixture.transcripts(),
        [
            "0001-planner.md",
            "0002-coder.md",
            "0003-coder.md",
            "0004-coder.md"
        ],
        "the rerun's transcripts continue the numbering"
    );
}
