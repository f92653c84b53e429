//! What every way of showing progress does: [`View`].

use super::tracker::Tracker;

/// A way of showing progress.
pub(super) trait View {
    /// A line that stays.
    fn line(&mut self, text: &str);
    /// The picture of the run changed, or time passed.
    fn refresh(&mut self, tracker: &Tracker);
    /// The run is over.
    fn finish(&mut self);
}
