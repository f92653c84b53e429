//! The gates' events: the baseline, the gates on the epic branch and in a story's worktree, a flaky
//! gate, what a gate left behind.

use epic_events::Event;

use crate::plan_file::count;
use crate::progress::words::{flaky, short};

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::BaselineChecked {
            commit,
            passed,
            failed,
            cached,
        } => {
            let cached = if *cached { " (cached)" } else { "" };
            if failed.is_empty() {
                format!(
                    "baseline: {} green on {}{cached}",
                    count(passed.len(), "gate", "gates"),
                    short(commit)
                )
            } else {
                format!(
                    "baseline: failing on {}{cached}: {}",
                    short(commit),
                    failed.join(", ")
                )
            }
        }
        Event::EpicGate {
            story,
            command,
            passed,
            status,
            ..
        } => {
            if *passed && !verbose {
                return None;
            }
            let result = if *passed { "passed" } else { status.as_str() };
            match story {
                Some(story) => {
                    format!("story {story}: gate `{command}` on the epic branch: {result}")
                }
                None => format!("baseline: gate `{command}`: {result}"),
            }
        }
        Event::GatePassed { story, command, .. } if verbose => {
            format!("story {story}: gate `{command}` passed")
        }
        Event::GateFailed {
            story,
            command,
            status,
            ..
        } if verbose => format!("story {story}: gate `{command}` failed: {status}"),
        Event::GateFlaky {
            story,
            command,
            runs,
            status,
            output,
        } => {
            let whose = story
                .as_ref()
                .map_or_else(|| "epic".to_owned(), |story| format!("story {story}"));
            format!("{whose}: {}", flaky(command, *runs, status, output))
        }
        Event::GateLeftovers {
            story,
            command,
            paths,
        } => {
            let whose = story
                .as_ref()
                .map_or_else(|| "epic".to_owned(), |story| format!("story {story}"));
            let shown = paths.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            let more = match paths.len() {
                0..=3 => String::new(),
                n => format!(" and {} more", n - 3),
            };
            format!(
                "{whose}: `{command}` left {shown}{more}; removed (not the story's work: add \
                 them to .gitignore to keep them)"
            )
        }
        _ => return None,
    };
    Some(line)
}
