//! Tests a story deleted or skipped: a gate goes green just as well when its tests are gone, so
//! a story's diff is read for deleted test files and added skip markers before it may merge.

/// The default test-file patterns ([`RunConfig::test_patterns`](crate::RunConfig)): a pattern
/// ending in `/` matches a directory of that name anywhere in the path; any other pattern is a
/// glob (`*` matches any run of characters but `/`) on the file name, or on the whole path when
/// it holds a `/`.
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
///
/// ```
/// let patterns: Vec<String> = executor::DEFAULT_TEST_PATTERNS.iter().map(|p| (*p).to_owned()).collect();
/// assert!(executor::is_test_path("crates/a/tests/it/main.rs", &patterns));
/// assert!(executor::is_test_path("lib/strings_test.sh", &patterns));
/// assert!(executor::is_test_path("web/cart.test.ts", &patterns));
/// assert!(executor::is_test_path("py/test_cart.py", &patterns));
/// assert!(!executor::is_test_path("src/contest.rs", &patterns));
/// ```
pub fn is_test_path(path: &str, patterns: &[String]) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    let (dirs, name) = segments.split_at(segments.len().saturating_sub(1));
    let name = name.first().copied().unwrap_or_default();
    patterns.iter().any(|pattern| {
        if let Some(dir) = pattern.strip_suffix('/') {
            if dir.contains('/') {
                path.starts_with(pattern.as_str()) || path.contains(&format!("/{pattern}"))
            } else {
                dirs.iter().any(|segment| glob(dir, segment))
            }
        } else if pattern.contains('/') {
            glob(pattern, path)
        } else {
            glob(pattern, name)
        }
    })
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters but `/`.
fn glob(pattern: &str, text: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut text) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last {
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

/// The tests a diff deleted or skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Tampering {
    /// Test files deleted (or renamed to a name that is no test).
    pub(crate) deleted: Vec<String>,
    /// `(file, marker)` for each added line holding a skip marker.
    pub(crate) skipped: Vec<(String, String)>,
}

impl Tampering {
    pub(crate) fn is_empty(&self) -> bool {
        self.deleted.is_empty() && self.skipped.is_empty()
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

/// Reads a `git diff` text for deleted test files and added skip markers.
pub(crate) fn tampering(diff: &str, patterns: &[String]) -> Tampering {
    let mut found = Tampering::default();
    let mut file = String::new();
    let mut renamed_from: Option<String> = None;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git ") {
            file = header
                .rsplit_once(" b/")
                .map_or_else(String::new, |(_, b)| b.to_owned());
            renamed_from = None;
        } else if line.starts_with("deleted file mode") {
            if is_test_path(&file, patterns) {
                found.deleted.push(file.clone());
            }
        } else if let Some(from) = line.strip_prefix("rename from ") {
            renamed_from = Some(from.to_owned());
        } else if let Some(to) = line.strip_prefix("rename to ") {
            if let Some(from) = renamed_from.take()
                && is_test_path(&from, patterns)
                && !is_test_path(to, patterns)
            {
                found.deleted.push(from);
            }
        } else if let Some(added) = line.strip_prefix('+')
            && !line.starts_with("+++")
            && let Some(marker) = SKIP_MARKERS.iter().find(|marker| has_marker(added, marker))
        {
            found.skipped.push((file.clone(), (*marker).to_owned()));
        }
    }
    found.deleted.dedup();
    found.skipped.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Vec<String> {
        DEFAULT_TEST_PATTERNS
            .iter()
            .map(|pattern| (*pattern).to_owned())
            .collect()
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
    fn deletions_renames_and_skip_markers_are_found() {
        let diff = "\
diff --git a/tests/a_test.sh b/tests/a_test.sh
deleted file mode 100644
--- a/tests/a_test.sh
+++ /dev/null
@@ -1 +0,0 @@
-echo ok
diff --git a/tests/b.rs b/old/b.rs
similarity index 100%
rename from tests/b.rs
rename to old/b.rs
diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1 +1,3 @@
+#[ignore]
+let x = it.skip(1);
+let y = iter.skip(1);
diff --git a/src/gone.rs b/src/gone.rs
deleted file mode 100644
";
        let found = tampering(diff, &defaults());
        assert_eq!(found.deleted, ["tests/a_test.sh", "tests/b.rs"]);
        assert_eq!(
            found.skipped,
            [
                ("src/lib.rs".to_owned(), "#[ignore".to_owned()),
                ("src/lib.rs".to_owned(), "it.skip(".to_owned())
            ]
        );
        assert!(tampering("+let y = iter.skip(1);\n", &defaults()).is_empty());
        assert!(tampering("+std::process::exit(1);\n+sys.exit(2)\n", &defaults()).is_empty());
        assert!(!tampering("+  xit('adds', () => {});\n", &defaults()).is_empty());
    }
}
