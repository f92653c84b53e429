//! Stalled and looping turns: a coder that prints nothing for `--stall-timeout` is ended and its
//! request runs again once (a second stall fails the story); a coder whose stream shows the same
//! tool call five times in a row is ended and runs again once with a note naming the call (a
//! second loop fails the story); `--stall-timeout 0` watches nothing. A request run again is told
//! what the stalled turn left uncommitted, and nothing is committed unless a turn replies. The
//! silence is measured on a [`ManualClock`] the tests move once the watchdog waits on it.

use std::sync::Arc;
use std::time::Duration;

use epic_agents::{CommandSeat, Preset, Seat};
use epic_events::Event;
use epic_executor::{ManualClock, RunConfig};
use jiff::Timestamp;

use crate::epic_support::{EpicFixture, KEEP_PROMPTS, LEFTOVERS_NOTE, plan, reason, statuses};
use crate::limits::Ticks;
use crate::support::Events;

/// Where the tests' clock starts.
fn start() -> Timestamp {
    "2030-01-01T08:00:00Z".parse().expect("a time")
}

/// A hook whose first coder turn says it is at work, then prints nothing until killed; later
/// turns work.
const STALL_ONCE: &str = r#"if [ ! -f "$ROOT/stalled" ]; then
  touch "$ROOT/stalled"
  echo "working on $EPIC_STORY"
  exec sleep 1000
fi
"#;

/// A hook whose every coder turn says it is at work, then prints nothing until killed.
const STALL_ALWAYS: &str = r#"echo "working on $EPIC_STORY"
exec sleep 1000
"#;

/// Whether `event` is a chunk of story a's output saying it is at work.
fn at_work(event: &Event) -> bool {
    matches!(event, Event::TurnOutput { story, text, .. } if story == "a" && text.contains("working on a"))
}

/// The `turn_stalled` events: `(silent_secs, again)`.
fn stalls(steps: &[Event]) -> Vec<(u64, bool)> {
    steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnStalled {
                silent_secs, again, ..
            } => Some((*silent_secs, *again)),
            _ => None,
        })
        .collect()
}

/// A run configuration on `manual`, with the default stall timeout (10 minutes).
fn on_clock(ep: &EpicFixture, manual: &ManualClock) -> RunConfig {
    let mut config = ep.config();
    config.clock = manual.clock();
    assert_eq!(config.stall_timeout, Duration::from_mins(10), "the default");
    config
}

/// Waits until story a's coder is at work for the `nth` time, then until the watchdog waits for
/// ten minutes of silence from `since` on `manual`, and moves the clock there.
async fn let_it_stall(events: &Events, manual: &ManualClock, nth: usize, since: Timestamp) {
    events.until_nth("the coder at work", nth, at_work).await;
    let silent_until = since + Duration::from_mins(10);
    assert_eq!(manual.waiter().await, silent_until);
    manual.advance(Duration::from_mins(10) - Duration::from_secs(1));
    assert_eq!(
        manual.waiter().await,
        silent_until,
        "not silent long enough"
    );
    manual.advance(Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coder_silent_past_the_stall_timeout_runs_again_and_the_story_is_done() {
    let ep = EpicFixture::new();
    ep.hook("a", STALL_ONCE);
    let manual = ManualClock::new(start());
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(
        ep.run(&plan, on_clock(&ep, &manual), &events),
        let_it_stall(&events, &manual, 1, start())
    );
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let steps = events.steps();
    assert_eq!(stalls(&steps), [(600, true)], "{steps:#?}");
    let ended: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnEnded {
                story,
                ok: false,
                error,
                ..
            } if story == "a" => error.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(ended.len(), 1, "{steps:#?}");
    assert!(
        ended[0].contains("printed nothing for 600s and was ended as stalled"),
        "{}",
        ended[0]
    );
    let story = &outcome.report.stories[0];
    assert_eq!((story.stalled_turns, story.looping_turns), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coder_stalled_twice_fails_the_story_with_the_stall() {
    let ep = EpicFixture::new();
    ep.hook("a", STALL_ALWAYS);
    let manual = ManualClock::new(start());
    let events = Events::default();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, on_clock(&ep, &manual), &events), async {
        let_it_stall(&events, &manual, 1, start()).await;
        let_it_stall(&events, &manual, 2, start() + Duration::from_mins(10)).await;
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    assert!(
        reason(&outcome, 0).contains("printed nothing for 600s and was ended as stalled"),
        "{}",
        reason(&outcome, 0)
    );
    let steps = events.steps();
    assert_eq!(stalls(&steps), [(600, true), (600, false)], "{steps:#?}");
    assert_eq!(outcome.report.stories[0].stalled_turns, 2);
}

/// After [`KEEP_PROMPTS`]: the first coder turn writes half a file, says it is at work, then
/// prints nothing until killed; a later turn finishes the file when its prompt names it.
const HALF_A_FILE_THEN_SILENCE: &str = r#"if [ "$n" = 1 ]; then
  mkdir -p src/a && printf 'fn half(' > src/a/half.rs
  echo "working on $EPIC_STORY"
  exec sleep 1000
fi
case "$prompt" in *'- added `src/a/half.rs`'*) echo 'fn half() {}' > src/a/half.rs ;; esac
"#;

/// The hole this closes: the turn run again after a stall, in the worktree as the stalled turn
/// left it, was asked the same as the first and not told of the half file; its "done" committed
/// the half file, and it merged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_run_again_after_a_stall_is_told_the_half_file_the_stalled_one_left() {
    let ep = EpicFixture::new();
    ep.hook("a", &format!("{KEEP_PROMPTS}{HALF_A_FILE_THEN_SILENCE}"));
    let manual = ManualClock::new(start());
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(
        ep.run(&plan, on_clock(&ep, &manual), &events),
        let_it_stall(&events, &manual, 1, start())
    );
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    assert_eq!(stalls(&events.steps()), [(600, true)]);
    let (first, again) = (ep.coder_prompt(1), ep.coder_prompt(2));
    assert!(!first.contains(LEFTOVERS_NOTE), "{first}");
    assert!(
        again.contains(&format!(
            "{LEFTOVERS_NOTE} (with anything earlier turns of this task changed):\n- added \
             `src/a/half.rs`\n"
        )),
        "{again}"
    );
    // The note follows the request, which is the same as the first turn's.
    let request = first.trim_end();
    assert!(again.starts_with(request), "{again}");
    // Told, the turn run again finished the file: what merged is whole.
    assert_eq!(
        ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:src/a/half.rs"]),
        "fn half() {}\n"
    );
}

/// A request that stalls again is not confirmed by any turn: nothing of either attempt is
/// committed, and what they wrote is kept aside as the failed task's rejected changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_stalls_again_leaves_nothing_of_either_attempt_committed() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        &format!(
            "{KEEP_PROMPTS}mkdir -p src/a && printf 'fn half(' > \"src/a/half-$n.rs\"\n\
             {STALL_ALWAYS}"
        ),
    );
    let manual = ManualClock::new(start());
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, on_clock(&ep, &manual), &events), async {
        let_it_stall(&events, &manual, 1, start()).await;
        let_it_stall(&events, &manual, 2, start() + Duration::from_mins(10)).await;
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let again = ep.coder_prompt(2);
    assert!(again.contains("- added `src/a/half-1.rs`\n"), "{again}");
    // The story branch is where the task started: the epic branch's head.
    assert_eq!(ep.rev("story/e/a"), ep.rev("epic/e"));
    let patch = std::fs::read_to_string(ep.dir().rejected_patch("a").expect("path"))
        .expect("the stalled attempts' files are kept aside");
    assert!(
        patch.contains("src/a/half-1.rs") && patch.contains("src/a/half-2.rs"),
        "{patch}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_timeout_of_zero_watches_nothing() {
    let ep = EpicFixture::new();
    ep.hook(
        "a",
        "echo \"working on $EPIC_STORY\"\nread -r _ < \"$ROOT/tick\"\n",
    );
    let mut ticks = Ticks::new(&ep);
    let manual = ManualClock::new(start());
    let mut config = on_clock(&ep, &manual);
    config.stall_timeout = Duration::ZERO;
    let events = Events::default();
    let plan = plan(&[("a", &[])]);
    let (outcome, ()) = tokio::join!(ep.run(&plan, config, &events), async {
        events.until("the coder at work", at_work).await;
        // An hour of silence on the run's clock: a watched turn would have been ended.
        manual.advance(Duration::from_hours(1));
        ticks.tick();
    });
    let outcome = outcome.expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let steps = events.steps();
    assert!(stalls(&steps).is_empty(), "{steps:#?}");
    assert_eq!(outcome.report.stories[0].stalled_turns, 0);
}

/// A stand-in for Claude Code on `PATH` that checks it was asked for `stream-json --verbose`,
/// prints its stream, and plays each role: a planner plans one task; a coder calls `Bash` with
/// `cargo test` five times in a row (each failing) and waits to be killed, on its first turn
/// only unless `$ROOT/loop-always` exists, else writes the story's file; anyone else clears.
/// Each coder prompt is kept as `$ROOT/coder-prompt-N`.
const LOOPING_CLAUDE: &str = r#"prompt=$(cat)
case " $* " in
  *" -p --output-format stream-json --verbose "*) ;;
  *) echo "error: not asked for stream-json --verbose: $*" >&2; exit 1 ;;
esac
echo '{"type":"system","subtype":"init","cwd":"'"$PWD"'","session_id":"s","tools":["Bash","Edit","Read"],"model":"claude-opus-5-5","permissionMode":"acceptEdits"}'
result() {
  printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":900,"num_turns":1,"result":"%s","session_id":"s","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$1"
}
case "$EPIC_ROLE" in
planner) result '{\"tasks\":[{\"title\":\"build\",\"description\":\"write the story file\"}]}' ;;
coder)
  n=$(( $(cat "$ROOT/coder-turns" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$ROOT/coder-turns"
  printf '%s' "$prompt" > "$ROOT/coder-prompt-$n"
  if [ "$n" = 1 ] || [ -f "$ROOT/loop-always" ]; then
    i=0
    while [ "$i" -lt 5 ]; do
      i=$((i + 1))
      printf '{"type":"assistant","message":{"id":"m%s","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_%s","name":"Bash","input":{"command":"cargo test","description":"Run the tests"}}]},"session_id":"s"}\n' "$n$i" "$n$i"
      printf '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%s","type":"tool_result","content":"error: could not compile","is_error":true}]},"session_id":"s"}\n' "$n$i"
    done
    exec sleep 1000
  fi
  mkdir -p "src/$EPIC_STORY" && echo done > "src/$EPIC_STORY/done.txt"
  result done ;;
*) result '{\"clean\":true,\"issues\":[]}' ;;
esac
"#;

/// The `claude` preset, run against [`LOOPING_CLAUDE`] first on `PATH`.
fn looping_claude(ep: &EpicFixture) -> Arc<dyn Seat> {
    ep.fx.script("claude", LOOPING_CLAUDE);
    let path = format!(
        "{}:{}",
        ep.fx.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Arc::new(
        CommandSeat::preset(Preset::Claude)
            .with_env("PATH", path)
            .with_env("ROOT", &ep.fx.root)
            .with_env("GIT_CONFIG_NOSYSTEM", "1"),
    )
}

/// The `turn_looping` events: `(tool, input, times, again)`.
fn loops(steps: &[Event]) -> Vec<(String, String, u32, bool)> {
    steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnLooping {
                tool,
                input,
                times,
                again,
                ..
            } => Some((tool.clone(), input.clone(), *times, *again)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_coder_runs_again_with_a_note_naming_the_call() {
    let ep = EpicFixture::new();
    let mut config = RunConfig::new(looping_claude(&ep));
    config.turn_timeout = Duration::from_mins(1);
    // The stand-in plays no `claude auth status`.
    config.preflight = false;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:#?}", events.steps());
    let steps = events.steps();
    let input = r#"{"command":"cargo test","description":"Run the tests"}"#;
    assert_eq!(
        loops(&steps),
        [("Bash".to_owned(), input.to_owned(), 5, true)],
        "{steps:#?}"
    );
    // What the agent was doing, read from its stream as it came.
    let doing: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnActivity { story, doing, .. } if story == "a" => Some(doing.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(doing, ["running `cargo test`"; 5], "{steps:#?}");
    let first = std::fs::read_to_string(ep.fx.root.join("coder-prompt-1")).expect("prompt 1");
    let second = std::fs::read_to_string(ep.fx.root.join("coder-prompt-2")).expect("prompt 2");
    assert!(!first.contains("Note: your previous attempt"), "{first}");
    assert!(
        second.contains(&format!(
            "Note: your previous attempt at this request was stopped because it called `Bash` \
             with `{input}` 5 times in a row"
        )),
        "{second}"
    );
    let story = &outcome.report.stories[0];
    assert_eq!((story.stalled_turns, story.looping_turns), (0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coder_looping_twice_fails_the_story_with_the_loop() {
    let ep = EpicFixture::new();
    std::fs::write(ep.fx.root.join("loop-always"), "").expect("loop always");
    let mut config = RunConfig::new(looping_claude(&ep));
    config.turn_timeout = Duration::from_mins(1);
    config.preflight = false;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("called `Bash` with `{\"command\":\"cargo test\"")
            && why.contains("5 times in a row and was ended as looping"),
        "{why}"
    );
    let again: Vec<bool> = loops(&events.steps())
        .into_iter()
        .map(|(.., again)| again)
        .collect();
    assert_eq!(again, [true, false]);
    assert_eq!(outcome.report.stories[0].looping_turns, 2);
}
