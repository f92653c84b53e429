//! Reading agents' replies: the planner's task list, a reviewer's verdict, the architect's plan,
//! the `BLOCKED_ON:` sentinel, a verifier's answer on it.
//!
//! A judge's verdict may carry `evidence` (the files that hold a story's work that changed
//! nothing, [`parse_judged`]): read with the verdict, checked by the judge step.
//!
//! A task list is read leniently (the whole reply, a fenced block, or the object inside prose):
//! the planner is the coder, who can do anything in its worktree anyway, and an unreadable plan
//! only costs a re-plan. A verdict is read strictly, since it is what lets a story merge: the
//! whole reply as one JSON object, or the one verdict its fenced blocks hold. A judge that writes
//! "not clean" around an example verdict has given none.

use epic_perimeter::{Issue, Review, Severity, Task};
use epic_report::Evidence;
use epic_story_plan::{PlanFormat, StoryPlan};
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
/// title). Titles are made unique (a repeated one gains ` (2)`, ` (3)`, …): a task is named by
/// its title in `EPIC_TASK`, the checkpoint and the report.
pub fn parse_task_list(reply: &str) -> Result<Vec<Task>, String> {
    let list: TaskList = parse_json(reply)?;
    if list.tasks.is_empty() {
        return Err("the task list is empty".to_owned());
    }
    let mut tasks = list
        .tasks
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
        .collect::<Result<Vec<Task>, String>>()?;
    let mut taken = std::collections::HashSet::new();
    for task in &mut tasks {
        let mut title = task.title.clone();
        let mut n = 1;
        while !taken.insert(title.clone()) {
            n += 1;
            title = format!("{} ({n})", task.title);
        }
        task.title = title;
    }
    Ok(tasks)
}

/// The plan of an architect reply: the whole reply (trimmed) as one JSON object, or the body of
/// its one fenced block (```` ```json storyplan ````, ```` ```json ```` or a bare ```` ``` ````);
/// or why the reply holds no plan, in words the architect can act on. Read strictly, like a
/// verdict: prose around a JSON object, or several candidate blocks, is no plan.
pub fn parse_plan_reply(reply: &str) -> Result<StoryPlan, String> {
    let whole = reply.trim();
    let parse = |text: &str| {
        StoryPlan::parse(text, PlanFormat::Json)
            .map_err(|error| format!("the plan's JSON could not be read: {error}"))
    };
    if whole.starts_with('{') {
        return parse(whole);
    }
    let blocks: Vec<&str> = fenced_blocks(reply)
        .into_iter()
        .filter(|(info, _)| info.is_empty() || info.eq_ignore_ascii_case("json"))
        .map(|(_, body)| body)
        .collect();
    match blocks.as_slice() {
        [only] => parse(only),
        [] if whole.contains('{') => Err("a JSON object inside prose is not a plan; reply with \
                                         the plan's JSON object alone, or in one fenced \
                                         ```json block"
            .to_owned()),
        [] => Err(
            "the reply holds no JSON object; reply with the plan's JSON object alone, or \
                   in one fenced ```json block"
                .to_owned(),
        ),
        several => Err(format!(
            "the reply holds {} fenced JSON blocks; reply with exactly one: the plan",
            several.len()
        )),
    }
}

/// The verdict of a judge or reviewer reply `{"clean":bool,"issues":[{"severity","title",
/// "description"}]}`: the whole reply (trimmed) as that one JSON object, or the one verdict held
/// by its fenced blocks (```` ```json ```` or bare ```` ``` ````). Prose with a JSON object in it
/// is no verdict, and fenced verdicts that disagree are not clean (blocks that agree are their
/// verdict). An unreadable reply is a verdict that is not clean, with one major issue saying so.
pub fn parse_verdict(reply: &str) -> Review {
    read_verdict::<Review>(reply).unwrap_or_else(|error| unreadable(&error))
}

/// A judge's verdict with the evidence its reply names: `{"clean":…,"issues":[…],
/// "evidence":[{"path":"…","provides":["…"]}]}`, read by the rules of [`parse_verdict`]
/// (`evidence` is an addition the verdict's other readers ignore).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The verdict.
    pub review: Review,
    /// The evidence it names (empty when it names none), or why its `evidence` could not be
    /// read: a verdict whose evidence is malformed is still a verdict, and the evidence check
    /// says what was wrong with it.
    pub evidence: Result<Vec<Evidence>, String>,
}

/// The verdict and evidence of a judge reply ([`Judged`]); an unreadable reply is a verdict
/// that is not clean, as [`parse_verdict`] reads it, and names no evidence.
pub fn parse_judged(reply: &str) -> Judged {
    match read_verdict::<JudgedReply>(reply) {
        Ok(judged) => Judged {
            review: judged.review,
            evidence: match judged.evidence {
                None | Some(serde_json::Value::Null) => Ok(Vec::new()),
                Some(value) => serde_json::from_value(value).map_err(|error| error.to_string()),
            },
        },
        Err(error) => Judged {
            review: unreadable(&error),
            evidence: Ok(Vec::new()),
        },
    }
}

/// The verdict that is not clean because the reply could not be read (`error` says why).
fn unreadable(error: &str) -> Review {
    Review::failed(
        "unreadable verdict",
        vec![Issue::new(
            Severity::Major,
            "unreadable verdict",
            format!("The reply could not be read as {{\"clean\":bool,\"issues\":[…]}}: {error}"),
        )],
    )
}

/// What a verdict reply reads as: a bare [`Review`], or a judge's with its evidence.
trait Verdict: for<'de> Deserialize<'de> + Clone {
    fn is_clean(&self) -> bool;
    /// Both verdicts as one ([`Review::combine`]).
    #[must_use]
    fn combine(self, other: Self) -> Self;
    fn of(review: Review) -> Self;
}

impl Verdict for Review {
    fn is_clean(&self) -> bool {
        self.clean
    }

    fn combine(self, other: Self) -> Self {
        Review::combine(self, other)
    }

    fn of(review: Review) -> Self {
        review
    }
}

/// A judge reply as read: the verdict, and its `evidence` as written (read into [`Evidence`]
/// afterwards, so that malformed evidence does not make the verdict unreadable).
#[derive(Debug, Clone, Deserialize)]
struct JudgedReply {
    #[serde(flatten)]
    review: Review,
    #[serde(default)]
    evidence: Option<serde_json::Value>,
}

impl Verdict for JudgedReply {
    fn is_clean(&self) -> bool {
        self.review.clean
    }

    /// The verdicts combined, and the evidence of both blocks, in order.
    fn combine(self, other: Self) -> Self {
        let evidence = match (self.evidence, other.evidence) {
            (Some(serde_json::Value::Array(mut first)), Some(serde_json::Value::Array(second))) => {
                first.extend(second);
                Some(serde_json::Value::Array(first))
            }
            (Some(first), _) => Some(first),
            (None, second) => second,
        };
        Self {
            review: self.review.combine(other.review),
            evidence,
        }
    }

    fn of(review: Review) -> Self {
        Self {
            review,
            evidence: None,
        }
    }
}

/// The verdict of `reply` by the rules of [`parse_verdict`], or why it has none.
fn read_verdict<T: Verdict>(reply: &str) -> Result<T, String> {
    let whole = reply.trim();
    if whole.starts_with('{') {
        return serde_json::from_str(whole).map_err(|error| error.to_string());
    }
    let candidates: Vec<Result<T, String>> = fenced_blocks(reply)
        .into_iter()
        .filter(|(info, _)| info.is_empty() || info.eq_ignore_ascii_case("json"))
        .filter_map(|(_, body)| verdict_candidate(body.trim()))
        .collect();
    match candidates.as_slice() {
        [] if whole.contains('{') => Err("a JSON object inside prose is not a verdict; reply \
                                         with the object alone, or in one fenced ```json block"
            .to_owned()),
        [] => Err("the reply holds no JSON object".to_owned()),
        [only] => only.clone(),
        several => {
            let verdicts: Vec<&T> = several.iter().filter_map(|c| c.as_ref().ok()).collect();
            let agree = verdicts.len() == several.len()
                && verdicts
                    .iter()
                    .all(|verdict| verdict.is_clean() == verdicts[0].is_clean());
            if agree {
                Ok(verdicts
                    .into_iter()
                    .cloned()
                    .reduce(T::combine)
                    .unwrap_or_else(|| T::of(Review::clean(""))))
            } else {
                Ok(T::of(Review::failed(
                    "conflicting verdicts",
                    vec![Issue::new(
                        Severity::Major,
                        "conflicting verdicts",
                        format!(
                            "The reply holds {} fenced verdicts that do not agree; a verdict is \
                             one JSON object, alone or in one fenced block.",
                            several.len()
                        ),
                    )],
                )))
            }
        }
    }
}

/// Whether the body of a fenced block is a verdict: `None` when it is no JSON object or an
/// object without `clean` (an example of some other JSON), else the verdict it reads as or why
/// it reads as none (a body that starts like an object but is not valid JSON counts: it may be
/// a verdict written wrong).
fn verdict_candidate<T: Verdict>(body: &str) -> Option<Result<T, String>> {
    if !body.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(object)) if object.contains_key("clean") => Some(
            serde_json::from_value(serde_json::Value::Object(object))
                .map_err(|error| error.to_string()),
        ),
        Ok(_) => None,
        Err(error) => Some(Err(error.to_string())),
    }
}

/// The fenced code blocks of `text`, each as (the first word of its info string, its body): a
/// line opening with three or more backticks (after up to three spaces) up to a line of at least
/// as many backticks alone, or the end of the text, as `CommonMark` reads them.
fn fenced_blocks(text: &str) -> Vec<(&str, &str)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, &str, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = line.trim_start_matches(' ');
        let ticks = rest.len() - rest.trim_start_matches('`').len();
        if indent > 3 || ticks < 3 {
            continue;
        }
        let after = rest[ticks..].trim();
        match open {
            None if !after.contains('`') => {
                let info = after.split_whitespace().next().unwrap_or("");
                open = Some((ticks, info, at));
            }
            Some((fence, info, body)) if ticks >= fence && after.is_empty() => {
                blocks.push((info, &text[body..start]));
                open = None;
            }
            _ => {}
        }
    }
    if let Some((_, info, body)) = open {
        blocks.push((info, &text[body..]));
    }
    blocks
}

/// The need named by a reply whose last non-empty line is `BLOCKED_ON: <need>`.
///
/// The last non-empty line counts, after stripping runs of `` ` ``, `*`, `_` and whitespace
/// from both its ends; the marker is case-sensitive. A reply that mentions the marker and then
/// carries on is not blocked.
pub fn blocked_on(reply: &str) -> Option<String> {
    let last = reply
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())?;
    let stripped =
        last.trim_matches(|c: char| c == '`' || c == '*' || c == '_' || c.is_whitespace());
    let need = stripped.strip_prefix("BLOCKED_ON:")?.trim();
    (!need.is_empty()).then(|| need.to_owned())
}

/// A verifier's answer on a `BLOCKED_ON:` claim ([`parse_blocked_answer`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BlockedAnswer {
    /// Whether the need is truly missing: no story provides it and it is not in the worktree.
    pub blocked: bool,
    /// Why, in the verifier's words.
    #[serde(default)]
    pub reason: String,
}

/// The answer of a verifier reply `{"blocked":bool,"reason":"…"}`: the whole reply (trimmed) as
/// that one JSON object, or the one such object its fenced blocks (```` ```json ```` or bare
/// ```` ``` ````) hold. Read strictly, like a verdict: anything else (prose, a JSON object
/// inside prose, several answers) is no answer, and the claim it was asked about stands.
pub fn parse_blocked_answer(reply: &str) -> Option<BlockedAnswer> {
    let whole = reply.trim();
    if whole.starts_with('{') {
        return serde_json::from_str(whole).ok();
    }
    let answers: Vec<BlockedAnswer> = fenced_blocks(reply)
        .into_iter()
        .filter(|(info, _)| info.is_empty() || info.eq_ignore_ascii_case("json"))
        .filter_map(|(_, body)| serde_json::from_str(body.trim()).ok())
        .collect();
    match answers.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verifier_answer_is_bare_or_fenced_and_anything_else_is_none() {
        let bare = parse_blocked_answer(r#" {"blocked": false, "reason": "it is in src/a"} "#);
        assert_eq!(
            bare,
            Some(BlockedAnswer {
                blocked: false,
                reason: "it is in src/a".to_owned()
            })
        );
        let fenced = parse_blocked_answer("Checked.\n```json\n{\"blocked\": true}\n```\n");
        assert_eq!(
            fenced,
            Some(BlockedAnswer {
                blocked: true,
                reason: String::new()
            })
        );
        assert_eq!(parse_blocked_answer("It is missing."), None);
        assert_eq!(
            parse_blocked_answer(r#"I think {"blocked": false} holds"#),
            None
        );
        assert_eq!(parse_blocked_answer(r#"{"blocked": "no"}"#), None);
        let two = "```json\n{\"blocked\": true}\n```\n```json\n{\"blocked\": false}\n```\n";
        assert_eq!(parse_blocked_answer(two), None);
    }

    #[test]
    fn a_plan_is_one_object_or_one_fenced_block() {
        let plan = r#"{"epic_id":"e","stories":[{"id":"a","title":"A","owned":["src"]}]}"#;
        assert_eq!(parse_plan_reply(plan).unwrap().epic_id, "e");
        let fenced = format!("Here is the plan.\n\n```json storyplan\n{plan}\n```\n");
        assert_eq!(parse_plan_reply(&fenced).unwrap().stories[0].id, "a");
        let error = parse_plan_reply(&format!("The plan: {plan} as asked.")).unwrap_err();
        assert!(error.contains("inside prose"), "{error}");
        let two = format!("```json\n{plan}\n```\nor\n```json\n{plan}\n```\n");
        assert!(parse_plan_reply(&two).unwrap_err().contains("2 fenced"));
        assert!(
            parse_plan_reply("I could not.")
                .unwrap_err()
                .contains("no JSON")
        );
        let error = parse_plan_reply(r#"{"epic_id": 3}"#).unwrap_err();
        assert!(error.contains("could not be read"), "{error}");
    }

    #[test]
    fn task_list_from_a_fenced_block_and_never_empty() {
        let tasks =
            parse_task_list("Here:\n```json\n{\"tasks\":[{\"title\":\"Add x\"}]}\n```").unwrap();
        assert_eq!(tasks[0].title, "Add x");
        assert!(parse_task_list("{\"tasks\":[]}").is_err());
    }

    #[test]
    fn a_verdict_is_the_whole_reply_or_the_one_fenced_verdict() {
        let issue =
            r#"{"clean":false,"issues":[{"severity":"major","title":"gap","description":"d"}]}"#;
        assert!(parse_verdict("  {\"clean\":true}\n").clean);
        assert!(parse_verdict("Fine.\n```json\n{\"clean\":true}\n```\nThanks.").clean);
        assert!(parse_verdict("```\n{\"clean\":true}\n```").clean);
        let verdict = parse_verdict(&format!("Gaps:\n```JSON\n{issue}\n```"));
        assert!(!verdict.clean);
        assert_eq!(verdict.issues[0].title, "gap");
        // Other blocks, and JSON that is no verdict, are not candidates.
        let reply = "```diff\n{\"clean\":false}\n```\n```json\n{\"name\":\"x\"}\n```\n\
                     ```json\n{\"clean\":true}\n```";
        assert!(parse_verdict(reply).clean);
        // Prose around an example: no verdict.
        let verdict = parse_verdict(
            "Not clean: the feature is missing. A clean verdict is {\"clean\":true,\"issues\":[]}.",
        );
        assert!(!verdict.clean);
        assert_eq!(verdict.issues[0].title, "unreadable verdict");
        assert!(verdict.issues[0].description.contains("inside prose"));
        // A whole reply that is an object and more is no verdict either.
        assert!(!parse_verdict("{\"clean\":true} and more").clean);
    }

    #[test]
    fn fenced_verdicts_that_disagree_are_not_clean() {
        let issue =
            r#"{"clean":false,"issues":[{"severity":"major","title":"gap","description":"d"}]}"#;
        let verdict = parse_verdict(&format!(
            "Example:\n```json\n{{\"clean\":true}}\n```\nMine:\n```\n{issue}\n```\n"
        ));
        assert!(!verdict.clean);
        assert_eq!(verdict.issues[0].title, "conflicting verdicts");
        // A broken block beside a clean one is a disagreement too.
        let verdict =
            parse_verdict("```json\n{\"clean\":true}\n```\n```json\n{\"clean\": fal\n```");
        assert!(!verdict.clean);
        assert_eq!(verdict.issues[0].title, "conflicting verdicts");
        // Blocks that agree are their verdict, issues and all.
        let verdict = parse_verdict(&format!("```json\n{issue}\n```\n```json\n{issue}\n```"));
        assert!(!verdict.clean);
        assert_eq!(verdict.issues.len(), 2);
        assert_eq!(verdict.issues[0].title, "gap");
        assert!(
            parse_verdict("```json\n{\"clean\":true}\n```\n```json\n{\"clean\":true}\n```").clean
        );
    }

    #[test]
    fn fences_as_commonmark_reads_them() {
        assert_eq!(
            fenced_blocks("a\n```json x\n{}\n```\nb\n   ````\nc\n```\nd\n````\n```\nopen"),
            [("json", "{}\n"), ("", "c\n```\nd\n"), ("", "open")]
        );
        assert!(fenced_blocks("inline ```code``` here").is_empty());
        assert!(fenced_blocks("    ```\nindented\n    ```").is_empty());
    }

    #[test]
    fn a_judges_verdict_carries_its_evidence_and_malformed_evidence_is_not_a_lost_verdict() {
        let judged = parse_judged(
            r#"{"clean":true,"issues":[],"evidence":[{"path":"src/a/cart.rs","provides":["cart::Cart"]},{"path":"src/a/mod.rs"}]}"#,
        );
        assert!(judged.review.clean);
        assert_eq!(
            judged.evidence,
            Ok(vec![
                Evidence::new("src/a/cart.rs", ["cart::Cart"]),
                Evidence::new("src/a/mod.rs", Vec::<String>::new()),
            ])
        );
        // A reviewer's reader ignores it.
        assert!(parse_verdict(r#"{"clean":true,"evidence":[{"path":"x"}]}"#).clean);
        // None named, or named as null: no evidence.
        assert_eq!(parse_judged(r#"{"clean":true}"#).evidence, Ok(Vec::new()));
        assert_eq!(
            parse_judged(r#"{"clean":true,"evidence":null}"#).evidence,
            Ok(Vec::new())
        );
        // Malformed: the verdict stands, the evidence says why it cannot be read.
        let judged = parse_judged(r#"{"clean":true,"evidence":"src/a/cart.rs"}"#);
        assert!(judged.review.clean);
        assert!(
            judged
                .evidence
                .as_ref()
                .is_err_and(|error| error.contains("invalid type")),
            "{judged:?}"
        );
        // Fenced blocks that agree: their evidence together.
        let judged = parse_judged(
            "```json\n{\"clean\":true,\"evidence\":[{\"path\":\"a\"}]}\n```\n\
             ```json\n{\"clean\":true,\"evidence\":[{\"path\":\"b\"}]}\n```",
        );
        let paths: Vec<String> = judged
            .evidence
            .expect("evidence")
            .into_iter()
            .map(|evidence| evidence.path)
            .collect();
        assert_eq!(paths, ["a", "b"]);
        // Unreadable: not clean, no evidence.
        let judged = parse_judged("It is all there.");
        assert!(!judged.review.clean);
        assert_eq!(judged.evidence, Ok(Vec::new()));
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
    fn repeated_task_titles_are_made_unique() {
        let tasks = parse_task_list(
            r#"{"tasks":[{"title":"tests"},{"title":" tests "},{"title":"tests (2)"},{"title":"docs"}]}"#,
        )
        .expect("a task list");
        let titles: Vec<&str> = tasks.iter().map(|task| task.title.as_str()).collect();
        assert_eq!(titles, ["tests", "tests (2)", "tests (2) (2)", "docs"]);
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
