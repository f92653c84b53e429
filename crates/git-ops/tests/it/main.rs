//! Integration tests of git-ops: one binary, one module per concern, all on real repositories.

mod branches;
mod commits;
mod diffs;
mod merges;
mod open;
mod restore;
mod rollback;
mod status;
mod support;
mod threads;
mod worktrees;

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
