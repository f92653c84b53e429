//! The plain view (stderr is not a terminal, or `--no-progress`): each line timestamped,
//! `HH:MM:SS story a: merged`, local time.

use crate::output;

use super::tracker::Tracker;
use super::view::View;

/// Timestamped lines.
pub(super) struct Plain;

impl View for Plain {
    fn line(&mut self, text: &str) {
        output::diagnostic(&format!("{} {text}\n", clock()));
    }
    fn refresh(&mut self, _: &Tracker) {}
    fn finish(&mut self) {}
}

/// The local wall-clock time, `HH:MM:SS`.
fn clock() -> String {
    jiff::ZonedDateTime::now().strftime("%H:%M:%S").to_string()
}
