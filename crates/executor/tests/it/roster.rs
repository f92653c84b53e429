//! Rosters: a role's turns go to the first seat of its roster that is not paused. A seat at its
//! usage limit hands its turns to the next (no story fails, nothing waits); a roster whose every
//! seat is paused waits, bounded by `max_wait`; a stalled turn runs again on the next seat. The
//! seats are two named command seats of the one standard agent, told apart by `$SEAT`; time is
//! a [`ManualClock`] the tests move.

use std::time::Duration;

use epic_agents::{Role, Roster, Seat};
use epic_chat::SeatStop;
use epic_events::Event;
use epic_executor::{ManualClock, RunConfig};
use jiff::Timestamp;

use crate::epic_support::{EpicFixture, KEEP_PROMPTS, LEFTOVERS_NOTE, plan, statuses};
use crate::support::Events;

/// Where the tests' clock starts.
fn start() -> Timestamp {
    "2030-01-01T08:00:00Z".parse().expect("a time")
}

/// The standard agent as two seats, `first` and `second`, each with `$SEAT` set to its name.
fn roster(ep: &EpicFixture) -> Roster {
    let path = ep.fx.bin.join("agent");
    ep.agent();
    let seat = |name: &str| -> std::sync::Arc<dyn Seat> {
        std::sync::Arc::new(
            ep.fx
                .seat_for(&path.display().to_string())
                .named(name)
                .with_env("SEAT", name),
        )
    };
    Roster::new(vec![seat("first"), seat("second")]).expect("two seats")
}

/// A run configuration on `manual` with the two-seat roster as the coder.
fn config(ep: &EpicFixture, manual: &ManualClock) -> RunConfig {
    let mut config = ep.config();
    config.coder = roster(ep);
    config.clock = manual.clock();
    config
}

/// A hook: on the seat `first`, every coder turn prints Claude Code's usage-limit line with the
/// reset `reset` and exits 1; on `second`, the turn works and leaves `$ROOT/<story>.second`.
fn first_limited(reset: Timestamp) -> String {
    format!(
        r#"if [ "$EPIC_ROLE" = coder ] && [ "$SEAT" = first ]; then
  echo "Claude AI usage limit reached|{}"
  exit 1
fi
[ "$SEAT" = second ] && touch "$ROOT/$EPIC_STORY.second"
"#,
        reset.as_second()
    )
}

/// The seats of story `id`'s coder turns, in order.
fn turn_seats(steps: &[Event], id: &str) -> Vec<String> {
    steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnStarted {
                story, seat, role, ..
            } if story == id && *role == Role::Coder => Some(seat.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_at_its_limit_hands_its_turns_to_the_next_and_nothing_waits() {
    let ep = EpicFixture::new();
    // The reset is far past max-wait: with one seat, the run would stop.
    let reset = start() + Duration::from_hours(5);
    ep.hook("a", &first_limited(reset));
    ep.hook("b", &first_limited(reset));
    let manual = ManualClock::new(start());
    let mut config = config(&ep, &manual);
    config.max_wait = Duration::from_hours(1);
    config.concurrency = 1;
    config.stall_timeout = Duration::ZERO;
    // The judge is the same roster: with `first` paused, `second` judges too.
    config.judge = Some(roster(&ep));
    let events = Events::default();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    // Nothing moves the clock: a run that waited on it would never end.
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);
    assert!(!outcome.interrupted && outcome.stopped.is_none());
    assert!(ep.fx.root.join("a.second").exists() && ep.fx.root.join("b.second").exists());
    let steps = events.steps();
    let paused: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::SeatPaused { seat, .. } => Some(seat.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(paused, ["first"], "{steps:#?}");
    // Story a's coder met the limit once, then every coder turn was the second seat's; story
    // b, started while `first` is paused, never ran on it (its planner neither).
    let a = turn_seats(&steps, "a");
    assert_eq!(a[0], "first", "{a:?}");
    assert!(a[1..].iter().all(|seat| seat == "second"), "{a:?}");
    assert!(steps.iter().all(|event| !matches!(
        event,
        Event::TurnStarted { story, seat, .. } if story == "b" && seat == "first"
    )));
    // The report names the seats of each story with their turns.
    let story = &outcome.report.stories[0];
    let seats: Vec<(&str, u64)> = story
        .seats
        .iter()
        .map(|seat| (seat.seat.as_str(), seat.turns))
        .collect();
    assert_eq!(seats.len(), 2, "{seats:?}");
    // The planner's turn and the limited coder turn were the first seat's.
    assert_eq!(seats[0], ("first", 2));
    assert_eq!(seats[1].0, "second");
    let markdown = epic_report::render_markdown(&outcome.report);
    assert!(markdown.contains("## Seats by story"), "{markdown}");
    // Each merge's attestation names the seat of the judge's roster that cleared it.
    let attestations = std::fs::read_dir(ep.dir().attestations_dir()).expect("attestations");
    let mut judged = 0;
    for entry in attestations {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("read");
        let attestation: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        // The state's `{"version","data"}` envelope.
        assert_eq!(attestation["data"]["judge"]["seat"], "second", "{text}");
        judged += 1;
    }
    assert_eq!(judged, 2, "one attestation per story");
    assert!(markdown.contains("- a: first 2 turns"), "{markdown}");
}

/// A turn a usage limit cut off half way through a file runs again on the next seat, in the
/// worktree as the cut turn left it: that seat is told what it left, and finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_seat_is_told_what_the_turn_a_limit_cut_off_left() {
    let ep = EpicFixture::new();
    let reset = start() + Duration::from_hours(5);
    ep.hook(
        "a",
        &format!(
            r#"{KEEP_PROMPTS}if [ "$SEAT" = first ]; then
  mkdir -p src/a && printf 'fn half(' > src/a/half.rs && rm README.md
  echo "Claude AI usage limit reached|{}"
  exit 1
fi
case "$prompt" in *'- added `src/a/half.rs`'*) echo 'fn half() {{}}' > src/a/half.rs ;; esac
case "$prompt" in *'- deleted `README.md`'*) echo hello > README.md ;; esac
"#,
            reset.as_second()
        ),
    );
    let manual = ManualClock::new(start());
    let mut config = config(&ep, &manual);
    config.max_wait = Duration::from_hours(1);
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    assert_eq!(turn_seats(&events.steps(), "a")[..2], ["first", "second"]);
    let (cut, next) = (ep.coder_prompt(1), ep.coder_prompt(2));
    assert!(!cut.contains(LEFTOVERS_NOTE), "{cut}");
    assert!(
        next.contains(LEFTOVERS_NOTE)
            && next.contains("- deleted `README.md`\n- added `src/a/half.rs`\n"),
        "{next}"
    );
    let show = |path: &str| {
        ep.fx
            .git_in(&ep.fx.repo, &["show", &format!("epic/e:{path}")])
    };
    assert_eq!(show("src/a/half.rs"), "fn half() {}\n");
    assert_eq!(show("README.md"), "hello\n", "the deletion was undone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_roster_whose_every_seat_is_paused_waits_for_the_first_to_come_back() {
    let ep = EpicFixture::new();
    // Both seats meet a limit on their first coder turn: `first`'s resets in 5 h (past
    // max-wait), `second`'s in 30 min (within it). The run waits for `second`, and only it.
    let soon = start() + Duration::from_mins(30);
    ep.hook(
        "a",
        &format!(
            r#"if [ "$EPIC_ROLE" = coder ] && [ ! -f "$ROOT/$SEAT.limited" ]; then
  touch "$ROOT/$SEAT.limited"
  if [ "$SEAT" = first ]; then echo "Claude AI usage limit reached|{}"; else echo "Claude AI usage limit reached|{}"; fi
  exit 1
fi
"#,
            (start() + Duration::from_hours(5)).as_second(),
            soon.as_second()
        ),
    );
    let manual = ManualClock::new(start());
    let mut config = config(&ep, &manual);
    config.max_wait = Duration::from_hours(1);
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        assert_eq!(manual.waiter().await, soon);
        manual.advance(Duration::from_mins(30));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let seats = turn_seats(&events.steps(), "a");
    let coder: Vec<&str> = seats.iter().map(String::as_str).collect();
    assert!(
        coder.starts_with(&["first", "second"]) && coder[2..].iter().all(|seat| *seat == "second"),
        "{coder:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_roster_whose_every_seat_is_paused_past_max_wait_stops_the_run() {
    let ep = EpicFixture::new();
    let late = start() + Duration::from_hours(5);
    ep.hook(
        "a",
        &format!(
            "if [ \"$EPIC_ROLE\" = coder ]; then echo \"Claude AI usage limit reached|{}\"; exit 1; fi\n",
            late.as_second()
        ),
    );
    let manual = ManualClock::new(start());
    let mut config = config(&ep, &manual);
    config.max_wait = Duration::from_hours(1);
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert!(outcome.interrupted);
    let Some(SeatStop::MaxWait { seat, reason }) = &outcome.stopped else {
        panic!("not stopped on max-wait: {:?}", outcome.stopped);
    };
    assert_eq!(seat, "first,second");
    assert!(
        reason.contains("every seat of the roster first,second")
            && reason.contains("--max-wait 1h"),
        "{reason}"
    );
    assert_eq!(statuses(&outcome), ["a:skipped"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_turn_runs_again_on_the_next_seat() {
    let ep = EpicFixture::new();
    // On `first`, the coder says it is at work, then prints nothing until killed.
    ep.hook(
        "a",
        r#"if [ "$EPIC_ROLE" = coder ] && [ "$SEAT" = first ]; then
  echo "working on $EPIC_STORY"
  exec sleep 1000
fi
"#,
    );
    let manual = ManualClock::new(start());
    let config = config(&ep, &manual);
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events
            .until("the coder at work", |event| {
                matches!(event, Event::TurnOutput { text, .. } if text.contains("working on a"))
            })
            .await;
        assert_eq!(manual.waiter().await, start() + Duration::from_mins(10));
        manual.advance(Duration::from_mins(10));
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let steps = events.steps();
    let stalled: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnStalled { seat, .. } => Some(seat.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(stalled, ["first"], "{steps:#?}");
    // The stalled coder turn ran again on the second seat.
    let seats = turn_seats(&steps, "a");
    assert_eq!(seats[..2], ["first", "second"], "{seats:?}");
    assert_eq!(outcome.report.stories[0].stalled_turns, 1);
}
