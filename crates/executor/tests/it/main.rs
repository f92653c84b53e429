//! Integration tests of the executor: one binary, real git repositories, real processes as
//! agents (shell scripts the tests write), never a mock.

mod api;
mod blocked;
mod gates;
mod happy;
mod misbehaviour;
mod noop;
mod planner;
mod presets;
mod resume;
mod review;
mod script;
mod seats;
mod support;

/// Every `tests/it/*.rs` file is declared above; a forgotten one would silently never run.
#[test]
fn no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).expect("read main.rs");
    for entry in std::fs::read_dir(&dir).expect("read tests/it") {
        let path = entry.expect("directory entry").path();
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|ext| ext == "rs") && stem != "main" {
            assert!(
                main.contains(&format!("mod {stem};")),
                "tests/it/{stem}.rs is not declared in main.rs"
            );
        }
    }
}
