//! Reading agents' replies: the planner's task list, a reviewer's verdict, the `BLOCKED_ON:`
//! sentinel.

use epic_perimeter::{Issue, Review, Severity, Task};
use serde::Deserialize;

/// The candidate JSON texts of a reply, most likely first: the whole reply, each fenced block,
/// the span from the first `{` to the last `}`.
fn json_candidates(reply: &str) -> Vec<&str> {
    let mut candidates = vec![reply.trim()];
    let mut rest = reply;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let Some(close) = body.find("```") else {
            break;
        };
        candidates.push(body[..close].trim());
        rest = &body[close + 3..];
    }
    if let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}'))
        && start < end
    {
        candidates.push(&reply[start..=end]);
    }
    candidates
}

/// Parses the first candidate of `reply` that reads as a `T`, or says why none did.
fn parse_json<T: for<'de> Deserialize<'de>>(reply: &str) -> Result<T, String> {
    let mut first_error = None;
    for candidate in json_candidates(reply) {
        match serde_json::from_str::<T>(candidate) {
            Ok(value) => return Ok(value),
            Err(error) => {
                if first_error.is_none() && candidate.starts_with('{') {
                    first_error = Some(error.to_string());
                }
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "the reply holds no JSON object".to_owned()))
}

#[derive(Deserialize)]
struct TaskList {
    tasks: Vec<Task>,
}

/// The tasks of a planner reply `{"tasks":[{"title","description"}]}`, bare or in a fenced
/// block, all open; or why it cannot be read (no JSON, bad JSON, no tasks, a task without a
/// title).
pub(crate) fn parse_task_list(reply: &str) -> Result<Vec<Task>, String> {
    let list: TaskList = parse_json(reply)?;
    if list.tasks.is_empty() {
        return Err("the task list is empty".to_owned());
    }
    list.tasks
        .into_iter()
        .enumerate()
        .map(|(n, mut task)| {
            task.title = task.title.trim().into();
            task.description = task.description.trim().into();
            task.completed = false;
            if task.title.is_empty() {
                Err(format!("task {} has no title", n + 1))
            } else {
                Ok(task)
            }
        })
        .collect()
}

/// The verdict of a judge or reviewer reply
/// `{"clean":bool,"issues":[{"severity","title","description"}]}`, bare or fenced. An
/// unreadable reply is a verdict that is not clean, with one major issue saying so.
pub(crate) fn parse_verdict(reply: &str) -> Review {
    parse_json::<Review>(reply).unwrap_or_else(|error| {
        Review::failed(
            "unreadable verdict",
            vec![Issue::new(
                Severity::Major,
                "unreadable verdict",
                format!(
                    "The reply could not be read as {{\"clean\":bool,\"issues\":[…]}}: {error}"
                ),
            )],
        )
    })
}

/// The need named by a reply whose last non-empty line is `BLOCKED_ON: <need>`.
///
/// The last non-empty line counts, after stripping runs of `` ` ``, `*`, `_` and whitespace
/// from both its ends; the marker is case-sensitive. A reply that mentions the marker and then
/// carries on is not blocked.
pub(crate) fn blocked_on(reply: &str) -> Option<String> {
    let last = reply
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())?;
    let stripped =
        last.trim_matches(|c: char| c == '`' || c == '*' || c == '_' || c.is_whitespace());
    let need = stripped.strip_prefix("BLOCKED_ON:")?.trim();
    (!need.is_empty()).then(|| need.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_list_from_a_fenced_block_and_never_empty() {
        let tasks =
            parse_task_list("Here:\n```json\n{\"tasks\":[{\"title\":\"Add x\"}]}\n```").unwrap();
        assert_eq!(tasks[0].title, "Add x");
        assert!(parse_task_list("{\"tasks\":[]}").is_err());
    }

    #[test]
    fn verdict_clean_or_unreadable() {
        let verdict = parse_verdict("{\"clean\":true,\"issues\":[]}");
        assert!(verdict.clean);
        let verdict = parse_verdict("looks fine to me");
        assert!(!verdict.clean);
        assert_eq!(verdict.issues[0].title, "unreadable verdict");
    }

    #[test]
    fn blocked_on_the_last_non_empty_line_only() {
        assert_eq!(
            blocked_on("I cannot go on.\nBLOCKED_ON: src/pay/api.rs from story pay").as_deref(),
            Some("src/pay/api.rs from story pay")
        );
        assert_eq!(
            blocked_on("Nothing to do.\n\n`BLOCKED_ON: src/kit/x.tsx` \n").as_deref(),
            Some("src/kit/x.tsx")
        );
        assert_eq!(
            blocked_on("BLOCKED_ON: a tool\nCarrying on without it.\nDone."),
            None
        );
        assert_eq!(blocked_on("done"), None);
    }

    #[test]
    fn task_list_from_prose_with_braces() {
        let tasks =
            parse_task_list("Plan: {\"tasks\":[{\"title\":\" a \",\"description\":\"d\"}]} ok")
                .unwrap();
        assert_eq!(tasks, [Task::new("a", "d")]);
        let error = parse_task_list("{\"tasks\":[{\"description\":\"no title\"}]}").unwrap_err();
        assert!(error.contains("title"), "{error}");
        assert!(parse_task_list("no json").unwrap_err().contains("no JSON"));
    }

    #[test]
    fn blocked_needs_a_need() {
        assert_eq!(blocked_on("BLOCKED_ON:   "), None);
        assert_eq!(blocked_on("**BLOCKED_ON: x__**").as_deref(), Some("x"));
        assert_eq!(blocked_on("blocked_on: x"), None);
    }
}
