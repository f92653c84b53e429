//! [`read_junit`]: the failing tests of a JUnit XML file (pytest's `--junitxml`, jest-junit,
//! vitest's `junit` reporter, `cargo nextest`'s JUnit output, `go-junit-report`, Maven).

use std::collections::BTreeSet;

use quick_xml::Reader;
use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use crate::failing::{Failing, Runner};

/// A JUnit XML file that does not say for sure which tests failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JunitError {
    /// It is not well-formed XML.
    #[error("it is not well-formed XML (at byte {position})")]
    Malformed {
        /// Where the parser stopped, in bytes from the start.
        position: u64,
        /// What the parser found.
        #[source]
        source: quick_xml::Error,
    },
    /// It ends before its suites and cases close: cut short while it was written.
    #[error("it ends before its elements close (cut short while it was written?)")]
    Truncated,
    /// It holds no `testsuite` or `testcase`: not a JUnit file.
    #[error("it holds no `testsuite` or `testcase` element")]
    NotJunit,
    /// A `failure` or `error` outside any `testcase`: a suite that failed as a whole.
    #[error("a suite failed outside any test case: {0}")]
    OutsideTests(String),
    /// The suites' `failures` and `errors` attributes count other than the failing test cases.
    #[error("its suites count {counted} failing tests but it names {named}")]
    Miscounted {
        /// The sum of the suites' `failures` and `errors`.
        counted: usize,
        /// The test cases with a `failure` or `error`.
        named: usize,
    },
}

/// The test cases of `xml` that failed: those with a `failure` or `error` element, each named
/// `classname::name` (or `name` without a class name). Skipped cases and the reruns some
/// runners record (`flakyFailure`, `rerunFailure`) are not failures.
///
/// # Errors
///
/// [`JunitError`] when the file is not well-formed, not JUnit, has a suite-level failure, or
/// counts other than it names. A file with no failing case is not an error: its
/// [`Failing::tests`] is empty.
pub fn read_junit(xml: &str) -> Result<Failing, JunitError> {
    let mut reader = Reader::from_str(xml);
    let mut names = BTreeSet::new();
    let mut current: Option<Case> = None;
    // Each open `testsuite`: its count of failures and errors, and whether a case was in it
    // (only suites that hold cases count, so nested suites are not counted twice).
    let mut suites: Vec<(Option<usize>, bool)> = Vec::new();
    let (mut counted, mut any_count, mut seen) = (0usize, false, false);
    loop {
        let event = reader
            .read_event()
            .map_err(|source| JunitError::Malformed {
                position: reader.error_position(),
                source,
            })?;
        match event {
            Event::Start(ref element) | Event::Empty(ref element)
                if element.local_name().as_ref() == "testsuite" =>
            {
                seen = true;
                let count = attribute(element, "failures")
                    .and_then(|n| n.parse::<usize>().ok())
                    .map(|failures| {
                        failures
                            + attribute(element, "errors")
                                .and_then(|n| n.parse::<usize>().ok())
                                .unwrap_or(0)
                    });
                if matches!(event, Event::Start(_)) {
                    suites.push((count, false));
                }
            }
            Event::End(element) if element.local_name().as_ref() == "testsuite" => {
                if let Some((Some(count), true)) = suites.pop() {
                    counted += count;
                    any_count = true;
                }
            }
            Event::Start(element) if element.local_name().as_ref() == "testcase" => {
                seen = true;
                if let Some(suite) = suites.last_mut() {
                    suite.1 = true;
                }
                current = Some(Case::of(&element));
            }
            Event::Empty(element) if element.local_name().as_ref() == "testcase" => {
                seen = true;
                if let Some(suite) = suites.last_mut() {
                    suite.1 = true;
                }
            }
            Event::End(element) if element.local_name().as_ref() == "testcase" => {
                if let Some(case) = current.take()
                    && case.failed
                {
                    names.insert(case.name);
                }
            }
            Event::Start(element) | Event::Empty(element)
                if matches!(element.local_name().as_ref(), "failure" | "error") =>
            {
                match current.as_mut() {
                    Some(case) => case.failed = true,
                    None => {
                        let message = attribute(&element, "message").unwrap_or_default();
                        return Err(JunitError::OutsideTests(message));
                    }
                }
            }
            Event::Eof if current.is_some() || !suites.is_empty() => {
                return Err(JunitError::Truncated);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen {
        return Err(JunitError::NotJunit);
    }
    if any_count && counted != names.len() {
        return Err(JunitError::Miscounted {
            counted,
            named: names.len(),
        });
    }
    Ok(Failing {
        runners: vec![Runner::Junit],
        tests: names,
    })
}

/// A `testcase` being read.
struct Case {
    name: String,
    failed: bool,
}

impl Case {
    fn of(element: &BytesStart<'_>) -> Self {
        let name = attribute(element, "name").unwrap_or_default();
        let name = match attribute(element, "classname") {
            Some(class) if !class.is_empty() => format!("{class}::{name}"),
            _ => name,
        };
        Self {
            name,
            failed: false,
        }
    }
}

/// The value of `element`'s attribute `key`, unescaped.
fn attribute(element: &BytesStart<'_>, key: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.local_name().as_ref() == key)
        .and_then(|attribute| {
            attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(std::borrow::Cow::into_owned)
        })
}

#[cfg(test)]
mod tests {
    //! JUnit files as pytest, jest-junit and nextest write them, and the ones epic refuses.

    use super::*;

    fn names(xml: &str) -> Vec<String> {
        read_junit(xml)
            .unwrap_or_else(|error| panic!("{error}"))
            .tests
            .into_iter()
            .collect()
    }

    #[test]
    fn pytest_junitxml() {
        assert_eq!(
            names(include_str!("../fixtures/pytest-junit.xml")),
            ["tests.test_api::test_retry", "tests.test_db::test_migrate",]
        );
    }

    #[test]
    fn nested_suites_and_jest_junit() {
        assert_eq!(
            names(include_str!("../fixtures/jest-junit.xml")),
            ["sum adds 1 + 2 to equal 4::sum adds 1 + 2 to equal 4"]
        );
    }

    #[test]
    fn a_passing_file_names_none() {
        let xml = r#"<testsuite name="t" tests="1" failures="0"><testcase classname="a" name="b" time="0.1"/></testsuite>"#;
        assert!(names(xml).is_empty());
    }

    #[test]
    fn unreadable_files() {
        assert!(matches!(
            read_junit("<testsuite><testcase name='a'>"),
            Err(JunitError::Truncated)
        ));
        assert!(matches!(
            read_junit("<testsuite><testcase name='a'></testsuite>"),
            Err(JunitError::Malformed { .. })
        ));
        assert!(matches!(read_junit("<html/>"), Err(JunitError::NotJunit)));
        assert!(matches!(read_junit(""), Err(JunitError::NotJunit)));
        assert!(matches!(
            read_junit(r#"<testsuite errors="1"><error message="fixture crashed"/></testsuite>"#),
            Err(JunitError::OutsideTests(message)) if message == "fixture crashed"
        ));
        assert!(matches!(
            read_junit(
                r#"<testsuite failures="2"><testcase name="a"><failure/></testcase></testsuite>"#
            ),
            Err(JunitError::Miscounted {
                counted: 2,
                named: 1
            })
        ));
    }
}
