//! `cargo xtask tidy`: conventions no compiler checks.
//!
//! - Every Rust file starts with a `//!` header saying what it is for.
//! - No `dbg!` and no `todo!`/`unimplemented!` stubs.
//! - Internal dependencies in the root manifest are path-only.
//! - Every `tests/it/*.rs` file is declared as a module of `tests/it/main.rs`, so none is
//!   silently skipped.
//! - The layers ARCHITECTURE.md draws hold ([`check_layers`]): each crate depends only on the
//!   crates below it, only `epic-git-ops` depends on gix, and no library or binary source outside
//!   `crates/git-ops` names the `git` program (tests and benches may: they build repositories).

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
    check_layers(root, &files, &mut problems);
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

/// Each crate directory, its package, and the internal packages it may depend on (normal,
/// build and target-specific dependencies; dev-dependencies are free). No arrow runs up.
const LAYERS: &[(&str, &str, &[&str])] = &[
    ("story-plan", "epic-story-plan", &[]),
    ("perimeter", "epic-perimeter", &["epic-story-plan"]),
    ("report", "epic-report", &[]),
    ("state-store", "epic-state-store", &[]),
    ("git-ops", "epic-git-ops", &[]),
    ("process", "epic-process", &["epic-git-ops"]),
    (
        "executor",
        "epic-executor",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
        ],
    ),
    (
        "cli",
        "epic",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-executor",
        ],
    ),
];

/// The architecture's layering rules, checked on the manifests and sources: internal
/// dependencies follow [`LAYERS`]; gix is a dependency of `epic-git-ops` alone; and the string
/// `"git"` (a program to spawn) appears in no `src/` file outside `crates/git-ops`, so every git
/// command goes through the git layer.
fn check_layers(root: &Path, files: &[PathBuf], problems: &mut Vec<String>) {
    let crates = root.join("crates");
    let mut known: Vec<String> = fs::read_dir(&crates)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().join("Cargo.toml").is_file())
                .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    known.sort();
    for dir in &known {
        let shown = format!("crates/{dir}/Cargo.toml");
        let Some((_, package, allowed)) = LAYERS.iter().find(|(name, _, _)| name == dir) else {
            problems.push(format!(
                "{shown}: a crate the layer table of xtask/src/tidy.rs does not know; add it there"
            ));
            continue;
        };
        let Ok(manifest) = fs::read_to_string(crates.join(dir).join("Cargo.toml")) else {
            problems.push(format!("{shown}: unreadable"));
            continue;
        };
        if !manifest.contains(&format!("name = \"{package}\"")) {
            problems.push(format!("{shown}: the package should be named `{package}`"));
        }
        for dependency in normal_dependencies(&manifest) {
            if dependency == "gix" && *package != "epic-git-ops" {
                problems.push(format!(
                    "{shown}: depends on gix; only epic-git-ops may (it is the git layer)"
                ));
            }
            if dependency.starts_with("epic-") && !allowed.contains(&dependency.as_str()) {
                problems.push(format!(
                    "{shown}: `{package}` may not depend on `{dependency}` (see the layers in \
                     ARCHITECTURE.md: no arrow runs up)"
                ));
            }
        }
    }
    let git_layer = crates.join("git-ops");
    for file in files {
        let in_src = file.strip_prefix(&crates).is_ok_and(|inner| {
            inner
                .components()
                .nth(1)
                .is_some_and(|c| c.as_os_str() == "src")
        });
        if !in_src || file.starts_with(&git_layer) {
            continue;
        }
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        let shown = file.strip_prefix(root).unwrap_or(file).display();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && line.contains("\"git\"") {
                problems.push(format!(
                    "{shown}:{}: names the git program; only epic-git-ops runs git",
                    n + 1
                ));
            }
        }
    }
}

/// The dependency names of a manifest's `[dependencies]`, `[build-dependencies]` and
/// `[target.'…'.dependencies]` tables (not dev-dependencies).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut counted = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']');
            counted = table == "dependencies"
                || table == "build-dependencies"
                || (table.starts_with("target.") && table.ends_with(".dependencies"));
            continue;
        }
        if !counted || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line
            .split(['=', '.'])
            .next()
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            names.push(name.to_owned());
        }
    }
    names
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
