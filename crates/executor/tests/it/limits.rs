//! Usage limits and logins: a limit pauses the seat and the turn runs again (no story fails);
//! a pause past `max_wait` stops the run as an interrupt that a rerun resumes; a seat that is
//! not logged in stops launching without failing the story whose turn met it.

use std::time::Duration;

use epic_executor::{Event, SeatStop};
use epic_state_store::{StoryStage, StoryState};

use crate::epic_support::{EpicFixture, plan, reason, statuses};
use crate::support::Events;

/// A hook that, on its first coder turn, prints Claude Code's usage-limit line with a reset
/// `ahead` seconds from now (its epoch kept in `$ROOT/reset`) and exits 1; later turns record
/// when they ran (`$ROOT/again`) and work.
fn limit_once(ahead: u64) -> String {
    format!(
        r#"if [ ! -f "$ROOT/reset" ]; then
  echo $(( $(date +%s) + {ahead} )) > "$ROOT/reset"
  echo "Claude AI usage limit reached|$(cat "$ROOT/reset")"
  exit 1
fi
date +%s > "$ROOT/again"
"#
    )
}

fn failed_turns(events: &[Event], id: &str) -> usize {
    events
        .iter()
        .filter(|event| matches!(event, Event::TurnEnded { story, ok: false, .. } if story == id))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_pauses_the_seat_and_the_turn_runs_again_after_the_reset() {
    let ep = EpicFixture::new();
    ep.hook("a", &limit_once(2));
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), ep.config(), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert!(!outcome.interrupted && outcome.stopped.is_none());
    let steps = events.steps();
    assert_eq!(failed_turns(&steps, "a"), 1, "{steps:#?}");
    let paused: Vec<_> = steps
        .iter()
        .filter_map(|event| match event {
            Event::SeatPaused {
                seat,
                story,
                until,
                since,
                reason,
                message,
            } => Some((seat, story, until, since, reason, message)),
            _ => None,
        })
        .collect();
    assert_eq!(paused.len(), 1, "{steps:#?}");
    let (seat, story, until, since, why, message) = paused[0];
    assert!(seat.starts_with("exec:"), "{seat}");
    assert_eq!((story.as_str(), why.as_str()), ("a", "usage limit"));
    assert!(message.contains("usage limit reached"), "{message}");
    // The pause ends at the reset the agent named, or two seconds after it began when a slow
    // machine read the line later than that, and the turn ran again only then.
    let reset: i64 = std::fs::read_to_string(ep.fx.root.join("reset"))
        .expect("reset")
        .trim()
        .parse()
        .expect("epoch");
    let until: jiff::Timestamp = until.parse().expect("until");
    let since: jiff::Timestamp = since.parse().expect("since");
    let floor = since + jiff::SignedDuration::from_secs(2);
    let reset_at = jiff::Timestamp::from_second(reset).expect("reset epoch");
    assert_eq!(
        until,
        reset_at.max(floor),
        "since {since}, reset {reset_at}"
    );
    let again: i64 = std::fs::read_to_string(ep.fx.root.join("again"))
        .expect("again")
        .trim()
        .parse()
        .expect("epoch");
    assert!(
        again >= reset,
        "ran again at {again}, before the reset {reset}"
    );
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::StoryFailed { .. })),
        "{steps:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_past_max_wait_stops_the_run_as_an_interrupt_and_a_rerun_resumes() {
    let ep = EpicFixture::new();
    ep.hook("a", &limit_once(3 * 3600));
    let mut config = ep.config();
    config.concurrency = 1;
    config.max_wait = Duration::from_hours(1);
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert!(outcome.interrupted, "{:#?}", outcome.report.stories);
    let Some(SeatStop::MaxWait { reason: why, .. }) = &outcome.stopped else {
        panic!("not stopped on max-wait: {:?}", outcome.stopped);
    };
    assert!(why.contains("--max-wait 1h"), "{why}");
    assert_eq!(statuses(&outcome), ["a:skipped", "b:skipped"]);
    assert!(
        reason(&outcome, 0).contains("a rerun resumes it"),
        "{}",
        reason(&outcome, 0)
    );
    assert!(
        reason(&outcome, 1).starts_with("not started"),
        "{}",
        reason(&outcome, 1)
    );
    let state: StoryState = epic_state_store::load(ep.dir().story_state("a").expect("path"))
        .expect("load")
        .expect("state");
    assert_ne!(state.status, StoryStage::Failed);
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::RunNote { message } if message.starts_with("stopped launching stories") && message.contains("--max-wait")
    )));

    // The limit is gone (the hook's first turn is spent): the rerun finishes.
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_not_logged_in_stops_launching_without_failing_the_story() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/logged-in\" ]; then echo 'Not logged in · Please run /login'; exit 1; fi\n",
    );
    let mut config = ep.config();
    config.concurrency = 1;
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert!(!outcome.interrupted);
    let Some(SeatStop::NotLoggedIn { message, fix, .. }) = &outcome.stopped else {
        panic!("not stopped on the login: {:?}", outcome.stopped);
    };
    assert!(message.contains("Not logged in"), "{message}");
    assert!(!fix.is_empty());
    assert_eq!(statuses(&outcome), ["a:skipped", "b:skipped"]);
    assert!(
        reason(&outcome, 0).contains("not logged in"),
        "{}",
        reason(&outcome, 0)
    );
    assert!(
        reason(&outcome, 1).starts_with("not started"),
        "{}",
        reason(&outcome, 1)
    );
    assert_eq!(failed_turns(&events.steps(), "a"), 1);

    std::fs::write(ep.fx.root.join("logged-in"), "").expect("log in");
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_only_reconnects_is_an_outage_not_a_turn_that_burns_its_deadline() {
    let ep = EpicFixture::new();
    // Codex without a network: the same line again and again, never an exit.
    ep.hook(
        "a",
        r#"n=0
while [ $n -lt 600 ]; do
  echo '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'
  sleep 0.1; n=$((n+1))
done
"#,
    );
    let mut config = ep.config();
    config.concurrency = 1;
    config.turn_timeout = Duration::from_mins(5);
    config.outage_wait = Duration::from_secs(1);
    // Shorter than the first probe's wait (30 s): the outage stops the run at once.
    config.max_wait = Duration::from_secs(10);
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert!(outcome.interrupted);
    let Some(SeatStop::MaxWait { reason: why, .. }) = &outcome.stopped else {
        panic!("not stopped on the outage: {:?}", outcome.stopped);
    };
    assert!(why.contains("(outage)"), "{why}");
    assert!(why.contains("waiting for network"), "{why}");
    assert_eq!(statuses(&outcome), ["a:skipped"]);
    let steps = events.steps();
    let ended: Vec<_> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnEnded {
                story,
                ok: false,
                error,
                ..
            } if story == "a" => error.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(ended.len(), 1, "{steps:#?}");
    assert!(
        ended[0].contains("no connection to its service for 1s"),
        "{}",
        ended[0]
    );
}
