//! What a story may touch.

pub use story_plan::path::{check_safe, is_safe, normalize, within};
