//! Merges: one story's (started, queued, conflicted, undone, merged) and a batch's (merged
//! together, gated, bisected, proven, its culprit pinned), a merge revision.

use epic_events::Event;

use crate::plan_file::count;
use crate::progress::words::{first_line, short};

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::MergeStarted { story, .. } if verbose => {
            format!("story {story}: merging into the epic branch")
        }
        Event::MergeConflicted { story, paths } => {
            format!("story {story}: merge conflicted in {}", paths.join(", "))
        }
        Event::StoryRolledBack { story, reason, .. } => {
            format!("story {story}: merge undone: {}", first_line(reason))
        }
        Event::StoryMerged {
            story,
            in_place: Some(in_place),
            ..
        } => format!(
            "story {story}: already in place, nothing merged (evidence: {})",
            in_place.paths()
        ),
        Event::StoryMerged { story, .. } => format!("story {story}: merged"),
        Event::MergeQueued { story } if verbose => {
            format!("story {story}: waiting to merge")
        }
        Event::MergeBatch {
            batch,
            stories,
            checkpoint,
        } => format!(
            "merge batch {batch}: {} merged together on {}: {}",
            count(stories.len(), "story", "stories"),
            short(checkpoint),
            stories.join(", ")
        ),
        Event::BatchGated {
            batch,
            step,
            stories,
            commit,
            passed,
        } => {
            let verdict = if *passed { "green" } else { "red" };
            if *step == 0 {
                format!("merge batch {batch}: gates {verdict} on {}", short(commit))
            } else {
                format!(
                    "merge batch {batch}: bisection step {step}: gates {verdict} on {} with {}",
                    short(commit),
                    stories.join(", ")
                )
            }
        }
        Event::BatchProven {
            batch,
            stories,
            commit,
        } => format!(
            "merge batch {batch}: proven together on {}: {}",
            short(commit),
            stories.join(", ")
        ),
        Event::CulpritPinned { batch, story, .. } => {
            format!("merge batch {batch}: the red gates are pinned on story {story}")
        }
        event @ Event::MergeRevision { .. } => crate::revision::line(event),
        _ => return None,
    };
    Some(line)
}
