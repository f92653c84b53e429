//! What the executor tells agents: the story's rules, the prompts of the task loop, and the
//! architect's brief of `epic plan` with its feedback rounds.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use epic_git_ops::{FileHead, Uncommitted};
use epic_perimeter::{Review, StrayTask, Task};
use epic_story_plan::{Story, StoryPlan, Violation};

use crate::task_plan::TaskPlan;
use epic_agents::{NOOP_TOKEN, ToolCall};

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

/// How much of one `read_first` file a prompt inlines, in bytes: a module or a README of a few
/// pages, whole; the head of a longer one, with a note.
pub const READ_FIRST_FILE_CAP: usize = 8 * 1024;

/// How much of the `read_first` files a prompt inlines in all, in bytes (about 8k tokens): the
/// files past it are listed without their content, with a note.
pub const READ_FIRST_TOTAL_CAP: usize = 32 * 1024;

/// How many of the paths a dependency merged a prompt lists; the rest are counted.
pub const DEPENDENCY_PATHS_CAP: usize = 40;

/// How many of the paths an attempt left uncommitted a retried turn is told ([`leftovers`]);
/// the rest are counted.
pub const LEFTOVER_PATHS_CAP: usize = 50;

/// How much of a diff a judge or reviewer prompt carries, in bytes: beyond it, the head (three
/// quarters) and the tail (one quarter) are kept with a note between them.
pub const DIFF_LIMIT: usize = 200 * 1024;

/// What the prompts of a story's agents carry beyond its plan entry, gathered when the story's
/// worktree is ready (`story/briefing.rs`): where it works and where it must not, its
/// `read_first` files, and what its dependencies merged.
#[derive(Debug, Clone, Default)]
pub struct Briefing {
    /// The story's worktree, every agent's working directory.
    pub worktree: PathBuf,
    /// The checkouts no agent of the story may touch, each with what it is.
    pub off_limits: Vec<(PathBuf, String)>,
    /// The story's `read_first` paths, in plan order, with what was inlined of each.
    pub read_first: Vec<ReadFirst>,
    /// The story's direct dependencies, in plan order.
    pub dependencies: Vec<Dependency>,
}

impl Briefing {
    /// The briefing of a story alone in `worktree`: nothing off limits named, no files read, no
    /// dependency's paths (a task loop run on its own).
    pub fn bare(worktree: PathBuf) -> Self {
        Self {
            worktree,
            ..Self::default()
        }
    }
}

/// One `read_first` path, and what a prompt shows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFirst {
    /// The path, as the plan names it.
    pub path: String,
    /// What was inlined.
    pub shown: Shown,
}

/// What a prompt shows of a `read_first` path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The whole file.
    Whole(String),
    /// The head of a longer file: `size` bytes in all.
    Head { text: String, size: u64 },
    /// Nothing inlined, and why (a directory, missing, binary, past the budget, …).
    Listed(String),
}

/// Each `read_first` path with what its prompt shows: the whole file while it is at most
/// [`READ_FIRST_FILE_CAP`] bytes and the budget ([`READ_FIRST_TOTAL_CAP`]) holds it, else its
/// head within both, else only its name with the reason. `heads` are what
/// [`epic_git_ops::read_head`] found, read with [`READ_FIRST_FILE_CAP`] (an error: its text).
pub fn read_first(heads: Vec<(String, Result<FileHead, String>)>) -> Vec<ReadFirst> {
    let mut budget = READ_FIRST_TOTAL_CAP;
    heads
        .into_iter()
        .map(|(path, head)| {
            let shown = match head {
                Ok(FileHead::Text { text, size }) => {
                    let end = text.floor_char_boundary(budget);
                    budget -= end;
                    let whole = u64::try_from(end).is_ok_and(|end| end >= size);
                    if whole {
                        Shown::Whole(text)
                    } else if end == 0 {
                        Shown::Listed(format!(
                            "{size} bytes, not inlined: the prompt's {} KiB for these files are \
                             spent; read it yourself",
                            READ_FIRST_TOTAL_CAP / 1024
                        ))
                    } else {
                        // Cut at the end of a line where one is near: half a line misleads.
                        let head = &text[..end];
                        let end = match head.rfind('\n') {
                            Some(newline) if newline >= end / 2 => newline + 1,
                            _ => end,
                        };
                        Shown::Head {
                            text: text[..end].to_owned(),
                            size,
                        }
                    }
                }
                Ok(FileHead::Binary { size }) => {
                    Shown::Listed(format!("a binary file of {size} bytes, not inlined"))
                }
                Ok(FileHead::Directory) => {
                    Shown::Listed("a directory: read what you need from it".to_owned())
                }
                Ok(FileHead::Missing) => Shown::Listed("not in your working tree yet".to_owned()),
                Ok(_) => {
                    Shown::Listed("outside the repository or not a plain file: not read".to_owned())
                }
                Err(error) => Shown::Listed(format!("could not be read: {error}")),
            };
            ReadFirst { path, shown }
        })
        .collect()
}

/// A dependency of a story as its prompts name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// What it provides (its plan entry's `provides`).
    pub provides: Vec<String>,
    /// The paths its merge changed on the epic branch (`git diff --stat` of the merge), or
    /// where they are not at hand, the paths it owns.
    pub paths: Vec<String>,
    /// Whether `paths` are what its merge changed (else its owned paths).
    pub merged: bool,
}

/// The ids of the stories `id` depends on, directly or not (`forward`), or of those that
/// depend on it (`!forward`). Tolerates cycles.
pub fn reachable(plan: &StoryPlan, id: &str, forward: bool) -> BTreeSet<String> {
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

/// What every role's standing instructions are built from: the plan, the story, what was
/// gathered for it ([`Briefing`]), and the house rules (`--rules`, each file under its own
/// `##` heading; empty without any).
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The whole plan: the epic's text, the other stories.
    pub plan: &'a StoryPlan,
    /// The story.
    pub story: &'a Story,
    /// Where it works, its `read_first` files, its dependencies.
    pub briefing: &'a Briefing,
    /// The house rules' text.
    pub rules: &'a str,
}

/// `# The epic` with the plan's epic text; nothing when the plan has none.
fn push_epic(out: &mut String, plan: &StoryPlan) {
    let epic = plan.epic.trim();
    if !epic.is_empty() {
        let _ = write!(
            out,
            "\n# The epic\n\nThe whole epic ({}), of which this story is one part:\n\n{epic}\n",
            plan.epic_id
        );
    }
}

/// `# Where you work`: the working directory, and the checkouts that are off limits.
fn push_place(out: &mut String, briefing: &Briefing, read_only: bool) {
    let what = if read_only {
        "Read the story's work there, and run any command you need there"
    } else {
        "Run every command there"
    };
    let _ = write!(
        out,
        "\n# Where you work\n\nYour working directory is {}, the story's own worktree. {what}; \
         never read from, write to or run commands in any other checkout of the repository.\n",
        briefing.worktree.display()
    );
    if !briefing.off_limits.is_empty() {
        out.push_str("These in particular are off limits:\n");
        for (path, what) in &briefing.off_limits {
            let _ = writeln!(out, "- {} ({what})", path.display());
        }
    }
}

/// The story's direct dependencies: id, title, what each provides, the paths it merged.
fn push_dependencies(out: &mut String, briefing: &Briefing) {
    if briefing.dependencies.is_empty() {
        return;
    }
    out.push_str(
        "\nStories this one builds on (merged into the epic before it started: their work is in \
         the working tree, use it as it is):\n",
    );
    for dependency in &briefing.dependencies {
        let _ = writeln!(out, "- {} (\"{}\")", dependency.id, dependency.title);
        if !dependency.provides.is_empty() {
            let _ = writeln!(out, "  provides: {}", dependency.provides.join("; "));
        }
        let shown = dependency.paths.len().min(DEPENDENCY_PATHS_CAP);
        let mut paths = dependency.paths[..shown].join(", ");
        if dependency.paths.len() > shown {
            let _ = write!(paths, ", … and {} more", dependency.paths.len() - shown);
        }
        if paths.is_empty() {
            paths.push_str("(nothing)");
        }
        let label = if dependency.merged {
            "its merge changed"
        } else {
            "it owns"
        };
        let _ = writeln!(out, "  {label}: {paths}");
    }
}

/// `# House rules`, when there are any: to follow (`checking` false), or to hold the work to.
fn push_house_rules(out: &mut String, rules: &str, checking: bool) {
    let rules = rules.trim();
    if rules.is_empty() {
        return;
    }
    let how = if checking {
        "Hold the work to them, except where one contradicts the story's perimeter or that the \
         runtime owns git."
    } else {
        "Follow them; where one contradicts the rules above (your owned paths, git), the rules \
         above win."
    };
    let _ = write!(
        out,
        "\n# House rules\n\nThe project's own rules, from the files named below. {how}\n\n\
         {rules}\n"
    );
}

/// `# Read these first`: each `read_first` path with what is shown of it, then the inlined
/// files, each in a fence longer than any run of backticks in it.
fn push_read_first(out: &mut String, items: &[ReadFirst]) {
    if items.is_empty() {
        return;
    }
    out.push_str(
        "\n# Read these first\n\nThe plan names these paths for you to read before anything \
         else (as they are in your working tree now):\n",
    );
    for item in items {
        let note = match &item.shown {
            Shown::Whole(_) => "inlined below".to_owned(),
            Shown::Head { text, size } => format!(
                "its first {} of {size} bytes inlined below; read the rest yourself",
                text.len()
            ),
            Shown::Listed(why) => why.clone(),
        };
        let _ = writeln!(out, "- {} ({note})", item.path);
    }
    for item in items {
        let (text, cut) = match &item.shown {
            Shown::Whole(text) => (text, false),
            Shown::Head { text, .. } => (text, true),
            Shown::Listed(_) => continue,
        };
        let fence = "`".repeat(longest_backtick_run(text).max(2) + 1);
        let _ = write!(out, "\n## {}\n\n{fence}\n{}\n", item.path, text.trim_end());
        if cut {
            out.push_str("[… cut here: the file goes on …]\n");
        }
        let _ = writeln!(out, "{fence}");
    }
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// How many other stories' paths a story's rules name, in plan order (the rest are counted): an
/// epic of ten thousand stories would otherwise put ten thousand lines in every prompt.
pub const OTHERS_NAMED: usize = 100;

/// The standing rules of every coder or planner chat of a story: the epic, where it works and
/// what is off limits, its perimeter and the other stories' paths, its dependencies, the
/// `BLOCKED_ON:` rule, that the runtime owns git, the house rules, the story, and the files to
/// read first.
pub fn story_rules(context: Context<'_>) -> String {
    let Context {
        plan,
        story,
        briefing,
        rules,
    } = context;
    let mut out = format!(
        "You are implementing ONE story of a larger epic: \"{}\" (id: {}).\n",
        story.title, story.id
    );
    push_epic(&mut out, plan);
    push_place(&mut out, briefing, false);
    out.push_str(
        "\n# Your perimeter\n\nPaths you own (create and change files only under these):\n",
    );
    bullets(&mut out, &story.owned);
    out.push_str("\nShared paths (read them for conventions; never change them):\n");
    bullets(&mut out, &story.shared_read_only);
    out.push_str("\nWhat this story must provide for other stories:\n");
    bullets(&mut out, &story.provides);
    let before = reachable(plan, &story.id, true);
    let after = reachable(plan, &story.id, false);
    let mut others =
        (plan.stories.iter()).filter(|other| other.id != story.id && !other.owned.is_empty());
    let named: Vec<String> = others
        .by_ref()
        .take(OTHERS_NAMED)
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
    let unnamed = others.count();
    if !named.is_empty() {
        out.push_str(
            "\nPaths other stories own (never create or change them; none of them is a reason \
             to stop):\n",
        );
        bullets(&mut out, &named);
        if unnamed > 0 {
            let _ = writeln!(
                out,
                "- and the paths of {unnamed} more stories: every path you do not own is \
                 another story's or no one's, so leave it alone"
            );
        }
    }
    push_dependencies(&mut out, briefing);
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
    push_house_rules(&mut out, rules, false);
    out.push_str("\n# The story\n\n");
    out.push_str(&story_prompt(story));
    push_read_first(&mut out, &briefing.read_first);
    out
}

/// The story as a request: title, description, acceptance criteria.
pub fn story_prompt(story: &Story) -> String {
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
pub fn planning(story: &Story, cap: usize) -> String {
    let mut out = String::from(
        "Plan the implementation of this story as an ordered list of small tasks, each a change \
         that can be checked on its own, described by its observable result. Every task stays \
         inside the story's owned paths:\n",
    );
    bullets(&mut out, &story.owned);
    let _ = write!(
        out,
        "Never plan a task that creates or changes anything outside them: wiring the story in \
         elsewhere is another story's job. Plan at most {cap} tasks. Each task's description is \
         what its coder is given, beside the story: say what to build, where, and how it is \
         checked. Do not start the work yet.\n\
         Reply with only this JSON, bare or in one fenced block:\n{TASK_LIST_SHAPE}\n"
    );
    out
}

/// The planner's second chance after a plan of `planned` tasks, more than `cap`.
pub fn replan_too_many(planned: usize, cap: usize) -> String {
    format!(
        "Your plan has {planned} tasks; a story may have at most {cap}. Plan again in at most \
         {cap} tasks, each a larger step. Reply with only the JSON task list:\n{TASK_LIST_SHAPE}\n"
    )
}

/// The planner's second chance after an unreadable reply.
pub fn replan_unreadable(error: &str) -> String {
    format!(
        "Your reply could not be read as the task list: {error}\n\
         Reply again with only this JSON, bare or in one fenced block:\n{TASK_LIST_SHAPE}\n"
    )
}

/// The planner's second chance after tasks that name paths outside the story.
pub fn replan_strays(strays: &[StrayTask]) -> String {
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

/// The plan as the coder of task `current` sees it: every task with its description, the done
/// ones ticked.
pub fn plan_so_far(plan: &TaskPlan, current: usize) -> String {
    let mut out = String::from("# The plan\n\n");
    for (n, task) in plan.tasks.iter().enumerate() {
        let mark = if task.completed { 'x' } else { ' ' };
        let here = if n == current { "  ← this task" } else { "" };
        let _ = writeln!(out, "{}. [{mark}] {}{here}", n + 1, task.title);
        for line in task.description.trim().lines() {
            let line = line.trim_end();
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "   {line}");
            }
        }
    }
    out
}

/// The request of one task.
pub fn task(task: &Task, index: usize, of: usize) -> String {
    let mut out = format!("Task {} of {of}: {}\n", index + 1, task.title);
    let description = task.description.trim();
    if !description.is_empty() {
        let _ = write!(out, "\n{description}\n");
    }
    out.push_str("\nDo this task only, then stop: your work is checked and committed for you.\n");
    out
}

/// `prompt` asked again after a turn that was ended for calling `call` `times` times in a row:
/// the note after it names the call, so the agent tries something else.
pub fn loop_note(prompt: &str, call: &ToolCall, times: u32) -> String {
    format!(
        "{}\n\nNote: your previous attempt at this request was stopped because it called {call} \
         {times} times in a row without getting anywhere. Do not call it that way again: find \
         out why it does not work, and take another approach.\n",
        prompt.trim_end()
    )
}

/// The note after the prompt of a coder turn that takes up an attempt that never replied: a
/// request run again (after a turn ended as stalled or looping, cut off by a usage limit or an
/// outage and handed to the next seat, or failed and retried by its seat), or the first turn of
/// a chat on a worktree a killed run left changes in. `listed` is what the worktree holds
/// uncommitted against its head commit then ([`epic_git_ops::Git::uncommitted`]), or why that
/// could not be read. `None` when it holds nothing: the attempt left nothing to take up.
///
/// One definition for every such turn: the chat and the seats' own retries both read it
/// through the chat's `Leftovers`, so what a retry is told never depends on why it runs again.
pub fn leftovers(listed: Result<&[Uncommitted], &str>) -> Option<String> {
    let mut out = String::from(
        "Note: an earlier attempt at this work was stopped before it replied, and the worktree \
         still holds what it left, not committed",
    );
    match listed {
        Ok([]) => return None,
        Ok(changes) => {
            out.push_str(" (with anything earlier turns of this task changed):\n");
            for change in changes.iter().take(LEFTOVER_PATHS_CAP) {
                let _ = writeln!(out, "- {} `{}`", change.kind.as_str(), change.path);
            }
            if changes.len() > LEFTOVER_PATHS_CAP {
                let _ = writeln!(
                    out,
                    "- … and {} more (`git status` lists them all)",
                    changes.len() - LEFTOVER_PATHS_CAP
                );
            }
        }
        Err(why) => {
            let _ = writeln!(
                out,
                ". epic could not list it ({why}): `git status` shows what it is."
            );
        }
    }
    out.push_str(
        "These changes may be half done. Read each one before you go on, then finish it or undo \
         it: when you reply, the worktree as you leave it is checked and committed as your \
         work.\n",
    );
    Some(out)
}

/// The question after a turn that changed nothing.
pub fn noop(title: &str) -> String {
    format!(
        "Your previous turn changed no files.\n\
         If the task \"{title}\" is already fully done in the repository as it is, reply with \
         exactly {NOOP_TOKEN} and nothing else.\n\
         Otherwise, do the task now."
    )
}

/// The request to address a round's findings.
pub fn fix(review: &Review) -> String {
    let mut out = String::from("Address these findings, then stop:\n");
    push_issues(&mut out, review);
    out
}

/// A reviewer's standing instructions: the story, the epic, where it works, the story's
/// perimeter and dependencies, the house rules, the files to read first.
pub fn reviewer_rules(context: Context<'_>) -> String {
    let Context {
        plan,
        story,
        briefing,
        rules,
    } = context;
    let mut out = format!(
        "You review the work of a coder on one task of the story \"{}\" (id: {}), one story of \
         a larger epic. Read the changes and the files they touch in your working directory; do \
         not change any file, do not commit.\n",
        story.title, story.id
    );
    push_epic(&mut out, plan);
    push_place(&mut out, briefing, true);
    out.push_str(
        "\n# The story's perimeter\n\nPaths the story owns (the coder may change only these):\n",
    );
    bullets(&mut out, &story.owned);
    out.push_str("\nWhat it must provide for other stories:\n");
    bullets(&mut out, &story.provides);
    push_dependencies(&mut out, briefing);
    push_house_rules(&mut out, rules, true);
    out.push_str("\n# The story\n\n");
    out.push_str(&story_prompt(story));
    push_read_first(&mut out, &briefing.read_first);
    out
}

/// A reviewer's request for one task: the task, the paths changed, and the changes themselves
/// (`diff`, bounded by [`DIFF_LIMIT`] as [`cap_diff`] does).
pub fn review(task: &Task, since: &str, paths: &[String], diff: &str) -> String {
    let mut out = format!("Review the changes made for the task \"{}\".\n", task.title);
    let description = task.description.trim();
    if !description.is_empty() {
        let _ = write!(out, "\n{description}\n");
    }
    out.push_str("\nChanged paths:\n");
    bullets(&mut out, paths);
    let diff = cap_diff(diff);
    if !diff.trim().is_empty() {
        let _ = write!(
            out,
            "\nThe changes (uncommitted ones and new files included):\n\n```diff\n{}\n```\n",
            diff.trim_end()
        );
    }
    let _ = write!(
        out,
        "\nThe same with `git diff {since}` (untracked files in `git status`).\n\
         Reply with only this JSON, bare or in one fenced block; clean with no issues means the \
         change is acceptable:\n{VERDICT_SHAPE}\n"
    );
    out
}

/// `diff` within [`DIFF_LIMIT`] bytes: whole when it fits, else its head (three quarters of the
/// limit) and its tail (one quarter) with a note of how much was left out between them. The
/// base85 blocks of binary files (`GIT binary patch`) are left out first, each with a note.
pub fn cap_diff(diff: &str) -> String {
    let mut text = String::with_capacity(diff.len().min(DIFF_LIMIT));
    let mut in_binary = false;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            in_binary = false;
        } else if line.trim_end() == "GIT binary patch" {
            in_binary = true;
            text.push_str("[binary change left out]\n");
            continue;
        }
        if !in_binary {
            text.push_str(line);
        }
    }
    if text.len() <= DIFF_LIMIT {
        return text;
    }
    let head_end = text.floor_char_boundary(DIFF_LIMIT / 4 * 3);
    let tail_start = text.ceil_char_boundary(text.len() - DIFF_LIMIT / 4);
    format!(
        "{}\n[… {} bytes of the diff left out …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

/// The judge's standing instructions: the story, the epic, where it works, the story's
/// perimeter and dependencies, what clears it, the house rules, the files to read first.
pub fn judge_rules(context: Context<'_>) -> String {
    let Context {
        plan,
        story,
        briefing,
        rules,
    } = context;
    let mut out = format!(
        "You judge whether one story of a larger epic is done: \"{}\" (id: {}). Read its diff \
         against the epic branch, and the files it touches in your working directory; do not \
         change any file, do not commit.\n",
        story.title, story.id
    );
    push_epic(&mut out, plan);
    push_place(&mut out, briefing, true);
    out.push_str("\n# The story's perimeter\n\nPaths the story owns:\n");
    bullets(&mut out, &story.owned);
    out.push_str("\nWhat it must provide for other stories:\n");
    bullets(&mut out, &story.provides);
    push_dependencies(&mut out, briefing);
    out.push_str(
        "\nClear it only when the story is implemented completely, every acceptance criterion \
         holds, and no test was weakened. Name each gap as an issue a coder can act on.\n",
    );
    push_house_rules(&mut out, rules, true);
    out.push_str("\n# The story\n\n");
    out.push_str(&story_prompt(story));
    push_read_first(&mut out, &briefing.read_first);
    out
}

/// The judge's request: the story's diff, bounded ([`cap_diff`]).
pub fn judge(diff: &str, round: u32) -> String {
    format!(
        "Judge round {round}. The story's changes against the epic branch:\n\n```diff\n{}\n```\n\n\
         Reply with only this JSON, bare or in one fenced block; clean means the story is done:\n\
         {VERDICT_SHAPE}\n",
        cap_diff(diff).trim_end()
    )
}

/// The coder's request after a judge did not clear the story.
pub fn judge_feedback(story: &Story, verdict: &Review) -> String {
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
pub fn issue_lines(review: &Review) -> String {
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

/// How many entries the architect's view of the repository's files holds at most: a tree of
/// this size fits any agent's context with room to spare, and beyond it directories are
/// summarised ([`file_tree`]).
pub const FILE_TREE_CAP: usize = 400;

/// The head of the README the architect sees, in bytes at most.
pub const README_HEAD: usize = 6000;

/// The repository's tracked `files` (sorted, `/`-separated) as at most about `cap` lines: every
/// file when they fit; otherwise the deepest summary that fits, where a file deeper than the
/// summary's depth is counted under its directory at that depth (`src/cart/ (42 files)`), and
/// the files above it are listed. A root too wide even for that lists its first entries and
/// says how many it left out.
pub fn file_tree(files: &[String], cap: usize) -> String {
    /// Each entry of the summary at `depth`: a file, or a directory with how many files it holds.
    fn entries(files: &[String], depth: usize) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for file in files {
            let parts: Vec<&str> = file.split('/').collect();
            let entry = if parts.len() > depth + 1 {
                (format!("{}/", parts[..=depth].join("/")), 1)
            } else {
                (file.clone(), 0)
            };
            match out.last_mut() {
                Some((name, count)) if *count > 0 && *name == entry.0 => *count += 1,
                _ => out.push(entry),
            }
        }
        out
    }
    let deepest = files
        .iter()
        .map(|f| f.split('/').count())
        .max()
        .unwrap_or(0);
    let mut chosen = entries(files, 0);
    if files.len() <= cap {
        chosen = files.iter().map(|file| (file.clone(), 0)).collect();
    } else {
        for depth in 1..deepest {
            let candidate = entries(files, depth);
            if candidate.len() > cap {
                break;
            }
            chosen = candidate;
        }
    }
    let mut out = String::new();
    for (name, count) in chosen.iter().take(cap) {
        let _ = match count {
            0 => writeln!(out, "{name}"),
            1 => writeln!(out, "{name} (1 file)"),
            n => writeln!(out, "{name} ({n} files)"),
        };
    }
    if chosen.len() > cap {
        let _ = writeln!(out, "… and {} more entries", chosen.len() - cap);
    }
    out
}

/// The architect's brief (`epic plan`): what a good split needs to be written, in one prompt.
///
/// The epic as the user phrased it; the repository's tracked files ([`file_tree`]); the head of
/// its README; the plan format with every field; every validation rule; what makes a split
/// good; the plan's JSON Schema; and the reply expected.
pub fn architect(epic: &str, files: &[String], readme: Option<&str>) -> String {
    let mut out = String::from(
        "You are the architect of an epic. Split the epic below into stories that coding \
         agents will implement in parallel, each in its own git worktree and branch, each merged \
         into the epic branch only once its checks pass. You write the plan only: do not change \
         any file (the repository is read-only to you). Read the repository as much as you need \
         to, from your working directory, its root.\n\n# The epic\n\n",
    );
    out.push_str(epic.trim());
    let _ = write!(
        out,
        "\n\n# The repository's tracked files ({} in all)\n\n```text\n{}```\n",
        files.len(),
        file_tree(files, FILE_TREE_CAP)
    );
    if let Some(readme) = readme.map(str::trim).filter(|text| !text.is_empty()) {
        let end = readme.floor_char_boundary(README_HEAD);
        let cut = if end < readme.len() {
            "\n… (the README goes on)"
        } else {
            ""
        };
        let _ = write!(
            out,
            "\n# The head of the README\n\n````markdown\n{}{cut}\n````\n",
            &readme[..end]
        );
    }
    out.push_str(ARCHITECT_FORMAT);
    out.push_str(ARCHITECT_RULES);
    out.push_str(ARCHITECT_GOOD_SPLIT);
    let schema = serde_json::to_string_pretty(&epic_story_plan::plan_schema()).unwrap_or_default();
    let _ = write!(
        out,
        "\n# The plan's JSON Schema\n\n```json\n{schema}\n```\n\n# Your reply\n\nReply with the \
         plan and nothing else: one JSON object, alone or in one fenced ```json block. Prose \
         around a JSON object is not read.\n"
    );
    out
}

/// The plan format, field by field.
const ARCHITECT_FORMAT: &str = r#"
# The plan format

```json
{
  "epic_id": "checkout",
  "epic": "What the epic is, as the operator phrased it.",
  "stories": [
    {
      "id": "cart-api",
      "title": "Cart API",
      "description": "What to build, in prose.",
      "depends_on": [],
      "owned": ["src/cart"],
      "shared_read_only": ["src/lib.rs"],
      "provides": ["cart::Cart"],
      "acceptance": ["adding an item twice increments its quantity"],
      "read_first": ["src/catalog/mod.rs"],
      "tests_change": false
    }
  ]
}
```

- `epic_id` (required): the epic's id, kebab-case; it names the epic branch `epic/<epic_id>`.
- `epic`: the epic as the operator phrased it.
- `stories` (required): the stories, in plan order (the tie-breaker of every ordering).
- `id` (required): the story's id, kebab-case, unique; it names the branch
  `story/<epic_id>/<id>`.
- `title` (required): one line.
- `description`: what to build, in prose, precise enough for an agent that sees only this story
  and the repository.
- `depends_on`: ids of the stories that must be merged before this one starts.
- `owned` (required): repo-relative path prefixes (files or directories) the story may create or
  change, and nothing else. A path that does not exist yet is fine: the story creates it.
- `shared_read_only`: path prefixes the story reads but must never change.
- `provides`: what the stories after it may rely on (a module, a function, a route, a file
  format): the contract between stories.
- `acceptance`: "done when" criteria, each one a reader can check.
- `read_first`: paths the agent should read before it starts.
- `tests_change`: true only when the story must delete, skip or rewrite existing tests.
- `estimated_time`: how long the story's work is expected to take (`20m`, `1h 30m`, `90s`); the
  scheduler weighs the critical path by it until runs have measured durations.
"#;

/// Every validation rule, as `epic validate` checks them.
const ARCHITECT_RULES: &str = "
# The rules a plan must pass (each is checked; a plan that breaks one is sent back)

- `duplicate_id`: no two stories share an id.
- `invalid_id`: `epic_id` and every story id are kebab-case, `^[a-z0-9][a-z0-9-]*$`, at most 64 \
characters.
- `no_owned_paths`: every story owns at least one path.
- `self_dependency`: no story depends on itself.
- `unknown_dependency`: every id in `depends_on` is a story of the plan.
- `owned_shared_overlap`: no story lists a path as shared read-only that it owns, or one above or \
below a path it owns.
- `owned_overlap`: no two stories own overlapping paths (one equal to, or under, the other).
- `cycle`: the dependencies have no cycle.
- `unsafe_path`: every owned or shared path is repo-relative: not empty, not `.`, not absolute, \
no drive letter, no `..` segment, nothing under `.git`.
- `empty_plan`: the plan has at least one story.
- `invalid_estimate`: an `estimated_time`, where given, is a positive duration.
- Paths use `/` separators; `./` and a trailing `/` are dropped.
";

/// What makes a split good.
const ARCHITECT_GOOD_SPLIT: &str = "
# What makes a good split

- Small stories, each one coherent change an agent can finish in one sitting, each owning its \
own disjoint paths: a story can change nothing outside what it owns.
- The tests go with the code they test: the story that owns a module owns its tests too.
- `provides` is the contract between stories: name exactly what a later story will use, and \
make the later story's description use it by that name.
- `acceptance` criteria a reader can check against the code or by running it, not wishes.
- Depend only where a story really needs another's work: stories without dependencies between \
them run at the same time, so the fewer edges, the sooner the epic is done.
- Files every story would touch (a shared registry, a manifest) belong to one story, usually \
the first; the others read them (`shared_read_only`) or depend on it.
";

/// The architect's next round: why the last reply was not a valid plan (the reason it could not
/// be read, or every violation with its kind, stories and paths), and what to reply.
pub fn architect_feedback(
    unreadable: Option<&str>,
    violations: &[Violation],
    round: u32,
    rounds: u32,
) -> String {
    let mut out = format!(
        "Your plan was not accepted (round {round} of {rounds}). Reply with the whole corrected \
         plan, as before: one JSON object, alone or in one fenced ```json block.\n\n"
    );
    if let Some(reason) = unreadable {
        let _ = writeln!(out, "It could not be read: {reason}");
    }
    if !violations.is_empty() {
        let _ = writeln!(out, "It breaks {} rule(s):\n", violations.len());
        for violation in violations {
            let _ = write!(out, "- `{}`: {}", violation.kind, violation.message);
            if !violation.stories.is_empty() {
                let _ = write!(out, " (stories: {})", violation.stories.join(", "));
            }
            if !violation.paths.is_empty() {
                let _ = write!(out, " (paths: {})", violation.paths.join(", "));
            }
            out.push('\n');
        }
    }
    out
}

/// What a person running the epic gave a story's coder (`epic tell`, `epic answer`), as the
/// next coder turn reads it before its request: each in the order given, marked as the
/// person's own words. `answers` says which of `notes` answer the question the coder asked.
pub fn person_notes(notes: &[(bool, &str)]) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let mut out = String::from(
        "The person running this epic wrote to you. Their words come first; they outrank the \
         plan where the two differ, but not the rules of your perimeter.\n",
    );
    for (answer, text) in notes {
        let heading = if *answer {
            "Their answer to the question you stopped on (BLOCKED_ON)"
        } else {
            "A note from them"
        };
        let _ = write!(out, "\n{heading}:\n> ");
        out.push_str(&text.trim().replace('\n', "\n> "));
        out.push('\n');
    }
    out.push_str("\nNow carry on with the request below.\n\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use epic_git_ops::UncommittedKind;

    fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    /// The architect's whole brief, pinned: a change to what `epic plan` tells the architect is
    /// a change to review.
    #[test]
    fn the_architects_brief() {
        let prompt = architect(
            "Add a shopping cart: items, quantities and a total, with tests.",
            &files(&[
                "Cargo.toml",
                "README.md",
                "src/catalog.rs",
                "src/lib.rs",
                "tests/catalog.rs",
            ]),
            Some("# shop\n\nA small web shop.\n"),
        );
        insta::assert_snapshot!(prompt);
    }

    /// A story of a large epic names the first [`OTHERS_NAMED`] other stories' paths and
    /// counts the rest: its prompt does not grow with the epic.
    #[test]
    fn a_large_epics_other_paths_are_named_up_to_a_cap_and_counted() {
        let mut fixture = Fixture::new();
        for i in 0..OTHERS_NAMED + 20 {
            let id = format!("more-{i}");
            let owned = format!("more/{i}.txt");
            fixture
                .plan
                .stories
                .push(Story::new(&id, &id, [owned.as_str()]));
        }
        let rules = story_rules(fixture.context());
        let named = rules
            .lines()
            .filter(|line| {
                line.contains(" (story ")
                    && (line.ends_with("leave it alone)") || line.ends_with("read it)"))
            })
            .count();
        assert_eq!(named, OTHERS_NAMED);
        // Four stories of the fixture, one of them this one's, then 120 more.
        let more = 3 + OTHERS_NAMED + 20 - OTHERS_NAMED;
        assert!(
            rules.contains(&format!("- and the paths of {more} more stories:")),
            "{rules}"
        );
    }

    /// The one story every role's prompt is pinned for: `cart-api` of a four-story epic, after
    /// `catalog` merged, with `read_first` files of every kind and house rules.
    struct Fixture {
        plan: StoryPlan,
        briefing: Briefing,
        rules: String,
        tasks: TaskPlan,
    }

    impl Fixture {
        fn new() -> Self {
            let mut catalog = Story::new("catalog", "Product catalog", ["src/catalog"]);
            catalog.provides = vec!["catalog::Item { id, name, price_cents }".into()];
            let mut cart = Story::new("cart-api", "Cart API", ["src/cart"])
                .depending_on(["catalog"])
                .sharing(["src/lib.rs"]);
            cart.description = "A cart of catalog items: add an item (again: its quantity \
                                grows), remove one, and the total in cents."
                .into();
            cart.provides = vec!["cart::Cart".into(), "cart::Cart::total".into()];
            cart.acceptance = vec![
                "adding an item twice gives a quantity of 2".into(),
                "the total of an empty cart is 0".into(),
            ];
            cart.read_first = vec![
                "src/catalog/mod.rs".into(),
                "docs/pricing.md".into(),
                "docs/".into(),
                "assets/logo.png".into(),
                "src/legacy_cart.rs".into(),
            ];
            let page =
                Story::new("cart-page", "Cart page", ["web/cart"]).depending_on(["cart-api"]);
            let search = Story::new("search", "Search", ["src/search"]);
            let plan = StoryPlan {
                epic_id: "shop".into(),
                epic: "Add a shopping cart to the shop: items from the catalog, quantities and \
                       a total, and a page that shows it."
                    .into(),
                stories: vec![catalog, cart, page, search],
            };
            let mut first = Task::new(
                "Cart type with add and remove",
                "Add `cart::Cart` with `add(item)` and `remove(id)`; adding an item again \
                 raises its quantity. Unit tests in src/cart/tests.rs.",
            );
            first.completed = true;
            let second = Task::new(
                "Cart total",
                "Add `Cart::total()` in cents, 0 for an empty cart, with tests.",
            );
            Self {
                plan,
                briefing: Self::briefing(),
                rules: "## CONTRIBUTING.md\n\nRun `cargo fmt` before you finish. Every public \
                        item has a doc comment.\n"
                    .into(),
                tasks: TaskPlan::new("cart-api", vec![first, second]),
            }
        }

        /// What `cart-api`'s run gathered: `read_first` files of every kind, `catalog` merged.
        fn briefing() -> Briefing {
            let root = PathBuf::from("/home/dev/shop.worktrees/shop");
            let text = |text: &str| {
                Ok(FileHead::Text {
                    text: text.to_owned(),
                    size: text.len() as u64,
                })
            };
            let heads = vec![
                (
                    "src/catalog/mod.rs".to_owned(),
                    text(
                        "pub struct Item {\n    pub id: u32,\n    pub name: String,\n    pub price_cents: u64,\n}\n",
                    ),
                ),
                (
                    "docs/pricing.md".to_owned(),
                    // Read as `read_head` reads a long file: its head only.
                    Ok(FileHead::Text {
                        text: "# Pricing\n\nPrices are integer cents; never round one.\n\n## Disc"
                            .to_owned(),
                        size: 18_438,
                    }),
                ),
                ("docs/".to_owned(), Ok(FileHead::Directory)),
                (
                    "assets/logo.png".to_owned(),
                    Ok(FileHead::Binary { size: 5120 }),
                ),
                ("src/legacy_cart.rs".to_owned(), Ok(FileHead::Missing)),
            ];
            Briefing {
                worktree: root.join("cart-api"),
                off_limits: vec![
                    (
                        "/home/dev/shop".into(),
                        "the main checkout: the user's own".into(),
                    ),
                    (
                        root.join("_epic"),
                        "the epic's worktree, where epic merges the stories".into(),
                    ),
                    (root.join("catalog"), "story catalog's worktree".into()),
                    (root.join("cart-page"), "story cart-page's worktree".into()),
                    (root.join("search"), "story search's worktree".into()),
                ],
                read_first: read_first(heads),
                dependencies: vec![Dependency {
                    id: "catalog".into(),
                    title: "Product catalog".into(),
                    provides: vec!["catalog::Item { id, name, price_cents }".into()],
                    paths: vec!["src/catalog/mod.rs".into(), "src/catalog/tests.rs".into()],
                    merged: true,
                }],
            }
        }

        fn context(&self) -> Context<'_> {
            Context {
                plan: &self.plan,
                story: &self.plan.stories[1],
                briefing: &self.briefing,
                rules: &self.rules,
            }
        }

        /// The turn as the agent reads it on its standard input.
        fn turn(
            &self,
            role: epic_agents::Role,
            system: String,
            history: Vec<epic_agents::Exchange>,
            prompt: String,
        ) -> String {
            self.turn_after(role, system, history, prompt, None)
        }

        /// [`turn`](Self::turn), with `note` after the prompt: a turn that takes up an
        /// attempt that never replied.
        fn turn_after(
            &self,
            role: epic_agents::Role,
            system: String,
            history: Vec<epic_agents::Exchange>,
            prompt: String,
            note: Option<String>,
        ) -> String {
            epic_agents::TurnRequest {
                role,
                system,
                history,
                prompt,
                leftovers_note: note,
                context: epic_agents::TurnContext {
                    epic: "shop".into(),
                    story: std::sync::Arc::new(self.plan.stories[1].clone()),
                    task: None,
                    worktree: self.briefing.worktree.clone(),
                    slot: 0,
                    deadline: tokio::time::Instant::now(),
                    cancel: tokio_util::sync::CancellationToken::new(),
                    sandbox: epic_process::sandbox::Sandbox::off(),
                    watchdog: None,
                    clock: epic_process::Clock::system(),
                    leftovers: None,
                },
            }
            .render()
        }
    }

    /// The diff of the task under review and of the story under judgement.
    const DIFF: &str = "diff --git a/src/cart/mod.rs b/src/cart/mod.rs\n\
                        new file mode 100644\n\
                        --- /dev/null\n\
                        +++ b/src/cart/mod.rs\n\
                        @@ -0,0 +1,3 @@\n\
                        +pub struct Cart {\n\
                        +    lines: Vec<(u32, u32)>,\n\
                        +}\n\
                        diff --git a/src/cart/icon.png b/src/cart/icon.png\n\
                        new file mode 100644\n\
                        GIT binary patch\n\
                        literal 3\n\
                        KcmZQz00031\n\
                        \n\
                        literal 0\n\
                        HcmV?d00001\n";

    /// Every role's prompt for one story, pinned as the agent reads it: a change to what an
    /// agent is told is a change to review.
    #[test]
    fn every_roles_prompt() {
        use epic_agents::{Exchange, Role};
        let fixture = Fixture::new();
        let story = &fixture.plan.stories[1];
        let rules = story_rules(fixture.context());
        insta::assert_snapshot!(
            "planner",
            fixture.turn(Role::Planner, rules.clone(), vec![], planning(story, 30))
        );
        let system = format!("{rules}\n{}", plan_so_far(&fixture.tasks, 1));
        let task_prompt = task(&fixture.tasks.tasks[1], 1, 2);
        insta::assert_snapshot!(
            "coder",
            fixture.turn(Role::Coder, system.clone(), vec![], task_prompt.clone())
        );
        insta::assert_snapshot!(
            "coder_noop",
            fixture.turn(
                Role::Coder,
                system.clone(),
                vec![Exchange {
                    prompt: task_prompt.clone(),
                    reply: "The total is already there.".into(),
                }],
                noop("Cart total"),
            )
        );
        // The task's turn run again after the first went silent half way through a file.
        let left = [
            ("src/cart/total.rs", UncommittedKind::Added),
            ("src/cart/mod.rs", UncommittedKind::Modified),
            ("src/cart/old_total.rs", UncommittedKind::Deleted),
        ]
        .map(|(path, kind)| Uncommitted {
            path: path.into(),
            kind,
        });
        insta::assert_snapshot!(
            "coder_retried",
            fixture.turn_after(
                Role::Coder,
                system,
                vec![],
                task_prompt,
                leftovers(Ok(&left)),
            )
        );
        insta::assert_snapshot!(
            "reviewer",
            fixture.turn(
                Role::Reviewer,
                reviewer_rules(fixture.context()),
                vec![],
                review(
                    &fixture.tasks.tasks[1],
                    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                    &["src/cart/icon.png".into(), "src/cart/mod.rs".into()],
                    DIFF,
                ),
            )
        );
        insta::assert_snapshot!(
            "judge",
            fixture.turn(
                Role::Judge,
                judge_rules(fixture.context()),
                vec![],
                judge(DIFF, 1)
            )
        );
    }

    #[test]
    fn leftovers_name_each_path_up_to_the_cap_or_why_they_could_not_be_read() {
        assert_eq!(leftovers(Ok(&[])), None, "nothing left: nothing to tell");
        let many: Vec<Uncommitted> = (0..LEFTOVER_PATHS_CAP + 3)
            .map(|n| Uncommitted {
                path: format!("src/f{n:02}.rs"),
                kind: UncommittedKind::Added,
            })
            .collect();
        let note = leftovers(Ok(&many)).expect("a note");
        assert!(note.contains("- added `src/f00.rs`\n"), "{note}");
        assert!(!note.contains("src/f50.rs"), "{note}");
        assert!(
            note.contains("- … and 3 more (`git status` lists them all)\n"),
            "{note}"
        );
        let note = leftovers(Err("the index is locked")).expect("a note");
        assert!(
            note.contains("epic could not list it (the index is locked): `git status` shows"),
            "{note}"
        );
    }

    #[test]
    fn read_first_files_share_one_budget() {
        let big = "x".repeat(READ_FIRST_FILE_CAP);
        let heads: Vec<(String, Result<FileHead, String>)> = (0..6)
            .map(|n| {
                (
                    format!("f{n}"),
                    Ok(FileHead::Text {
                        text: big.clone(),
                        size: big.len() as u64,
                    }),
                )
            })
            .collect();
        let shown = read_first(heads);
        let whole = READ_FIRST_TOTAL_CAP / READ_FIRST_FILE_CAP;
        assert!(
            shown[..whole]
                .iter()
                .all(|item| matches!(item.shown, Shown::Whole(_)))
        );
        assert!(
            shown[whole..]
                .iter()
                .all(|item| matches!(&item.shown, Shown::Listed(why) if why.contains("are spent"))),
            "{shown:?}"
        );
        let error = read_first(vec![("f".into(), Err("denied".into()))]);
        assert_eq!(
            error[0].shown,
            Shown::Listed("could not be read: denied".into())
        );
    }

    #[test]
    fn a_long_diff_keeps_its_head_and_tail() {
        let diff = format!("HEAD{}TAIL", "-".repeat(DIFF_LIMIT * 2));
        let capped = cap_diff(&diff);
        assert!(capped.len() < DIFF_LIMIT + 100);
        assert!(capped.starts_with("HEAD") && capped.ends_with("TAIL"));
        assert!(capped.contains(" bytes of the diff left out …]"));
        assert_eq!(
            cap_diff("diff --git a/x b/x\n+1\n"),
            "diff --git a/x b/x\n+1\n"
        );
    }

    #[test]
    fn the_architects_feedback_names_kinds_stories_and_paths() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["src"]),
                Story::new("b", "B", ["src/b"]),
            ],
        };
        let violations = plan.violations();
        let text = architect_feedback(None, &violations, 1, 3);
        assert!(text.contains("round 1 of 3"), "{text}");
        assert!(text.contains("`owned_overlap`"), "{text}");
        assert!(text.contains("(stories: a, b)"), "{text}");
        assert!(text.contains("src/b"), "{text}");
        let text = architect_feedback(Some("no JSON"), &[], 2, 3);
        assert!(text.contains("It could not be read: no JSON"), "{text}");
    }

    #[test]
    fn a_big_tree_is_summarised_per_directory() {
        let small = files(&["a.txt", "src/x.rs", "src/y.rs"]);
        assert_eq!(file_tree(&small, 10), "a.txt\nsrc/x.rs\nsrc/y.rs\n");
        let mut big: Vec<String> = (0..100_000)
            .map(|n| format!("pkg{}/mod{}/file{n}.rs", n % 7, n % 13))
            .collect();
        big.push("README.md".into());
        big.sort();
        let tree = file_tree(&big, FILE_TREE_CAP);
        assert!(tree.lines().count() <= FILE_TREE_CAP + 1, "{tree}");
        assert!(tree.contains("README.md\n"), "{tree}");
        assert!(tree.contains("pkg0/mod0/ ("), "{tree}");
        let wide: Vec<String> = (0..1000).map(|n| format!("f{n:04}")).collect();
        let tree = file_tree(&wide, 10);
        assert_eq!(tree.lines().count(), 11);
        assert!(tree.ends_with("… and 990 more entries\n"), "{tree}");
    }
}
