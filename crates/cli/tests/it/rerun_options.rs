//! Issue 23, point 2: a run records its options in the epic's state, a rerun given none reuses
//! them and says so, a rerun that changes its gates or seats (or drops one: `--no-reviewer`) says
//! what changed, a run without a gate warns that nothing proves a merge, and the hint at the end
//! of a failed run works as printed.

use std::path::Path;

use epic_test_support::RoleAgent;

use crate::util::{Repo, file_plan};

/// The gate of these tests: story `a`'s file must not say `broken` (it passes on a base without
/// the file).
const GATE: &str = "! grep -q broken a/a.txt 2>/dev/null";

/// Writes (or rewrites) the `exec:` agent at the same path: it plans one task and, as coder,
/// writes `content` into its story's file.
fn agent(repo: &Repo, content: &str) -> String {
    let path = repo.temp().join("agent.sh");
    RoleAgent::new()
        .coder(&format!(
            "mkdir -p \"$EPIC_STORY\" && echo {content} > \"$EPIC_STORY/$EPIC_STORY.txt\""
        ))
        .write(&path);
    format!("exec:sh {}", path.display())
}

/// Runs `command` with `sh -c` at the repository root, the `epic` under test first on `PATH`:
/// a command line exactly as a user would paste it.
fn shell(repo: &Repo, command: &str) -> crate::util::Run {
    let epic = assert_cmd::cargo::cargo_bin("epic");
    let bin = epic.parent().expect("the binary is in a directory");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let output = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(repo.path())
        .env("PATH", std::env::join_paths(paths).expect("a valid PATH"))
        .env("NO_COLOR", "1")
        .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run sh");
    crate::util::Run {
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        code: output.status.code(),
    }
}

/// The command between backticks after `rerun ` in `text`.
fn rerun_hint(text: &str) -> &str {
    let (_, rest) = text
        .split_once("rerun `")
        .unwrap_or_else(|| panic!("no rerun hint in:\n{text}"));
    rest.split_once('`').expect("the hint is closed").0
}

#[test]
fn the_rerun_hint_of_a_red_gate_works_as_printed_and_keeps_the_options() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = agent(&repo, "broken");
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        &coder,
        "--gate",
        GATE,
        "--max-rounds",
        "1",
        "--no-progress",
    ]);
    run.assert_code(1);
    assert!(!run.stderr.contains("warning: no gate"), "{run}");
    let hint = rerun_hint(&run.stdout).to_owned();
    assert_eq!(hint, "epic run plan.json");

    // The cause fixed, the hint run literally: the same coder, gate and rounds.
    agent(&repo, "good");
    let rerun = shell(&repo, &hint);
    rerun.assert_code(0);
    let using = rerun
        .stderr
        .lines()
        .find(|line| line.starts_with("using the options of the last run: "))
        .unwrap_or_else(|| panic!("no line saying the options are reused:\n{rerun}"));
    let quoted_gate = format!("--gate '{}'", GATE.replace('\'', "'\\''"));
    for flag in [
        format!("--coder '{coder}'").as_str(),
        quoted_gate.as_str(),
        "--max-rounds 1",
    ] {
        assert!(using.contains(flag), "{flag} missing from {using:?}");
    }
    assert!(
        !rerun.stderr.contains("changed since the last run"),
        "{rerun}"
    );
    assert!(!rerun.stderr.contains("warning: no gate"), "{rerun}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "good\n");
}

#[test]
fn the_rerun_hint_names_the_repository_it_was_given() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = agent(&repo, "broken");
    let elsewhere = repo.temp().join("elsewhere dir");
    std::fs::create_dir(&elsewhere).expect("create a directory");
    let plan = repo.path().join("plan.json").display().to_string();
    let root = repo.path().display().to_string();
    let run = crate::util::run_in(
        &elsewhere,
        &[
            "run",
            &plan,
            "--repo",
            &root,
            "--coder",
            &coder,
            "--gate",
            GATE,
            "--max-rounds",
            "1",
            "--no-progress",
        ],
    );
    run.assert_code(1);
    let hint = rerun_hint(&run.stdout).to_owned();
    agent(&repo, "good");
    // Run from elsewhere: the hint must not lean on the current directory.
    let rerun = shell(&repo, &format!("cd '{}' && {hint}", elsewhere.display()));
    rerun.assert_code(0);
    assert!(
        Path::new(&root)
            .join(".git/epic/shop/options.json")
            .is_file(),
        "{rerun}"
    );
}

#[test]
fn a_rerun_that_changes_gates_or_seats_says_what_changed() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let quick = ["--no-progress", "--concurrency", "1"];
    let mut args = vec!["run", "plan.json", "--coder", "script", "--gate", "true"];
    args.extend(quick);
    repo.run(&args).assert_code(0);

    let mut args = vec![
        "run",
        "plan.json",
        "--gate",
        "test -n x",
        "--reviewer",
        "script",
    ];
    args.extend(quick);
    let changed = repo.run(&args);
    changed.assert_code(0);
    assert!(
        changed.stderr.contains(
            "the gates changed since the last run: was --gate true, now --gate 'test -n x'\n"
        ),
        "{changed}"
    );
    assert!(
        changed.stderr.contains(
            "the reviewers changed since the last run: was none, now --reviewer script\n"
        ),
        "{changed}"
    );
    assert!(
        changed
            .stderr
            .contains("using the options of the last run: --coder script\n"),
        "{changed}"
    );
    assert!(!changed.stderr.contains("the coder changed"), "{changed}");

    // `epic.toml` drops every gate: the rerun says so, and warns.
    repo.write("epic.toml", "gate = []\n");
    let dropped = repo.run(&["run", "plan.json", "--no-progress"]);
    dropped.assert_code(0);
    assert!(
        dropped
            .stderr
            .contains("the gates changed since the last run: was --gate 'test -n x', now none\n"),
        "{dropped}"
    );
    assert!(dropped.stderr.contains("warning: no gate"), "{dropped}");

    // `--no-reviewer` drops the reviewer the last run had, and the next rerun has none either.
    let no_reviewer = repo.run(&["run", "plan.json", "--no-progress", "--no-reviewer"]);
    no_reviewer.assert_code(0);
    assert!(
        no_reviewer.stderr.contains(
            "the reviewers changed since the last run: was --reviewer script, now none\n"
        ),
        "{no_reviewer}"
    );
    let again = repo.run(&["run", "plan.json", "--no-progress"]);
    again.assert_code(0);
    assert!(
        again.stderr.contains(
            "using the options of the last run: --concurrency 1 --coder script --no-reviewer\n"
        ),
        "{again}"
    );
    assert!(!again.stderr.contains("changed since"), "{again}");
}

#[test]
fn a_run_without_a_gate_warns_that_nothing_proves_a_merge() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let run = repo.run(&["run", "plan.json", "--coder", "script", "--no-progress"]);
    run.assert_code(0);
    assert!(
        run.stderr
            .starts_with("warning: no gate: nothing proves a merge"),
        "{run}"
    );
    // Flags win over the last run's options, and `epic.toml` over them too.
    let gated = repo.run(&["run", "plan.json", "--gate", "true", "--no-progress"]);
    gated.assert_code(0);
    assert!(!gated.stderr.contains("warning: no gate"), "{gated}");
}

#[test]
fn unreadable_recorded_options_are_exit_2_naming_the_file() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let dir = repo.epic("shop");
    std::fs::create_dir_all(dir.root()).expect("create the state directory");
    std::fs::write(dir.run_options(), "{\"version\":1,\"data\":{\"coder\":3}}").expect("write");
    let run = repo.run(&["run", "plan.json", "--no-progress"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("run options file `[REPO]/.git/epic/shop/options.json`"),
        "{run}"
    );
}
