//! Tests of the `epic` binary: each drives the real executable on plan files in a temporary
//! directory and snapshots what it prints (see [`util::Run`] for the layout).

mod completions;
mod config;
mod examples;
mod graph;
mod init;
mod parse_errors;
mod plan_input;
mod report;
mod schema;
mod status;
mod usage;
mod util;
mod validate;

/// Every `tests/it/*.rs` file must be declared above, or its tests silently never run.
#[test]
fn no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            assert!(
                name == "main" || main.contains(&format!("mod {name};")),
                "tests/it/{name}.rs is not declared with `mod {name};` in tests/it/main.rs"
            );
        }
    }
}
