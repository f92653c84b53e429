//! Usage limits and logins: a limit pauses the seat and the turn runs again (no story fails);
//! a pause past `max_wait` stops the run as an interrupt that a rerun resumes; a seat that is
//! not logged in stops launching without failing the story whose turn met it.

use std::time::Duration;

use epic_chat::SeatStop;
use epic_events::Event;
use epic_executor::ManualClock;
use epic_state_store::{StoryStage, StoryState};
use jiff::Timestamp;

use crate::epic_support::{EpicFixture, plan, reason, statuses};
use crate::support::Events;

/// Where the tests' clock starts: any fixed time, for the run reads no other.
fn start() -> Timestamp {
    "2030-01-01T08:00:00Z".parse().expect("a time")
}

/// A hook that, on its first coder turn, prints Claude Code's usage-limit line with the reset
/// `reset` and exits 1; later turns leave `$ROOT/again` and work.
fn limit_once(reset: Timestamp) -> String {
    format!(
        r#"if [ ! -f "$ROOT/limited" ]; then
  touch "$ROOT/limited"
  echo "Claude AI usage limit reached|{}"
  exit 1
fi
touch "$ROOT/again"
"#,
        reset.as_second()
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
    let reset = start() + Duration::from_hours(5);
    ep.hook("a", &limit_once(reset));
    let manual = ManualClock::new(start());
    let mut config = ep.config();
    config.clock = manual.clock();
    // The clock jumps minutes and hours here: no turn is watched for silence on it.
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let again = ep.fx.root.join("again");
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events
            .until("a pause", |event| matches!(event, Event::SeatPaused { .. }))
            .await;
        // The run waits on the clock for the reset the agent named, and only for it.
        assert_eq!(manual.waiter().await, reset);
        manual.advance(Duration::from_hours(5) - Duration::from_secs(1));
        assert_eq!(manual.waiter().await, reset);
        assert!(!again.exists(), "the turn ran again before the reset");
        manual.advance(Duration::from_secs(1));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert!(!outcome.interrupted && outcome.stopped.is_none());
    assert!(again.exists());
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
    // The pause began when the turn failed and ends at the reset the agent named.
    assert_eq!(
        (since.as_str(), until.as_str()),
        (start().to_string().as_str(), reset.to_string().as_str())
    );
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::SeatResumed { .. })),
        "{steps:#?}"
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
    ep.hook("a", &limit_once(start() + Duration::from_hours(3)));
    let mut config = ep.config();
    config.concurrency = 1;
    config.max_wait = Duration::from_hours(1);
    config.clock = ManualClock::new(start()).clock();
    config.stall_timeout = Duration::ZERO;
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

/// A hook for Codex without a network: it says it is reconnecting, again each time a line comes
/// through the pipe `$ROOT/tick` ([`Ticks`]; never on its own), and never exits; once
/// `$ROOT/online` exists, its turns work.
const RECONNECTING: &str = r#"if [ ! -f "$ROOT/online" ]; then
  while :; do
    echo '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'
    read -r _ < "$ROOT/tick"
  done
fi
"#;

/// The test's end of the [`RECONNECTING`] agent's pipe, open for as long as the test runs: a
/// line written is the agent's cue, and neither side's open nor a write ever waits on the other
/// (an agent gone leaves the line unread).
pub(crate) struct Ticks(std::fs::File);

impl Ticks {
    /// Makes the pipe `$ROOT/tick` and opens the test's end.
    pub(crate) fn new(ep: &EpicFixture) -> Self {
        let path = ep.fx.root.join("tick");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo");
        assert!(made.success(), "mkfifo {}", path.display());
        // Read and write: on Linux, the open of a pipe that does not wait for a reader.
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the pipe");
        Self(file)
    }

    /// Writes one line: the agent's next cue.
    pub(crate) fn tick(&mut self) {
        std::io::Write::write_all(&mut self.0, b"\n").expect("write to the agent's pipe");
    }
}

/// Whether `event` is a chunk of story a's output that says it is reconnecting.
fn reconnecting(event: &Event) -> bool {
    matches!(
        event,
        Event::TurnOutput { story, text, .. } if story == "a" && text.contains("Reconnecting")
    )
}

/// Lets the [`RECONNECTING`] agent's turn say it is reconnecting for the default outage wait (2
/// minutes) on `manual`: it says it twice at once (the turn goes on: the agent is there to say
/// it again), then the clock moves by the wait and it says it a third time, which ends the turn
/// as an outage.
async fn reconnect_for_the_outage_wait(events: &Events, manual: &ManualClock, ticks: &mut Ticks) {
    events.until("a reconnecting line", reconnecting).await;
    ticks.tick();
    events
        .until_nth("a second reconnecting line", 2, reconnecting)
        .await;
    manual.advance(Duration::from_mins(2));
    ticks.tick();
}

/// The failed turns of story `a`, by their error.
fn turn_errors(steps: &[Event]) -> Vec<String> {
    steps
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
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_only_reconnects_is_an_outage_not_a_turn_that_burns_its_deadline() {
    let ep = EpicFixture::new();
    ep.hook("a", RECONNECTING);
    let mut ticks = Ticks::new(&ep);
    let manual = ManualClock::new(start());
    let mut config = ep.config();
    config.concurrency = 1;
    config.turn_timeout = Duration::from_mins(5);
    config.clock = manual.clock();
    // The clock jumps minutes and hours here: no turn is watched for silence on it.
    config.stall_timeout = Duration::ZERO;
    // Shorter than the first probe's wait (30 s): the outage stops the run at once.
    config.max_wait = Duration::from_secs(10);
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(
        ep.run(&plan, config, &events),
        reconnect_for_the_outage_wait(&events, &manual, &mut ticks)
    );
    let outcome = outcome.expect("run");
    assert!(outcome.interrupted);
    let Some(SeatStop::MaxWait { reason: why, .. }) = &outcome.stopped else {
        panic!("not stopped on the outage: {:?}", outcome.stopped);
    };
    assert!(why.contains("(outage)"), "{why}");
    assert!(why.contains("waiting for network"), "{why}");
    assert_eq!(statuses(&outcome), ["a:skipped"]);
    let steps = events.steps();
    let ended = turn_errors(&steps);
    assert_eq!(ended.len(), 1, "{steps:#?}");
    assert!(
        ended[0].contains("no connection to its service for 2m"),
        "{}",
        ended[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_pauses_its_seat_until_a_probe_and_a_probe_that_works_ends_it() {
    let ep = EpicFixture::new();
    ep.hook("a", RECONNECTING);
    let mut ticks = Ticks::new(&ep);
    let manual = ManualClock::new(start());
    let mut config = ep.config();
    config.concurrency = 1;
    config.clock = manual.clock();
    // The clock jumps minutes and hours here: no turn is watched for silence on it.
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let first_probe = start() + Duration::from_mins(2) + Duration::from_secs(30);
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        reconnect_for_the_outage_wait(&events, &manual, &mut ticks).await;
        // The outage's first wait is 30 s from the turn that ended it; the network is back.
        assert_eq!(manual.waiter().await, first_probe);
        std::fs::write(ep.fx.root.join("online"), "").expect("online");
        manual.advance(Duration::from_secs(30));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    assert!(!outcome.interrupted && outcome.stopped.is_none());
    let steps = events.steps();
    assert_eq!(turn_errors(&steps).len(), 1, "{steps:#?}");
    let paused: Vec<_> = steps
        .iter()
        .filter_map(|event| match event {
            Event::SeatPaused {
                since,
                until,
                reason,
                ..
            } => Some((since.clone(), until.clone(), reason.clone())),
            _ => None,
        })
        .collect();
    let ended = start() + Duration::from_mins(2);
    assert_eq!(
        paused,
        [(
            ended.to_string(),
            first_probe.to_string(),
            "outage".to_owned()
        )],
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::SeatResumed { .. })),
        "{steps:#?}"
    );
}
