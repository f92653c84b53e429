//! A task whose turn changes nothing: confirmed as already satisfied, or not.

use epic_executor::{Event, StoryError};

use crate::support::{Events, Fixture, Run, task_list};

/// A coder that plans `one` and changes nothing; asked whether the task is satisfied, it
/// answers `answer`.
fn idle_coder(answer: &str) -> String {
    format!(
        r#"prompt=$(cat)
case "$EPIC_ROLE" in
planner) echo '{}' ;;
*) if printf '%s' "$prompt" | grep -q 'changed no files'; then echo '{answer}'; else echo 'Looked around.'; fi ;;
esac
"#,
        task_list(&["one"])
    )
}

#[tokio::test]
async fn a_confirmed_noop_is_ticked_without_a_commit() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &idle_coder("TASK_ALREADY_SATISFIED"));
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(done.noop, ["one"]);
    assert!(done.committed.is_empty());
    assert!(fixture.story_commits().is_empty());
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [x] one")
    );
    assert!(
        events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TaskNoop { task, .. } if task == "one"))
    );
}

#[tokio::test]
async fn an_unconfirmed_noop_fails_the_story() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &idle_coder("I could not find anything to do."));
    let error = Run::new(coder)
        .on(&fixture, &Events::default())
        .await
        .result
        .expect_err("fails");
    assert!(
        matches!(&error, StoryError::NoopNotConfirmed { task } if task == "one"),
        "{error:?}"
    );
    assert!(error.reason().contains("TASK_ALREADY_SATISFIED"));
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [ ] one")
    );
}

#[tokio::test]
async fn a_noop_claim_on_red_gates_goes_through_the_review_rounds() {
    // The branch already carries a red change (as a resumed story's work in progress would);
    // the coder claims the task is satisfied without touching anything. The claim must not
    // tick the task while the gate is red.
    let fixture = Fixture::new();
    std::fs::write(fixture.worktree.join("broken"), "red\n").expect("write");
    fixture.git_in(&fixture.worktree, &["add", "-A"]);
    fixture.git_in(
        &fixture.worktree,
        &["commit", "-q", "-m", "s: work in progress"],
    );
    let coder = fixture.agent("coder", &idle_coder("TASK_ALREADY_SATISFIED"));
    let error = Run::new(coder)
        .gates(&["test ! -e broken"])
        .on(&fixture, &Events::default())
        .await
        .result
        .expect_err("the gate stays red");
    assert!(
        matches!(&error, StoryError::GateNeverGreen { task, .. } if task == "one"),
        "{error:?}"
    );
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [ ] one")
    );
}
