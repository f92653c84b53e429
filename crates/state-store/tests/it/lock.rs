//! The epic lock: one holder at a time, named when refused, released by death.

use std::time::{Duration, UNIX_EPOCH};

use epic_state_store::{EpicDir, EpicLock, Holder, LockError, rfc3339};

use crate::support::{PATIENCE, helper_env, spawn_helper, until_parent_is_gone, wait_for};

const GIT_ENV: &str = "STATE_STORE_TEST_LOCK_GIT";

fn epic(git: &tempfile::TempDir) -> EpicDir {
    EpicDir::new(git.path(), "checkout").expect("a valid epic id")
}

fn held_by(result: Result<EpicLock, LockError>) -> (Holder, String) {
    match result {
        Err(error @ LockError::Held { .. }) => {
            let message = error.to_string();
            let LockError::Held {
                holder: Some(holder),
                ..
            } = error
            else {
                panic!("the holder did not record itself: {message}");
            };
            (holder, message)
        }
        Err(other) => panic!("expected Held, got {other:?}"),
        Ok(_) => panic!("expected Held, but the lock was granted"),
    }
}

#[test]
fn second_acquire_in_the_same_process_is_refused_with_the_holder() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let lock = EpicLock::acquire(&dir).unwrap();
    assert_eq!(lock.path(), dir.lock());

    let (holder, message) = held_by(EpicLock::acquire(&dir));
    assert_eq!(&holder, lock.holder_record());
    assert_eq!(holder.pid, std::process::id());
    assert!(!holder.host.is_empty());
    assert!(!holder.command.is_empty());
    for part in [
        format!("epic lock `{}` is held by", dir.lock().display()),
        format!("pid {}", holder.pid),
        format!("on host `{}`", holder.host),
        format!("since {}", holder.started_at),
        "wait for it to finish or stop it".to_owned(),
    ] {
        assert!(message.contains(&part), "{part:?} not in {message:?}");
    }
}

#[test]
fn dropping_the_lock_releases_it() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let lock = EpicLock::acquire(&dir).unwrap();
    drop(lock);
    let again = EpicLock::acquire(&dir).unwrap();
    drop(again);
    // The file stays (removing it would race), emptied of its record.
    assert_eq!(std::fs::read_to_string(dir.lock()).unwrap(), "");
}

#[test]
fn holder_reports_the_live_holder_only() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    assert_eq!(EpicLock::holder(&dir).unwrap(), None, "no lock file yet");

    let lock = EpicLock::acquire(&dir).unwrap();
    let holder = EpicLock::holder(&dir).unwrap().expect("held");
    assert_eq!(&holder, lock.holder_record());
    // Probing does not disturb the holder.
    assert!(EpicLock::acquire(&dir).is_err());
    drop(lock);
    assert_eq!(EpicLock::holder(&dir).unwrap(), None);

    // A record without a lock (a holder that died) is no holder.
    let stale = serde_json::to_string(&holder).unwrap();
    std::fs::write(dir.lock(), stale).unwrap();
    assert_eq!(EpicLock::holder(&dir).unwrap(), None);
    let _lock = EpicLock::acquire(&dir).unwrap();
}

#[test]
fn holder_record_is_json() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let _lock = EpicLock::acquire(&dir).unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.lock()).unwrap()).unwrap();
    assert_eq!(record["pid"], std::process::id());
    let started_at = record["started_at"].as_str().unwrap();
    assert_eq!(
        started_at.len(),
        "2026-08-01T09:30:00Z".len(),
        "{started_at}"
    );
    assert!(started_at.ends_with('Z'), "{started_at}");
    assert!(record["host"].is_string());
    assert!(record["command"].is_array());
}

#[test]
fn rfc3339_is_utc_to_the_second() {
    let at = |seconds: i64| {
        let magnitude = Duration::from_secs(seconds.unsigned_abs());
        rfc3339(if seconds >= 0 {
            UNIX_EPOCH + magnitude
        } else {
            UNIX_EPOCH - magnitude
        })
    };
    assert_eq!(at(0), "1970-01-01T00:00:00Z");
    assert_eq!(at(-1), "1969-12-31T23:59:59Z");
    assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
    assert_eq!(at(1_785_576_600), "2026-08-01T09:30:00Z");
}

#[test]
fn rfc3339_truncates_fractions_towards_the_past() {
    assert_eq!(
        rfc3339(UNIX_EPOCH - Duration::from_millis(500)),
        "1969-12-31T23:59:59Z"
    );
    assert_eq!(
        rfc3339(UNIX_EPOCH + Duration::from_millis(1_500)),
        "1970-01-01T00:00:01Z"
    );
}

#[test]
fn rfc3339_clamps_what_jiff_cannot_hold() {
    let far = Duration::from_hours(24 * 400_000_000); // about a million years
    let late = rfc3339(UNIX_EPOCH + far);
    assert!(late.starts_with("9999-12-"), "{late}");
    let early = rfc3339(UNIX_EPOCH - far);
    assert!(early.starts_with("-009999-01-"), "{early}");
}

/// Helper, not a test: when run by [`a_killed_holder_does_not_block_the_next_run`], takes the
/// lock and holds it until killed (or until its parent is gone).
#[test]
#[ignore = "helper: run by lock::a_killed_holder_does_not_block_the_next_run"]
fn lock_holder_child() {
    let dir = EpicDir::new(helper_env(GIT_ENV), "checkout").unwrap();
    let _lock = EpicLock::acquire(&dir).unwrap();
    until_parent_is_gone();
}

#[test]
fn a_killed_holder_does_not_block_the_next_run() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let mut child = spawn_helper(
        "lock::lock_holder_child",
        &[(GIT_ENV, git.path().as_os_str())],
    );
    let pid = child.id();
    let holder = wait_for(&mut child, PATIENCE, || {
        EpicLock::holder(&dir).ok().flatten()
    });
    assert_eq!(holder.pid, pid);

    let (refused_by, message) = held_by(EpicLock::acquire(&dir));
    assert_eq!(refused_by, holder);
    assert!(
        message.contains(&format!("pid {pid} on host `")),
        "{message}"
    );

    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup, only the OS
    child.wait().unwrap();

    assert_eq!(EpicLock::holder(&dir).unwrap(), None);
    let lock = EpicLock::acquire(&dir).unwrap();
    assert_eq!(lock.holder_record().pid, std::process::id());
}

/// Helper, not a test: when run by [`a_removed_lock_file_does_not_unlock_the_epic`], takes the
/// lock and holds it until killed (or until its parent is gone).
#[test]
#[ignore = "helper: run by lock::a_removed_lock_file_does_not_unlock_the_epic"]
fn lock_holder_child_for_removal() {
    let dir = EpicDir::new(helper_env(GIT_ENV), "checkout").unwrap();
    let _lock = EpicLock::acquire(&dir).unwrap();
    until_parent_is_gone();
}

/// An agent runs as the user and can delete the lock file of the run that started it: the epic
/// stays locked (its directory is), so `epic status` still says it runs and a second run is
/// refused; once the holder dies, the next run takes the lock.
#[test]
fn a_removed_lock_file_does_not_unlock_the_epic() {
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let mut child = spawn_helper(
        "lock::lock_holder_child_for_removal",
        &[(GIT_ENV, git.path().as_os_str())],
    );
    let holder = wait_for(&mut child, PATIENCE, || {
        EpicLock::holder(&dir).ok().flatten()
    });
    assert_eq!(holder.pid, child.id());

    std::fs::remove_file(dir.lock()).unwrap();

    assert!(
        matches!(
            EpicLock::holder(&dir),
            Err(LockError::Held { holder: None, .. })
        ),
        "the epic still reads as locked: {:?}",
        EpicLock::holder(&dir)
    );
    match EpicLock::acquire(&dir) {
        Err(LockError::Held { .. }) => {}
        other => panic!("a second run must be refused, got {other:?}"),
    }

    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(EpicLock::holder(&dir).unwrap(), None);
    let lock = EpicLock::acquire(&dir).unwrap();
    assert_eq!(lock.holder_record().pid, std::process::id());
}

/// A run killed while it was starting an agent: the lock can outlive it for a moment, held by a
/// child forked into a session of its own that has not yet `exec`ed (which closes the lock's
/// descriptor). A rerun then finds a record naming a process that is gone, and waits for the
/// lock rather than refusing to run.
#[test]
#[cfg(target_os = "linux")]
fn a_lock_left_for_a_moment_by_a_dead_holder_is_waited_for() {
    use rustix::fs::inotify::{CreateFlags, ReadFlags, Reader, WatchFlags, add_watch, init};
    let git = tempfile::tempdir().unwrap();
    let dir = epic(&git);
    let leftover = EpicLock::acquire(&dir).unwrap();
    // The record names a process of this host that has exited.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let mut record = leftover.holder_record().clone();
    record.pid = gone.id();
    let mut line = serde_json::to_vec(&record).unwrap();
    line.push(b'\n');
    std::fs::write(dir.lock(), line).unwrap();

    // An acquire that finds the lock taken opens the lock file to read the record, once a
    // poll (10 ms); against a live holder's record it gives up after 5 polls. The lock is let
    // go only after 20 such reads: only the dead holder's grace lets the acquire through.
    let watch = init(CreateFlags::CLOEXEC).unwrap();
    add_watch(&watch, dir.lock(), WatchFlags::OPEN).unwrap();
    let releaser = std::thread::spawn(move || {
        let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = Reader::new(&watch, &mut buffer);
        let mut reads = 0;
        while reads < 20 {
            let event = reader.next().unwrap();
            if event.events().contains(ReadFlags::OPEN) {
                reads += 1;
            }
        }
        drop(leftover);
    });
    let lock = EpicLock::acquire(&dir).unwrap();
    releaser.join().unwrap();
    assert_eq!(lock.holder_record().pid, std::process::id());
}
