//! Waiting on child processes in tests: whether one died, the pid one wrote, and how long a test
//! waits for either before it fails.

use std::path::Path;
use std::time::Duration;

/// How long a test waits for something that must happen soon (a killed process dying, a child
/// writing its marker file or an event) before it fails: only ever reached when the behaviour
/// under test is broken, so it is generous enough that no load on the machine reaches it.
pub const PATIENCE: Duration = Duration::from_mins(1);

/// Whether the process `pid` is gone (or a zombie nobody reaped, which runs no code). Linux:
/// reads `/proc/<pid>/stat`.
pub fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (up to [`PATIENCE`]) for `pid` to die; whether it did.
pub fn wait_dead(pid: u32) -> bool {
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
pub fn pid_written(path: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.strip_suffix('\n')?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{is_dead, pid_written, wait_dead};

    #[test]
    fn a_reaped_child_is_dead_and_this_process_is_not() {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("reap");
        assert!(wait_dead(pid));
        assert!(!is_dead(std::process::id()));
    }

    #[test]
    fn a_pid_counts_once_its_line_is_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("pid");
        assert_eq!(pid_written(&path), None);
        std::fs::write(&path, "123").expect("write");
        assert_eq!(pid_written(&path), None);
        std::fs::write(&path, "123\n").expect("write");
        assert_eq!(pid_written(&path), Some(123));
    }
}
