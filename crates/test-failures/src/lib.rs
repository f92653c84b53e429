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

mod failing;
mod junit;
mod output;
mod runners;

pub use failing::{Failing, Runner, Unreadable};
pub use junit::{JunitError, read_junit};
pub use output::read_output;
