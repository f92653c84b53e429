//! The view of `-q`: nothing.

use super::tracker::Tracker;
use super::view::View;

/// `-q`: nothing.
pub(super) struct Silent;

impl View for Silent {
    fn line(&mut self, _: &str) {}
    fn refresh(&mut self, _: &Tracker) {}
    fn finish(&mut self) {}
}
