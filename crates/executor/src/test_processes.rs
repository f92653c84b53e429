//! Waiting on child processes in tests: whether one died, the pid one wrote. One definition for
//! the crate's unit tests (a `#[cfg(test)]` module of the library) and its integration tests
//! (`tests/it/support.rs` includes this file), which cannot share code otherwise.

use std::path::Path;
use std::time::Duration;

/// How long a test waits for something that must happen soon (a killed process dying, a child
/// writing its marker file) before it fails: only ever reached when the behaviour under test is
/// broken, so it is generous enough that no load on the machine reaches it.
pub(crate) const PATIENCE: Duration = Duration::from_mins(1);

/// Whether the process `pid` is gone (or a zombie nobody reaped, which runs no code).
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads /proc to see whether a process died"
)]
pub(crate) fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (up to [`PATIENCE`]) for `pid` to die.
pub(crate) fn wait_dead(pid: u32) -> bool {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        if is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    is_dead(pid)
}

/// The pid a script wrote to `path` (one line, `echo $$ > path`); `None` while the file is
/// missing or its line is not whole yet.
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads the pid its child wrote; no state directory is involved"
)]
pub(crate) fn pid_written(path: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.strip_suffix('\n')?.trim().parse().ok()
}

/// Waits (up to [`PATIENCE`], without blocking the runtime) until a script has written a pid to
/// `path`; the pid.
pub(crate) async fn wait_for_pid(path: &Path) -> u32 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(pid) = pid_written(path) {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no pid in {} after {PATIENCE:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
