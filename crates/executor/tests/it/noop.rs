//! A task whose turn changes nothing: confirmed as already satisfied, or not (the no-op policy,
//! `--noop`); a story whose tasks changed nothing at all (more in `in_place.rs`).

use epic_events::Event;
use epic_executor::{NoopPolicy, StoryError};

use crate::epic_support::{EpicFixture, commit_on_main, merges, plan, reason, statuses};
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
async fn an_unconfirmed_noop_fails_the_story_under_noop_fail() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &idle_coder("I could not find anything to do."));
    let error = Run::new(coder)
        .noop(NoopPolicy::Fail)
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

#[tokio::test]
async fn a_prose_already_done_on_green_gates_completes_with_a_warning() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &idle_coder("This is already done: the repository has everything the task asks for."),
    );
    let events = Events::default();
    let done = Run::new(coder)
        .gates(&["true"])
        .on(&fixture, &events)
        .await
        .result
        .expect("completed by the policy");
    assert_eq!(done.noop, ["one"]);
    assert!(done.committed.is_empty() && fixture.story_commits().is_empty());
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [x] one")
    );
    let steps = events.steps();
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::TaskNoopUnconfirmed { task, .. } if task == "one"))
    );
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::TaskNoop { .. }))
    );
}

#[tokio::test]
async fn a_prose_already_done_on_red_gates_goes_through_the_review_rounds() {
    let fixture = Fixture::new();
    std::fs::write(fixture.worktree.join("broken"), "red\n").expect("write");
    fixture.git_in(&fixture.worktree, &["add", "-A"]);
    fixture.git_in(
        &fixture.worktree,
        &["commit", "-q", "-m", "s: work in progress"],
    );
    let coder = fixture.agent("coder", &idle_coder("Already done."));
    let events = Events::default();
    let error = Run::new(coder)
        .gates(&["test ! -e broken"])
        .on(&fixture, &events)
        .await
        .result
        .expect_err("the gate stays red");
    assert!(
        matches!(&error, StoryError::GateNeverGreen { task, .. } if task == "one"),
        "{error:?}"
    );
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TaskNoopUnconfirmed { .. }))
    );
}

#[tokio::test]
async fn a_story_that_changed_nothing_fails_without_a_judge() {
    let ep = EpicFixture::new();
    ep.hook("a", "echo 'It is all there already.'; exit 0\n");
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    assert!(
        reason(&outcome, 0).starts_with(
            "nothing was changed and no judge confirmed the work is already on the epic branch"
        ),
        "{}",
        reason(&outcome, 0)
    );
    // The task was completed by the no-op policy, with its warning, before the story failed.
    assert!(
        events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TaskNoopUnconfirmed { story, .. } if story == "a"))
    );
    assert!(merges(&ep).is_empty());
}

#[tokio::test]
async fn a_story_that_changed_nothing_is_done_when_the_judge_shows_its_work_is_there() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/a/done.txt", "a\n")]);
    ep.hook("a", "echo 'It is all there already.'; exit 0\n");
    ep.hook(
        "a.judge",
        "printf '%s' \"$prompt\" > \"$ROOT/judge-prompt\"\n\
         echo '{\"clean\":true,\"issues\":[],\"evidence\":[{\"path\":\"src/a/done.txt\"}]}'\n\
         exit 0\n",
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    assert_eq!(
        outcome.report.stories[0].judge.as_deref(),
        Some(
            "judge confirmed the work is already on the epic branch, with evidence epic checked \
             (round 1): nothing to merge"
        )
    );
    let asked = std::fs::read_to_string(ep.fx.root.join("judge-prompt")).expect("judged");
    assert!(asked.contains("The story's branch has no changes against the epic branch"));
    assert!(asked.contains("owned paths (src/a)"));
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::StoryMerged { story, commit: None, in_place: Some(_), .. } if story == "a"
    )));
    assert!(merges(&ep).is_empty());
}

#[tokio::test]
async fn a_story_that_changed_nothing_fails_when_the_judge_does_not_confirm() {
    let ep = EpicFixture::new();
    ep.hook("a", "echo 'It is all there already.'; exit 0\n");
    ep.hook(
        "a.judge",
        "echo '{\"clean\":false,\"issues\":[{\"severity\":\"critical\",\"title\":\"src/a is empty\",\"description\":\"nothing is there\"}]}'; exit 0\n",
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.judge_rounds = 1;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    assert!(
        reason(&outcome, 0).contains("src/a is empty"),
        "{}",
        reason(&outcome, 0)
    );
}
