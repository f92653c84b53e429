//! `epic report`: the last report as Markdown, as report.json's data or as an HTML page (printed,
//! or written and opened), and no report at all.

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

/// The demo's six stories, its kept repository's path as `--repo`, and the directory that
/// holds it.
fn demo() -> (crate::util::Dir, String) {
    let dir = crate::util::Dir::new();
    let keep = dir.path().join("textkit").display().to_string();
    dir.run(&["demo", "--keep", &keep, "--no-progress"])
        .assert_code(0);
    (dir, keep)
}

#[test]
fn html_after_a_real_run_holds_every_story() {
    let (dir, keep) = demo();
    let run = dir.run(&["report", "--repo", &keep, "--format", "html"]);
    run.assert_code(0);
    let page = &run.stdout;
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.ends_with("</html>\n"), "{page}");
    let svg = |id: &str| {
        let start = page
            .find(&format!("<svg id=\"{id}\""))
            .unwrap_or_else(|| panic!("no svg `{id}` in {page}"));
        &page[start..start + page[start..].find("</svg>").expect("closed")]
    };
    let (graph, timeline) = (svg("graph"), svg("timeline"));
    for story in ["strings", "math", "slug", "banner", "stats", "summary"] {
        assert!(
            graph.contains(&format!("data-story=\"{story}\"")),
            "{story}: {graph}"
        );
        assert!(
            timeline.contains(&format!(">{story}</text>")),
            "{story}: {timeline}"
        );
        assert!(
            page.contains(&format!("<td>{story}</td>")),
            "{story}: {page}"
        );
    }
    // The plan's dependencies are drawn, and the events' turns and gates.
    assert!(graph.contains("class=\"edge"), "{graph}");
    assert!(graph.contains("class=\"node failed"), "{graph}");
    assert!(graph.contains("class=\"node skipped"), "{graph}");
    assert!(timeline.contains("class=\"turn turn-coder\""), "{timeline}");
    assert!(timeline.contains("class=\"gate gate-ok\""), "{timeline}");
    assert!(
        !page.contains("<script") && !page.contains("https:"),
        "{page}"
    );
}

#[test]
fn open_writes_the_page_and_opens_it() {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    let report = checkout_report();
    repo.report(&epic, &report, true);
    // Stand-ins for the openers that record what they were given.
    let bin = repo.temp().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let log = repo.temp().join("opened.log");
    for opener in ["xdg-open", "open"] {
        let script = bin.join(opener);
        std::fs::write(
            &script,
            format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", log.display()),
        )
        .expect("write the stand-in");
        let mut permissions = std::fs::metadata(&script)
            .expect("its metadata")
            .permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).expect("make it executable");
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = repo
        .command(&["report", "--open"])
        .env("PATH", &path)
        .output()
        .expect("run epic");
    let run = crate::util::Run::of(output);
    run.assert_code(0);
    let page = epic.report_html();
    assert_eq!(run.stdout, format!("{}\n", page.display()), "{run}");
    let html = std::fs::read_to_string(&page).expect("report.html is written");
    assert!(html.contains("data-story=\"cart-ui\""), "{html}");
    let opened = std::fs::read_to_string(&log).expect("the opener ran");
    assert_eq!(opened, format!("{}\n", page.display()));

    // An opener that fails: the page is written, the error says where.
    std::fs::write(bin.join("xdg-open"), "#!/bin/sh\nexit 3\n").expect("rewrite");
    let output = repo
        .command(&["report", "--open"])
        .env("PATH", &path)
        .output()
        .expect("run epic");
    let run = crate::util::Run::of(output);
    run.assert_code(2);
    assert!(run.stderr.contains("the page is written to"), "{run}");
    assert!(
        run.stderr.contains("hint: open that file in a browser"),
        "{run}"
    );

    let run = repo.run(&["report", "--open", "--format", "json"]);
    run.assert_code(2);
    assert!(run.stderr.contains("--open opens the HTML page"), "{run}");
}
