//! A run killed with SIGKILL leaves nothing running for long: in the sandbox its gates (and
//! agents and setup commands) die with it (bubblewrap's `--die-with-parent`); without the
//! sandbox, the rerun ends what the dead run left running in the epic's worktrees before it
//! starts.

use std::process::{Child, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::util::{Repo, file_plan, wait_until};

/// A gate command no other process on the machine runs: `sleep` for a duration made of this
/// test process's id and the time.
fn unique_sleep() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    format!("sleep {}.{nanos:09}", 5000 + std::process::id() % 1000)
}

/// The pids of the live processes whose command line is exactly `command`.
fn running(command: &str) -> Vec<u32> {
    let wanted: Vec<&str> = command.split(' ').collect();
    std::fs::read_dir("/proc")
        .expect("read /proc")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&str> = std::str::from_utf8(&line)
                .unwrap_or_default()
                .split('\0')
                .filter(|arg| !arg.is_empty())
                .collect();
            !zombie && args == wanted
        })
        .collect()
}

/// Starts `epic run` whose baseline gate is `gate` (it never ends by itself), waits for the
/// gate to run, and kills `epic` alone with SIGKILL, as a crash would.
fn kill_a_run_inside_its_gate(repo: &Repo, gate: &str, sandbox: &str) {
    let mut child: Child = repo
        .command(&[
            "run",
            "plan.json",
            "--coder",
            "script",
            "--gate",
            gate,
            "--sandbox",
            sandbox,
            "--no-progress",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn epic run");
    wait_until("the gate runs", || !running(gate).is_empty());
    child.kill().expect("SIGKILL epic");
    child.wait().expect("reap epic");
}

#[test]
fn without_the_sandbox_the_rerun_ends_the_gate_a_killed_run_left() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let gate = unique_sleep();
    // The sandbox off: in it the gate dies with epic (the test below).
    kill_a_run_inside_its_gate(&repo, &gate, "off");
    let left = running(&gate);
    assert_eq!(left.len(), 1, "the gate outlived the killed run");

    // A gate that ends: without `--gate`, the rerun would take the last run's.
    let rerun = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--gate",
        "true",
        "--sandbox",
        "off",
        "--no-progress",
    ]);
    rerun.assert_code(0);
    assert!(running(&gate).is_empty(), "the rerun ended the gate");
    let events =
        std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl")).expect("events");
    let note = events
        .lines()
        .find(|line| line.contains("a run that died left running"))
        .unwrap_or_else(|| panic!("no note says what was ended: {events}"));
    assert!(
        note.contains(&format!("pid {}", left[0])) && note.contains(&gate),
        "{note}"
    );
}

#[test]
fn in_the_sandbox_a_gate_dies_with_the_killed_run() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let gate = unique_sleep();
    kill_a_run_inside_its_gate(&repo, &gate, "on");
    wait_until("the gate dies with epic", || running(&gate).is_empty());
}
