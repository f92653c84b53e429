//! A story's own events: started, merged before, blocked, noted, its perimeter put back, judged,
//! failed or skipped, the board hook.

use epic_events::Event;

use crate::plan_file::count;
use crate::progress::words::first_line;

/// The line an event of this family is shown as, if it is shown; `None` for the events of the
/// other families.
pub(super) fn line(event: &Event) -> Option<String> {
    let line = match event {
        Event::StoryAlreadyMerged { story, .. } => {
            format!("story {story}: merged on a previous run")
        }
        Event::StoryStarted { story, .. } => format!("story {story}: started"),
        Event::Blocked { story, need } => format!("story {story}: blocked on {need}"),
        Event::BlockedRejected {
            story, need, by, ..
        } => format!(
            "story {story}: BLOCKED_ON {need} rejected by the {}; the coder carries on",
            by.as_str()
        ),
        Event::Note { story, message } => format!("story {story}: {}", first_line(message)),
        Event::PerimeterRestored { story, paths } => format!(
            "story {story}: put back {} outside its perimeter: {}",
            count(paths.len(), "path", "paths"),
            paths.join(", ")
        ),
        Event::StoryJudged {
            story,
            round,
            cleared,
            issues,
        } => {
            if *cleared {
                format!("story {story}: judge round {round}: cleared")
            } else {
                format!(
                    "story {story}: judge round {round}: not cleared: {}",
                    issues.join("; ")
                )
            }
        }
        Event::StoryFailed { story, reason } => {
            format!("story {story}: failed: {}", first_line(reason))
        }
        Event::StorySkipped { story, reason } => {
            format!("story {story}: skipped: {}", first_line(reason))
        }
        Event::HookFailed { story, status } => {
            format!("story {story}: the board hook failed: {status}")
        }
        _ => return None,
    };
    Some(line)
}
