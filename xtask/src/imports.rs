//! The import graph of a crate's files, for tidy's rule that they import one another one way.
//!
//! A file is a node; an edge runs from a file to each other file whose items it names through a
//! `crate::…` (or `$crate::…`) or `super::…` path: in a `use` list (groups, `self`, renames and
//! globs included) or written out in code. A name the crate root re-exports (`crate::GixGit`,
//! `pub use repo::GixGit;` in `lib.rs`) leads to the file that defines it, so a re-export hides
//! no edge; the root file, which only declares and re-exports, is no node. Comments and
//! `#[cfg(doc)]` imports (links for the docs alone) do not count; tests do, like any code.
//! `super::` inside an inline module (`mod tests { use super::*; }`) is the file itself.
//!
//! Text, not a parser: it holds for code as rustfmt lays it out (an inline module at the top of a
//! file opens with `mod name {` and closes with `}` at the start of a line).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every crate of the workspace, and xtask: each whose files must import one another one way
/// (`crates/<dir>` for each directory with a manifest, then `xtask`).
pub(crate) fn owners(root: &Path) -> Vec<String> {
    let mut owners: Vec<String> = fs::read_dir(root.join("crates"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().join("Cargo.toml").is_file())
                .filter_map(|entry| {
                    entry
                        .file_name()
                        .to_str()
                        .map(|name| format!("crates/{name}"))
                })
                .collect()
        })
        .unwrap_or_default();
    owners.sort();
    owners.push("xtask".to_owned());
    owners
}

/// A problem for each crate (every one: [`owners`]) whose files import one another in a circle.
pub(crate) fn check(root: &Path, files: &[PathBuf], problems: &mut Vec<String>) {
    for owner in owners(root) {
        let src = root.join(&owner).join("src");
        let texts: Vec<(PathBuf, String)> = files
            .iter()
            .filter_map(|file| {
                let inner = file.strip_prefix(&src).ok()?;
                Some((inner.to_owned(), fs::read_to_string(file).ok()?))
            })
            .collect();
        if texts.is_empty() {
            problems.push(format!(
                "{owner}: no source files found for the file import check"
            ));
            continue;
        }
        if let Some(circle) = cycle(&graph(&texts)) {
            problems.push(format!(
                "{owner}: its files import one another in a circle: {}; move what both need \
                 below both",
                circle.join(" → ")
            ));
        }
    }
}

/// The import graph of a crate's files (each a path relative to its `src` directory and its
/// text): each file, by that path shown with `/`, and the files it names (the root file is no
/// node, see the module docs).
pub(crate) fn graph(files: &[(PathBuf, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut root_text = "";
    for (path, text) in files {
        let module = module_path(path);
        if module.is_empty() {
            root_text = text;
        } else {
            modules.insert(module, shown(path));
        }
    }
    let root_uses = uses(root_text);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in files {
        let module = module_path(path);
        if module.is_empty() {
            continue;
        }
        let own = shown(path);
        let targets = edges.entry(own.clone()).or_default();
        for named in named_paths(&module, text) {
            if let Some(target) = resolve(&named, &modules, &root_uses, 0)
                && *target != own
            {
                targets.insert(target.clone());
            }
        }
    }
    edges
}

/// A circle in `edges`, as the nodes along it, the first repeated at the end; `None` when the
/// edges run one way.
pub(crate) fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// Depth first from `at`: a node on the current `path` met again closes a circle; `done` holds
/// the nodes already searched.
fn visit<'a>(
    at: &'a str,
    edges: &'a BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|step| *step == at) {
        let mut circle: Vec<String> = path[start..]
            .iter()
            .map(|step| (*step).to_owned())
            .collect();
        circle.push(at.to_owned());
        return Some(circle);
    }
    if !done.insert(at) {
        return None;
    }
    path.push(at);
    for next in edges.get(at).into_iter().flatten() {
        if let Some(circle) = visit(next, edges, path, done) {
            return Some(circle);
        }
    }
    path.pop();
    None
}

/// `a/b.rs` as shown: with `/` whatever the platform.
fn shown(path: &Path) -> String {
    path.components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The module a file (relative to `src`) is: `a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs`
/// and `main.rs` the root (empty).
fn module_path(path: &Path) -> Vec<String> {
    let mut parts: Vec<String> = path
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if parts.last().is_some_and(|last| last == "mod")
        || (parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main"))
    {
        parts.pop();
    }
    parts
}

/// The code of `text` that counts: no comment lines, no `#[cfg(doc)]` item (up to its `;` or
/// its line), each line with the inline module it lies in (`None` at the file's top level).
fn code_lines(text: &str) -> Vec<(Option<String>, &str)> {
    let mut out = Vec::new();
    let mut inline: Option<String> = None;
    let mut skip_doc_item = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if skip_doc_item {
            skip_doc_item =
                !trimmed.trim_end().ends_with(';') && !trimmed.trim_end().ends_with('}');
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.trim_end() == "#[cfg(doc)]" {
            skip_doc_item = true;
            continue;
        }
        if inline.is_none() && !line.starts_with(char::is_whitespace) {
            let item = trimmed
                .strip_prefix("pub(crate) ")
                .or_else(|| trimmed.strip_prefix("pub "))
                .unwrap_or(trimmed);
            if let Some(name) = item
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(" {"))
            {
                inline = Some(name.trim().to_owned());
            }
        } else if inline.is_some() && line.trim_end() == "}" {
            inline = None;
        }
        out.push((inline.clone(), line));
    }
    out
}

/// Every path (from the crate root, its segments) that `text`, the file of `module`, names
/// through `crate::`, `$crate::` or `super::`. A `use` group's paths are each listed whole.
fn named_paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let lines = code_lines(text);
    let mut found = Vec::new();
    for (at, (inline, line)) in lines.iter().enumerate() {
        // A `use` group may go on over the next lines: they are read with it.
        let rest_of_file = || {
            lines[at..]
                .iter()
                .map(|(_, line)| *line)
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut scope: Vec<String> = module.to_vec();
        if let Some(name) = inline {
            scope.push(name.clone());
        }
        for (start, _) in line.match_indices("crate::") {
            let before = line[..start].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let text = rest_of_file();
            let tail = &text[start + "crate::".len()..];
            found.extend(use_tree(tail));
        }
        for (start, _) in line.match_indices("super::") {
            let before = &line[..start];
            if before.ends_with("super::")
                || before
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let text = rest_of_file();
            let mut tail = &text[start..];
            let mut base = scope.clone();
            while let Some(next) = tail.strip_prefix("super::") {
                base.pop();
                tail = next;
            }
            for path in use_tree(tail) {
                let mut full = base.clone();
                full.extend(path);
                found.push(full);
            }
        }
    }
    found
}

/// The paths of the use tree (or the path in code) at the start of `text`: `a::b::C` is one
/// path, `a::{b, c::{D, self}}` is `a::b`, `a::c::D`, `a::c`; renames (`as`) and globs end a path.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = text;
    tree(&mut rest, &mut Vec::new(), &mut paths);
    paths
}

/// Reads one use tree from `rest` (moved past it) under `prefix`, into `paths`.
fn tree(rest: &mut &str, prefix: &mut Vec<String>, paths: &mut Vec<Vec<String>>) {
    let depth = prefix.len();
    loop {
        *rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            *rest = group;
            loop {
                *rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix('}') {
                    *rest = after;
                    break;
                }
                let before = rest.len();
                tree(rest, prefix, paths);
                *rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix(',') {
                    *rest = after;
                } else if !rest.starts_with('}') || rest.len() == before {
                    break;
                }
            }
            prefix.truncate(depth);
            return;
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let segment = &rest[..end];
        *rest = &rest[end..];
        match segment {
            // A glob, or the path's end.
            "" => *rest = rest.strip_prefix('*').unwrap_or(rest),
            "self" => {}
            _ => prefix.push(segment.to_owned()),
        }
        if let Some(after) = rest.strip_prefix("::") {
            *rest = after;
            continue;
        }
        break;
    }
    // A rename ends the path: `Git as _`.
    if let Some(renamed) = rest.trim_start().strip_prefix("as ") {
        let renamed = renamed.trim_start();
        let end = renamed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(renamed.len());
        *rest = &renamed[end..];
    }
    paths.push(prefix.clone());
    prefix.truncate(depth);
}

/// What the crate root's `use` items bring in, by the name they bring it in as: the path (from
/// the crate root) it stands for.
fn uses(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    let code: String = code_lines(root)
        .iter()
        .filter(|(inline, _)| inline.is_none())
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "use ".len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let statement = rest.split(';').next().unwrap_or_default();
        for (alias, path) in use_leaves(statement) {
            names.insert(alias, path);
        }
    }
    names
}

/// Each leaf of a `use` statement's tree (after `use `, before `;`): the name it brings in (its
/// rename, else its last segment) and its path from the crate root (a leading `crate` or `self`
/// dropped). Globs bring in no name.
fn use_leaves(statement: &str) -> Vec<(String, Vec<String>)> {
    let mut leaves = Vec::new();
    let mut segments = Vec::new();
    leaves_of(statement, &mut segments, &mut leaves);
    leaves
}

/// Reads the tree `text` under `prefix` into `leaves` (see [`use_leaves`]).
fn leaves_of(text: &str, prefix: &mut Vec<String>, leaves: &mut Vec<(String, Vec<String>)>) {
    let text = text.trim();
    let depth = prefix.len();
    // `crate` and `self` lead nowhere from the root; `self` in a group is the group's path.
    let push = |prefix: &mut Vec<String>, segment: &str| {
        if !segment.is_empty() && segment != "self" && !(segment == "crate" && prefix.is_empty()) {
            prefix.push(segment.to_owned());
        }
    };
    if let Some(open) = text.find('{') {
        for segment in text[..open].split("::").map(str::trim) {
            push(prefix, segment);
        }
        let inner = text[open + 1..].trim_end();
        for part in split_top(inner.strip_suffix('}').unwrap_or(inner)) {
            leaves_of(part, prefix, leaves);
        }
        prefix.truncate(depth);
        return;
    }
    let (path, alias) = match text.split_once(" as ") {
        Some((path, alias)) => (path.trim(), Some(alias.trim())),
        None => (text, None),
    };
    for segment in path.split("::").map(str::trim) {
        if segment == "*" {
            prefix.truncate(depth);
            return;
        }
        push(prefix, segment);
    }
    if let Some(name) = alias.map(str::to_owned).or_else(|| prefix.last().cloned())
        && name != "_"
    {
        leaves.push((name, prefix.clone()));
    }
    prefix.truncate(depth);
}

/// `text` split at its commas outside braces.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0_usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect()
}

/// The file that defines what `path` (from the crate root) names: the file of its longest
/// leading module, or where the root's `use` items lead; `None` for the root itself, another
/// crate, or a name it cannot follow.
fn resolve<'a>(
    path: &[String],
    modules: &'a BTreeMap<Vec<String>, String>,
    root_uses: &BTreeMap<String, Vec<String>>,
    depth: usize,
) -> Option<&'a String> {
    for len in (1..=path.len()).rev() {
        if let Some(file) = modules.get(&path[..len]) {
            return Some(file);
        }
    }
    if depth > 8 {
        return None;
    }
    let (first, rest) = path.split_first()?;
    let mut through = root_uses.get(first)?.clone();
    through.extend_from_slice(rest);
    resolve(&through, modules, root_uses, depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of(files: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
        let files: Vec<(PathBuf, String)> = files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .collect();
        graph(&files)
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn every_way_of_naming_a_file_is_an_edge() {
        let edges = crate_of(&[
            (
                "lib.rs",
                "//! Root.\nmod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use b::B;\npub use c::{C, \
                 Other as Renamed};\n",
            ),
            (
                "a.rs",
                "//! A.\nuse crate::{B, d::{self, D}};\nfn f() { crate::Renamed::new(); }\n",
            ),
            ("b.rs", "//! B.\nuse crate::e::{\n    E,\n    F,\n};\n"),
            (
                "c.rs",
                "//! C.\n// crate::a in a comment\n#[cfg(doc)]\nuse crate::a::A;\n",
            ),
            (
                "d.rs",
                "//! D.\nuse std::fmt;\nfn f() -> crate::Missing {}\n",
            ),
            (
                "e.rs",
                "//! E.\nfn e() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use \
                 super::super::c;\n}\n",
            ),
        ]);
        assert_eq!(edges["a.rs"], set(&["b.rs", "c.rs", "d.rs"]));
        assert_eq!(edges["b.rs"], set(&["e.rs"]));
        assert_eq!(
            edges["c.rs"],
            set(&[]),
            "comments and doc links do not count"
        );
        assert_eq!(edges["d.rs"], set(&[]));
        assert_eq!(
            edges["e.rs"],
            set(&["c.rs"]),
            "`super` in a test module is the file"
        );
        assert!(!edges.contains_key("lib.rs"), "the root is no node");
        assert_eq!(cycle(&edges), None);
    }

    #[test]
    fn nested_files_and_their_supers() {
        let edges = crate_of(&[
            ("lib.rs", "//! Root.\nmod m;\nmod x;\n"),
            ("m/mod.rs", "//! M.\nmod a;\nmod b;\n"),
            ("m/a.rs", "//! A.\nuse super::b::B;\n"),
            ("m/b.rs", "//! B.\nuse super::super::x;\n"),
            ("x.rs", "//! X.\nfn f() { crate::m::a::g(); }\n"),
        ]);
        assert_eq!(edges["m/a.rs"], set(&["m/b.rs"]));
        assert_eq!(edges["m/b.rs"], set(&["x.rs"]));
        assert_eq!(edges["x.rs"], set(&["m/a.rs"]));
        assert_eq!(
            cycle(&edges),
            Some(vec![
                "m/a.rs".to_owned(),
                "m/b.rs".to_owned(),
                "x.rs".to_owned(),
                "m/a.rs".to_owned()
            ])
        );
    }

    #[test]
    fn a_circle_through_a_re_export_is_found() {
        let edges = crate_of(&[
            ("lib.rs", "//! Root.\nmod a;\nmod b;\npub use a::A;\n"),
            ("a.rs", "//! A.\nuse crate::b::helper;\npub struct A;\n"),
            ("b.rs", "//! B.\nfn helper(a: &crate::A) {}\n"),
        ]);
        assert_eq!(cycle(&edges).map(|circle| circle.len()), Some(3));
    }

    /// The rule holds for the crates as they are: git-ops' file graph has
    /// every file, and the edges it must (and must not) have.
    #[test]
    fn git_ops_files_import_one_another_one_way() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let src = root.join("crates/git-ops/src");
        let files: Vec<(PathBuf, String)> = fs::read_dir(&src)
            .expect("git-ops sources")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
            .map(|path| {
                let text = fs::read_to_string(&path).expect("readable");
                (path.strip_prefix(&src).expect("inside").to_owned(), text)
            })
            .collect();
        let edges = graph(&files);
        assert_eq!(
            edges.len() + 1,
            files.len(),
            "every file but lib.rs is a node"
        );
        assert_eq!(cycle(&edges), None, "{edges:#?}");
        // The handle is below what it holds and what its operations do.
        assert!(edges["repo.rs"].contains("memo.rs"));
        for above in [
            "git.rs",
            "delegate.rs",
            "rev.rs",
            "scan.rs",
            "status.rs",
            "commit.rs",
        ] {
            assert!(!edges["repo.rs"].contains(above), "repo.rs → {above}");
        }
        // The trait knows only its errors and values; its implementation sits on top.
        assert_eq!(edges["git.rs"], set(&["error.rs", "types.rs"]));
        assert!(edges["delegate.rs"].contains("git.rs"));
        assert!(
            edges
                .values()
                .all(|targets| !targets.contains("delegate.rs"))
        );
    }
}
