//! Atomic saves under SIGKILL: a writer killed at any instant never leaves a torn document.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use epic_state_store::{load, save};

use crate::support::{
    Counter, PATIENCE, helper_env, seeded, spawn_helper, temp_files, until_parent_is_gone, wait_for,
};

const DOC_ENV: &str = "STATE_STORE_TEST_WRITER_DOC";
const START_ENV: &str = "STATE_STORE_TEST_WRITER_START";
const KILLS: u64 = 200;
/// Each writer counts from its own base, so the parent can tell whose document it reads.
const SPAN: u64 = 1_000_000_000;

/// Helper, not a test: when run by [`killed_writers_never_leave_a_torn_document`], saves
/// documents with increasing counters until it is killed (or until its parent is gone).
#[test]
#[ignore = "helper: run by atomic::killed_writers_never_leave_a_torn_document"]
fn writer_child() {
    let path = PathBuf::from(helper_env(DOC_ENV));
    let start: u64 = helper_env(START_ENV).to_str().unwrap().parse().unwrap();
    let gone = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&gone);
    std::thread::spawn(move || {
        until_parent_is_gone();
        flag.store(true, Ordering::Relaxed);
    });
    let mut n = start;
    while !gone.load(Ordering::Relaxed) {
        save(&path, &Counter::new(n)).unwrap();
        n += 1;
    }
}

/// Loads the document, which must always be there and whole.
fn load_whole(path: &Path) -> Counter {
    let counter = load::<Counter>(path)
        .unwrap_or_else(|error| panic!("torn or unreadable document: {error}"))
        .expect("the document exists");
    assert_eq!(
        counter,
        Counter::new(counter.n),
        "the document mixes two writes"
    );
    counter
}

#[test]
fn killed_writers_never_leave_a_torn_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter.json");
    save(&path, &Counter::new(0)).unwrap();
    let mut rng = seeded();
    let mut last = 0;
    // Saves the writers made between the first one the parent saw and the kill.
    let mut progressed = 0;
    for round in 1..=KILLS {
        let start = round * SPAN;
        let start_text = start.to_string();
        let mut child = spawn_helper(
            "atomic::writer_child",
            &[
                (DOC_ENV, path.as_os_str()),
                (START_ENV, OsStr::new(&start_text)),
            ],
        );
        // Read while the writer writes, until its first save has landed: every read is whole.
        let seen = wait_for(&mut child, PATIENCE, || {
            let counter = load_whole(&path);
            if counter.n >= start {
                Some(counter.n)
            } else {
                assert_eq!(counter.n, last, "a document nobody wrote");
                None
            }
        });
        // Every fourth round, let the writer save twice more first (still reading: every read
        // is whole), so that some kills land after several saves however slow the machine.
        if round % 4 == 0 {
            wait_for(&mut child, PATIENCE, || {
                (load_whole(&path).n >= seen + 2).then_some(())
            });
        }
        // Kill at a pseudo-random instant within the next few saves.
        std::thread::sleep(Duration::from_micros(rng.below(4000)));
        child.kill().unwrap();
        child.wait().unwrap();

        let counter = load_whole(&path);
        assert!(
            (seen..start + SPAN).contains(&counter.n),
            "round {round}: counter {} was never written (saw {seen} before the kill; \
             replay with STATE_STORE_SEED={})",
            counter.n,
            rng.seed()
        );
        last = counter.n;
        progressed += counter.n - seen;
        // At most the killed writer's own temp file; earlier ones were cleaned up by the next
        // writer.
        let temps = temp_files(&path);
        assert!(
            temps.len() <= 1,
            "round {round}: temp files pile up: {temps:?}"
        );
    }
    assert!(
        progressed > 0,
        "every kill landed before a writer's second save: the kills test nothing"
    );
    // A save from a live process removes what the last killed writer left.
    save(&path, &Counter::new(last + 1)).unwrap();
    assert_eq!(temp_files(&path), Vec::<String>::new());
    assert_eq!(load_whole(&path).n, last + 1);
}
