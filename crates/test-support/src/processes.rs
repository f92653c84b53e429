//! Child processes in tests: whether one died ([`is_dead`], [`wait_dead`]) and the pid one
//! wrote.

use std::path::Path;

use crate::wait::{PATIENCE, poll};

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
    poll(PATIENCE, || is_dead(pid).then_some(())).is_some()
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
