//! What the executor tells agents: the story's rules, and the prompts of the task loop.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use epic_perimeter::{Review, StrayTask, Task};
use epic_story_plan::{Story, StoryPlan};

use crate::task_plan::{NOOP_TOKEN, TaskPlan};

/// The JSON shape a planner replies with.
const TASK_LIST_SHAPE: &str = r#"{"tasks":[{"title":"…","description":"…"}]}"#;

/// The JSON shape a judge or reviewer replies with.
const VERDICT_SHAPE: &str = r#"{"clean":true|false,"issues":[{"severity":"critical|major|minor","title":"…","description":"…"}]}"#;

/// `items` as bullet lines, or `- (none)`.
fn bullets(out: &mut String, items: &[String]) {
    if items.is_empty() {
        out.push_str("- (none)\n");
    }
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
}

/// The ids of the stories `id` depends on, directly or not (`forward`), or of those that
/// depend on it (`!forward`). Tolerates cycles.
fn reachable(plan: &StoryPlan, id: &str, forward: bool) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![id.to_owned()];
    while let Some(current) = stack.pop() {
        let next: Vec<String> = if forward {
            plan.story(&current)
                .map(|story| story.depends_on.clone())
                .unwrap_or_default()
        } else {
            plan.stories
                .iter()
                .filter(|story| story.depends_on.contains(&current))
                .map(|story| story.id.clone())
                .collect()
        };
        for id in next {
            if seen.insert(id.clone()) {
                stack.push(id);
            }
        }
    }
    seen
}

/// The standing rules of every chat of a story: its perimeter, where it works, the other
/// stories' paths, the `BLOCKED_ON:` rule, and that the runtime owns git.
pub(crate) fn story_rules(plan: &StoryPlan, story: &Story, worktree: &Path, extra: &str) -> String {
    let mut out = format!(
        "You are implementing ONE story of a larger epic: \"{}\" (id: {}).\n\n",
        story.title, story.id
    );
    out.push_str("Paths you own (create and change files only under these):\n");
    bullets(&mut out, &story.owned);
    out.push_str("\nShared paths (read them for conventions; never change them):\n");
    bullets(&mut out, &story.shared_read_only);
    out.push_str("\nWhat this story must provide for other stories:\n");
    bullets(&mut out, &story.provides);
    let _ = write!(
        out,
        "\nYour working directory is {}. Run every command there; never read from, write to or \
         run commands in any other checkout of the repository.\n",
        worktree.display()
    );
    let before = reachable(plan, &story.id, true);
    let after = reachable(plan, &story.id, false);
    let others: Vec<String> = plan
        .stories
        .iter()
        .filter(|other| other.id != story.id && !other.owned.is_empty())
        .map(|other| {
            let note = if before.contains(&other.id) {
                "merged into the epic before you started: it is in your working tree, read it"
            } else if after.contains(&other.id) {
                "built after you, on top of your work: leave it alone"
            } else {
                "built at the same time by another coder: leave it alone"
            };
            format!("{} (story {}: {note})", other.owned.join(", "), other.id)
        })
        .collect();
    if !others.is_empty() {
        out.push_str(
            "\nPaths other stories own (never create or change them; none of them is a reason \
             to stop):\n",
        );
        bullets(&mut out, &others);
    }
    out.push_str(
        "\nRules:\n\
         - Change nothing outside the paths you own: such a change fails the story.\n\
         - If the story needs something that does not exist and that another story owns, do not \
         build it yourself: end your reply with the line `BLOCKED_ON: <what you need, and its \
         path>` and stop. That is only for another story's work: missing tools, dependencies or \
         reference material are never a reason to stop; work with what is installed.\n\
         - Implement everything this story provides completely: other stories build on it.\n\
         - The runtime owns git: do not commit, create or switch branches, push, or open pull \
         requests. Your work is checked and committed for you after each task.\n",
    );
    let extra = extra.trim();
    if !extra.is_empty() {
        out.push('\n');
        out.push_str(extra);
        out.push('\n');
    }
    out.push_str("\n# The story\n\n");
    out.push_str(&story_prompt(story));
    out
}

/// The story as a request: title, description, acceptance criteria.
pub(crate) fn story_prompt(story: &Story) -> String {
    let mut out = format!("Story: {}\n", story.title);
    let description = story.description.trim();
    if !description.is_empty() {
        let _ = write!(out, "\n{description}\n");
    }
    if !story.acceptance.is_empty() {
        out.push_str("\nDone when (each must hold, observably):\n");
        for (n, criterion) in story.acceptance.iter().enumerate() {
            let _ = writeln!(out, "{}. {criterion}", n + 1);
        }
    }
    out
}

/// The planner's request, for a plan of at most `cap` tasks.
pub(crate) fn planning(story: &Story, cap: usize) -> String {
    let mut out = String::from(
        "Plan the implementation of this story as an ordered list of small tasks, each a change \
         that can be checked on its own, described by its observable result. Every task stays \
         inside the story's owned paths:\n",
    );
    bullets(&mut out, &story.owned);
    let _ = write!(
        out,
        "Never plan a task that creates or changes anything outside them: wiring the story in \
         elsewhere is another story's job. Plan at most {cap} tasks. Do not start the work yet.\n\
         Reply with only this JSON, bare or in one fenced block:\n{TASK_LIST_SHAPE}\n"
    );
    out
}

/// The planner's second chance after a plan of `planned` tasks, more than `cap`.
pub(crate) fn replan_too_many(planned: usize, cap: usize) -> String {
    format!(
        "Your plan has {planned} tasks; a story may have at most {cap}. Plan again in at most \
         {cap} tasks, each a larger step. Reply with only the JSON task list:\n{TASK_LIST_SHAPE}\n"
    )
}

/// The planner's second chance after an unreadable reply.
pub(crate) fn replan_unreadable(error: &str) -> String {
    format!(
        "Your reply could not be read as the task list: {error}\n\
         Reply again with only this JSON, bare or in one fenced block:\n{TASK_LIST_SHAPE}\n"
    )
}

/// The planner's second chance after tasks that name paths outside the story.
pub(crate) fn replan_strays(strays: &[StrayTask]) -> String {
    let mut out =
        String::from("These tasks of your list name paths outside this story's owned paths:\n");
    for stray in strays {
        let _ = writeln!(out, "- \"{}\": {}", stray.title, stray.paths.join(", "));
    }
    let _ = write!(
        out,
        "Plan again, working only inside the owned paths: work on any other path belongs to \
         another story. Reply with only the JSON task list:\n{TASK_LIST_SHAPE}\n"
    );
    out
}

/// The plan as the coder of task `current` sees it.
pub(crate) fn plan_so_far(plan: &TaskPlan, current: usize) -> String {
    let mut out = String::from("# The plan\n\n");
    for (n, task) in plan.tasks.iter().enumerate() {
        let mark = if task.completed { 'x' } else { ' ' };
        let here = if n == current { "  ← this task" } else { "" };
        let _ = writeln!(out, "{}. [{mark}] {}{here}", n + 1, task.title);
    }
    out
}

/// The request of one task.
pub(crate) fn task(task: &Task, index: usize, of: usize) -> String {
    let mut out = format!("Task {} of {of}: {}\n", index + 1, task.title);
    let description = task.description.trim();
    if !description.is_empty() {
        let _ = write!(out, "\n{description}\n");
    }
    out.push_str("\nDo this task only, then stop: your work is checked and committed for you.\n");
    out
}

/// The question after a turn that changed nothing.
pub(crate) fn noop(title: &str) -> String {
    format!(
        "Your previous turn changed no files.\n\
         If the task \"{title}\" is already fully done in the repository as it is, reply with \
         exactly {NOOP_TOKEN} and nothing else.\n\
         Otherwise, do the task now."
    )
}

/// The request to address a round's findings.
pub(crate) fn fix(review: &Review) -> String {
    let mut out = String::from("Address these findings, then stop:\n");
    push_issues(&mut out, review);
    out
}

/// A reviewer's standing instructions.
pub(crate) fn reviewer_rules(story: &Story) -> String {
    format!(
        "You review the work of a coder on one task of the story \"{}\" (id: {}). Read the \
         changes and the files they touch in your working directory; do not change any file, \
         do not commit.\n\n# The story\n\n{}",
        story.title,
        story.id,
        story_prompt(story)
    )
}

/// A reviewer's request for one task.
pub(crate) fn review(task: &Task, since: &str, paths: &[String]) -> String {
    let mut out = format!("Review the changes made for the task \"{}\".\n", task.title);
    let description = task.description.trim();
    if !description.is_empty() {
        let _ = write!(out, "\n{description}\n");
    }
    out.push_str("\nChanged paths:\n");
    bullets(&mut out, paths);
    let _ = write!(
        out,
        "\nSee the changes with `git diff {since}` (untracked files included in `git status`).\n\
         Reply with only this JSON, bare or in one fenced block; clean with no issues means the \
         change is acceptable:\n{VERDICT_SHAPE}\n"
    );
    out
}

/// How much of a story's diff a judge prompt carries: beyond it, the head (three quarters) and
/// the tail (one quarter) are kept with a note between them.
const JUDGE_DIFF_LIMIT: usize = 200 * 1024;

/// The judge's standing instructions.
pub(crate) fn judge_rules(story: &Story) -> String {
    let mut out = format!(
        "You judge whether one story of a larger epic is done: \"{}\" (id: {}). Read its diff \
         against the epic branch, and the files it touches in your working directory; do not \
         change any file, do not commit.\n\nPaths the story owns:\n",
        story.title, story.id
    );
    bullets(&mut out, &story.owned);
    out.push_str("\nWhat it must provide for other stories:\n");
    bullets(&mut out, &story.provides);
    out.push_str(
        "\nClear it only when the story is implemented completely, every acceptance criterion \
         holds, and no test was weakened. Name each gap as an issue a coder can act on.\n\n\
         # The story\n\n",
    );
    out.push_str(&story_prompt(story));
    out
}

/// The judge's request: the story's diff, bounded.
pub(crate) fn judge(diff: &str, round: u32) -> String {
    let diff = if diff.len() <= JUDGE_DIFF_LIMIT {
        diff.to_owned()
    } else {
        let head_end = crate::bounded::floor_char_boundary(diff, JUDGE_DIFF_LIMIT / 4 * 3);
        let tail_start =
            crate::bounded::ceil_char_boundary(diff, diff.len() - JUDGE_DIFF_LIMIT / 4);
        format!(
            "{}\n[… {} bytes of the diff left out …]\n{}",
            &diff[..head_end],
            tail_start - head_end,
            &diff[tail_start..]
        )
    };
    format!(
        "Judge round {round}. The story's changes against the epic branch:\n\n```diff\n{}\n```\n\n\
         Reply with only this JSON, bare or in one fenced block; clean means the story is done:\n\
         {VERDICT_SHAPE}\n",
        diff.trim_end()
    )
}

/// The coder's request after a judge did not clear the story.
pub(crate) fn judge_feedback(story: &Story, verdict: &Review) -> String {
    let mut out = format!(
        "The judge did not clear the story \"{}\". Close these gaps without weakening any test \
         and without leaving your owned paths, then stop:\n",
        story.title
    );
    push_issues(&mut out, verdict);
    out
}

/// Appends each issue as `- [severity] title: description`, then a newline.
fn push_issues(out: &mut String, review: &Review) {
    for issue in &review.issues {
        let _ = write!(out, "\n- [{}] {}", issue.severity, issue.title);
        let description = issue.description.trim();
        if !description.is_empty() {
            let _ = write!(out, ": {description}");
        }
    }
    out.push('\n');
}

/// A review's issues as `- title: description` lines.
pub(crate) fn issue_lines(review: &Review) -> String {
    review
        .issues
        .iter()
        .map(|issue| {
            let description = issue.description.trim();
            if description.is_empty() {
                format!("- {}", issue.title)
            } else {
                format!("- {}: {description}", issue.title)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
