//! A person in the loop of a running epic: commands given through the epic's inbox while the run
//! goes on (an answer to a story waiting on a question, a note, a stop, a retry), each applied
//! once, and a wait for an answer bounded by `--max-wait` on the run's clock. The commands are
//! written as `epic answer` and the others write them (`epic_state_store::inbox::send`); the
//! tests wait on the run's events, never on time.

use std::time::Duration;

use epic_events::Event;
use epic_executor::{ManualClock, OnBlocked};
use epic_state_store::inbox::{self, Action, Command};
use epic_state_store::{Hold, StoryState};
use jiff::Timestamp;

use crate::epic_support::{EpicFixture, KEEP_PROMPTS, plan, reason, statuses};
use crate::support::Events;

/// Where the tests' clock starts.
fn start() -> Timestamp {
    "2030-01-01T08:00:00Z".parse().expect("a time")
}

/// After [`KEEP_PROMPTS`]: a coder that asks which port until its prompt holds an answer, then
/// writes it.
const ASKS_THE_PORT: &str = r#"case "$prompt" in
  *"Their answer to the question you stopped on"*) mkdir -p src/a; echo "$prompt" | grep -o 'port [0-9][0-9]*' | head -1 > src/a/port.txt ;;
  *) echo 'I cannot choose the port alone.'; echo 'BLOCKED_ON: which port should the service listen on?'; exit 0 ;;
esac
"#;

/// Gives `action` for `story` through the epic's inbox, as the CLI does.
fn give(ep: &EpicFixture, story: Option<&str>, action: Action) {
    inbox::send(&ep.dir(), &Command::new(story, action, 4242)).expect("a command in the inbox");
}

/// The state file of `story`.
fn state(ep: &EpicFixture, story: &str) -> StoryState {
    let path = ep.dir().story_state(story).expect("a safe id");
    epic_state_store::load(&path)
        .expect("readable")
        .expect("a state")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_lets_a_waiting_story_finish_while_the_others_went_on() {
    let ep = EpicFixture::new();
    ep.hook("a", &format!("{KEEP_PROMPTS}{ASKS_THE_PORT}"));
    let mut config = ep.config();
    config.on_blocked = OnBlocked::Ask;
    let events = Events::default();
    let plan = plan(&[("a", &[]), ("b", &[]), ("c", &["a"])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events
            .until(
                "a waiting",
                |event| matches!(event, Event::StoryWaiting { story, .. } if story == "a"),
            )
            .await;
        // While a waits, b goes on to its end, and c, which needs a, has not started.
        events
            .until(
                "b merged",
                |event| matches!(event, Event::StoryMerged { story, .. } if story == "b"),
            )
            .await;
        assert!(
            matches!(state(&ep, "a").hold, Some(Hold::Waiting { ref question, .. }) if question == "which port should the service listen on?")
        );
        give(
            &ep,
            Some("a"),
            Action::Answer {
                text: "port 8080".into(),
            },
        );
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done", "c:done"]);
    let steps = events.steps();
    let kinds: Vec<&Event> = steps
        .iter()
        .filter(|event| {
            matches!(
                event,
                Event::StoryWaiting { .. } | Event::Answered { .. } | Event::NotesRead { .. }
            )
        })
        .collect();
    assert_eq!(kinds.len(), 3, "{steps:#?}");
    assert!(matches!(kinds[1], Event::Answered { story, uid: 4242, .. } if story == "a"));
    // The answer reached the coder once: in the turn after the question, not the one before.
    let answered_turn = (1..=4)
        .find(|n| {
            ep.coder_prompt(*n)
                .contains("Their answer to the question you stopped on")
        })
        .expect("a coder turn read the answer");
    assert!(ep.coder_prompt(answered_turn).contains("port 8080"));
    assert!(
        !ep.coder_prompt(answered_turn - 1)
            .contains("Their answer to the question")
    );
    assert_eq!(
        std::fs::read_to_string(ep.epic_worktree().join("src/a/port.txt")).expect("on the epic"),
        "port 8080\n"
    );
    assert!(state(&ep, "a").hold.is_none());
    assert_eq!(outcome.report.stories[0].commands.len(), 1);
    assert!(inbox::held(&ep.dir(), "a").expect("listed").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_nobody_answers_fails_the_story_at_max_wait() {
    let ep = EpicFixture::new();
    ep.hook("a", &format!("{KEEP_PROMPTS}{ASKS_THE_PORT}"));
    let manual = ManualClock::new(start());
    let mut config = ep.config();
    config.on_blocked = OnBlocked::Ask;
    config.clock = manual.clock();
    config.max_wait = Duration::from_hours(2);
    let events = Events::default();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events
            .until(
                "a waiting",
                |event| matches!(event, Event::StoryWaiting { story, .. } if story == "a"),
            )
            .await;
        let deadline = manual.waiter().await;
        assert_eq!(deadline, start() + Duration::from_hours(2));
        manual.advance(Duration::from_hours(2) - Duration::from_secs(1));
        assert_eq!(manual.waiter().await, deadline, "not waited long enough");
        manual.advance(Duration::from_secs(1));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let why = reason(&outcome, 0);
    assert!(why.starts_with("no answer came: story 'a' asked"), "{why}");
    assert!(why.contains("epic answer a TEXT"), "{why}");
    assert!(state(&ep, "a").hold.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_one_story_keeps_it_stopped_and_a_retry_runs_it_again() {
    let ep = EpicFixture::new();
    // Story a's coder works until killed, until the file `works` exists.
    ep.hook(
        "a",
        r#"if [ ! -f "$ROOT/works" ]; then echo "working on a"; exec sleep 1000; fi
"#,
    );
    let events = Events::default();
    let plan = plan(&[("a", &[]), ("b", &["a"]), ("c", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, ep.config(), &events), async {
        events
            .until("a at work", |event| {
                matches!(event, Event::TurnOutput { story, text, .. } if story == "a" && text.contains("working on a"))
            })
            .await;
        give(&ep, Some("a"), Action::Stop);
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:stopped", "b:skipped", "c:done"]);
    assert!(
        reason(&outcome, 0).contains("epic retry a"),
        "{}",
        reason(&outcome, 0)
    );
    assert!(matches!(
        state(&ep, "a").hold,
        Some(Hold::Stopped { uid: 4242, .. })
    ));
    let steps = events.steps();
    assert!(
        steps.iter().any(
            |event| matches!(event, Event::Stopped { story: Some(story), .. } if story == "a")
        )
    );
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::StoryStopped { story } if story == "a"))
    );

    // A rerun keeps it stopped, its dependent skipped.
    std::fs::write(ep.fx.root.join("works"), "").expect("a works now");
    let again = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&again), ["a:stopped", "b:skipped", "c:done"]);

    // A retry given while no run goes is taken by the next run before any story starts.
    give(&ep, Some("a"), Action::Retry { fresh: false });
    let events = Events::default();
    let retried = ep.run(&plan, ep.config(), &events).await.expect("retried");
    assert_eq!(statuses(&retried), ["a:done", "b:done", "c:done"]);
    assert!(
        events.steps().iter().any(
            |event| matches!(event, Event::Retried { story, fresh: false, .. } if story == "a")
        )
    );
    assert!(state(&ep, "a").hold.is_none());
    assert!(inbox::waiting(&ep.dir()).expect("listed").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_for_no_story_is_refused_and_nothing_changes() {
    let ep = EpicFixture::new();
    give(&ep, Some("nope"), Action::Stop);
    give(&ep, Some("a"), Action::Retry { fresh: false });
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let refused: Vec<String> = events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::CommandRefused { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].contains("no story `nope`"), "{refused:?}");
    assert!(refused[1].contains("nothing to retry"), "{refused:?}");
    assert!(inbox::waiting(&ep.dir()).expect("listed").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_retry_starts_a_failed_story_over_from_the_epic_head() {
    let ep = EpicFixture::new();
    let (only_b, _) = ep.fail_b_once().await;
    give(&ep, Some("b"), Action::Retry { fresh: true });
    let events = Events::default();
    let outcome = ep.run(&only_b, ep.config(), &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["b:done"]);
    let steps = events.steps();
    assert!(
        steps.iter().any(
            |event| matches!(event, Event::Retried { story, fresh: true, .. } if story == "b")
        )
    );
    assert!(
        steps.iter().any(
            |event| matches!(event, Event::StoryPrepared { story, how, .. } if story == "b" && how == "restarted")
        ),
        "{steps:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_command_hears_of_each_story_that_needs_a_person() {
    let ep = EpicFixture::new();
    ep.hook("a", "exit 1\n");
    let heard = ep.fx.root.join("heard");
    let mut config = ep.config();
    config.notify = Some(format!(
        "printf '%s %s %s: ' \"$EPIC_EPIC\" \"$EPIC_STORY\" \"$EPIC_ATTENTION\" >> {heard}; head -1 >> {heard}",
        heard = heard.display()
    ));
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:done"]);
    // The commands run off the run's path: wait for the line, not for a time.
    epic_test_support::wait_until("the notify command ran", || {
        std::fs::read_to_string(&heard).is_ok_and(|text| text.ends_with('\n'))
    });
    let text = std::fs::read_to_string(&heard).expect("heard");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].starts_with("e a failed: "), "{text}");
}
