//! What a failed turn's text is made of: the agent's reported error and the ends of its output
//! ([`failure_tail`]), which `command.rs` builds and `classify.rs` reads; below both.

/// How many bytes of an error's output its message carries.
pub(crate) const ERROR_TAIL: usize = 4000;

/// The error of a turn whose agent logs its model's replies (aider) and logged none.
pub(crate) const NO_LOGGED_REPLY: &str =
    "it got no reply from its model: its log of the model's replies holds none";

/// The text of a failed turn, what [`SeatError::Failed`](crate::SeatError::Failed) carries and what
/// `classify.rs` reads: the agent's own error message (from its structured
/// output) first, verbatim, then the end of its standard output and of its standard error,
/// without terminal escapes (opencode colours its errors whatever `NO_COLOR` says).
pub(crate) fn failure_tail(reported_error: Option<&str>, stdout: &str, stderr: &str) -> String {
    let mut tail = reported_error
        .map(|error| format!("{}\n--- output ---\n", error.trim()))
        .unwrap_or_default();
    tail.push_str(stdout);
    if !stderr.trim().is_empty() {
        if !tail.trim().is_empty() {
            tail.push_str("\n--- stderr ---\n");
        }
        tail.push_str(stderr);
    }
    anstream::adapter::strip_str(&tail).to_string()
}
