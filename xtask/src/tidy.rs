//! `cargo xtask tidy`: conventions no compiler checks.
//!
//! - Every Rust file starts with a `//!` header saying what it is for.
//! - No `dbg!` and no `todo!`/`unimplemented!` stubs.
//! - Internal dependencies in the root manifest are path-only.
//! - Every `tests/it/*.rs` file is declared as a module of `tests/it/main.rs`, so none is
//!   silently skipped.

use std::fs;
use std::path::{Path, PathBuf};

use crate::Result;

pub(crate) fn check(root: &Path) -> Result {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for top in ["crates", "xtask"] {
        rust_files(&root.join(top), &mut files);
    }
    files.sort();
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else {
            problems.push(format!("{}: unreadable", file.display()));
            continue;
        };
        let shown = file.strip_prefix(root).unwrap_or(file).display();
        if !text.trim_start().starts_with("//!") {
            problems.push(format!("{shown}: starts without a `//!` header"));
        }
        let stub_markers = [
            concat!("dbg", "!("),
            concat!("todo", "!("),
            concat!("unimplemented", "!("),
        ];
        for (n, line) in text.lines().enumerate() {
            if stub_markers.iter().any(|marker| line.contains(marker)) {
                problems.push(format!("{shown}:{}: debug macro or stub left in", n + 1));
            }
        }
        if file.ends_with("tests/it/main.rs") {
            check_modules_declared(file, &text, &mut problems);
        }
    }
    if let Ok(manifest) = fs::read_to_string(root.join("Cargo.toml")) {
        for line in manifest.lines() {
            if line.contains("path = \"crates/") && line.contains("version") {
                problems.push(format!(
                    "Cargo.toml: internal dependency is not path-only: {line}"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "tidy found {} problem(s):\n{}",
            problems.len(),
            problems.join("\n")
        ))
    }
}

fn check_modules_declared(main: &Path, text: &str, problems: &mut Vec<String>) {
    let Some(dir) = main.parent() else { return };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let stem = path.file_stem()?.to_str()?.to_owned();
            (path.is_dir() || path.extension().is_some_and(|e| e == "rs")).then_some(stem)
        })
        .filter(|name| name != "main" && name != "snapshots")
        .collect();
    names.sort();
    for name in names {
        if !text.contains(&format!("mod {name};")) {
            problems.push(format!(
                "{}: `{name}` is not declared with `mod {name};`, so its tests never run",
                main.display()
            ));
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|name| name == "target" || name == "snapshots")
            {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}
