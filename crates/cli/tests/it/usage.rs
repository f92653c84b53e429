//! The command line itself: usage errors, help, version, and a reader that goes away.

use std::io::Read as _;
use std::process::{Command, Stdio};

use insta::assert_snapshot;

use crate::util::{Dir, SHOP_JSON};

#[test]
fn no_arguments_prints_help_and_fails() {
    let run = Dir::new().run(&[]);
    run.assert_code(2);
    assert!(run.stderr.contains("Usage: epic"), "{run}");
}

#[test]
fn unknown_options_and_commands_are_usage_errors() {
    let dir = Dir::new();
    for args in [
        &["--frobnicate"][..],
        &["launch"],
        &["validate"],
        &["validate", "a.json", "b.json"],
        &["graph", "--format", "svg", "a.json"],
        &["validate", "-q", "-v", "a.json"],
    ] {
        let run = dir.run(args);
        run.assert_code(2);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(run.stderr.starts_with("error: "), "{args:?}:\n{run}");
    }
    assert_snapshot!("unknown_command", dir.run(&["launch"]));
}

#[test]
fn a_format_the_command_cannot_print() {
    let dir = Dir::with("plan.json", SHOP_JSON);
    let run = dir.run(&["validate", "--format", "mermaid", "plan.json"]);
    run.assert_code(2);
    assert_snapshot!("unsupported_format", run);
}

#[test]
fn global_options_go_anywhere() {
    let dir = Dir::with("plan.json", SHOP_JSON);
    let before = dir.run(&["--format", "json", "--no-progress", "graph", "plan.json"]);
    let after = dir.run(&["graph", "plan.json", "--format", "json", "--repo", "."]);
    before.assert_code(0);
    assert_eq!(before.stdout, after.stdout);
}

#[test]
fn help_and_version() {
    let dir = Dir::new();
    let help = dir.run(&["--help"]);
    help.assert_code(0);
    assert!(help.stdout.contains("Examples:"), "{help}");
    assert!(help.stdout.contains("Exit status:"), "{help}");
    assert_snapshot!("help", help);
    for command in ["validate", "graph", "schema"] {
        let help = dir.run(&[command, "--help"]);
        help.assert_code(0);
        assert!(
            help.stdout
                .contains(&format!("Examples:\n  epic {command}")),
            "{help}"
        );
    }
    let version = dir.run(&["--version"]);
    version.assert_code(0);
    assert_eq!(
        version.stdout,
        format!("epic {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// Each command takes the flags of the run options it reads and no other: `epic land` and `epic
/// plan` refuse (exit 2) a run option they would ignore, and their help lists only theirs.
#[test]
fn each_command_takes_only_the_options_it_reads() {
    let dir = Dir::new();
    // Landing reads the coder, the gates, the sandbox and the rest of ForLanding, not these.
    let ignored_by_land = [
        "--base=main",
        "--concurrency=2",
        "--fail-fast",
        "--judge=claude",
        "--reviewer=claude",
        "--judge-rounds=2",
        "--max-tasks=5",
        "--setup=true",
        "--keep-worktrees",
        "--no-allow-red-baseline",
        "--schedule=waves",
        "--merge-batch=2",
        "--noop=fail",
        "--verifier=claude",
        "--board-hook=true",
        "--worktrees=fresh",
        "--no-judge",
        "--architect=claude",
    ];
    for flag in ignored_by_land {
        let run = dir.run(&["land", flag]);
        run.assert_code(2);
        let name = flag.split('=').next().unwrap();
        assert!(
            run.stderr
                .starts_with(&format!("error: unexpected argument '{name}'")),
            "{flag}:\n{run}"
        );
    }
    let land = dir.run(&["land", "--help"]);
    land.assert_code(0);
    for flag in ignored_by_land {
        let name = flag.split('=').next().unwrap();
        assert!(
            !land.stdout.contains(&format!("{name} ")),
            "{name}:\n{land}"
        );
    }
    for read in [
        "--epic-branch <NAME>",
        "--coder <SEATS>",
        "--gate <CMD>",
        "--max-rounds <N>",
        "--turn-timeout <SECS>",
        "--gate-timeout <SECS>",
        "--test-pattern <PATTERN>",
        "--sandbox <MODE>",
        "--expose <PATH>",
        "--budget-usd <X>",
        "--max-wait <DURATION>",
        "--rules <FILE>",
        "--outage-wait <DURATION>",
        "--no-preflight",
    ] {
        assert!(land.stdout.contains(read), "{read}:\n{land}");
    }
    // `epic plan` reads the architect, its seat check and its sandbox.
    for flag in ["--coder=claude", "--gate=true", "--concurrency=2"] {
        let run = dir.run(&["plan", "an epic", flag]);
        run.assert_code(2);
        assert!(
            run.stderr.starts_with("error: unexpected argument"),
            "{flag}:\n{run}"
        );
    }
    let plan = dir.run(&["plan", "--help"]);
    plan.assert_code(0);
    assert!(plan.stdout.contains("--architect <SEATS>"), "{plan}");
    assert!(plan.stdout.contains("--sandbox <MODE>"), "{plan}");
    assert!(plan.stdout.contains("--no-preflight"), "{plan}");
    // `epic run` and `epic config` take every run option but the architect, only `epic plan`'s.
    for command in ["run", "config"] {
        let run = dir.run(&[command, "--architect=claude"]);
        run.assert_code(2);
        assert!(
            run.stderr
                .starts_with("error: unexpected argument '--architect'"),
            "{run}"
        );
    }
}

/// `epic schema plan | head -1`: the reader is gone before `epic` writes; it must stop quietly.
#[test]
fn a_closed_stdout_does_not_panic() {
    let dir = Dir::with("plan.json", SHOP_JSON);
    for args in [
        &["schema", "plan"][..],
        &["graph", "--format", "dot", "plan.json"],
        &["validate", "plan.json"],
    ] {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("epic"))
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end at once, as `head` does once it has its line.
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}
