//! Agent turns: started, ended, retried, what the agent is doing, stalled or looping, what an
//! ACP agent asked that epic rejected.

use std::time::Duration;

use epic_events::Event;

use crate::progress::words::{first_line, silence, thousands};

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::TurnStarted {
            story,
            role,
            seat,
            turn,
            ..
        } if verbose => format!("story {story}: {role} turn {turn} ({seat})"),
        Event::TurnEnded {
            story,
            role,
            turn,
            ok,
            estimated_tokens,
            reported,
            error,
        } if verbose || !ok => match error {
            Some(error) => format!(
                "story {story}: {role} turn {turn} failed: {}",
                first_line(error)
            ),
            None if *reported => format!(
                "story {story}: {role} turn {turn} ended ({} tokens, reported)",
                thousands(*estimated_tokens)
            ),
            None => format!(
                "story {story}: {role} turn {turn} ended (~{} tokens, est.)",
                thousands(*estimated_tokens)
            ),
        },
        Event::TurnRetried {
            story,
            turn,
            attempt,
            delay_ms,
            reason,
        } => format!(
            "story {story}: turn {turn} attempt {attempt} failed, retrying in {:.1}s: {}",
            Duration::from_millis(*delay_ms).as_secs_f64(),
            first_line(reason)
        ),
        Event::TurnActivity {
            story, role, doing, ..
        } if verbose => format!("story {story}: {role} {doing}"),
        Event::TurnStalled {
            story,
            role,
            seat,
            turn,
            silent_secs,
            again,
        } => format!(
            "story {story}: {role} turn {turn} ({seat}) printed nothing for {}; ended as stalled, \
             {}",
            silence(*silent_secs),
            if *again {
                "running it again"
            } else {
                "a second time: the story fails"
            }
        ),
        Event::TurnLooping {
            story,
            role,
            seat,
            turn,
            tool,
            times,
            again,
            ..
        } => format!(
            "story {story}: {role} turn {turn} ({seat}) called `{tool}` with the same input \
             {times} times in a row; ended as looping, {}",
            if *again {
                "running it again with a note"
            } else {
                "a second time: the story fails"
            }
        ),
        Event::PermissionRejected {
            story,
            role,
            turn,
            subject,
            reason,
            ..
        } => format!(
            "story {story}: {role} turn {turn} asked for {}; rejected: {}",
            first_line(subject),
            first_line(reason)
        ),
        _ => return None,
    };
    Some(line)
}
