//! Failures charged per test through the `epic` binary: with `--allow-red-baseline` and a gate
//! that writes a JUnit file (`--gate-junit`), a story is charged only with the test it turned
//! red and the inherited one is in the report. A real repository, the script seat, and a shell
//! gate whose failing tests depend on the files in the tree.

use crate::util::{Repo, file_plan};

/// The test red on `main` before the epic.
const LEGACY: &str = "tests/test_legacy.py::test_old";

/// A gate that writes `report.xml`: `tests/red.txt`'s tests fail, and `test_b` when story b's
/// file is in the tree; its output names no test.
const GATE: &str = r#"red=$(cat tests/red.txt); if [ -f b/b.txt ]; then red="$red tests/test_b.py::test_new"; fi; n=0; for t in $red; do n=$((n + 1)); done; { echo "<testsuite failures=\"$n\">"; for t in $red; do echo "<testcase classname=\"${t%%::*}\" name=\"${t##*::}\"><failure/></testcase>"; done; echo '</testsuite>'; } > report.xml; echo "$n failed"; [ "$n" -eq 0 ]"#;

#[test]
fn a_story_is_charged_only_with_the_test_it_turned_red_read_from_a_junit_file() {
    let repo = Repo::new();
    repo.write("tests/red.txt", format!("{LEGACY}\n"));
    repo.git(&["add", "tests/red.txt"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "a red test",
    ]);
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let junit = format!("report.xml={GATE}");
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--no-progress",
        "--gate",
        GATE,
        "--gate-junit",
        &junit,
        "--allow-red-baseline",
        "--max-rounds",
        "1",
        "--concurrency",
        "1",
    ]);
    run.assert_code(1);
    let report = repo.run(&["report", "--format", "json"]).json();
    let stories = report["stories"].as_array().expect("stories");
    let a = &stories[0];
    assert_eq!(a["status"], "done", "{report}");
    assert_eq!(a["inherited_tests"][0]["command"], GATE, "{report}");
    assert_eq!(a["inherited_tests"][0]["tests"][0], LEGACY, "{report}");
    let b = &stories[1];
    assert_eq!(b["status"], "failed", "{report}");
    let reason = b["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("it turned 1 test red: tests/test_b.py::test_new"),
        "{reason}"
    );
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "alpha\n");
    let markdown = repo.run(&["report"]);
    assert!(
        markdown.stdout.contains("## Inherited failing tests"),
        "{markdown}"
    );
}
