//! Waiting in tests for what a child process makes true (a file it writes, an event it logs, its
//! exit): one loop, [`poll`], that looks every [`POLL`], and the bounds it is given, which only
//! ever end a wait for something that never comes ([`PATIENCE`], [`RUN_PATIENCE`]).
//!
//! A test never waits for the clock: it looks, again and again, for the event itself. The bound
//! is not a timing the test relies on, only how long a broken behaviour is waited for before the
//! test fails saying what never came.

use std::time::{Duration, Instant};

/// How long a test waits for something that must happen soon (a killed process dying, a child
/// writing its marker file or an event) before it fails: only ever reached when the behaviour
/// under test is broken, so it is generous enough that no load on the machine reaches it.
pub const PATIENCE: Duration = Duration::from_mins(1);

/// How long a test waits for a whole run of `epic` (its preflight, every story's agents and
/// gates, the merges), or for a point a run reaches on its way, before it fails: as
/// [`PATIENCE`], only reached when the run is broken.
pub const RUN_PATIENCE: Duration = Duration::from_mins(5);

/// How often a wait looks again: a test goes on within milliseconds of what it waits for, and
/// the looking (a file read, a `try_wait`, an `epic status`) costs the machine little.
pub const POLL: Duration = Duration::from_millis(10);

/// Looks every [`POLL`] until `ready` gives a value, for at most `limit`: the value, or `None`
/// once `limit` has passed without one. For a test that must do something (release what it
/// holds, gather output) before it fails; otherwise [`wait_for`] or [`wait_until`].
pub fn poll<T>(limit: Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(value) = ready() {
            return Some(value);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `ready` gives a value, what a process of the test makes true: the value. Fails
/// the test naming `what` once `limit` has passed ([`PATIENCE`] for what comes soon,
/// [`RUN_PATIENCE`] for a run's end or a point on its way).
///
/// ```
/// use epic_test_support::{PATIENCE, wait_for};
///
/// let mut looks = 0;
/// let third = wait_for("the third look", PATIENCE, || {
///     looks += 1;
///     (looks == 3).then_some(looks)
/// });
/// assert_eq!(third, 3);
/// ```
pub fn wait_for<T>(what: &str, limit: Duration, ready: impl FnMut() -> Option<T>) -> T {
    poll(limit, ready).unwrap_or_else(|| panic!("never: {what} (waited {limit:?})"))
}

/// Waits until `done` holds, what a process of the test (a file it writes, a process it starts)
/// makes true; fails the test naming `what` after [`PATIENCE`].
///
/// ```
/// use epic_test_support::wait_until;
///
/// let dir = tempfile::tempdir()?;
/// let marker = dir.path().join("started");
/// let mut child = std::process::Command::new("touch").arg(&marker).spawn()?;
/// wait_until("the child's marker file", || marker.exists());
/// child.wait()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    wait_for(what, PATIENCE, || done().then_some(()));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{poll, wait_for, wait_until};

    #[test]
    fn a_wait_ends_with_what_it_waited_for() {
        let mut looks = 0;
        wait_until("the second look", || {
            looks += 1;
            looks == 2
        });
        assert_eq!(looks, 2);
        assert_eq!(wait_for("a value", super::PATIENCE, || Some(7)), 7);
    }

    #[test]
    fn a_poll_gives_up_after_its_limit() {
        assert_eq!(poll(Duration::ZERO, || None::<()>), None);
    }

    #[test]
    #[should_panic(expected = "never: what never comes")]
    fn a_wait_for_what_never_comes_fails_naming_it() {
        wait_for("what never comes", Duration::ZERO, || None::<()>);
    }
}
