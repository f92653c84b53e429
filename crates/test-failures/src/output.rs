//! [`read_output`]: a gate's output read by every runner's reader, the verdicts checked and
//! joined.

use crate::failing::{Failing, Unreadable};
use crate::runners;

/// The failing tests `output` names, read by each runner's reader (colours stripped first).
/// `complete` says whether `output` is the whole output: when its beginning was cut, only a
/// runner that counts its failures is believed.
///
/// # Errors
///
/// [`Unreadable`] when the output does not say for sure which tests failed: none named, a
/// runner's count not matching its names, a failure outside any test (a build error, a crashed
/// test binary, a run stopped at its first failure), or cut output without a count.
pub fn read_output(output: &str, complete: bool) -> Result<Failing, Unreadable> {
    let text = strip_ansi(output);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let found = runners::scan_all(&lines);
    if let Some((runner, line)) = found
        .iter()
        .find_map(|found| Some((found.runner, found.outside.clone()?)))
    {
        return Err(Unreadable::OutsideTests { runner, line });
    }
    let mut failing = Failing::default();
    for found in found {
        if found.names.is_empty() && found.counted.unwrap_or(0) == 0 {
            continue;
        }
        match found.counted {
            Some(counted) if counted != found.names.len() => {
                return Err(Unreadable::Miscounted {
                    runner: found.runner,
                    counted,
                    named: found.names.len(),
                });
            }
            None if !complete => {
                return Err(Unreadable::Cut {
                    runner: found.runner,
                });
            }
            _ => {}
        }
        failing.runners.push(found.runner);
        failing.tests.extend(found.names);
    }
    if failing.tests.is_empty() {
        return Err(Unreadable::NoTestNamed);
    }
    Ok(failing)
}

/// `text` without terminal escape sequences (colours, cursor moves, titles): runners colour
/// their verdicts when they think they write to a terminal (`FORCE_COLOR`, `--color=always`).
fn strip_ansi(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

#[cfg(test)]
mod tests {
    //! The readers on outputs shaped as each runner prints them (`fixtures/`), and the ways an
    //! output is unreadable.

    use super::*;
    use crate::failing::Runner;

    fn names(failing: &Failing) -> Vec<&str> {
        failing.tests.iter().map(String::as_str).collect()
    }

    fn read(fixture: &str) -> Failing {
        read_output(fixture, true).unwrap_or_else(|error| panic!("{error}:\n{fixture}"))
    }

    #[test]
    fn pytest_short_summary() {
        let failing = read(include_str!("../fixtures/pytest.txt"));
        assert_eq!(failing.runners, [Runner::Pytest]);
        assert_eq!(
            names(&failing),
            [
                "tests/test_api.py::TestClient::test_timeout[slow-3]",
                "tests/test_api.py::test_retry",
                "tests/test_db.py::test_migrate",
            ]
        );
    }

    #[test]
    fn pytest_verbose_and_quiet() {
        let failing = read(include_str!("../fixtures/pytest-verbose.txt"));
        assert_eq!(
            names(&failing),
            [
                "tests/test_math.py::test_div",
                "tests/test_math.py::test_sub"
            ]
        );
        let quiet =
            "..F.\nFAILED tests/test_x.py::test_y - assert False\n1 failed, 3 passed in 0.01s\n";
        assert_eq!(names(&read(quiet)), ["tests/test_x.py::test_y"]);
    }

    #[test]
    fn pytest_stopped_at_its_first_failure_or_at_collection_is_unreadable() {
        let stopped = include_str!("../fixtures/pytest-maxfail.txt");
        assert!(
            matches!(
                read_output(stopped, true),
                Err(Unreadable::OutsideTests {
                    runner: Runner::Pytest,
                    ..
                })
            ),
            "{:?}",
            read_output(stopped, true)
        );
        let collection = include_str!("../fixtures/pytest-collection-error.txt");
        assert!(matches!(
            read_output(collection, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::Pytest,
                ..
            })
        ));
    }

    #[test]
    fn cargo_test_with_no_fail_fast() {
        let failing = read(include_str!("../fixtures/cargo-test.txt"));
        assert_eq!(failing.runners, [Runner::CargoTest]);
        assert_eq!(
            names(&failing),
            [
                "parse::tests::rejects_empty",
                "renders_the_table",
                "src/lib.rs - add (line 5)",
            ]
        );
    }

    #[test]
    fn cargo_test_stopped_at_the_first_failing_binary_is_unreadable() {
        let output = include_str!("../fixtures/cargo-test-fail-fast.txt");
        assert!(matches!(
            read_output(output, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::CargoTest,
                ..
            })
        ));
    }

    #[test]
    fn cargo_test_that_did_not_build_or_whose_binary_crashed_is_unreadable() {
        let output = include_str!("../fixtures/cargo-build-error.txt");
        assert!(matches!(
            read_output(output, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::CargoTest,
                ..
            })
        ));
        let crashed = "running 2 tests\ntest a ... ok\nerror: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `target/debug/deps/x-1` (signal: 11, SIGSEGV: invalid memory reference)\nerror: 1 target failed:\n    `--lib`\n";
        assert!(matches!(
            read_output(crashed, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::CargoTest,
                ..
            })
        ));
    }

    #[test]
    fn nextest() {
        let failing = read(include_str!("../fixtures/nextest.txt"));
        assert_eq!(failing.runners, [Runner::Nextest]);
        assert_eq!(
            names(&failing),
            [
                "calc tests::adds",
                "calc::it arithmetic::divides",
                "calc::it arithmetic::hangs",
            ]
        );
    }

    #[test]
    fn nextest_cancelled_at_its_first_failure_is_unreadable() {
        let output = include_str!("../fixtures/nextest-fail-fast.txt");
        assert!(
            matches!(
                read_output(output, true),
                Err(Unreadable::OutsideTests {
                    runner: Runner::Nextest,
                    ..
                })
            ),
            "{:?}",
            read_output(output, true)
        );
    }

    #[test]
    fn go_test_names_each_test_with_its_package() {
        let failing = read(include_str!("../fixtures/go-test.txt"));
        assert_eq!(failing.runners, [Runner::GoTest]);
        assert_eq!(
            names(&failing),
            [
                "example.com/calc TestDiv",
                "example.com/calc/parse TestParse",
                "example.com/calc/parse TestParse/negative",
            ]
        );
    }

    #[test]
    fn go_test_with_a_package_that_did_not_build_is_unreadable() {
        let output = "--- FAIL: TestA (0.00s)\nFAIL\texample.com/a\t0.01s\n# example.com/b\nb/b.go:3:1: syntax error\nFAIL\texample.com/b [build failed]\nFAIL\n";
        assert!(matches!(
            read_output(output, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::GoTest,
                ..
            })
        ));
    }

    #[test]
    fn jest() {
        let failing = read(include_str!("../fixtures/jest.txt"));
        assert_eq!(failing.runners, [Runner::Jest]);
        assert_eq!(
            names(&failing),
            [
                "src/cart.test.js › cart › totals › adds tax",
                "src/sum.test.js › sum › adds 1 + 2 to equal 4",
            ]
        );
    }

    #[test]
    fn jest_suite_that_failed_to_run_is_unreadable() {
        let output = "FAIL src/broken.test.js\n  ● Test suite failed to run\n\n    Cannot find module './missing'\n\nTest Suites: 1 failed, 1 total\nTests:       0 total\n";
        assert!(matches!(
            read_output(output, true),
            Err(Unreadable::OutsideTests {
                runner: Runner::Jest,
                ..
            })
        ));
    }

    #[test]
    fn vitest() {
        let failing = read(include_str!("../fixtures/vitest.txt"));
        assert_eq!(failing.runners, [Runner::Vitest]);
        assert_eq!(
            names(&failing),
            [
                "src/cart.test.ts > cart > totals > adds tax",
                "src/sum.test.ts > sum > adds 1 + 2",
            ]
        );
    }

    #[test]
    fn colours_are_stripped() {
        let coloured = "\u{1b}[31mFAILED\u{1b}[0m tests/test_x.py::\u{1b}[1mtest_y\u{1b}[0m - boom\n\u{1b}]0;title\u{7}\u{1b}[31m1 failed\u{1b}[0m in 0.01s\n";
        assert_eq!(names(&read(coloured)), ["tests/test_x.py::test_y"]);
    }

    #[test]
    fn output_naming_no_test_is_unreadable() {
        for output in [
            "",
            "error: linker `cc` not found\n",
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nNameError: y\n",
            "make: *** [Makefile:3: test] Error 2\n",
        ] {
            assert_eq!(
                read_output(output, true),
                Err(Unreadable::NoTestNamed),
                "{output}"
            );
        }
    }

    #[test]
    fn a_count_that_differs_from_the_names_is_unreadable() {
        let output = "FAILED tests/test_x.py::test_y - boom\n2 failed, 3 passed in 0.01s\n";
        assert_eq!(
            read_output(output, true),
            Err(Unreadable::Miscounted {
                runner: Runner::Pytest,
                counted: 2,
                named: 1
            })
        );
    }

    #[test]
    fn cut_output_is_believed_only_with_a_count() {
        let counted = "FAILED tests/test_x.py::test_y - boom\n1 failed, 3 passed in 0.01s\n";
        assert!(read_output(counted, false).is_ok());
        let uncounted = "--- FAIL: TestA (0.00s)\nFAIL\texample.com/a\t0.01s\n";
        assert!(read_output(uncounted, true).is_ok());
        assert_eq!(
            read_output(uncounted, false),
            Err(Unreadable::Cut {
                runner: Runner::GoTest
            })
        );
    }

    #[test]
    fn two_runners_in_one_command_are_read_together() {
        let output = "FAILED tests/test_x.py::test_y - boom\n1 failed in 0.01s\n--- FAIL: TestA (0.00s)\nFAIL\tex/a\t0.01s\n";
        let failing = read(output);
        assert_eq!(failing.runners, [Runner::Pytest, Runner::GoTest]);
        assert_eq!(names(&failing), ["ex/a TestA", "tests/test_x.py::test_y"]);
    }
}
