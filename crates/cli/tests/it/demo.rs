//! `epic demo`: the sample epic end to end, as designed: four stories merged, one failed, its
//! dependent skipped, exit 0.

use crate::util::{Dir, mask_volatile};

#[test]
fn the_demo_runs_as_designed_and_keeps_its_repository() {
    let dir = Dir::new();
    let keep = dir.path().join("textkit");
    let keep_arg = keep.display().to_string();
    let run = dir.run(&["demo", "--keep", &keep_arg, "--no-progress"]);
    run.assert_code(0);
    let stdout = mask_volatile(&run.stdout);
    assert!(
        stdout.contains("epic demo finished: 4/6 done, 1 failed, 1 skipped"),
        "{run}"
    );
    assert!(
        stdout.contains("  stats: task \"write tests/stats_test.sh\""),
        "{run}"
    );
    assert!(stdout.contains("  summary: blocked by stats"), "{run}");
    assert!(stdout.contains("What just happened"), "{run}");
    assert!(run.stderr.contains("story banner: merged"), "{run}");

    // The kept repository: the epic branch has the four merges and none of `stats`.
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(&keep)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let merges = git(&[
        "log",
        "--merges",
        "--first-parent",
        "--format=%s",
        "epic/demo",
    ]);
    assert_eq!(merges.lines().count(), 4, "{merges}");
    for story in ["strings", "math", "slug", "banner"] {
        assert!(merges.contains(&format!("merge story {story}")), "{merges}");
    }
    let files = git(&["ls-tree", "-r", "--name-only", "epic/demo"]);
    assert!(
        files.contains("lib/banner.sh") && !files.contains("stats"),
        "{files}"
    );
    // The kept repository runs `sh run-tests.sh` green on the epic branch.
    let epic = dir.path().join("textkit.worktrees/demo/_epic");
    let tests = std::process::Command::new("sh")
        .arg("run-tests.sh")
        .current_dir(&epic)
        .output()
        .unwrap();
    assert!(tests.status.success());
}

#[test]
fn keep_refuses_a_non_empty_directory() {
    let dir = Dir::with("something.txt", "x");
    let path = dir.path().display().to_string();
    let run = dir.run(&["demo", "--keep", &path]);
    run.assert_code(2);
    assert!(run.stderr.contains("is not empty"), "{run}");
}

#[test]
fn the_temporary_demo_leaves_nothing_behind() {
    let dir = Dir::new();
    let run = dir.run(&["demo", "-q"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "");
}
