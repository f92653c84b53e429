//! `epic completions SHELL`: a completion script for each shell `clap_complete` knows.

use crate::util::Dir;

#[test]
fn every_shell_gets_a_script() {
    let dir = Dir::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = dir.run(&["completions", shell]);
        run.assert_code(0);
        assert_eq!(run.stderr, "", "{shell}");
        assert!(run.stdout.len() > 500, "{shell}: {run}");
        for word in ["epic", "validate", "status", "completions", "concurrency"] {
            assert!(run.stdout.contains(word), "{shell} lacks {word}");
        }
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let run = Dir::new().run(&["completions", "tcsh"]);
    run.assert_code(2);
    assert!(run.stderr.contains("possible values: bash"), "{run}");
    let run = Dir::new().run(&["completions"]);
    run.assert_code(2);
}
