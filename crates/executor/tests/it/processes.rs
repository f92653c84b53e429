//! Waiting on child processes in tests: whether one died and the pid one wrote are
//! `epic-test-support`'s; waiting for the pid without blocking the runtime is here, where tokio
//! is.

use std::path::Path;
use std::time::Duration;

pub(crate) use epic_test_support::{PATIENCE, pid_written, wait_dead};

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
