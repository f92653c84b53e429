//! The story's task plan: read from the checkpoint or asked of the coder as planner, held to
//! the cap on tasks and to the story's paths, and written back to the checkpoint.

use std::collections::BTreeSet;
use std::sync::Arc;

use epic_perimeter::{Task, stray_tasks};

use crate::error::StoryError;
use epic_agents::Role;
use epic_chat::Chat;
use epic_process::offload;
use epic_protocol::TaskPlan;
use epic_protocol::prompts;
use epic_protocol::replies::parse_task_list;

use super::context::Run;

/// Where a story's task plan came from ([`Run::load_or_plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// Its checkpoint: a resumed story.
    Checkpoint,
    /// A planner turn.
    Planner,
    /// The story itself, as its one task.
    Whole,
}

/// The plan of `story` as one task: its title, and the story's prompt as what to do.
fn whole(story: &epic_story_plan::Story) -> TaskPlan {
    TaskPlan::new(
        story.id.clone(),
        vec![Task::new(story.title.clone(), prompts::story_prompt(story))],
    )
}

impl Run<'_> {
    /// The story's task plan: from its checkpoint (`Origin::Checkpoint`), else planned by a
    /// planner turn, or, for a small story under `--planner auto`, the story as its one task;
    /// either way written to the checkpoint.
    pub(super) async fn load_or_plan(&self) -> Result<(TaskPlan, Origin), StoryError> {
        let path = self.job.checkpoint.clone();
        let problem = |problem: String| StoryError::Checkpoint {
            path: path.clone(),
            problem,
        };
        let read = {
            let path = path.clone();
            offload::blocking(move || epic_state_store::read_if_exists(&path))
                .await
                .unwrap_or_else(|error| Err(std::io::Error::other(error)))
        };
        match read {
            Ok(Some(text)) => {
                let plan = TaskPlan::parse(&text)
                    .map_err(|error| problem(format!("is malformed: {error}")))?;
                if plan.tasks.is_empty() {
                    return Err(problem("holds no tasks".to_owned()));
                }
                Ok((plan, Origin::Checkpoint))
            }
            Ok(None) => {
                let story = &self.job.story;
                let (plan, origin) = if self.parts.config.planner.plans(story) {
                    (self.plan().await?, Origin::Planner)
                } else {
                    (whole(story), Origin::Whole)
                };
                self.save(&plan).await?;
                Ok((plan, origin))
            }
            Err(error) => Err(problem(format!("cannot be read: {error}"))),
        }
    }

    pub(super) async fn save(&self, plan: &TaskPlan) -> Result<(), StoryError> {
        let path = self.job.checkpoint.clone();
        let text = plan.render();
        let target = path.clone();
        let guard = self.parts.guard.clone();
        let written = offload::blocking(move || {
            let write = || epic_state_store::write_atomic(&target, text.as_bytes());
            match guard {
                Some(guard) => guard.epic_write(&target, write),
                None => write(),
            }
        })
        .await;
        let problem = match written {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error.to_string(),
            Err(error) => error.to_string(),
        };
        Err(StoryError::Checkpoint {
            path,
            problem: format!("cannot be written: {problem}"),
        })
    }

    pub(super) async fn plan(&self) -> Result<TaskPlan, StoryError> {
        let story = &self.job.story;
        let mut chat = Chat::new(
            self.parts.seats.coder.clone(),
            Role::Planner,
            self.rules(),
            self.context(None),
            Arc::clone(&self.recorder),
        );
        let cap = self.parts.config.max_tasks.max(1);
        let reply = self
            .ask(
                &mut chat,
                Role::Planner,
                None,
                prompts::planning(story, cap),
            )
            .await?;
        let mut tasks = match parse_task_list(&reply.text) {
            Ok(tasks) => tasks,
            Err(error) => {
                self.recorder.note(format!(
                    "the task list could not be read ({error}); asking again"
                ));
                let reply = self
                    .ask(
                        &mut chat,
                        Role::Planner,
                        None,
                        prompts::replan_unreadable(&error),
                    )
                    .await?;
                match parse_task_list(&reply.text) {
                    Ok(tasks) => tasks,
                    Err(error) => {
                        self.recorder.note(format!(
                            "the task list could not be read again ({error}); planning the whole \
                             story as one task"
                        ));
                        return Ok(whole(story));
                    }
                }
            }
        };
        if tasks.len() > cap {
            tasks = self.cut(&mut chat, tasks.len(), cap).await?;
        }
        let tasks = self.without_strays(&mut chat, tasks, cap).await?;
        Ok(TaskPlan::new(story.id.clone(), tasks))
    }

    /// Sends tasks that name paths outside the story back once: the re-plan, with the tasks
    /// that still belong to other stories dropped (unless that drops them all); the first plan
    /// when the re-plan cannot be read or is longer than `cap`.
    pub(super) async fn without_strays(
        &self,
        chat: &mut Chat,
        mut tasks: Vec<Task>,
        cap: usize,
    ) -> Result<Vec<Task>, StoryError> {
        let story = &self.job.story;
        let strays = stray_tasks(&self.job.plan, story, &tasks);
        if strays.is_empty() {
            return Ok(tasks);
        }
        let lines: Vec<String> = strays
            .iter()
            .map(|stray| format!("\"{}\": {}", stray.title, stray.paths.join(", ")))
            .collect();
        self.recorder.note(format!(
            "{} planned task(s) name paths outside the story; re-planning: {}",
            strays.len(),
            lines.join("; ")
        ));
        let reply = self
            .ask(chat, Role::Planner, None, prompts::replan_strays(&strays))
            .await?;
        match parse_task_list(&reply.text) {
            Ok(replanned) if replanned.len() > cap => self.recorder.note(format!(
                "the re-plan has {} tasks, more than the {cap} a story may have \
                 (max_tasks); keeping the first plan",
                replanned.len()
            )),
            Ok(replanned) => {
                let still = stray_tasks(&self.job.plan, story, &replanned);
                let foreign: BTreeSet<&str> = still
                    .iter()
                    .filter(|stray| stray.foreign)
                    .map(|stray| stray.title.as_str())
                    .collect();
                let kept: Vec<Task> = replanned
                    .iter()
                    .filter(|task| !foreign.contains(task.title.as_str()))
                    .cloned()
                    .collect();
                if !still.is_empty() {
                    let dropped = replanned.len() - kept.len();
                    self.recorder.note(format!(
                        "the re-plan still names paths outside the story{}",
                        if dropped > 0 && !kept.is_empty() {
                            format!("; dropped {dropped} task(s) that belong to other stories")
                        } else {
                            String::new()
                        }
                    ));
                }
                tasks = if kept.is_empty() { replanned } else { kept };
            }
            Err(error) => self.recorder.note(format!(
                "the re-plan could not be read ({error}); keeping the first plan"
            )),
        }
        Ok(tasks)
    }

    /// Sends a plan of `planned` tasks, more than `cap`, back once: the re-plan, if it is
    /// readable and within the cap; else the story fails.
    pub(super) async fn cut(
        &self,
        chat: &mut Chat,
        planned: usize,
        cap: usize,
    ) -> Result<Vec<Task>, StoryError> {
        self.recorder.note(format!(
            "the plan has {planned} tasks, more than the {cap} a story may have (max_tasks); \
             re-planning"
        ));
        let reply = self
            .ask(
                chat,
                Role::Planner,
                None,
                prompts::replan_too_many(planned, cap),
            )
            .await?;
        match parse_task_list(&reply.text) {
            Ok(tasks) if tasks.len() <= cap => Ok(tasks),
            Ok(tasks) => Err(StoryError::TooManyTasks {
                planned,
                replanned: Some(tasks.len()),
                cap,
            }),
            Err(error) => {
                self.recorder
                    .note(format!("the re-plan could not be read ({error})"));
                Err(StoryError::TooManyTasks {
                    planned,
                    replanned: None,
                    cap,
                })
            }
        }
    }
}
