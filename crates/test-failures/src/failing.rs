//! What a gate's failing tests are read as: the runners epic reads ([`Runner`]), the tests a
//! gate named ([`Failing`]), and why its output may not tell ([`Unreadable`]).

use std::collections::BTreeSet;
use std::fmt;

/// A test runner whose failing tests epic reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Runner {
    /// pytest: `FAILED path::name` and `ERROR path::name` (the short summary, or `-v` lines),
    /// counted by its last line (`2 failed, 1 error, 5 passed in 0.1s`).
    Pytest,
    /// `cargo test` (libtest): `test name ... FAILED` and the `failures:` list, counted by each
    /// binary's `test result:` line.
    CargoTest,
    /// cargo nextest: `FAIL [ time] crate::binary name` (and `TIMEOUT`, `SIGSEGV`, …) lines,
    /// counted by its `Summary` line.
    Nextest,
    /// `go test`: `--- FAIL: Name` lines, each named with the package of the `FAIL pkg` line
    /// after it; no count.
    GoTest,
    /// jest: the `● describe › test` heading of each failure under its `FAIL file` line,
    /// counted by its `Tests:` line.
    Jest,
    /// vitest: its `FAIL file > describe > test` lines, counted by its `Tests` line.
    Vitest,
    /// A JUnit XML file: each `testcase` with a `failure` or `error`, counted by the suites'
    /// `failures` and `errors` attributes.
    Junit,
}

impl fmt::Display for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pytest => "pytest",
            Self::CargoTest => "cargo test",
            Self::Nextest => "cargo nextest",
            Self::GoTest => "go test",
            Self::Jest => "jest",
            Self::Vitest => "vitest",
            Self::Junit => "JUnit XML",
        })
    }
}

/// The failing tests a gate named.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failing {
    /// The runners whose failures were read, in [`Runner`]'s order.
    pub runners: Vec<Runner>,
    /// The failing tests, each as its runner names it (`tests/test_a.py::test_x`,
    /// `tests::parses`, `example.com/calc TestAdd`, `src/sum.test.ts > sum > adds`).
    pub tests: BTreeSet<String>,
}

/// Why a gate's output does not tell which tests failed: its command is then judged whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unreadable {
    /// No runner epic reads named a failing test.
    #[error("it names no failing test in a format epic reads")]
    NoTestNamed,
    /// A runner's count of failing tests differs from the tests it named (a name epic could
    /// not read, or a test failed twice, in its body and its teardown).
    #[error("{runner} counts {counted} failing tests but names {named}")]
    Miscounted {
        /// The runner.
        runner: Runner,
        /// How many it says failed.
        counted: usize,
        /// How many it named.
        named: usize,
    },
    /// The beginning of the output was cut, and this runner prints no count to check that
    /// every failing test is still named in what is left.
    #[error("its output was cut and {runner} prints no count of its failing tests")]
    Cut {
        /// The runner.
        runner: Runner,
    },
    /// A runner failed outside any test: a build error, a test binary that crashed, a suite
    /// that could not load.
    #[error("{runner} failed outside any test: {line}")]
    OutsideTests {
        /// The runner.
        runner: Runner,
        /// The line that says so.
        line: String,
    },
}
