//! Tests a story deleted, disabled or skipped: a gate goes green just as well when its tests are
//! gone, so a story's diff is read for test files deleted, renamed out of the way, replaced by a
//! symbolic link or emptied, and for added skip markers, before it may merge.

use std::cell::RefCell;

use epic_git_ops::{FileChange, FileChangeKind, FileMode};
use globset::{GlobBuilder, GlobMatcher};

/// The default test-file patterns (`RunConfig::test_patterns` of `epic-executor`): a pattern
/// ending in `/` matches a directory of that name anywhere in the path; any other pattern is a
/// glob (`*` matches any run of characters but `/`; no other character is special) on the file
/// name, or on the whole path when it holds a `/`.
pub const DEFAULT_TEST_PATTERNS: &[&str] = &[
    "tests/",
    "test/",
    "__tests__/",
    "spec/",
    "*_test.*",
    "*.test.*",
    "*-test.*",
    "test_*.py",
    "*_spec.*",
    "*.spec.*",
    "*Test.java",
    "*Tests.cs",
];

/// What added lines skip a test, in any language the markers name. `.skip(` alone is not one:
/// `iter.skip(1)` is everyday Rust; its test forms (`it.skip(`, `describe.skip(`, `test.skip(`)
/// are.
pub const SKIP_MARKERS: &[&str] = &[
    "#[ignore",
    "@pytest.mark.skip",
    "@unittest.skip",
    "pytest.skip(",
    "t.Skip(",
    "t.SkipNow(",
    "t.Skipf(",
    "xit(",
    "xdescribe(",
    "xtest(",
    "it.skip(",
    "describe.skip(",
    "test.skip(",
    "context.skip(",
    "@Disabled",
    "@Ignore",
];

/// Whether `path` (repo-relative, `/`-separated) is a test file under one of `patterns`.
pub fn is_test_path(path: &str, patterns: &[String]) -> bool {
    thread_local! {
        /// The patterns last compiled on this thread. Callers ask path after path with the same
        /// patterns (a diff's, through `file_changes_vs_base`, on one thread), and compiling
        /// them costs a hundred times a match.
        static LAST: RefCell<Option<(Vec<String>, TestPatterns)>> = const { RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| {
        if last
            .as_ref()
            .is_none_or(|(seen, _)| seen.as_slice() != patterns)
        {
            *last = Some((patterns.to_vec(), TestPatterns::new(patterns)));
        }
        last.as_ref()
            .is_some_and(|(_, compiled)| compiled.matches(path))
    })
}

/// Test-file patterns ([`DEFAULT_TEST_PATTERNS`] and the user's), each compiled once.
#[derive(Debug)]
struct TestPatterns {
    rules: Vec<Rule>,
}

/// One test-file pattern, compiled.
#[derive(Debug)]
enum Rule {
    /// `tests/`: a directory whose name matches, anywhere in the path.
    Directory(GlobMatcher),
    /// `crates/a/tests/`: these directories, at the root or below any directory.
    Directories(String),
    /// `ci/*.sh`: the whole path.
    Path(GlobMatcher),
    /// `*_test.*`: the file name.
    Name(GlobMatcher),
}

impl TestPatterns {
    fn new(patterns: &[String]) -> Self {
        let rules = patterns
            .iter()
            .filter_map(|pattern| {
                Some(if let Some(dir) = pattern.strip_suffix('/') {
                    if dir.contains('/') {
                        Rule::Directories(pattern.clone())
                    } else {
                        Rule::Directory(glob(dir)?)
                    }
                } else if pattern.contains('/') {
                    Rule::Path(glob(pattern)?)
                } else {
                    Rule::Name(glob(pattern)?)
                })
            })
            .collect();
        Self { rules }
    }

    fn matches(&self, path: &str) -> bool {
        let segments: Vec<&str> = path.split('/').collect();
        let (dirs, name) = segments.split_at(segments.len().saturating_sub(1));
        let name = name.first().copied().unwrap_or_default();
        self.rules.iter().any(|rule| match rule {
            Rule::Directory(glob) => dirs.iter().any(|segment| glob.is_match(segment)),
            Rule::Directories(pattern) => {
                path.starts_with(pattern.as_str()) || path.contains(&format!("/{pattern}"))
            }
            Rule::Path(glob) => glob.is_match(path),
            Rule::Name(glob) => glob.is_match(name),
        })
    }
}

/// `pattern` compiled, where `*` stands for any run of characters but `/` and every other
/// character for itself: globset's `*` with `literal_separator` (without it, `*` would cross
/// directories), and what else globset would read escaped (`?`, `[`, `{`; `**`, which would
/// cross directories, is one `*`; `\` is itself with `backslash_escape` off), since a test
/// pattern promises none of them.
///
/// `None` only if globset refused what it was given, which escaped text never is.
fn glob(pattern: &str) -> Option<GlobMatcher> {
    // `**` is one `*` (`a**b` is `a*b`): no star is added after a star.
    let mut glob = String::new();
    for (i, part) in pattern.split('*').enumerate() {
        if i > 0 && !glob.ends_with('*') {
            glob.push('*');
        }
        glob.push_str(&globset::escape(part));
    }
    GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(false)
        .build()
        .ok()
        .map(|glob| glob.compile_matcher())
}

/// The tests a diff deleted, disabled or skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tampering {
    /// Test files deleted (or renamed to a name that is no test).
    pub deleted: Vec<String>,
    /// `(test file, new path)` for each test renamed to a test path of another file type
    /// (`h_test.sh` to `h_test.sh.off`): it matches a pattern still, but no runner takes it.
    pub renamed: Vec<(String, String)>,
    /// Test files replaced by a symbolic link (or a submodule): what runs is no longer the test.
    pub linked: Vec<String>,
    /// Test files left with nothing that runs: empty, or only blank lines and comments.
    pub emptied: Vec<String>,
    /// `(file, marker)` for each added line holding a skip marker.
    pub skipped: Vec<(String, String)>,
}

impl Tampering {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.deleted.is_empty()
            && self.renamed.is_empty()
            && self.linked.is_empty()
            && self.emptied.is_empty()
            && self.skipped.is_empty()
    }

    /// What both `self` and `other` found: a landing's conflict resolution judged against each
    /// side of the merge tampers only with what it does against both.
    #[must_use]
    pub fn common(&self, other: &Self) -> Self {
        fn both<T: Clone + PartialEq>(ours: &[T], theirs: &[T]) -> Vec<T> {
            ours.iter()
                .filter(|item| theirs.contains(item))
                .cloned()
                .collect()
        }
        Self {
            deleted: both(&self.deleted, &other.deleted),
            renamed: both(&self.renamed, &other.renamed),
            linked: both(&self.linked, &other.linked),
            emptied: both(&self.emptied, &other.emptied),
            skipped: both(&self.skipped, &other.skipped),
        }
    }
}

/// Whether `line` holds `marker` as a word of its own: `xit(` is a marker, `exit(` is not.
fn has_marker(line: &str, marker: &str) -> bool {
    let wordy = marker.starts_with(|c: char| c.is_ascii_alphanumeric());
    line.match_indices(marker).any(|(at, _)| {
        !wordy
            || !line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// Whether an added line holds a skip marker: the filter for
/// [`Git::file_changes_vs_base`](epic_git_ops::Git::file_changes_vs_base), so only such lines are
/// kept.
pub fn has_skip_marker(line: &str) -> bool {
    skip_marker(line).is_some()
}

/// The first skip marker `line` holds, if any.
fn skip_marker(line: &str) -> Option<&'static str> {
    SKIP_MARKERS
        .iter()
        .copied()
        .find(|marker| has_marker(line, marker))
}

/// The file type of a path: what follows the last `.` of its name (`sh` for `a_test.sh`,
/// `off` for `a_test.sh.off`), empty when the name has none. A runner picks its tests by it.
fn file_type(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(at) if at > 0 => &name[at + 1..],
        _ => "",
    }
}

/// The line comments that mark a line as one that runs nothing, in the languages tests are
/// written in: shell, Python, Ruby, Perl, YAML (`#`, a shebang included), C-like languages, Rust,
/// Go, JavaScript, Java (`//`), SQL, Lua, Haskell (`--`), Lisp and assembly (`;`).
const LINE_COMMENTS: &[&str] = &["#", "//", "--", ";"];

/// The block comments, as (open, close): C-like languages (`/* */`) and markup (`<!-- -->`).
const BLOCK_COMMENTS: &[(&str, &str)] = &[("/*", "*/"), ("<!--", "-->")];

/// Whether `content` holds anything that runs: a line that is neither blank, nor a line comment,
/// nor inside a block comment. Binary content (a NUL byte) is taken to run: it cannot be read.
pub fn runs(content: &[u8]) -> bool {
    if content.contains(&0) {
        return true;
    }
    let text = String::from_utf8_lossy(content);
    let mut rest: &str = &text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return false;
        }
        if let Some((open, close)) = BLOCK_COMMENTS
            .iter()
            .find(|(open, _)| rest.starts_with(open))
        {
            match rest[open.len()..].find(close) {
                Some(end) => rest = &rest[open.len() + end + close.len()..],
                // An unclosed block comment: the rest is comment.
                None => return false,
            }
        } else if LINE_COMMENTS.iter().any(|marker| rest.starts_with(marker)) {
            rest = rest.split_once('\n').map_or("", |(_, after)| after);
        } else {
            return true;
        }
    }
}

/// Whether a test file was left with nothing that runs: its content before ran something, and
/// its content now (held by [`Git::file_changes_vs_base`](epic_git_ops::Git::file_changes_vs_base)
/// for test paths) runs nothing.
fn emptied(change: &FileChange) -> bool {
    match (&change.previous_content, &change.content) {
        (Some(before), Some(now)) => runs(before) && !runs(now),
        _ => false,
    }
}

/// Whether a file's new entry is no file a runner could run as the test: a symbolic link or a
/// submodule, where the test was neither.
fn linked(change: &FileChange) -> bool {
    let other =
        |mode: Option<FileMode>| matches!(mode, Some(FileMode::Symlink | FileMode::Submodule));
    other(change.mode) && !other(change.previous_mode)
}

/// What a story's changes (as [`Git::file_changes_vs_base`](epic_git_ops::Git::file_changes_vs_base)
/// gives them, holding the content of `patterns`' test paths) do to its tests: a test file
/// deleted, or renamed to a name that is no test, is deleted; one renamed to a test path of
/// another file type is renamed; one replaced by a symbolic link is linked; one left with
/// nothing that runs is emptied; and every added line with a skip marker is a skip.
pub fn tampering(changes: &[FileChange], patterns: &[String]) -> Tampering {
    let mut found = Tampering::default();
    for change in changes {
        match &change.kind {
            FileChangeKind::Deleted if is_test_path(&change.path, patterns) => {
                found.deleted.push(change.path.clone());
            }
            FileChangeKind::Renamed { from } if is_test_path(from, patterns) => {
                if !is_test_path(&change.path, patterns) {
                    found.deleted.push(from.clone());
                } else if file_type(from) != file_type(&change.path) {
                    found.renamed.push((from.clone(), change.path.clone()));
                } else if linked(change) {
                    found.linked.push(from.clone());
                } else if emptied(change) {
                    found.emptied.push(from.clone());
                }
            }
            FileChangeKind::Modified if is_test_path(&change.path, patterns) => {
                if linked(change) {
                    found.linked.push(change.path.clone());
                } else if emptied(change) {
                    found.emptied.push(change.path.clone());
                }
            }
            _ => {}
        }
        for line in &change.added {
            if let Some(marker) = skip_marker(line) {
                found.skipped.push((change.path.clone(), marker.to_owned()));
            }
        }
    }
    found.deleted.sort();
    found.deleted.dedup();
    found.skipped.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_keeps_what_both_sides_found() {
        let ours = Tampering {
            deleted: vec!["a_test.py".into()],
            emptied: vec!["b_test.py".into(), "c_test.py".into()],
            skipped: vec![("d_test.py".into(), "#[ignore".into())],
            ..Tampering::default()
        };
        let theirs = Tampering {
            emptied: vec!["c_test.py".into()],
            skipped: vec![("d_test.py".into(), "#[ignore".into())],
            ..Tampering::default()
        };
        assert_eq!(
            ours.common(&theirs),
            Tampering {
                emptied: vec!["c_test.py".into()],
                skipped: vec![("d_test.py".into(), "#[ignore".into())],
                ..Tampering::default()
            }
        );
        assert!(ours.common(&Tampering::default()).is_empty());
    }

    fn defaults() -> Vec<String> {
        DEFAULT_TEST_PATTERNS
            .iter()
            .map(|pattern| (*pattern).to_owned())
            .collect()
    }

    #[test]
    fn the_default_patterns_know_common_layouts() {
        let patterns = defaults();
        assert!(is_test_path("crates/a/tests/it/main.rs", &patterns));
        assert!(is_test_path("lib/strings_test.sh", &patterns));
        assert!(is_test_path("web/cart.test.ts", &patterns));
        assert!(is_test_path("py/test_cart.py", &patterns));
        assert!(!is_test_path("src/contest.rs", &patterns));
    }

    #[test]
    fn patterns_match_directories_and_names() {
        let patterns = defaults();
        for path in [
            "tests/a.rs",
            "a/tests/b/c.rs",
            "x_test.go",
            "a/b.test.ts",
            "test_x.py",
            "a/b_spec.rb",
            "src/FooTest.java",
        ] {
            assert!(is_test_path(path, &patterns), "{path}");
        }
        for path in [
            "src/lib.rs",
            "testing.rs",
            "src/tests.rs",
            "test_x.rs",
            "a/attest/b.rs",
        ] {
            assert!(!is_test_path(path, &patterns), "{path}");
        }
        assert!(is_test_path("qa/check.sh", &["qa/".to_owned()]));
        assert!(is_test_path("a/b/qa/c/check.sh", &["b/qa/".to_owned()]));
        assert!(is_test_path("ci/x.sh", &["ci/*.sh".to_owned()]));
        assert!(!is_test_path("ci/y/x.sh", &["ci/*.sh".to_owned()]));
    }

    #[test]
    fn only_a_star_is_special_and_it_stays_in_its_directory() {
        let matches = |pattern: &str, path: &str| is_test_path(path, &[pattern.to_owned()]);
        for pattern in [
            "test[0].py",
            "a?b.rs",
            "{a,b}.rs",
            "x\\y.rs",
            "[!a].rs",
            "a]b.rs",
        ] {
            assert!(matches(pattern, pattern), "{pattern}");
        }
        assert!(!matches("test[0].py", "test0.py"));
        assert!(!matches("a?b.rs", "axb.rs"));
        assert!(!matches("{a,b}.rs", "a.rs"));
        assert!(!matches("[!a].rs", "b.rs"));
        // `**` is one `*`: it crosses no directory either.
        assert!(matches("ci/**.sh", "ci/x.sh"));
        assert!(!matches("ci/**.sh", "ci/y/x.sh"));
        assert!(matches("**/x.py", "a/x.py"));
        assert!(!matches("**/x.py", "a/b/x.py"));
        assert!(matches("a**b.rs", "axyb.rs"));
        assert!(matches("*", "anything.rs"));
        assert!(matches("lib/*", "lib/a.rs"));
        assert!(!matches("lib/*", "lib/a/b.rs"));
        assert!(matches("*/", "a/b.rs"));
        assert!(!matches("*/", "b.rs"));
    }

    /// The matching as it was written by hand before globset: the reference the compiled
    /// patterns are held to.
    fn reference(pattern: &str, text: &str) -> bool {
        let Some((first, rest)) = pattern.split_once('*') else {
            return pattern == text;
        };
        let Some(mut text) = text.strip_prefix(first) else {
            return false;
        };
        let parts: Vec<&str> = rest.split('*').collect();
        for (i, part) in parts.iter().enumerate() {
            if i + 1 == parts.len() {
                return text.len() >= part.len()
                    && text.ends_with(part)
                    && !text[..text.len() - part.len()].contains('/');
            }
            match text.find(part) {
                Some(at) if !text[..at].contains('/') => text = &text[at + part.len()..],
                _ => return false,
            }
        }
        true
    }

    proptest::proptest! {
        /// A pattern matches what it matched when `*` was matched by hand, whatever globset
        /// would make of its other characters.
        #[test]
        fn patterns_match_as_they_did(
            pattern in "[ab*/?\\[\\]{},.!\\\\]{0,8}",
            text in "[ab/?\\[\\]{},.!\\\\]{0,10}",
        ) {
            let matched = glob(&pattern).is_some_and(|glob| glob.is_match(&text));
            proptest::prop_assert_eq!(matched, reference(&pattern, &text));
        }
    }

    #[test]
    fn deletions_renames_and_skip_markers_are_found() {
        let change = |path: &str, kind: FileChangeKind, added: &[&str]| FileChange {
            path: path.to_owned(),
            kind,
            added: added.iter().map(|line| (*line).to_owned()).collect(),
            mode: Some(FileMode::File),
            previous_mode: Some(FileMode::File),
            content: None,
            previous_content: None,
        };
        let renamed = |from: &str| FileChangeKind::Renamed {
            from: from.to_owned(),
        };
        let changes = [
            change("old/b.rs", renamed("tests/b.rs"), &[]),
            change("src/gone.rs", FileChangeKind::Deleted, &[]),
            change(
                "src/lib.rs",
                FileChangeKind::Modified,
                &["#[ignore]", "let x = it.skip(1);", "let y = iter.skip(1);"],
            ),
            change("tests/a_test.sh", FileChangeKind::Deleted, &[]),
            change("tests/c.rs", renamed("tests/d.rs"), &[]),
        ];
        let found = tampering(&changes, &defaults());
        assert_eq!(found.deleted, ["tests/a_test.sh", "tests/b.rs"]);
        assert_eq!(
            found.skipped,
            [
                ("src/lib.rs".to_owned(), "#[ignore".to_owned()),
                ("src/lib.rs".to_owned(), "it.skip(".to_owned())
            ]
        );
        let added = |lines: &[&str]| {
            tampering(
                &[change("src/x.js", FileChangeKind::Added, lines)],
                &defaults(),
            )
        };
        assert!(added(&["let y = iter.skip(1);"]).is_empty());
        assert!(added(&["std::process::exit(1);", "sys.exit(2)"]).is_empty());
        assert!(!added(&["  xit('adds', () => {});"]).is_empty());
        assert!(has_skip_marker("  xit('adds', () => {});"));
        assert!(!has_skip_marker("std::process::exit(1);"));
    }

    fn held(path: &str, kind: FileChangeKind, before: &str, now: &str) -> FileChange {
        FileChange {
            path: path.to_owned(),
            kind,
            added: Vec::new(),
            mode: Some(FileMode::File),
            previous_mode: Some(FileMode::File),
            content: Some(now.as_bytes().to_vec()),
            previous_content: Some(before.as_bytes().to_vec()),
        }
    }

    #[test]
    fn renames_to_another_file_type_symlinks_and_emptied_tests_are_found() {
        let renamed = |from: &str| FileChangeKind::Renamed {
            from: from.to_owned(),
        };
        let mut link = held("tests/c_test.sh", FileChangeKind::Modified, "test 1\n", "b");
        link.mode = Some(FileMode::Symlink);
        let changes = [
            held(
                "a_test.sh.off",
                renamed("a_test.sh"),
                "test 1\n",
                "test 1\n",
            ),
            held(
                "b_test.go",
                renamed("tests/b_test.go"),
                "package b\n",
                "package b\n",
            ),
            link,
            held(
                "tests/d.rs",
                FileChangeKind::Modified,
                "#[test]\nfn d() {}\n",
                "",
            ),
            held(
                "tests/e.py",
                FileChangeKind::Modified,
                "assert f()\n",
                "#!/usr/bin/env python\n# off for now\n\n  // and\n/* this\n too */\n",
            ),
            held(
                "tests/f.rs",
                FileChangeKind::Modified,
                "// nothing\n",
                "   \n",
            ),
            held(
                "tests/g.sh",
                FileChangeKind::Modified,
                "true\n",
                "# x\nfalse\n",
            ),
        ];
        let found = tampering(&changes, &defaults());
        assert_eq!(
            found.renamed,
            [("a_test.sh".to_owned(), "a_test.sh.off".to_owned())]
        );
        assert_eq!(found.linked, ["tests/c_test.sh"]);
        assert_eq!(found.emptied, ["tests/d.rs", "tests/e.py"]);
        assert!(found.deleted.is_empty() && found.skipped.is_empty());
    }

    #[test]
    fn what_runs() {
        assert!(!runs(b""));
        assert!(!runs(b" \n\t\r\n"));
        assert!(!runs(
            b"#!/bin/sh\n# a comment\n-- sql\n; lisp\n<!-- x\n-->\n"
        ));
        assert!(!runs(b"/* open"));
        assert!(runs(b"# comment\ntest 1 -eq 1\n"));
        assert!(runs(b"/* a */ fn f() {}"));
        assert!(runs(b"#[test]\nfn t() {}\n"));
        assert!(runs(b"\0binary"));
        assert_eq!(file_type("a/b_test.sh.off"), "off");
        assert_eq!(file_type("tests/run"), "");
        assert_eq!(file_type("tests/.hidden"), "");
    }
}
