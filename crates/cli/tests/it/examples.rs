//! The plans in `examples/`: each validates (but `invalid.json`, which lists every mistake),
//! and `checkout.md` is exactly the Markdown rendering of `checkout.toml`.
//!
//! After editing `checkout.toml`, regenerate the Markdown with
//! `EPIC_UPDATE_EXAMPLES=1 cargo test -p epic --test it examples`.

use std::path::Path;

use epic_story_plan::StoryPlan;
use insta::assert_snapshot;

use crate::util::{run_in, workspace_root};

#[test]
fn every_example_but_invalid_json_validates() {
    let root = workspace_root();
    let mut names: Vec<String> = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in &names {
        let path = format!("examples/{name}");
        let run = run_in(&root, &["validate", &path]);
        let expected = i32::from(name == "invalid.json");
        run.assert_code(expected);
        let json = run_in(&root, &["validate", "--format", "json", &path]);
        json.assert_code(expected);
        assert_eq!(json.json()["valid"], expected == 0, "{path}");
    }
}

#[test]
fn checkout_md_is_the_rendering_of_checkout_toml() {
    let examples = workspace_root().join("examples");
    let toml = read_plan(&examples.join("checkout.toml"));
    let markdown = toml.to_markdown();
    let md_path = examples.join("checkout.md");
    if std::env::var_os("EPIC_UPDATE_EXAMPLES").is_some() {
        std::fs::write(&md_path, &markdown).unwrap();
    }
    let written = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        written == markdown,
        "examples/checkout.md is not the rendering of examples/checkout.toml; \
         rerun with EPIC_UPDATE_EXAMPLES=1"
    );
    assert_eq!(read_plan(&md_path), toml);
}

fn read_plan(path: &Path) -> StoryPlan {
    let text = std::fs::read_to_string(path).expect("read an example");
    StoryPlan::parse_file(path, &text).expect("parse an example")
}

#[test]
fn checkout_graph() {
    let root = workspace_root();
    let run = run_in(&root, &["graph", "examples/checkout.md"]);
    run.assert_code(0);
    assert_snapshot!("checkout_graph", run);
    assert_snapshot!(
        "checkout_mermaid",
        run_in(
            &root,
            &["graph", "--format", "mermaid", "examples/checkout.md"]
        )
    );
}

#[test]
fn invalid_json_lists_its_violations() {
    let run = run_in(&workspace_root(), &["validate", "examples/invalid.json"]);
    run.assert_code(1);
    assert_snapshot!("invalid_json", run);
}
