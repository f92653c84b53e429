//! A story's worktree: prepared, switched or retired in its slot, seeded, caught up, set up,
//! removed.

use epic_events::Event;

use crate::progress::words::short;

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::StoryPrepared {
            story,
            how,
            branch,
            worktree,
        } => {
            if verbose {
                format!("story {story}: worktree {worktree} on {branch} ({how})")
            } else if how == "fresh" {
                return None;
            } else {
                format!("story {story}: {how} on its branch {branch}")
            }
        }
        Event::SlotSwitched {
            story,
            slot,
            commit,
            ..
        } if verbose => {
            format!(
                "story {story}: slot {slot} switched to its branch at {} and proven clean",
                short(commit)
            )
        }
        Event::SlotRetired {
            story, worktree, ..
        } if verbose => {
            format!("story {story}: its worktree leaves the slots' rotation, kept at {worktree}")
        }
        Event::WorktreeSeeded { story, paths } if verbose => {
            format!(
                "story {story}: copied what .worktreeinclude names: {}",
                paths.join(", ")
            )
        }
        Event::StoryCaughtUp { story, commit } if verbose => {
            format!(
                "story {story}: caught up with the epic branch ({})",
                short(commit)
            )
        }
        Event::SetupRan {
            story,
            command,
            passed,
            status,
            ..
        } if verbose || !passed => {
            let result = if *passed { "passed" } else { status.as_str() };
            format!("story {story}: setup `{command}`: {result}")
        }
        Event::WorktreeRemoved { story, worktree } if verbose => {
            format!("story {story}: removed its worktree {worktree}")
        }
        _ => return None,
    };
    Some(line)
}
