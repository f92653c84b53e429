//! A story's tasks: planned, started, committed, found already done, reviewed.

use epic_events::Event;

use crate::plan_file::count;

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::TasksPlanned {
            story,
            tasks,
            done,
            resumed,
            planner,
        } => {
            if *resumed {
                format!(
                    "story {story}: resumed with {}/{} tasks done",
                    done,
                    tasks.len()
                )
            } else if *planner {
                format!(
                    "story {story}: planned {}",
                    count(tasks.len(), "task", "tasks")
                )
            } else {
                format!("story {story}: one task, no planner turn (a small story)")
            }
        }
        Event::TaskStarted {
            story,
            task,
            index,
            of,
        } if verbose => format!("story {story}: task {index}/{of}: {task}"),
        Event::TaskCommitted { story, task, .. } => format!("story {story}: committed {task:?}"),
        Event::TaskNoop { story, task } => {
            format!("story {story}: {task:?} was already satisfied")
        }
        Event::TaskNoopUnconfirmed { story, task } => format!(
            "story {story}: warning: {task:?} changed nothing and was not confirmed as already \
             satisfied; completed because its gates are green (--noop complete)"
        ),
        Event::ReviewRound {
            story,
            task,
            round,
            clean,
            summary,
            ..
        } if verbose || !clean => {
            format!("story {story}: review round {round} of {task:?}: {summary}")
        }
        _ => return None,
    };
    Some(line)
}
