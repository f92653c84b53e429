//! The event log: whole lines, torn tails tolerated and never glued to the next event.

use std::fs;
use std::io::Write;
use std::sync::Arc;

use epic_state_store::{EventLog, read_all};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Event {
    at: String,
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn event(kind: &str) -> Event {
    Event {
        at: "2026-08-01T09:30:00Z".into(),
        kind: kind.into(),
        message: None,
    }
}

fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|event| event.kind.as_str()).collect()
}

#[test]
fn append_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("epic/checkout/events.jsonl");
    let log = EventLog::open(&path).unwrap();
    assert_eq!(log.path(), path);
    log.append(&event("run_started")).unwrap();
    log.append(&Event {
        message: Some("two\nlines and a \"quote\"".into()),
        ..event("info")
    })
    .unwrap();
    log.sync().unwrap();
    drop(log);
    // Reopening appends after what is there.
    EventLog::open(&path)
        .unwrap()
        .append(&event("run_finished"))
        .unwrap();

    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.ends_with('\n'));
    assert!(!text.contains("null"), "absent fields are omitted: {text}");

    let read = read_all::<Event>(&path).unwrap();
    assert!(read.is_clean());
    assert_eq!(kinds(&read.events), ["run_started", "info", "run_finished"]);
    assert_eq!(
        read.events[1].message.as_deref(),
        Some("two\nlines and a \"quote\"")
    );
}

#[test]
fn missing_log_has_no_events() {
    let dir = tempfile::tempdir().unwrap();
    let read = read_all::<Event>(dir.path().join("events.jsonl")).unwrap();
    assert!(read.events.is_empty());
    assert!(read.is_clean());
}

#[test]
fn torn_last_line_is_reported_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let log = EventLog::open(&path).unwrap();
    for kind in ["a", "b", "c"] {
        log.append(&event(kind)).unwrap();
    }
    // What a crash in the middle of the fourth write leaves.
    let torn = br#"{"at":"2026-08-01T09:30:00Z","ki"#;
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();

    let read = read_all::<Event>(&path).unwrap();
    assert_eq!(kinds(&read.events), ["a", "b", "c"]);
    let tail = read.torn_tail.expect("the torn line is reported");
    assert_eq!((tail.line, tail.bytes), (4, torn.len()));
    assert!(read.skipped.is_empty());
}

#[test]
fn appending_after_a_torn_line_keeps_later_lines_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let log = EventLog::open(&path).unwrap();
    log.append(&event("a")).unwrap();
    drop(log);
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"at":"2026-08-01T0"#)
        .unwrap();

    // The next run opens the log and goes on appending.
    let log = EventLog::open(&path).unwrap();
    log.append(&event("b")).unwrap();
    log.append(&event("c")).unwrap();

    let read = read_all::<Event>(&path).unwrap();
    assert_eq!(kinds(&read.events), ["a", "b", "c"]);
    assert_eq!(read.torn_tail, None);
    assert_eq!(read.skipped.len(), 1, "the old torn line, now whole");
    assert_eq!(read.skipped[0].line, 2);
    assert!(
        read.skipped[0].reason.contains("EOF"),
        "{}",
        read.skipped[0].reason
    );

    // Opening a clean log adds nothing.
    let before = fs::read(&path).unwrap();
    drop(EventLog::open(&path).unwrap());
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn unterminated_but_whole_last_line_is_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    fs::write(
        &path,
        "{\"at\":\"x\",\"kind\":\"a\"}\n\n{\"at\":\"x\",\"kind\":\"b\"}",
    )
    .unwrap();
    let read = read_all::<Event>(&path).unwrap();
    assert_eq!(kinds(&read.events), ["a", "b"]);
    assert!(read.is_clean());
}

#[test]
fn lines_of_another_shape_are_skipped_with_their_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let log = EventLog::open(&path).unwrap();
    log.append(&event("a")).unwrap();
    log.append(&serde_json::json!({"at": "x", "kind": 7}))
        .unwrap();
    log.append(&event("b")).unwrap();
    let read = read_all::<Event>(&path).unwrap();
    assert_eq!(kinds(&read.events), ["a", "b"]);
    assert_eq!(read.skipped.len(), 1);
    assert_eq!(read.skipped[0].line, 2);
    // Any JSON value reads back untyped.
    assert_eq!(
        read_all::<serde_json::Value>(&path).unwrap().events.len(),
        3
    );
}

#[test]
fn concurrent_appends_produce_only_whole_lines() {
    const THREADS: usize = 8;
    const EACH: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let shared = Arc::new(EventLog::open(&path).unwrap());
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let shared = Arc::clone(&shared);
            let path = &path;
            scope.spawn(move || {
                // Half the threads share one handle, half open their own, as separate processes
                // would.
                let own = (thread % 2 == 0).then(|| EventLog::open(path).unwrap());
                let log = own.as_ref().unwrap_or(&shared);
                for index in 0..EACH {
                    // Large lines (up to ~12 KiB) make any interleaving visible.
                    let body = format!("{thread}:{index};").repeat(1 + index * 7 % 1000);
                    log.append(&Event {
                        message: Some(body),
                        ..event(&format!("{thread}"))
                    })
                    .unwrap();
                }
            });
        }
    });
    let read = read_all::<Event>(&path).unwrap();
    assert!(read.is_clean(), "{:?} {:?}", read.skipped, read.torn_tail);
    assert_eq!(read.events.len(), THREADS * EACH);
    let mut next = [0usize; THREADS];
    for event in &read.events {
        let thread: usize = event.kind.parse().unwrap();
        let index = next[thread];
        let expected = format!("{thread}:{index};").repeat(1 + index * 7 % 1000);
        assert_eq!(event.message.as_deref(), Some(expected.as_str()));
        next[thread] += 1;
    }
    assert_eq!(next, [EACH; THREADS]);
}
