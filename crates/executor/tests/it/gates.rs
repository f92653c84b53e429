//! Gates on their own: order, the first red one, deadlines, output tails.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use epic_executor::{GateResult, Gates, GatesCancelled};
use epic_perimeter::Severity;
use tokio_util::sync::CancellationToken;

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
    let gates = Gates::new(["echo started; sleep 30"], Duration::from_millis(300));
    let started = Instant::now();
    let (review, _) = run(&gates, dir.path()).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!review.clean);
    assert!(
        review.issues[0].description.contains("timed out"),
        "{}",
        review.issues[0].description
    );
    assert!(review.issues[0].description.contains("started"));
}

#[tokio::test]
async fn cancelling_stops_the_gates() {
    let dir = tempfile::tempdir().expect("dir");
    let gates = Gates::new(["sleep 30"], Duration::from_mins(1));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = gates.run(dir.path(), &[], &cancel, &|_| {}).await;
    assert_eq!(result, Err(GatesCancelled));
    assert!(started.elapsed() < Duration::from_secs(5));
}
