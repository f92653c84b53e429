//! What people do to a running epic and what calls for them: a story waiting for an answer or
//! stopped, the commands the run took (answered, told, stopped, retried) or refused, the notes a
//! coder read, a `--notify` command that failed.

use epic_events::Event;

use crate::progress::words::first_line;

/// The line an event of this family is shown as, if it is shown; `None` for the events of the
/// other families.
pub(super) fn line(event: &Event) -> Option<String> {
    let line = match event {
        Event::StoryWaiting { story, question } => format!(
            "story {story}: waiting for your answer: {}  (epic answer {story} TEXT)",
            first_line(question)
        ),
        Event::StoryStopped { story } => {
            format!("story {story}: stopped  (epic retry {story} runs it again)")
        }
        Event::Answered { story, uid, .. } => {
            format!("story {story}: answered (uid {uid}); it runs again")
        }
        Event::Told { story, uid, .. } => {
            format!("story {story}: note taken (uid {uid}) for its next coder turn")
        }
        Event::Stopped {
            story: Some(story),
            uid,
            ..
        } => format!("story {story}: stop asked (uid {uid})"),
        Event::Stopped {
            story: None, uid, ..
        } => format!("run: stop asked for every story (uid {uid})"),
        Event::Retried {
            story, fresh, uid, ..
        } => format!(
            "story {story}: retry asked (uid {uid}){}",
            if *fresh { ", from the epic head" } else { "" }
        ),
        Event::NotesRead { story, commands } => format!(
            "story {story}: its coder read {} from you",
            crate::plan_file::count(commands.len(), "note", "notes")
        ),
        Event::CommandRefused { command, reason } => {
            format!("command {command} refused: {}", first_line(reason))
        }
        Event::NotifyFailed {
            story,
            attention,
            status,
        } => format!("story {story}: the notify command ({attention}) failed: {status}"),
        _ => return None,
    };
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_story_says_how_to_answer_it() {
        let waiting = Event::StoryWaiting {
            story: "svc".into(),
            question: "which port?\nmore".into(),
        };
        assert_eq!(
            line(&waiting).as_deref(),
            Some("story svc: waiting for your answer: which port? …  (epic answer svc TEXT)")
        );
        let stopped = Event::StoryStopped { story: "a".into() };
        assert_eq!(
            line(&stopped).as_deref(),
            Some("story a: stopped  (epic retry a runs it again)")
        );
    }
}
