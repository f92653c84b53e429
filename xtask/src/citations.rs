//! The source files and tests the documents cite: every `file.rs` or `path/to/file.rs` in
//! backticks in RELIABILITY.md and ARCHITECTURE.md names a file of the workspace, and every
//! `file.rs::name` a function of that name in it (a test, most often), so a test that moved or
//! was renamed is never cited where it no longer is.

use std::fs;
use std::path::{Path, PathBuf};

/// The documents whose citations are checked.
const DOCUMENTS: &[&str] = &["RELIABILITY.md", "ARCHITECTURE.md"];

/// Adds a problem for each citation that leads nowhere; `sources` are the workspace's `.rs`
/// files, as tidy lists them.
pub(crate) fn check(root: &Path, sources: &[PathBuf], problems: &mut Vec<String>) {
    for document in DOCUMENTS {
        let Ok(text) = fs::read_to_string(root.join(document)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for (file, function) in citations(line) {
                let found: Vec<&PathBuf> = sources
                    .iter()
                    .filter(|source| source.ends_with(file))
                    .collect();
                if found.is_empty() {
                    problems.push(format!(
                        "{document}:{}: cites `{file}`, which no file of the workspace is",
                        n + 1
                    ));
                    continue;
                }
                let Some(function) = function else {
                    continue;
                };
                let defined = found.iter().any(|source| {
                    fs::read_to_string(source).is_ok_and(|code| defines(&code, function))
                });
                if !defined {
                    problems.push(format!(
                        "{document}:{}: cites `{file}::{function}`, which no `{file}` defines",
                        n + 1
                    ));
                }
            }
        }
    }
}

/// The citations in backticks on `line`: each `….rs` with the function after `::`, if any.
fn citations(line: &str) -> Vec<(&str, Option<&str>)> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|token| {
            let (file, function) = match token.split_once("::") {
                Some((file, function)) => (file, Some(function)),
                None => (token, None),
            };
            let plain = |text: &str| {
                !text.is_empty()
                    && text
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            };
            let is_file = Path::new(file).extension().is_some_and(|ext| ext == "rs")
                && plain(file)
                && !file.starts_with('/');
            let is_function = function.is_none_or(|name| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            (is_file && is_function).then_some((file, function))
        })
        .collect()
}

/// Whether `code` defines a function `name`.
fn defines(code: &str, name: &str) -> bool {
    code.match_indices(&format!("fn {name}")).any(|(at, _)| {
        code[at + 3 + name.len()..]
            .chars()
            .next()
            .is_some_and(|next| next == '(' || next == '<')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_are_files_in_backticks_with_an_optional_function() {
        assert_eq!(
            citations("cli: `sandbox.rs::no_turn`, `git-ops/src/pin.rs`, `a b.rs`, `x.rs::`"),
            [
                ("sandbox.rs", Some("no_turn")),
                ("git-ops/src/pin.rs", None)
            ]
        );
        assert!(citations("`Cargo.toml` and `--gate CMD`").is_empty());
    }

    #[test]
    fn a_function_is_defined_by_its_name_and_no_longer_one() {
        let code = "fn a_test() {}\nasync fn other<T>() {}";
        assert!(defines(code, "a_test"));
        assert!(defines(code, "other"));
        assert!(!defines(code, "a_tes"));
        assert!(!defines(code, "missing"));
    }
}
