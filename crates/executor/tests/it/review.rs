//! Review rounds: a red gate fixed in a later round, a gate never green, the perimeter gate,
//! reviewers' findings sent back to the coder.

use std::sync::Arc;

use epic_events::Event;
use epic_executor::StoryError;

use crate::support::{Events, Fixture, Run, task_list};

/// A coder that plans `one`, writes `src/one.txt`, and on a fix request touches `src/fixed`.
fn fixing_coder() -> String {
    format!(
        r#"prompt=$(cat)
case "$EPIC_ROLE" in
planner) echo '{}' ;;
*) mkdir -p src
   if printf '%s' "$prompt" | grep -q 'Address these findings'; then
     printf '%s' "$prompt" > "$ROOT/fix-prompt"; touch src/fixed; echo fixed
   else echo one > src/one.txt; echo wrote; fi ;;
esac
"#,
        task_list(&["one"])
    )
}

#[tokio::test]
async fn a_red_gate_is_fixed_in_a_later_round() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &fixing_coder());
    let events = Events::default();
    let done = Run::new(coder)
        .gates(&["test -f src/fixed || { echo 'src/fixed is missing'; exit 1; }"])
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["one"]);
    assert_eq!(fixture.story_commits(), ["s: one"]);
    let fix = std::fs::read_to_string(fixture.root.join("fix-prompt")).expect("fix prompt");
    assert!(
        fix.contains("src/fixed is missing"),
        "the coder sees the gate's output: {fix}"
    );
    let rounds: Vec<bool> = events
        .steps()
        .iter()
        .filter_map(|event| match event {
            Event::ReviewRound { clean, .. } => Some(*clean),
            _ => None,
        })
        .collect();
    assert_eq!(rounds, [false, true]);
}

#[tokio::test]
async fn a_gate_never_green_fails_the_story_naming_it() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &fixing_coder());
    let events = Events::default();
    let error = Run::new(coder)
        .gates(&["true", "echo broken; exit 4"])
        .on(&fixture, &events)
        .await
        .result
        .expect_err("fails");
    let StoryError::GateNeverGreen { gate, rounds, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(gate, "gate `echo broken; exit 4`");
    assert_eq!(*rounds, 3);
    // The command once in the headline and once in the issue list, not three times.
    assert_eq!(
        error.reason().matches("echo broken; exit 4").count(),
        2,
        "{}",
        error.reason()
    );
    assert!(error.reason().contains("broken"));
    assert!(fixture.story_commits().is_empty(), "nothing committed");
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [ ] one")
    );
    assert!(
        events.steps().iter().any(
            |event| matches!(event, Event::GateFailed { status, .. } if status == "exit code 4")
        )
    );
}

#[tokio::test]
async fn a_change_outside_the_perimeter_is_a_red_round_then_put_back() {
    let fixture = Fixture::new();
    // Writes into `lib`, owned by another story, and never reverts it.
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) mkdir -p lib src; echo x > lib/x.rs; echo y > src/one.txt; echo done ;;\nesac\n",
            task_list(&["one"])
        ),
    );
    let mut run = Run::new(coder);
    run.max_rounds = 2;
    let events = Events::default();
    let done = run.on(&fixture, &events).await.result.expect("done");
    assert_eq!(done.committed, ["one"]);
    let steps = events.steps();
    // Round 1 is red on the perimeter; after the last round the stray is put back.
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::ReviewRound { round: 1, clean: false, summary, .. } if summary.contains("perimeter: violated")
    )));
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::PerimeterRestored { paths, .. } if paths == &["lib/x.rs"]
    )));
    let files = fixture.git_in(
        &fixture.repo,
        &["ls-tree", "-r", "--name-only", "story/e/s"],
    );
    assert_eq!(files, "README.md\nsrc/one.txt\n");
    assert!(!fixture.worktree.join("lib/x.rs").exists());
}

#[tokio::test]
async fn reviewer_findings_go_back_to_the_coder() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &fixing_coder());
    // Not clean the first time, clean once `src/fixed` exists.
    let reviewer = fixture.agent(
        "reviewer",
        r#"cat > "$ROOT/review-prompt"
echo "$EPIC_ROLE" >> "$ROOT/reviews.log"
if [ -f src/fixed ]; then echo '{"clean":true,"issues":[]}'
else echo '```json
{"clean":false,"issues":[{"severity":"major","title":"no fix marker","description":"add src/fixed"}]}
```'; fi
"#,
    );
    let mut run = Run::new(coder);
    run.reviewers = vec![Arc::clone(&reviewer), reviewer];
    let events = Events::default();
    let done = run.on(&fixture, &events).await.result.expect("done");
    assert_eq!(done.committed, ["one"]);
    let fix = std::fs::read_to_string(fixture.root.join("fix-prompt")).expect("fix prompt");
    assert!(
        fix.contains("[major] no fix marker: add src/fixed"),
        "{fix}"
    );
    let reviews = std::fs::read_to_string(fixture.root.join("reviews.log")).expect("log");
    assert_eq!(
        reviews.lines().collect::<Vec<_>>(),
        ["reviewer"; 4],
        "two reviewers, two rounds"
    );
    let prompt = std::fs::read_to_string(fixture.root.join("review-prompt")).expect("prompt");
    assert!(prompt.contains("src/one.txt"), "{prompt}");
    assert_eq!(fixture.story_commits(), ["s: one"]);
}

#[tokio::test]
async fn what_a_reviewer_changes_is_discarded_and_the_coders_work_kept() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &fixing_coder());
    // A reviewer that "fixes" the coder's file itself, adds one, and commits, then clears.
    let reviewer = fixture.agent(
        "reviewer",
        r#"cat > /dev/null
echo reviewer > src/one.txt; echo x > src/extra.txt
git add -A && git commit -qm "reviewer's own"
echo '{"clean":true,"issues":[]}'
"#,
    );
    let mut run = Run::new(coder);
    run.reviewers = vec![reviewer];
    let events = Events::default();
    let done = run.on(&fixture, &events).await.result.expect("done");
    assert_eq!(done.committed, ["one"]);
    // The task's one commit holds the coder's work as the coder left it, and nothing else.
    assert_eq!(fixture.story_commits(), ["s: one"]);
    let shown = fixture.git_in(&fixture.worktree, &["show", "--stat", "--format=", "HEAD"]);
    assert!(
        shown.contains("src/one.txt") && !shown.contains("extra"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.worktree.join("src/one.txt")).expect("read"),
        "one\n"
    );
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::Note { message, .. }
            if message == "the reviewer turn changed src/extra.txt, src/one.txt; discarded: a \
                           reviewer only reads the work it checks"
    )));
}
