//! Pruning `read_first` anchors to paths that exist.
//!
//! `read_first` is advice for the agent, so a stale or unsafe anchor is not worth failing a plan
//! over: it is dropped before the agent sees it, and the caller reports what was dropped.

use crate::StoryPlan;
use crate::path::{UnsafePath, check_safe, normalize};

/// A `read_first` anchor that [`StoryPlan::prune_read_first`] dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrunedAnchor {
    /// The story whose anchor it was.
    pub story: String,
    /// The anchor as written in the plan.
    pub path: String,
    /// Why it was dropped.
    pub reason: PruneReason,
}

/// Why a `read_first` anchor was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneReason {
    /// Unsafe (see [`check_safe`]); dropped before any lookup.
    Unsafe(UnsafePath),
    /// No known file is, or lies under, it.
    Missing,
}

impl StoryPlan {
    /// Keeps, in every story's `read_first`, the anchors that are safe and name a known file or a
    /// directory holding one; returns the ones dropped, in plan order.
    ///
    /// `known_files` are repo-relative file paths, such as `git ls-files` prints.
    ///
    /// ```
    /// use epic_story_plan::{PruneReason, Story, StoryPlan};
    /// let mut story = Story::new("ui", "UI", ["src/ui"]);
    /// story.read_first = vec!["src/api".into(), "src/gone.rs".into(), "../etc".into()];
    /// let mut plan = StoryPlan { epic_id: "e".into(), epic: String::new(), stories: vec![story] };
    /// let dropped = plan.prune_read_first(&["src/api/mod.rs", "src/ui/page.rs"]);
    /// assert_eq!(plan.stories[0].read_first, ["src/api"]);
    /// assert_eq!(dropped.len(), 2);
    /// assert_eq!(dropped[0].reason, PruneReason::Missing);
    /// ```
    pub fn prune_read_first(&mut self, known_files: &[impl AsRef<str>]) -> Vec<PrunedAnchor> {
        let mut known: Vec<String> = known_files.iter().map(|f| normalize(f.as_ref())).collect();
        known.sort_unstable();
        let exists = |anchor: &str| {
            // Files under `anchor/` sort together right after `anchor/`: one binary search.
            let under = format!("{anchor}/");
            known.binary_search_by(|f| f.as_str().cmp(anchor)).is_ok() || {
                let at = known.partition_point(|f| f.as_str() < under.as_str());
                known.get(at).is_some_and(|f| f.starts_with(&under))
            }
        };
        let mut dropped = Vec::new();
        for story in &mut self.stories {
            let id = story.id.clone();
            story.read_first.retain(|anchor| {
                let reason = match check_safe(anchor) {
                    Err(why) => PruneReason::Unsafe(why),
                    Ok(()) if exists(&normalize(anchor)) => return true,
                    Ok(()) => PruneReason::Missing,
                };
                dropped.push(PrunedAnchor {
                    story: id.clone(),
                    path: anchor.clone(),
                    reason,
                });
                false
            });
        }
        dropped
    }
}
