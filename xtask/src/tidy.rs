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
//!   `epic-test-support` ([`DEV_ONLY`]) is the tests' layer: any crate's dev-dependencies may
//!   name it, no crate's dependencies may, and it runs git as the tests' fixture. The real-CLI
//!   tier ([`TIER`]) runs git too: it builds each case's scratch repository, as the tests do.
//! - Every Markdown document a `.md`, `.rs` or `.toml` file of the repository refers to is in
//!   the repository ([`check_document_references`]; what counts as a reference is
//!   [`document_references`]); a link in a Markdown file leads to its target from the file's
//!   own directory, as a reader on GitHub follows it ([`markdown_links`]).
//! - No source file under `crates/*/src` or `xtask/src` holds more than [`MAX_LINES`] lines
//!   before its `#[cfg(test)]` module ([`lines_before_tests`]): a longer file is split by concern.
//! - A `mod.rs` or `lib.rs` only declares and re-exports ([`mod_rs_logic`]): its logic lives in a
//!   named file.
//! - The top-level modules of a crate import one another one way ([`module_cycle`]): no circle
//!   of `crate::` imports, in any crate; and so do its files, whatever module they are in
//!   ([`crate::imports`]), in every crate and in xtask.
//! - No crate holds more than [`MAX_SHARE`] percent of the workspace's source lines (those
//!   before each file's unit tests, under `crates/*/src` and `xtask/src`): a crate that grows
//!   past it has become more than one concern ([`crate_shares`]). The executor, which is the
//!   run and nothing beside it, holds at most [`RUN_SHARE`] percent: the services the run shares
//!   with `epic land` and `epic plan` live in crates of their own.

use std::fs;
use std::path::{Path, PathBuf};

use crate::layers::{DEV_ONLY, LAYERS, TIER, normal_dependencies};

use crate::Result;

pub(crate) fn check(root: &Path) -> Result {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    let mut lines_by_top: std::collections::BTreeMap<String, usize> =
        std::collections::BTreeMap::new();
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
        if is_source(root, file) {
            let lines = lines_before_tests(&text);
            *lines_by_top.entry(owner(root, file)).or_default() += lines;
            if lines > MAX_LINES {
                problems.push(format!(
                    "{shown}: {lines} lines before its unit tests, more than {MAX_LINES}; split \
                     it into files by concern"
                ));
            }
            if let Some(name) = file
                .file_name()
                .and_then(|name| name.to_str())
                .filter(|name| *name == "mod.rs" || *name == "lib.rs")
                && let Some(line) = mod_rs_logic(&text)
            {
                problems.push(format!(
                    "{shown}:{line}: a `{name}` only declares and re-exports; move this into a \
                     named file of the module"
                ));
            }
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
    check_document_references(root, &mut problems);
    crate::lints::check(root, &mut problems);
    crate::architecture::check(root, &mut problems);
    crate::citations::check(root, &files, &mut problems);
    problems.extend(crate_shares(&lines_by_top));
    check_module_cycles(root, &files, &mut problems);
    crate::imports::check(root, &files, &mut problems);
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

/// The most lines a source file holds before its `#[cfg(test)]` module.
const MAX_LINES: usize = 1_000;

/// A problem for each crate whose top-level modules import one another in a circle.
fn check_module_cycles(root: &Path, files: &[PathBuf], problems: &mut Vec<String>) {
    let mut by_crate: std::collections::BTreeMap<String, Vec<(String, String)>> =
        std::collections::BTreeMap::new();
    for file in files.iter().filter(|file| is_source(root, file)) {
        let owner = owner(root, file);
        let Ok(inner) = file.strip_prefix(root.join(&owner).join("src")) else {
            continue;
        };
        let Some(first) = inner.components().next() else {
            continue;
        };
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if matches!(module.as_str(), "lib" | "main") {
            continue;
        }
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        by_crate.entry(owner).or_default().push((module, text));
    }
    for (owner, modules) in by_crate {
        if let Some(circle) = module_cycle(&modules) {
            problems.push(format!(
                "{owner}: its modules import one another in a circle: {}; move what both need \
                 below both",
                circle.join(" → ")
            ));
        }
    }
}

/// A circle of `crate::` imports among the top-level modules of one crate (each a module name
/// and the text of one of its files), as the modules along it, the first repeated at the end;
/// `None` when the imports run one way. Comments, `#[cfg(doc)]` imports and the unit tests do
/// not count.
fn module_cycle(modules: &[(String, String)]) -> Option<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let names: BTreeSet<&str> = modules.iter().map(|(name, _)| name.as_str()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, text) in modules {
        let code: Vec<&str> = text.lines().take(lines_before_tests(text)).collect();
        for (n, line) in code.iter().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") || (n > 0 && code[n - 1].trim() == "#[cfg(doc)]") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let target = &rest[..end];
                if target != name && names.contains(target) {
                    edges
                        .entry(name.clone())
                        .or_default()
                        .insert(target.to_owned());
                }
            }
        }
    }
    crate::imports::cycle(&edges)
}

/// The largest share of the workspace's source lines one crate may hold, in percent.
const MAX_SHARE: usize = 30;

/// The largest share the executor (`crates/executor`, the run) may hold, in percent.
const RUN_SHARE: usize = 15;

/// The share `name` may hold, in percent.
fn share_of(name: &str) -> usize {
    if name == "crates/executor" {
        RUN_SHARE
    } else {
        MAX_SHARE
    }
}

/// The crate (`crates/<name>`, or `xtask`) a source file belongs to.
fn owner(root: &Path, file: &Path) -> String {
    let inner = file.strip_prefix(root).unwrap_or(file);
    let mut parts = inner
        .components()
        .map(|part| part.as_os_str().to_string_lossy());
    match (parts.next(), parts.next()) {
        (Some(top), Some(name)) if top == "crates" => format!("crates/{name}"),
        (Some(top), _) => top.into_owned(),
        _ => String::new(),
    }
}

/// A problem for each crate holding more than its share ([`share_of`]) of `lines` (source lines
/// by crate) in all.
fn crate_shares(lines: &std::collections::BTreeMap<String, usize>) -> Vec<String> {
    let total: usize = lines.values().sum();
    lines
        .iter()
        .filter(|&(name, &count)| count * 100 > total * share_of(name))
        .map(|(name, count)| {
            let per_mille = count * 1000 / total;
            format!(
                "{name}: {count} of the workspace's {total} source lines ({}.{} %), more than \
                 {} %; move a concern into a crate of its own",
                per_mille / 10,
                per_mille % 10,
                share_of(name)
            )
        })
        .collect()
}

/// Whether `file` is library or binary source the file rules hold for: under `crates/*/src` or
/// `xtask/src`.
fn is_source(root: &Path, file: &Path) -> bool {
    let Ok(inner) = file.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<_> = inner
        .components()
        .map(std::path::Component::as_os_str)
        .collect();
    match parts.as_slice() {
        [top, _, src, ..] if *top == "crates" => *src == "src",
        [top, src, ..] if *top == "xtask" => *src == "src",
        _ => false,
    }
}

/// The lines of `text` before its unit tests: before the first top-level `#[cfg(test)]` that
/// opens a module (`mod tests {` or `mod tests;` on the next line that is not an attribute), or
/// all of its lines when it has none. A `#[cfg(test)]` on a function or an import counts as code.
fn lines_before_tests(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.trim_end() != "#[cfg(test)]" {
            continue;
        }
        let item = lines[n + 1..]
            .iter()
            .map(|line| line.trim())
            .find(|line| !line.starts_with("#[") && !line.starts_with("//"));
        if item.is_some_and(|item| item.starts_with("mod ") || item.starts_with("pub(crate) mod "))
        {
            return n;
        }
    }
    lines.len()
}

/// The first line (1-based) of a `mod.rs` that is not `//!` or `//` comments, an attribute, a
/// `mod`/`pub mod` declaration or a `use`/`pub use` (a multi-line `use` included), or `None`
/// when it only declares and re-exports.
fn mod_rs_logic(text: &str) -> Option<usize> {
    let mut open_use = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim();
        if open_use {
            open_use = !code.ends_with(';');
            continue;
        }
        if code.is_empty()
            || code.starts_with("//")
            || code.starts_with("#[")
            || code.starts_with("#![")
        {
            continue;
        }
        let item = code
            .strip_prefix("pub ")
            .or_else(|| {
                code.strip_prefix("pub(")
                    .and_then(|rest| rest.split_once(") ").map(|(_, item)| item))
            })
            .unwrap_or(code);
        if item.starts_with("mod ") && code.ends_with(';') {
            continue;
        }
        if item.starts_with("use ") {
            open_use = !code.ends_with(';');
            continue;
        }
        return Some(n + 1);
    }
    None
}

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
            if dependency == DEV_ONLY.1 {
                problems.push(format!(
                    "{shown}: `{package}` names `{dependency}` outside `[dev-dependencies]`; it \
                     is the tests' fixtures, never part of what users run"
                ));
                continue;
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
    let fixtures = crates.join(DEV_ONLY.0);
    let tier = crates.join(TIER);
    for file in files {
        let in_src = file.strip_prefix(&crates).is_ok_and(|inner| {
            inner
                .components()
                .nth(1)
                .is_some_and(|c| c.as_os_str() == "src")
        });
        // The ACP permission policy reads the word `git` in the command an agent asks to run
        // (is it `git status` or `git commit`?); it runs nothing.
        let acp_policy = file.ends_with("acp/src/policy.rs");
        if !in_src
            || file.starts_with(&git_layer)
            || file.starts_with(&fixtures)
            || file.starts_with(&tier)
            || acp_policy
        {
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

/// Names of a user's files that examples and test fixtures write or name (house rules, a style
/// guide, a changelog): upper-case like this repository's documents, but none of them is one.
const EXAMPLE_DOCUMENTS: &[&str] = &[
    "CONTRIBUTING.md",
    "RULES.md",
    "NOTES.md",
    "CHANGELOG.md",
    "STYLE.md",
];

/// Directories never searched for files that refer to documents.
const SKIPPED_DIRS: &[&str] = &["target", ".git", "node_modules"];

/// Every Markdown document a `.md`, `.rs` or `.toml` file of the repository refers to
/// ([`document_references`]) must exist, resolved from the repository root or from the
/// referring file's directory (an upper-case name also by its file name alone, so an example
/// such as `../../README.md` in a doc comment counts as the root's `README.md`).
fn check_document_references(root: &Path, problems: &mut Vec<String>) {
    let mut files = Vec::new();
    document_sources(root, &mut files);
    files.sort();
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        let shown = file.strip_prefix(root).unwrap_or(file).display();
        let dir = file.parent().unwrap_or(root);
        let kind = match file.extension().and_then(|ext| ext.to_str()) {
            Some("md") => Source::Markdown,
            Some("rs") => Source::Rust,
            _ => Source::Toml,
        };
        for (n, line) in text.lines().enumerate() {
            for reference in document_references(line, kind) {
                let found = |path: &str| root.join(path).exists() || dir.join(path).exists();
                let exists = match &reference {
                    Reference::Name(path) => {
                        found(path) || path.rsplit('/').next().is_some_and(found)
                    }
                    Reference::Path(path) => found(path),
                };
                if !exists {
                    let path = match &reference {
                        Reference::Name(path) | Reference::Path(path) => path,
                    };
                    problems.push(format!(
                        "{shown}:{}: refers to `{path}`, which is not in the repository (point \
                         it at a document that is, such as docs/contract.md)",
                        n + 1
                    ));
                }
            }
            if kind == Source::Markdown {
                for path in markdown_links(line) {
                    if root.join(path).exists() && !dir.join(path).exists() {
                        problems.push(format!(
                            "{shown}:{}: links to `{path}`, which is not there from the \
                             file's own directory (a link is followed from there: from docs/, \
                             a document at the root is one directory up, `../`)",
                            n + 1
                        ));
                    }
                }
            }
        }
    }
}

/// The relative Markdown files `line` links to, `[the contract](docs/contract.md#section)`, each
/// without its anchor.
fn markdown_links(line: &str) -> Vec<&str> {
    let mut links = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let target = rest.split(')').next().unwrap_or_default();
        let path = target.split('#').next().unwrap_or_default();
        if is_markdown(path) && is_relative_path(path) {
            links.push(path);
        }
    }
    links
}

/// What kind of file a line comes from: which of its lines are prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Markdown: every line is prose.
    Markdown,
    /// Rust: comment lines (`//`, `///`, `//!`) are prose.
    Rust,
    /// TOML: comment lines (`#`) are prose.
    Toml,
}

/// A document a line refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reference {
    /// An upper-case document name (`README.md`), perhaps after a directory, as written.
    Name(String),
    /// A relative path to a Markdown file (`docs/contract.md`), as written.
    Path(String),
}

/// The Markdown documents `line` refers to. The rule, chosen so that the names of files epic
/// writes (`report.md`, `board.md`, `epic-plan.md`, `stories/<id>.plan.md`) and the paths test
/// fixtures make (a guide under `docs/` in a test repository) are not references:
///
/// - an upper-case document name, such as `README.md` (letters `A`–`Z`, digits, `_` and `-`
///   before `.md`), perhaps after a directory, anywhere in the line: such names are documents
///   by convention; [`EXAMPLE_DOCUMENTS`] are a user's, not this repository's;
/// - the target of a relative Markdown link, `[the contract](docs/contract.md#section)`;
/// - a code span that is a whole relative path with a directory, `` `docs/contract.md` ``, in
///   prose (a Markdown line, a Rust or TOML comment);
/// - in a Rust or TOML comment, a path into `docs/` or one that climbs out (`../`).
///
/// Patterns (`<id>`, `*`) and absolute paths are no references.
fn document_references(line: &str, source: Source) -> Vec<Reference> {
    let prose = match source {
        Source::Markdown => true,
        Source::Rust => line.trim_start().starts_with("//"),
        Source::Toml => line.trim_start().starts_with('#'),
    };
    let mut references = Vec::new();
    let mut push = |reference: Reference| {
        let path = match &reference {
            Reference::Name(path) | Reference::Path(path) => path,
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let known = references.iter().any(|known: &Reference| match known {
            Reference::Name(known) | Reference::Path(known) => known == path,
        });
        if !known && !EXAMPLE_DOCUMENTS.contains(&name) {
            references.push(reference);
        }
    };
    for token in md_tokens(line) {
        let name = token.rsplit('/').next().unwrap_or(token);
        let stem = name.strip_suffix(".md").unwrap_or_default();
        let upper = stem.starts_with(|c: char| c.is_ascii_uppercase())
            && stem
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if upper {
            if !token.starts_with('/') {
                push(Reference::Name(token.to_owned()));
            }
        } else if prose
            && source != Source::Markdown
            && is_relative_path(token)
            && (token.starts_with("docs/") || token.starts_with("../"))
        {
            push(Reference::Path(token.to_owned()));
        }
    }
    for path in markdown_links(line) {
        push(Reference::Path(path.to_owned()));
    }
    if prose {
        for span in line.split('`').skip(1).step_by(2) {
            if is_markdown(span) && span.contains('/') && is_relative_path(span) {
                push(Reference::Path(span.to_owned()));
            }
        }
    }
    references
}

/// Each word of `line` that ends in `.md` (not `.mdx`), of the characters a path is written
/// with: letters, digits, `_`, `.`, `/` and `-`.
fn md_tokens(line: &str) -> Vec<&str> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let mut tokens = Vec::new();
    for (at, _) in line.match_indices(".md") {
        let end = at + 3;
        if line[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let start = line[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| path_char(c))
            .last()
            .map_or(at, |(index, _)| index);
        if start < at {
            tokens.push(&line[start..end]);
        }
    }
    tokens
}

/// Whether `path` names a Markdown file, `*.md` as this repository writes them (lower case:
/// `.MD` is another name).
fn is_markdown(path: &str) -> bool {
    path.strip_suffix(".md")
        .is_some_and(|stem| !stem.is_empty())
}

/// Whether `path` is written as a relative path of plain characters: no pattern (`<id>`, `*`),
/// no URL, not absolute, no space.
fn is_relative_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains("://")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
}

/// The `.md`, `.rs` and `.toml` files under `dir`, but in [`SKIPPED_DIRS`].
fn document_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if !path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| SKIPPED_DIRS.contains(&name))
            {
                document_sources(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|ext| ext == "md" || ext == "rs" || ext == "toml")
        {
            out.push(path);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_circle_of_module_imports_is_found() {
        let module = |name: &str, text: &str| (name.to_owned(), text.to_owned());
        let one_way = [
            module("a", "//! A.\nuse crate::b::B;\n"),
            module("b", "//! B.\nuse crate::c;\n// crate::a in a comment\n"),
            module(
                "c",
                "//! C.\n#[cfg(doc)]\nuse crate::a::A;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
            ),
        ];
        assert_eq!(module_cycle(&one_way), None);
        let mut circle = one_way.to_vec();
        circle.push(module(
            "c",
            "//! C, second file.\nfn f() { crate::a::g(); }\n",
        ));
        assert_eq!(
            module_cycle(&circle),
            Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
        // `crate::ab` is not `crate::a`.
        assert_eq!(
            module_cycle(&[module("a", "use crate::b;"), module("b", "use crate::ab;")]),
            None
        );
    }

    #[test]
    fn a_crate_past_its_share_is_named() {
        let lines = std::collections::BTreeMap::from([
            ("crates/a".to_owned(), 31),
            ("crates/b".to_owned(), 30),
            ("crates/c".to_owned(), 39),
        ]);
        let problems = super::crate_shares(&lines);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("crates/a: 31 of the workspace's 100"));
        assert!(problems[1].starts_with("crates/c: 39"));
        let even = std::collections::BTreeMap::from([
            ("crates/a".to_owned(), 30),
            ("crates/b".to_owned(), 70),
        ]);
        assert_eq!(super::crate_shares(&even).len(), 1, "b only");
        let run = std::collections::BTreeMap::from([
            ("crates/executor".to_owned(), 16),
            ("crates/b".to_owned(), 28),
            ("crates/c".to_owned(), 28),
            ("crates/d".to_owned(), 28),
        ]);
        let problems = super::crate_shares(&run);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("more than 15 %"), "{problems:?}");
    }

    /// A document name built at run time, so this file itself names no missing document.
    fn doc(name: &str) -> String {
        format!("{name}{}", ".md")
    }

    fn names(line: &str, source: Source) -> Vec<Reference> {
        document_references(line, source)
    }

    #[test]
    fn upper_case_names_are_references_anywhere() {
        let missing = doc("MISSING");
        for source in [Source::Markdown, Source::Rust, Source::Toml] {
            assert_eq!(
                names(&format!("see {missing}, \"the contract\""), source),
                [Reference::Name(missing.clone())]
            );
        }
        let nested = format!("`docs/{}`", doc("DESIGN"));
        assert_eq!(
            names(&nested, Source::Rust),
            [Reference::Name(format!("docs/{}", doc("DESIGN")))]
        );
    }

    #[test]
    fn names_of_files_epic_writes_and_examples_are_not() {
        let line = "writes `report.md`, `board.md`, epic-plan.md and `stories/<id>.plan.md`; \
                    rules = [\"CONTRIBUTING.md\", \"docs/style.md\"]";
        assert_eq!(names(line, Source::Markdown), []);
        assert_eq!(names(line, Source::Rust), []);
        // In code, a lower-case path is a fixture, not a reference.
        assert_eq!(
            names("repo.write(\"docs/guide.md\", \"…\");", Source::Rust),
            []
        );
        assert_eq!(
            names("`transcripts/<story>/NNNN-<role>.md`", Source::Markdown),
            []
        );
        assert_eq!(names("see /etc/NOTICE.md and a.mdx", Source::Markdown), []);
    }

    #[test]
    fn links_and_whole_path_code_spans_are_references() {
        assert_eq!(
            names(
                "the [contract](docs/contract.md#events) says",
                Source::Markdown
            ),
            [Reference::Path("docs/contract.md".into())]
        );
        assert_eq!(
            names("see [here](https://example.com/x.md)", Source::Markdown),
            []
        );
        assert_eq!(
            names("as `docs/contract.md` says", Source::Markdown),
            [Reference::Path("docs/contract.md".into())]
        );
        assert_eq!(
            names("/// as docs/contract.md says (../notes/x.md)", Source::Rust),
            [
                Reference::Path("docs/contract.md".into()),
                Reference::Path("../notes/x.md".into())
            ]
        );
        assert_eq!(names("let path = \"docs/contract.md\";", Source::Rust), []);
        assert_eq!(
            names("# as `docs/contract.md` says", Source::Toml),
            [Reference::Path("docs/contract.md".into())]
        );
    }

    #[test]
    fn the_check_names_a_missing_document_and_accepts_present_ones() {
        let root = std::env::temp_dir().join(format!("epic-tidy-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).unwrap();
        }
        fs::create_dir_all(root.join("docs")).unwrap();
        fs::create_dir_all(root.join("crates/a/src")).unwrap();
        fs::write(root.join("docs/contract.md"), "# contract\n").unwrap();
        fs::write(root.join(doc("README")), "See `docs/contract.md`.\n").unwrap();
        fs::write(
            root.join("crates/a/src/lib.rs"),
            format!(
                "//! See {}, docs/contract.md and ../../{}.\n",
                doc("README"),
                doc("README")
            ),
        )
        .unwrap();
        let mut problems = Vec::new();
        check_document_references(&root, &mut problems);
        assert_eq!(problems, Vec::<String>::new());

        fs::write(
            root.join("crates/a/src/lib.rs"),
            format!("//! The rules: {}.\n", doc("CONTRACT")),
        )
        .unwrap();
        check_document_references(&root, &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(&format!(
                "crates/a/src/lib.rs:1: refers to `{}`",
                doc("CONTRACT")
            )),
            "{problems:?}"
        );

        // A guide under docs/ links to the root's documents from its own directory.
        fs::write(root.join("crates/a/src/lib.rs"), "//! A crate.\n").unwrap();
        let readme = doc("README");
        fs::write(
            root.join("docs/guide.md"),
            format!(
                "[Back](../{readme}), [the contract]({}#events).\n",
                doc("contract")
            ),
        )
        .unwrap();
        problems.clear();
        check_document_references(&root, &mut problems);
        assert_eq!(problems, Vec::<String>::new());
        fs::write(
            root.join("docs/guide.md"),
            format!("[Back]({readme}), [the contract](docs/contract.md).\n"),
        )
        .unwrap();
        check_document_references(&root, &mut problems);
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            problems
                .iter()
                .map(|problem| problem.split(", which").next().unwrap_or_default())
                .collect::<Vec<_>>(),
            [
                format!("docs/guide.md:1: links to `{readme}`"),
                "docs/guide.md:1: links to `docs/contract.md`".to_owned()
            ],
            "{problems:?}"
        );
    }

    #[test]
    fn test_support_is_a_dev_dependency_only_and_may_run_git() {
        let root = std::env::temp_dir().join(format!("epic-tidy-layers-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).unwrap();
        }
        let manifest = |dir: &str, package: &str, table: &str| {
            fs::create_dir_all(root.join("crates").join(dir).join("src")).unwrap();
            fs::write(
                root.join("crates").join(dir).join("Cargo.toml"),
                format!("[package]\nname = \"{package}\"\n\n{table}\nepic-test-support.workspace = true\n"),
            )
            .unwrap();
        };
        manifest("report", "epic-report", "[dev-dependencies]");
        manifest("test-support", "epic-test-support", "[dev-dependencies]");
        let fixture = root.join("crates/test-support/src/lib.rs");
        fs::write(&fixture, "//! Fixtures.\nfn git() { run(\"git\"); }\n").unwrap();
        let mut problems = Vec::new();
        check_layers(&root, std::slice::from_ref(&fixture), &mut problems);
        assert_eq!(problems, Vec::<String>::new());

        manifest("report", "epic-report", "[dependencies]");
        check_layers(&root, &[fixture], &mut problems);
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "crates/report/Cargo.toml: `epic-report` names `epic-test-support` outside \
                 `[dev-dependencies]`"
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn lines_before_tests_stop_at_the_test_module_only() {
        let file = "//! A file.\nfn a() {}\n#[cfg(test)]\nfn helper() {}\n\n#[cfg(test)]\n#[expect(dead_code, reason = \"x\")]\nmod tests {\n    fn t() {}\n}\n";
        assert_eq!(lines_before_tests(file), 5);
        assert_eq!(lines_before_tests("//! A file.\nfn a() {}\n"), 2);
        assert_eq!(
            lines_before_tests("//! A file.\n#[cfg(test)]\nmod tests;\nfn b() {}\n"),
            1
        );
        let long = format!("//! Long.\n{}", "fn a() {}\n".repeat(MAX_LINES));
        assert_eq!(lines_before_tests(&long), MAX_LINES + 1);
    }

    #[test]
    fn a_mod_rs_or_lib_rs_may_only_declare_and_re_export() {
        let clean = "//! The module.\n\nmod a;\n#[cfg(test)]\nmod test_support;\npub(crate) mod b;\n\nuse std::fmt;\npub use a::{\n    One,\n    Two,\n};\n// why\npub(crate) use b::Three;\n";
        assert_eq!(mod_rs_logic(clean), None);
        assert_eq!(
            mod_rs_logic(&format!("{clean}\nfn logic() {{}}\n")),
            Some(16)
        );
        assert_eq!(mod_rs_logic("//! M.\npub struct S;\n"), Some(2));
        assert_eq!(mod_rs_logic("//! M.\nmod inline {\n}\n"), Some(2));
        assert_eq!(mod_rs_logic("//! M.\nconst N: u8 = 1;\n"), Some(2));
        // A `lib.rs` opens with its crate's inner attributes.
        let lib = "//! The crate.\n\n#![warn(missing_docs)]\n\nmod a;\n\npub use a::A;\n";
        assert_eq!(mod_rs_logic(lib), None);
        assert_eq!(mod_rs_logic(&format!("{lib}pub fn b() {{}}\n")), Some(8));
    }

    #[test]
    fn the_file_rules_hold_for_sources_only() {
        let root = Path::new("/r");
        assert!(is_source(root, Path::new("/r/crates/a/src/lib.rs")));
        assert!(is_source(root, Path::new("/r/crates/a/src/x/mod.rs")));
        assert!(is_source(root, Path::new("/r/xtask/src/tidy.rs")));
        assert!(!is_source(root, Path::new("/r/crates/a/tests/it/main.rs")));
        assert!(!is_source(root, Path::new("/r/crates/a/benches/b.rs")));
    }
}
