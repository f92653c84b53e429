//! Failures charged per test: the failing tests a red gate command named (its output, or the
//! JUnit file configured for it, read by `epic-test-failures`), split into those the story
//! turned red (charged) and those already red on the epic head before it (inherited).
//!
//! A command whose every failing test is inherited counts as passed: a story is never failed
//! or undone for a test that was red before it. Where the failing tests cannot be told apart
//! (output no runner's reader believes, a JUnit file not written or not readable), the command
//! is judged whole, as any red command.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use epic_test_failures::{JunitError, Unreadable, read_junit, read_output};

/// Each gate command red on the epic head with the failing tests it named there: what a story
/// is not charged with.
pub type Inherited = BTreeMap<String, BTreeSet<String>>;

/// The failing tests of a red gate command, as charged ([`GateResult::tests`]).
///
/// [`GateResult::tests`]: crate::GateResult::tests
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GateTests {
    /// The failing tests that were not red before: what the story is charged with. Empty when
    /// the command counted as passed.
    pub charged: Vec<String>,
    /// The failing tests already red on the epic head before (or on the baseline): never a
    /// reason to fail or undo a story.
    pub inherited: Vec<String>,
}

impl GateTests {
    /// Every failing test, charged and inherited, sorted.
    pub fn failing(&self) -> BTreeSet<String> {
        self.charged
            .iter()
            .chain(&self.inherited)
            .cloned()
            .collect()
    }

    /// `failing` split against `before`, the tests red before (none when the command passed
    /// before).
    pub fn charge(failing: BTreeSet<String>, before: Option<&BTreeSet<String>>) -> Self {
        let (inherited, charged) = failing
            .into_iter()
            .partition(|test| before.is_some_and(|before| before.contains(test)));
        Self { charged, inherited }
    }

    /// The words a red command's issue opens with: the tests it turned red, and those it
    /// inherited.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "it turned {} red: {}",
            plural(self.charged.len(), "test"),
            self.charged.join(", ")
        );
        if !self.inherited.is_empty() {
            let _ = write!(
                text,
                " (already red before it, not charged: {})",
                self.inherited.join(", ")
            );
        }
        text
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Why a red command's failing tests could not be told apart: it is judged whole.
#[derive(Debug, thiserror::Error)]
pub enum TestsUnread {
    /// Its output does not say for sure.
    #[error("its output cannot be read test by test: {0}")]
    Output(#[from] Unreadable),
    /// Its JUnit file was not there after it ran.
    #[error("it wrote no JUnit file at `{0}`")]
    JunitMissing(String),
    /// Its JUnit file was the same before and after it ran: not written by this run.
    #[error("its JUnit file `{0}` was not rewritten by this run")]
    JunitStale(String),
    /// Its JUnit file could not be read: a link out of the worktree, not a file, not UTF-8,
    /// too large, or an I/O error.
    #[error("its JUnit file `{path}` could not be read: {why}")]
    JunitUnreadable {
        /// The path, as configured.
        path: String,
        /// Why.
        why: String,
    },
    /// Its JUnit file is not one epic reads.
    #[error("its JUnit file `{path}` cannot be read test by test")]
    Junit {
        /// The path, as configured.
        path: String,
        /// Why.
        #[source]
        source: JunitError,
    },
    /// Its JUnit file names no failing test, yet the command failed.
    #[error("its JUnit file `{0}` names no failing test, yet the command failed")]
    JunitGreen(String),
}

/// A JUnit file read at a gate's path, before or after it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JunitFile {
    /// Its text.
    Text(String),
    /// Nothing there.
    Missing,
    /// Not read, and why.
    Unreadable(String),
}

/// The failing tests a red command named: from its JUnit file when one is configured (`junit`:
/// its path, and the file before and after the run), else from `output` (`complete` when
/// nothing of its beginning was cut).
pub fn failing_tests(
    output: &str,
    complete: bool,
    junit: Option<(&str, &JunitFile, &JunitFile)>,
) -> Result<BTreeSet<String>, TestsUnread> {
    let Some((path, before, after)) = junit else {
        return Ok(read_output(output, complete)?.tests);
    };
    let text = match after {
        JunitFile::Missing => return Err(TestsUnread::JunitMissing(path.to_owned())),
        JunitFile::Unreadable(why) => {
            return Err(TestsUnread::JunitUnreadable {
                path: path.to_owned(),
                why: why.clone(),
            });
        }
        JunitFile::Text(_) if after == before => {
            return Err(TestsUnread::JunitStale(path.to_owned()));
        }
        JunitFile::Text(text) => text,
    };
    let failing = read_junit(text).map_err(|source| TestsUnread::Junit {
        path: path.to_owned(),
        source,
    })?;
    if failing.tests.is_empty() {
        return Err(TestsUnread::JunitGreen(path.to_owned()));
    }
    Ok(failing.tests)
}

#[cfg(test)]
mod tests {
    //! Charging and the JUnit file's cases; the readers themselves are `epic-test-failures`'.

    use super::*;

    fn set(tests: &[&str]) -> BTreeSet<String> {
        tests.iter().map(|test| (*test).to_owned()).collect()
    }

    #[test]
    fn a_story_is_charged_only_with_the_tests_it_turned_red() {
        let charged = GateTests::charge(set(&["t::a", "t::b"]), Some(&set(&["t::a", "t::c"])));
        assert_eq!(charged.charged, ["t::b"]);
        assert_eq!(charged.inherited, ["t::a"]);
        assert_eq!(
            charged.describe(),
            "it turned 1 test red: t::b (already red before it, not charged: t::a)"
        );
        let none_before = GateTests::charge(set(&["t::a"]), None);
        assert_eq!(none_before.charged, ["t::a"]);
        assert!(none_before.inherited.is_empty());
    }

    #[test]
    fn the_junit_file_wins_and_must_be_this_runs() {
        let xml = r#"<testsuite failures="1"><testcase classname="t" name="a"><failure/></testcase></testsuite>"#;
        let written = JunitFile::Text(xml.to_owned());
        let found = failing_tests(
            "no names here",
            true,
            Some(("r.xml", &JunitFile::Missing, &written)),
        );
        assert_eq!(found.expect("read"), set(&["t::a"]));
        assert!(matches!(
            failing_tests("", true, Some(("r.xml", &written, &written))),
            Err(TestsUnread::JunitStale(_))
        ));
        assert!(matches!(
            failing_tests(
                "",
                true,
                Some(("r.xml", &JunitFile::Missing, &JunitFile::Missing))
            ),
            Err(TestsUnread::JunitMissing(_))
        ));
        let green = JunitFile::Text(r#"<testsuite><testcase name="a"/></testsuite>"#.to_owned());
        assert!(matches!(
            failing_tests("", true, Some(("r.xml", &JunitFile::Missing, &green))),
            Err(TestsUnread::JunitGreen(_))
        ));
    }

    #[test]
    fn output_is_read_without_a_junit_file() {
        let output = "FAILED tests/test_x.py::test_y - boom\n1 failed in 0.1s\n";
        assert_eq!(
            failing_tests(output, true, None).expect("read"),
            set(&["tests/test_x.py::test_y"])
        );
        assert!(matches!(
            failing_tests("Segmentation fault", true, None),
            Err(TestsUnread::Output(Unreadable::NoTestNamed))
        ));
    }
}
