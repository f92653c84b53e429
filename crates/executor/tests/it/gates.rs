//! Gates on their own: order, the first red one, deadlines, output tails.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use epic_executor::{GateResult, Gates, GatesCancelled};
use epic_perimeter::Severity;
use tokio_util::sync::CancellationToken;

use crate::support::{PATIENCE, pid_written, wait_dead, wait_for_pid};

async fn run(gates: &Gates, dir: &std::path::Path) -> (epic_perimeter::Review, Vec<GateResult>) {
    let results = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&results);
    let review = gates
        .run(
            dir,
            &[("EPIC_SLOT".into(), "2".into())],
            &CancellationToken::new(),
            &move |result| {
                sink.lock().expect("results").push(result.clone());
            },
        )
        .await
        .expect("not cancelled");
    let results = results.lock().expect("results").clone();
    (review, results)
}

#[tokio::test]
async fn no_gates_is_clean() {
    let dir = tempfile::tempdir().expect("dir");
    let (review, results) = run(&Gates::none(), dir.path()).await;
    assert!(review.clean);
    assert!(results.is_empty());
}

#[tokio::test]
async fn stops_at_the_first_red_gate_with_its_output_tail() {
    let dir = tempfile::tempdir().expect("dir");
    let gates = Gates::new(
        [
            "test \"$EPIC_SLOT\" = 2",
            "seq 1 100000; echo 'the real error' >&2; exit 3",
            "touch never-ran",
        ],
        Duration::from_secs(20),
    );
    let (review, results) = run(&gates, dir.path()).await;
    assert!(!review.clean);
    assert_eq!(review.issues.len(), 1);
    let issue = &review.issues[0];
    assert_eq!(issue.severity, Severity::Critical);
    assert!(issue.title.contains("exit 3"), "{}", issue.title);
    assert!(issue.description.contains("exit code 3"));
    assert!(
        issue.description.trim_end().ends_with("the real error"),
        "{}",
        issue.description
    );
    assert!(issue.description.len() < 5000, "the output is bounded");
    assert_eq!(results.len(), 2);
    assert!(results[0].passed && !results[1].passed);
    assert!(!dir.path().join("never-ran").exists());
}

#[tokio::test]
async fn a_hanging_gate_is_killed_at_its_deadline() {
    let dir = tempfile::tempdir().expect("dir");
    // The gate says it started, then sleeps far longer than any test runs: only the kill at the
    // deadline ends it. The deadline only has to leave the shell time to print its line.
    let deadline = Duration::from_secs(3);
    let gates = Gates::new(
        ["echo $$ > gate.pid; echo started; exec sleep 1000"],
        deadline,
    );
    let started = Instant::now();
    let (review, results) = tokio::time::timeout(PATIENCE, run(&gates, dir.path()))
        .await
        .expect("the gate was stopped at its deadline, not left to sleep");
    assert!(started.elapsed() >= deadline, "not before its deadline");
    assert!(!review.clean);
    assert!(
        review.issues[0].description.contains("timed out"),
        "{}",
        review.issues[0].description
    );
    assert!(review.issues[0].description.contains("started"));
    assert_eq!(results.len(), 1);
    assert!(!results[0].passed);
    let pid = pid_written(&dir.path().join("gate.pid")).expect("the gate wrote its pid");
    assert!(wait_dead(pid), "the gate {pid} outlived its deadline");
}

#[tokio::test]
async fn cancelling_stops_the_gates() {
    let dir = tempfile::tempdir().expect("dir");
    // A deadline no test reaches: only the cancellation can stop this gate.
    let gates = Gates::new(
        ["echo $$ > gate.pid; exec sleep 1000"],
        Duration::from_hours(1),
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let pid_file = dir.path().join("gate.pid");
    // Cancel once the gate runs (it wrote its pid), not after a guess at how long it takes.
    let running = tokio::spawn(async move {
        let pid = wait_for_pid(&pid_file).await;
        trigger.cancel();
        pid
    });
    let result = tokio::time::timeout(PATIENCE, gates.run(dir.path(), &[], &cancel, &|_| {}))
        .await
        .expect("the cancelled gate was stopped, not left to sleep");
    assert_eq!(result, Err(GatesCancelled));
    let pid = running.await.expect("the trigger");
    assert!(wait_dead(pid), "the gate {pid} outlived the cancellation");
}
