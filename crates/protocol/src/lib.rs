//! The protocol between epic and its agents: what each role is asked ([`prompts`]: the planner,
//! the coder, the judge, reviewers, the verifier, the architect, the lander), how their answers
//! are read ([`replies`]: the task list, a verdict, the architect's plan, the `BLOCKED_ON:`
//! sentinel, a verifier's answer, a judge's evidence), and a story's task plan with its
//! Markdown checkpoint ([`TaskPlan`]). Pure: no process, no file, no git; the executor runs the
//! turns and acts on what is read here.
//!
//! ```
//! use epic_protocol::replies::parse_task_list;
//!
//! let reply = r#"Here is the plan:
//! {"tasks":[{"title":"Add the route","description":"GET /cart"}]}"#;
//! let tasks = parse_task_list(reply).expect("a task list");
//! assert_eq!(tasks[0].title, "Add the route");
//! ```

pub mod prompts;
pub mod replies;
pub mod task_plan;

pub use task_plan::TaskPlan;
