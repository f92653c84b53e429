//! A story's task plan and its Markdown checkpoint, `stories/<id>.plan.md`.

use std::fmt::Write as _;

use epic_perimeter::Task;

/// The tasks of one story, in order, each open or done: what the checkpoint holds.
///
/// The checkpoint is Markdown with one checkbox line per task and its description indented
/// beneath it:
///
/// ```text
/// # Plan: cart-api
///
/// - [x] Add the cart model
///   A `Cart` with items and quantities.
///
/// - [ ] Expose the cart routes
///   GET and POST /cart.
/// ```
///
/// Because every description line is indented, no description can be mistaken for a task line
/// (the reference format's `## ` quirk does not exist here). A person may edit it: ticking a box
/// skips that task on the next run, unticking one redoes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPlan {
    /// The story's id (the header).
    pub story: String,
    /// The tasks, in order.
    pub tasks: Vec<Task>,
}

/// A checkpoint that cannot be read back as a [`TaskPlan`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct CheckpointError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong there.
    pub problem: String,
}

impl TaskPlan {
    /// A plan of these tasks for `story`.
    pub fn new(story: impl Into<String>, tasks: Vec<Task>) -> Self {
        Self {
            story: story.into(),
            tasks,
        }
    }

    /// The checkpoint text, ending with a newline.
    pub fn render(&self) -> String {
        let mut out = format!("# Plan: {}\n", one_line(&self.story));
        for task in &self.tasks {
            let mark = if task.completed { 'x' } else { ' ' };
            let _ = write!(out, "\n- [{mark}] {}\n", one_line(&task.title));
            for line in task.description.trim_end().lines() {
                let line = line.trim_end();
                if line.is_empty() {
                    out.push('\n');
                } else {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
        out
    }

    /// Reads a checkpoint written by [`render`](Self::render) (or edited by hand).
    ///
    /// Before the first task, headings and blank lines are skipped. After it, every line is a
    /// task line (`- [ ] title`, `- [x] title`, `- [X] title`), an indented description line,
    /// or blank; anything else is an error, since guessing could redo or skip work.
    pub fn parse(text: &str) -> Result<Self, CheckpointError> {
        let mut story = String::new();
        let mut tasks: Vec<Task> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let fail = |problem: &str| CheckpointError {
                line: n + 1,
                problem: problem.to_owned(),
            };
            if let Some((done, title)) = task_line(line) {
                let title = title.trim();
                if title.is_empty() {
                    return Err(fail("a task without a title"));
                }
                let mut task = Task::new(title, "");
                task.completed = done;
                tasks.push(task);
            } else if let Some(task) = tasks.last_mut() {
                if line.trim().is_empty() {
                    task.description.push('\n');
                } else if let Some(rest) = line.strip_prefix("  ") {
                    task.description.push_str(rest);
                    task.description.push('\n');
                } else {
                    return Err(fail(
                        "expected a task line `- [ ] title`, an indented description line, or a \
                         blank line",
                    ));
                }
            } else if let Some(header) = line.strip_prefix("# Plan:") {
                header.trim().clone_into(&mut story);
            } else if !line.trim().is_empty() && !line.starts_with('#') {
                return Err(fail("text before the first task line"));
            }
        }
        for task in &mut tasks {
            let end = task.description.trim_end().len();
            task.description.truncate(end);
            let leading = task.description.len() - task.description.trim_start_matches('\n').len();
            task.description.drain(..leading);
        }
        Ok(Self { story, tasks })
    }
}

/// `(done, title)` if `line` is a task line.
fn task_line(line: &str) -> Option<(bool, &str)> {
    let rest = line.strip_prefix("- [")?;
    let mut chars = rest.chars();
    let done = match chars.next()? {
        ' ' => false,
        'x' | 'X' => true,
        _ => return None,
    };
    let title = chars.as_str().strip_prefix("] ")?;
    Some((done, title))
}

/// `text` with line breaks turned into spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_indented_so_none_reads_as_a_task() {
        let mut plan = TaskPlan::new(
            "cart-api",
            vec![Task::new("Add the model", "A `Cart`.\n\n- [ ] not a task")],
        );
        plan.tasks[0].completed = true;
        let text = plan.render();
        assert!(text.contains("- [x] Add the model\n  A `Cart`.\n\n  - [ ] not a task\n"));
        assert_eq!(TaskPlan::parse(&text).unwrap(), plan);
    }

    #[test]
    fn round_trips_and_skips_done_tasks() {
        let plan = TaskPlan::new(
            "s",
            vec![
                Task::new("one", "").done(),
                Task::new("two\nlines", "  indented\n\nmore  "),
            ],
        );
        let text = plan.render();
        let back = TaskPlan::parse(&text).unwrap();
        assert_eq!(back.tasks[0], Task::new("one", "").done());
        assert_eq!(back.tasks[1].title, "two lines");
        assert_eq!(back.tasks[1].description, "  indented\n\nmore");
        assert_eq!(back.tasks.iter().position(|task| !task.completed), Some(1));
        assert_eq!(back.story, "s");
    }

    #[test]
    fn rejects_stray_text() {
        let error = TaskPlan::parse("# Plan: s\n\n- [ ] a\nnot indented\n").unwrap_err();
        assert_eq!(error.line, 4);
        assert!(TaskPlan::parse("- [ ] \n").is_err());
        assert!(TaskPlan::parse("prose\n- [ ] a\n").is_err());
    }
}
