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
