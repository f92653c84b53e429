//! What several commands use: text built with `write!`, violations as text, pretty JSON, the
//! runtime a command that runs agents drives the executor on.

use std::fmt::Write as _;

use epic_story_plan::Violation;

use crate::error::CommandError;

/// The hint of a seat check that refused a seat (`epic run`, `epic plan`, `epic land`): how to
/// get past a check that is wrong for the setup.
pub(crate) const SKIP_PREFLIGHT: &str = "if the check is wrong for your setup (a key it cannot \
                                         see, a wrapper of the CLI), --no-preflight skips it";

/// Builds a `String` with `write!`; writing into a `String` cannot fail.
pub(crate) fn render(write: impl FnOnce(&mut String) -> std::fmt::Result) -> String {
    let mut text = String::new();
    write(&mut text).expect("writing into a String cannot fail");
    text
}

/// Violations as text: one `error[kind]: message` line each, then `N violations in FILE`.
pub(crate) fn violations_text(violations: &[Violation], file: &std::path::Path) -> String {
    render(|out| {
        for violation in violations {
            writeln!(out, "error[{}]: {}", violation.kind, violation.message)?;
        }
        writeln!(
            out,
            "{} in {}",
            crate::plan_file::count(violations.len(), "violation", "violations"),
            file.display()
        )
    })
}

/// The most threads the runtime's blocking pool starts; more blocking calls wait their turn.
const BLOCKING_THREADS: usize = 8;

/// The multi-thread tokio runtime a command that runs agents drives the executor on (it runs git
/// in `spawn_blocking` and agents concurrently), its threads named `name`.
pub(crate) fn runtime(name: &str) -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Every task on the blocking pool is a git call or a state write that ends by itself;
        // tokio's default of 512 threads let a run of thousands of stories grow to some thirty,
        // each with its own glibc arena keeping what it freed (20 MB more at 2,000 stories),
        // and no faster on a few cores.
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|error| {
            CommandError::new(
                crate::error::Kind::Repository,
                crate::error::WithSource {
                    message: "failed to start the runtime".to_owned(),
                    source: error,
                },
            )
        })
}

/// A value as pretty JSON with a final newline.
pub(crate) fn json(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value)
        .expect("the documents epic prints hold only strings, numbers, lists and maps");
    text.push('\n');
    text
}
