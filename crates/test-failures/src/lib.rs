//! The failing tests a gate names: read from its output (pytest, `cargo test`, cargo nextest,
//! `go test`, jest, vitest) or from a JUnit XML file it wrote. Pure: text and bytes in, names
//! out; no file system, no process.
//!
//! A gate command is red for a reason; when that reason is a set of named tests, a story can be
//! charged with the tests it turned red and not with those already red before it. Reading is
//! cautious: what the output does not say for sure is [`Unreadable`], and the caller then
//! judges the command whole. A runner that prints how many tests failed must name exactly that
//! many; one that failed outside any test (a build error, a crashed test binary, a suite that
//! could not load) makes the whole output unreadable; and output whose beginning was cut is
//! read only where the runner's count confirms the names.
//!
//! ```
//! use epic_test_failures::{Runner, read_output};
//!
//! let output = "\
//! ============================= test session starts ==============================
//! collected 3 items
//!
//! tests/test_math.py .FF                                                   [100%]
//!
//! =========================== short test summary info ============================
//! FAILED tests/test_math.py::test_add - assert 3 == 4
//! FAILED tests/test_math.py::test_sub - assert 0 == 1
//! ========================= 2 failed, 1 passed in 0.03s ==========================
//! ";
//! let failing = read_output(output, true).expect("pytest's summary names them");
//! assert_eq!(failing.runners, [Runner::Pytest]);
//! assert_eq!(
//!     failing.tests.into_iter().collect::<Vec<_>>(),
//!     ["tests/test_math.py::test_add", "tests/test_math.py::test_sub"]
//! );
//! assert!(read_output("error: linker `cc` not found\n", true).is_err());
//! ```

mod junit;
mod output;
mod runners;

use std::collections::BTreeSet;
use std::fmt;

pub use junit::{JunitError, read_junit};
pub use output::read_output;

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
