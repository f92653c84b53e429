//! `epic graph`: waves and critical path as text and JSON, the graph as Mermaid and DOT.

use insta::assert_snapshot;
use serde_json::json;

use crate::util::{Dir, SHOP_TOML};

/// Five stories in three waves, with a title that needs escaping in every graph syntax.
const PLAN: &str = r#"{
  "epic_id": "shop",
  "stories": [
    {"id": "model", "title": "Cart model", "owned": ["src/cart"]},
    {"id": "docs", "title": "Say \"hi\" #1 <b> \\ docs", "owned": ["docs"]},
    {"id": "api", "title": "Cart API", "depends_on": ["model"], "owned": ["src/api"]},
    {"id": "page", "title": "Cart page", "depends_on": ["api", "docs", "api"], "owned": ["web"]},
    {"id": "end", "title": "Wrap up", "depends_on": ["model"], "owned": ["CHANGELOG.md"]}
  ]
}
"#;

#[test]
fn text() {
    let dir = Dir::with("plan.json", PLAN);
    let run = dir.run(&["graph", "plan.json"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        "epic shop: 5 stories in 3 waves\n\n\
         wave 1: model, docs\nwave 2: api, end\nwave 3: page\n\n\
         critical path: model -> api -> page (3 stories)\n"
    );
    assert_snapshot!("text", run);
}

#[test]
fn estimated_times_add_up_to_work_and_the_longest_chain_by_time() {
    // By stories the critical path is model -> api -> page; by time, docs (3h) -> page is longer.
    let mut plan: serde_json::Value = serde_json::from_str(PLAN).unwrap();
    for (i, time) in [(0, "30m"), (1, "3h"), (2, "1h"), (3, "20m")] {
        plan["stories"][i]["estimated_time"] = json!(time);
    }
    let dir = Dir::with("plan.json", plan.to_string());
    let run = dir.run(&["graph", "plan.json"]);
    run.assert_code(0);
    // `end` has no estimate: it counts as the mean, (30m + 3h + 1h + 20m) / 4 = 1h 12m 30s.
    assert!(
        run.stdout.ends_with(
            "critical path: model -> api -> page (3 stories)\n\
             estimated: 6h 2m 30s of work; the longest chain by time takes 3h 20m (docs -> page), so \
             no run is shorter\n  4 of 5 stories estimated; the others count as their mean\n"
        ),
        "{run}"
    );
    let run = dir.run(&["graph", "--format", "json", "plan.json"]);
    assert_eq!(
        run.json()["estimated"],
        json!({
            "stories": 4,
            "work_seconds": 21750.0,
            "longest_chain_seconds": 12000.0,
            "longest_chain": ["docs", "page"],
        })
    );
}

#[test]
fn text_verbose_lists_each_story() {
    let dir = Dir::with("plan.json", PLAN);
    assert_snapshot!("text_verbose", dir.run(&["graph", "-v", "plan.json"]));
}

#[test]
fn json() {
    let dir = Dir::with("plan.json", PLAN);
    let run = dir.run(&["graph", "--format", "json", "plan.json"]);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        json!({
            "waves": [["model", "docs"], ["api", "end"], ["page"]],
            "critical_path": ["model", "api", "page"],
        })
    );
    assert_snapshot!("json", run);
}

#[test]
fn mermaid() {
    let dir = Dir::with("plan.json", PLAN);
    let run = dir.run(&["graph", "--format", "mermaid", "plan.json"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("flowchart LR\n"));
    assert_snapshot!("mermaid", run);
}

#[test]
fn dot() {
    let dir = Dir::with("plan.json", PLAN);
    let run = dir.run(&["graph", "--format", "dot", "plan.json"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("digraph \"shop\" {\n"));
    assert!(run.stdout.ends_with("}\n"));
    assert_snapshot!("dot", run);
}

#[test]
fn the_same_plan_prints_the_same_graph() {
    let dir = Dir::with("plan.json", PLAN);
    for format in ["text", "json", "mermaid", "dot"] {
        let first = dir.run(&["graph", "--format", format, "plan.json"]).stdout;
        for _ in 0..3 {
            assert_eq!(
                dir.run(&["graph", "--format", format, "plan.json"]).stdout,
                first
            );
        }
    }
}

#[test]
fn one_story() {
    let dir = Dir::with(
        "plan.toml",
        "epic_id = \"solo\"\n[[stories]]\nid = \"only\"\ntitle = \"Only\"\nowned = [\"src\"]\n",
    );
    let run = dir.run(&["graph", "plan.toml"]);
    run.assert_code(0);
    assert!(
        run.stdout.ends_with("critical path: only (1 story)\n"),
        "{run}"
    );
    let mermaid = dir.run(&["graph", "--format", "mermaid", "plan.toml"]);
    assert!(!mermaid.stdout.contains("linkStyle"), "{mermaid}");
}

#[test]
fn an_invalid_plan_prints_its_violations_to_stderr() {
    let dir = Dir::with(
        "plan.json",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "depends_on": ["b"], "owned": ["src/a"]},
            {"id": "b", "title": "B", "depends_on": ["a"], "owned": ["src/b"]}]}"#,
    );
    for format in ["text", "json", "mermaid", "dot"] {
        let run = dir.run(&["graph", "--format", format, "plan.json"]);
        run.assert_code(1);
        assert_eq!(run.stdout, "", "{format}");
        assert!(run.stderr.starts_with("error[cycle]: "), "{run}");
    }
    assert_snapshot!("invalid", dir.run(&["graph", "plan.json"]));
}

#[test]
fn toml_plans_graph_too() {
    let dir = Dir::with("plan.toml", SHOP_TOML);
    let run = dir.run(&["graph", "--format", "json", "plan.toml"]);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        json!({"waves": [["cart-api", "docs"], ["cart-ui"]], "critical_path": ["cart-api", "cart-ui"]})
    );
}
