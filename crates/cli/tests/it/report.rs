//! `epic report`: the last report as Markdown or as report.json's data, and no report at all.

use insta::assert_snapshot;

use crate::util::{Repo, checkout_report};

#[test]
fn markdown_is_the_default() {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    let report = checkout_report();
    repo.report(&epic, &report, true);
    let run = repo.run(&["report"]);
    run.assert_code(0);
    assert_eq!(run.stdout, epic_report::render_markdown(&report));
    assert_eq!(run.stderr, "");
    assert_eq!(repo.run(&["report", "--format", "md"]).stdout, run.stdout);
    assert_eq!(repo.run(&["report", "checkout"]).stdout, run.stdout);
    assert_snapshot!("markdown", run);
}

#[test]
fn json_is_the_data_of_report_json() {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    let report = checkout_report();
    repo.report(&epic, &report, true);
    let run = repo.run(&["report", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.stdout, epic_report::to_json(&report));
    let data = run.json();
    assert_eq!(data["estimated"], true);
    assert_eq!(data["stories"][1]["status"], "failed");
    assert_snapshot!("json", run);
}

#[test]
fn markdown_is_rendered_when_only_report_json_exists() {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    let report = checkout_report();
    repo.report(&epic, &report, false);
    let run = repo.run(&["report"]);
    run.assert_code(0);
    assert_eq!(run.stdout, epic_report::render_markdown(&report));
}

#[test]
fn no_report_yet() {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    repo.story(&epic, "cart-api", epic_state_store::StoryStage::Started);
    let run = repo.run(&["report"]);
    run.assert_code(2);
    assert_snapshot!("missing", run);
    repo.run(&["report", "--format", "json"]).assert_code(2);
}

#[test]
fn no_epic_and_several_epics() {
    let repo = Repo::new();
    let run = repo.run(&["report"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .starts_with("error: no epic has run in this repository\n"),
        "{run}"
    );

    for id in ["checkout", "search"] {
        let epic = repo.epic(id);
        repo.story(&epic, "a", epic_state_store::StoryStage::Started);
    }
    let run = repo.run(&["report"]);
    run.assert_code(2);
    assert_snapshot!("several", run);
}

#[test]
fn graph_formats_are_refused() {
    let repo = Repo::new();
    let run = repo.run(&["report", "--format", "mermaid"]);
    run.assert_code(2);
    assert_snapshot!("mermaid", run);
}
