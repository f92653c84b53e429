//! The command seat on its own: deadlines and forked children, cancellation, an agent that
//! never reads its prompt, transient and other failures. (Huge output, bounded in memory and in
//! the transcript, is a unit test of the crate-private chat: `chat.rs`.)

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use epic_agents::{
    CommandSeat, Progress, RetryPolicy, Role, Seat, SeatError, TurnContext, TurnRequest,
};
use epic_process::ManualClock;
use epic_process::sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::support::{Fixture, PATIENCE, pid_written, plan, wait_dead, wait_for_pid};

fn request(
    fixture: &Fixture,
    prompt: &str,
    timeout: Duration,
    cancel: CancellationToken,
) -> TurnRequest {
    TurnRequest {
        role: Role::Coder,
        system: "rules".into(),
        history: Vec::new(),
        prompt: prompt.into(),
        leftovers_note: None,
        context: TurnContext {
            epic: "e".into(),
            story: Arc::new(plan("").stories[0].clone()),
            task: Some("one".into()),
            worktree: fixture.worktree.clone(),
            slot: 1,
            deadline: tokio::time::Instant::now() + timeout,
            cancel,
            sandbox: Sandbox::off(),
            watchdog: None,
            clock: epic_process::Clock::system(),
            leftovers: None,
        },
    }
}

/// The pid the agent wrote to `name` in the fixture's root before its turn ended.
fn pid_in(fixture: &Fixture, name: &str) -> u32 {
    pid_written(&fixture.root.join(name))
        .unwrap_or_else(|| panic!("the agent wrote no pid to {name} during its turn"))
}

#[tokio::test]
async fn a_hanging_agent_is_killed_at_its_deadline_with_its_forked_child() {
    let fixture = Fixture::new();
    // The agent forks a child, says so, then sleeps far longer than any test runs: only the kill
    // at the deadline ends it. The deadline only has to leave the script time to start.
    let path = fixture.script(
        "hang",
        "cat >/dev/null\nsleep 1000 &\necho $! > \"$ROOT/child.pid\"\necho working\nsleep 1000\n",
    );
    let seat = fixture.seat_for(&path.display().to_string());
    let deadline = Duration::from_secs(3);
    let started = Instant::now();
    let request = request(&fixture, "go", deadline, CancellationToken::new());
    let error = tokio::time::timeout(PATIENCE, seat.turn(&request, &|_| {}))
        .await
        .expect("the turn was stopped at its deadline, not left to sleep")
        .expect_err("times out");
    assert!(matches!(error, SeatError::TimedOut { .. }), "{error:?}");
    assert!(started.elapsed() >= deadline, "not before its deadline");
    assert!(
        wait_dead(pid_in(&fixture, "child.pid")),
        "the forked child died with the turn"
    );
}

#[tokio::test]
async fn a_background_child_dies_when_the_turn_ends_normally() {
    let fixture = Fixture::new();
    let path = fixture.script(
        "leaver",
        "cat >/dev/null\nsleep 1000 &\necho $! > \"$ROOT/child.pid\"\necho done\n",
    );
    let seat = fixture.seat_for(&path.display().to_string());
    // The child keeps the turn's standard output open for 1000 s: a turn that waited for it
    // would end at this deadline, not before.
    let request = request(&fixture, "go", PATIENCE, CancellationToken::new());
    let reply = tokio::time::timeout(PATIENCE, seat.turn(&request, &|_| {}))
        .await
        .expect("the child's open stdout did not hold the turn")
        .expect("ok");
    assert_eq!(reply.text, "done\n");
    assert!(
        tokio::time::Instant::now() < request.context.deadline,
        "the child's open stdout did not hold the turn"
    );
    assert!(wait_dead(pid_in(&fixture, "child.pid")));
}

#[tokio::test]
async fn a_cancelled_turn_kills_the_agent() {
    let fixture = Fixture::new();
    let path = fixture.script("sleeper", "echo $$ > \"$ROOT/agent.pid\"\nsleep 1000\n");
    let seat = fixture.seat_for(&path.display().to_string());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let pid_file = fixture.root.join("agent.pid");
    // Cancel once the agent runs (it wrote its pid), not after a guess at how long it takes.
    tokio::spawn(async move {
        wait_for_pid(&pid_file).await;
        trigger.cancel();
    });
    let request = request(&fixture, "go", Duration::from_hours(1), cancel);
    let error = tokio::time::timeout(PATIENCE, seat.turn(&request, &|_| {}))
        .await
        .expect("the cancelled turn was stopped, not left to sleep")
        .expect_err("cancelled");
    assert!(matches!(error, SeatError::Cancelled), "{error:?}");
    assert!(wait_dead(pid_in(&fixture, "agent.pid")));
}

#[tokio::test]
async fn an_agent_that_never_reads_its_prompt_does_not_deadlock() {
    let fixture = Fixture::new();
    let path = fixture.script("deaf", "echo \"$EPIC_ROLE $EPIC_TASK $EPIC_SLOT\"\n");
    let seat = fixture.seat_for(&path.display().to_string());
    let prompt = "x".repeat(4 * 1024 * 1024);
    let request = request(
        &fixture,
        &prompt,
        Duration::from_secs(20),
        CancellationToken::new(),
    );
    let reply = seat.turn(&request, &|_| {}).await.expect("ok");
    assert_eq!(reply.text, "coder one 1\n");
}

#[tokio::test]
async fn the_prompt_arrives_whole_on_stdin_and_output_streams() {
    let fixture = Fixture::new();
    let path = fixture.script("echoer", "cat\n");
    let seat = fixture.seat_for(&path.display().to_string());
    let request = request(
        &fixture,
        "hello",
        Duration::from_secs(20),
        CancellationToken::new(),
    );
    let chunks = Mutex::new(String::new());
    let reply = seat
        .turn(&request, &|progress| {
            if let Progress::Chunk(text) = progress {
                chunks.lock().expect("chunks").push_str(text);
            }
        })
        .await
        .expect("ok");
    assert_eq!(reply.text, request.render());
    assert_eq!(*chunks.lock().expect("chunks"), reply.text);
}

/// An agent failing with `message` on its first `failures` attempts, counting attempts.
fn flaky(fixture: &Fixture, failures: u32, message: &str) -> CommandSeat {
    let path = fixture.script(
        "flaky",
        &format!(
            "cat >/dev/null\nn=$(cat \"$ROOT/attempts\" 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > \"$ROOT/attempts\"\nif [ $n -le {failures} ]; then echo 'partial output'; echo '{message}' >&2; exit 1; fi\necho fine\n"
        ),
    );
    fixture.seat_for(&path.display().to_string())
}

fn attempts(fixture: &Fixture) -> u32 {
    std::fs::read_to_string(fixture.root.join("attempts"))
        .expect("attempts")
        .trim()
        .parse()
        .expect("number")
}

#[tokio::test]
async fn a_transient_failure_is_retried() {
    let fixture = Fixture::new();
    let seat = flaky(&fixture, 1, "Error: 429 Too Many Requests");
    let request = request(
        &fixture,
        "go",
        Duration::from_secs(20),
        CancellationToken::new(),
    );
    let retries = Mutex::new(Vec::new());
    let reply = seat
        .turn(&request, &|progress| {
            if let Progress::Retrying {
                attempt, reason, ..
            } = progress
            {
                retries
                    .lock()
                    .expect("retries")
                    .push((attempt, reason.to_owned()));
            }
        })
        .await
        .expect("ok on the second attempt");
    assert_eq!(reply.text, "fine\n");
    assert_eq!(reply.attempts, 2);
    assert_eq!(attempts(&fixture), 2);
    let retries = retries.lock().expect("retries");
    assert_eq!(retries.len(), 1);
    assert!(retries[0].1.contains("429"), "{:?}", retries[0]);
}

/// The backoff is waited on the turn's clock: an hour's wait, over as soon as the clock moves.
#[tokio::test]
async fn a_retry_waits_on_the_turns_clock() {
    let fixture = Fixture::new();
    let hour = Duration::from_hours(1);
    let seat = flaky(&fixture, 1, "503 Service Unavailable").with_retry(RetryPolicy {
        attempts: 2,
        first_delay: hour,
        max_delay: hour,
    });
    let start: jiff::Timestamp = "2030-01-01T00:00:00Z".parse().expect("a time");
    let manual = ManualClock::new(start);
    let mut request = request(&fixture, "go", 2 * hour, CancellationToken::new());
    request.context.clock = manual.clock();
    let turn = tokio::spawn(async move { seat.turn(&request, &|_| {}).await });
    let until = tokio::time::timeout(PATIENCE, manual.waiter())
        .await
        .expect("the backoff waits on the turn's clock, not tokio's timer");
    // Up to half taken off at random.
    assert!(
        until >= start + hour / 2 && until <= start + hour,
        "the backoff waits until {until}"
    );
    assert_eq!(
        attempts(&fixture),
        1,
        "no second attempt before the clock moves"
    );
    manual.advance(hour);
    let reply = tokio::time::timeout(PATIENCE, turn)
        .await
        .expect("the turn goes on once the clock moved")
        .expect("the turn's task")
        .expect("ok on the second attempt");
    assert_eq!(reply.attempts, 2);
    assert_eq!(attempts(&fixture), 2);
}

#[tokio::test]
async fn a_transient_failure_gives_up_after_the_last_attempt() {
    let fixture = Fixture::new();
    let seat = flaky(&fixture, 10, "503 Service Unavailable");
    let request = request(
        &fixture,
        "go",
        Duration::from_secs(20),
        CancellationToken::new(),
    );
    let error = seat.turn(&request, &|_| {}).await.expect_err("fails");
    assert!(
        matches!(error, SeatError::Failed { attempts: 3, .. }),
        "{error:?}"
    );
    assert_eq!(attempts(&fixture), 3);
}

#[tokio::test]
async fn any_other_failure_fails_at_once_with_the_output_tail() {
    let fixture = Fixture::new();
    let seat = flaky(&fixture, 10, "syntax error near line 3");
    let request = request(
        &fixture,
        "go",
        Duration::from_secs(20),
        CancellationToken::new(),
    );
    let error = seat.turn(&request, &|_| {}).await.expect_err("fails");
    let SeatError::Failed {
        attempts: 1,
        status,
        tail,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(status, "exit code 1");
    assert!(
        tail.contains("partial output") && tail.contains("syntax error near line 3"),
        "{tail}"
    );
    assert_eq!(attempts(&fixture), 1);
}
