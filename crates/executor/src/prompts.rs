//! What the executor tells agents: the story's rules, the prompts of the task loop, and the
//! architect's brief of `epic plan` with its feedback rounds.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use epic_perimeter::{Review, StrayTask, Task};
use epic_story_plan::{Story, StoryPlan, Violation};

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
pub(crate) fn reachable(plan: &StoryPlan, id: &str, forward: bool) -> BTreeSet<String> {
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

/// How many entries the architect's view of the repository's files holds at most: a tree of
/// this size fits any agent's context with room to spare, and beyond it directories are
/// summarised ([`file_tree`]).
pub(crate) const FILE_TREE_CAP: usize = 400;

/// The head of the README the architect sees, in bytes at most.
pub(crate) const README_HEAD: usize = 6000;

/// The repository's tracked `files` (sorted, `/`-separated) as at most about `cap` lines: every
/// file when they fit; otherwise the deepest summary that fits, where a file deeper than the
/// summary's depth is counted under its directory at that depth (`src/cart/ (42 files)`), and
/// the files above it are listed. A root too wide even for that lists its first entries and
/// says how many it left out.
pub(crate) fn file_tree(files: &[String], cap: usize) -> String {
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
pub(crate) fn architect(epic: &str, files: &[String], readme: Option<&str>) -> String {
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
        let end = crate::bounded::floor_char_boundary(readme, README_HEAD);
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
pub(crate) fn architect_feedback(
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

#[cfg(test)]
mod tests {
    use super::*;

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
