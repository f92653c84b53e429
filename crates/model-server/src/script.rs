//! The steps a case scripts: what the server answers to which kind of request, read from JSON
//! lines.
//!
//! Each request is matched against the steps in order: the first whose `when` is the request's
//! kind (or `any`), whose `api`, `key` and `prompt_contains` (when given) fit it, and that has
//! not used up its `times` answers it. A request no step answers
//! gets the success path ([`Action::default_for`]): a planning request one task, a judge or a
//! reviewer a clean verdict, a coding request (or a lander's) the files its prompt's file
//! blocks name written with the CLI's own tool, then a short reply, an architect's request a
//! plan of two stories ([`EPIC_PLAN`]), a verifier's the claim rejected ([`NOT_BLOCKED`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

/// What a request asks for, recognised from the words of epic's prompts (`epic-protocol`'s
/// `prompts.rs`) in its user messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A planner's turn: "Plan the implementation of this story".
    Plan,
    /// A judge's turn: "You judge whether one story".
    Judge,
    /// A reviewer's turn: "You review the work of a coder".
    Review,
    /// A coder's turn: "Do this task only" (or a story's prompt without a plan).
    Code,
    /// `epic plan`'s architect: "You are the architect of an epic".
    Architect,
    /// `epic land`'s lander: "You are landing the epic".
    Land,
    /// A verifier of a coder's `BLOCKED_ON:` claim: "You check a claim made by a coding agent".
    Verify,
    /// Anything else: a CLI's own side requests (titles, routing), other roles.
    Other,
}

impl Kind {
    /// The kind of a request whose user messages read `text`.
    pub fn of(text: &str) -> Self {
        // The architect's, the lander's and the verifier's prompts quote a story's or an epic's
        // own words, which may hold another kind's: their opening lines are read first.
        if text.contains("You are the architect of an epic") {
            Self::Architect
        } else if text.contains("You are landing the epic") {
            Self::Land
        } else if text.contains("You check a claim made by a coding agent") {
            Self::Verify
        } else if text.contains("You judge whether one story") {
            Self::Judge
        } else if text.contains("You review the work of a coder") {
            Self::Review
        } else if text.contains("Plan the implementation of this story") {
            Self::Plan
        } else if text.contains("Do this task only")
            || text.contains("You are implementing ONE story")
        {
            Self::Code
        } else {
            Self::Other
        }
    }
}

/// The architect's answer on the success path: a plan of two stories, `b` after `a`, each a
/// file to write, in file blocks a coder's request is then answered with.
pub const EPIC_PLAN: &str = r#"{
  "epic_id": "planned",
  "epic": "Two small files, one after the other.",
  "stories": [
    {"id": "a", "title": "Write a", "description": "Write the file.\n\n```file src/a/a.txt\nalpha\n```\n", "owned": ["src/a"], "acceptance": ["src/a/a.txt holds alpha"]},
    {"id": "b", "title": "Write b", "description": "Write the file.\n\n```file src/b/b.txt\nbravo\n```\n", "owned": ["src/b"], "depends_on": ["a"], "acceptance": ["src/b/b.txt holds bravo"]}
  ]
}"#;

/// A verifier's answer on the success path: the claim rejected, the need the story's own.
pub const NOT_BLOCKED: &str =
    r#"{"blocked":false,"reason":"Nothing is missing: the file is the story's own to write."}"#;

/// Which requests a step answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// Every request.
    Any,
    /// Planning requests.
    Plan,
    /// Judges' requests.
    Judge,
    /// Reviewers' requests.
    Review,
    /// Coding requests.
    Code,
    /// Architects' requests.
    Architect,
    /// Landers' requests.
    Land,
    /// Verifiers' requests.
    Verify,
    /// Requests of no kind epic asks for.
    Other,
}

impl When {
    fn matches(self, kind: Kind) -> bool {
        matches!(
            (self, kind),
            (Self::Any, _)
                | (Self::Plan, Kind::Plan)
                | (Self::Judge, Kind::Judge)
                | (Self::Review, Kind::Review)
                | (Self::Code, Kind::Code)
                | (Self::Architect, Kind::Architect)
                | (Self::Land, Kind::Land)
                | (Self::Verify, Kind::Verify)
                | (Self::Other, Kind::Other)
        )
    }
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum Action {
    /// A reply of this text.
    Text {
        /// The reply.
        text: String,
    },
    /// A task list of these titles (each its own description), as the planner is asked for.
    Plan {
        /// The tasks' titles.
        tasks: Vec<String>,
    },
    /// A clean verdict, as a judge or reviewer is asked for.
    Clean,
    /// These files written with the CLI's own tool (its file-writing tool, else its shell), one
    /// call per file for a file tool, one command for a shell; then a short reply. Without
    /// `files`, those the prompt's file blocks (```` ```file PATH ````) name.
    Write {
        /// Each file's path (relative to the working directory) and contents.
        #[serde(default)]
        files: Option<BTreeMap<String, String>>,
    },
    /// The same harmless shell command, again on every request of the turn.
    Repeat,
    /// An error status with each API's own body and headers for it: 429 a rate limit, 529
    /// (Anthropic's "overloaded"; the others' overloaded body with the same status), 401 a key
    /// the API refuses, 500.
    Status {
        /// The HTTP status.
        status: u16,
    },
    /// The reply's stream cut half way: the connection closed with the stream unfinished.
    Cut,
    /// The reply's stream opened, then nothing: the connection held until the client leaves.
    Silent,
    /// A 429 in each API's form of an account's usage limit, its reset `hours` away: OpenAI's
    /// `usage_limit_reached` with `resets_at`, Anthropic's `rate_limit_error` with the
    /// `anthropic-ratelimit-unified-*` headers of a rejected limit, Gemini's
    /// `RESOURCE_EXHAUSTED` quota with a `RetryInfo` of that long.
    Limit {
        /// How far away the reset is, in hours.
        #[serde(default = "three")]
        hours: u32,
    },
}

fn three() -> u32 {
    3
}

impl Action {
    /// The success path's answer to a request of `kind`.
    pub fn default_for(kind: Kind) -> Self {
        match kind {
            Kind::Plan => Self::Plan {
                tasks: vec!["Do the story".to_owned()],
            },
            Kind::Judge | Kind::Review => Self::Clean,
            Kind::Code | Kind::Land => Self::Write { files: None },
            Kind::Architect => Self::Text {
                text: EPIC_PLAN.to_owned(),
            },
            Kind::Verify => Self::Text {
                text: NOT_BLOCKED.to_owned(),
            },
            Kind::Other => Self::Text {
                text: "OK".to_owned(),
            },
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text { .. } => f.write_str("text"),
            Self::Plan { .. } => f.write_str("plan"),
            Self::Clean => f.write_str("clean"),
            Self::Write { .. } => f.write_str("write"),
            Self::Repeat => f.write_str("repeat"),
            Self::Status { status } => write!(f, "status {status}"),
            Self::Cut => f.write_str("cut"),
            Self::Silent => f.write_str("silent"),
            Self::Limit { hours } => write!(f, "limit {hours} h"),
        }
    }
}

/// One step: an action for the requests `when` names, at most `times` times (for ever without).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Step {
    /// The requests it answers (every request when absent).
    #[serde(default = "any")]
    pub when: When,
    /// How many requests it answers before the next step's turn.
    #[serde(default)]
    pub times: Option<u32>,
    /// Only requests of this API (its name in the log, a prefix: `anthropic`, `responses`,
    /// `gemini`), so a case can fail one CLI and serve another; every API when absent.
    #[serde(default)]
    pub api: Option<String>,
    /// Only requests signed with this API key, so a case can fail one account of a CLI and
    /// serve another; every key when absent.
    #[serde(default)]
    pub key: Option<String>,
    /// Only requests whose user messages hold these words, so a case can answer a turn by what
    /// epic told it (a person's answer to a `BLOCKED_ON:` question); every request when absent.
    #[serde(default)]
    pub prompt_contains: Option<String>,
    /// What it answers.
    #[serde(flatten)]
    pub action: Action,
}

fn any() -> When {
    When::Any
}

/// A case's steps and how many requests each has answered.
#[derive(Debug, Clone, Default)]
pub struct Script {
    steps: Vec<(Step, u32)>,
}

/// A line of a steps file that is not a step.
#[derive(Debug)]
pub struct ScriptError {
    /// The line's number, from 1.
    pub line: usize,
    /// Why it is not a step.
    pub source: serde_json::Error,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} of the steps is not a step", self.line)
    }
}

impl std::error::Error for ScriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl Script {
    /// The steps of `text`: one JSON object a line; blank lines and `#` comments skipped.
    ///
    /// ```
    /// use epic_model_server::{Action, Kind, Script};
    ///
    /// let mut script = Script::parse(r#"
    /// ## one 429, then the success path
    /// {"do": "status", "status": 429, "times": 1}
    /// {"when": "judge", "do": "text", "text": "{\"clean\":false,\"issues\":[]}"}
    /// "#)?;
    /// assert_eq!(script.next(Kind::Code), Action::Status { status: 429 });
    /// assert_eq!(script.next(Kind::Code), Action::Write { files: None });
    /// # Ok::<(), epic_model_server::ScriptError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Self, ScriptError> {
        let mut steps = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let step = serde_json::from_str(line).map_err(|source| ScriptError {
                line: n + 1,
                source,
            })?;
            steps.push((step, 0));
        }
        Ok(Self { steps })
    }

    /// The answer to the next request of `kind`, its step's use counted.
    pub fn next(&mut self, kind: Kind) -> Action {
        self.next_of(kind, "", None, "")
    }

    /// The answer to the next request of `kind` in the API named `api` (as the log names it;
    /// empty: steps for one API do not answer it), signed with `key` (`None`: steps for one key
    /// do not answer it), whose user messages read `prompt`, its step's use counted.
    pub fn next_of(&mut self, kind: Kind, api: &str, key: Option<&str>, prompt: &str) -> Action {
        for (step, used) in &mut self.steps {
            let api_matches = step
                .api
                .as_deref()
                .is_none_or(|wanted| !api.is_empty() && api.starts_with(wanted));
            let key_matches = step.key.as_deref().is_none_or(|wanted| key == Some(wanted));
            let prompt_matches = step
                .prompt_contains
                .as_deref()
                .is_none_or(|words| prompt.contains(words));
            if step.when.matches(kind)
                && api_matches
                && key_matches
                && prompt_matches
                && step.times.is_none_or(|times| *used < times)
            {
                *used += 1;
                return step.action.clone();
            }
        }
        Action::default_for(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_epics_prompt_words() {
        assert_eq!(Kind::of("x\nYou judge whether one story of"), Kind::Judge);
        assert_eq!(Kind::of("You review the work of a coder on"), Kind::Review);
        assert_eq!(
            Kind::of("You are implementing ONE story …\nPlan the implementation of this story"),
            Kind::Plan
        );
        assert_eq!(
            Kind::of("Task 1 of 1\n\nDo this task only, then stop"),
            Kind::Code
        );
        assert_eq!(Kind::of("Write a title for this chat"), Kind::Other);
        assert_eq!(
            Kind::of("You are the architect of an epic. …\n# The epic\n\nDo this task only"),
            Kind::Architect
        );
        assert_eq!(
            Kind::of("You are landing the epic `e` …\nWhat the story built:\nDo this task only"),
            Kind::Land
        );
        assert_eq!(
            Kind::of("You check a claim made by a coding agent …\nYou are implementing ONE story"),
            Kind::Verify
        );
    }

    #[test]
    fn the_architects_plan_is_a_plan_of_two_stories_with_their_files() {
        let plan: serde_json::Value = serde_json::from_str(EPIC_PLAN).unwrap();
        assert_eq!(plan["stories"].as_array().map(Vec::len), Some(2));
        let description = plan["stories"][1]["description"].as_str().unwrap();
        assert_eq!(
            crate::file_blocks(description)
                .get("src/b/b.txt")
                .map(String::as_str),
            Some("bravo\n")
        );
    }

    #[test]
    fn steps_in_order_each_its_times_then_the_success_path() {
        let mut script = Script::parse(
            "{\"when\":\"code\",\"do\":\"cut\",\"times\":2}\n\n# note\n{\"when\":\"plan\",\"do\":\"plan\",\"tasks\":[\"a\",\"b\"]}\n",
        )
        .unwrap();
        assert_eq!(script.next(Kind::Judge), Action::Clean);
        assert_eq!(script.next(Kind::Code), Action::Cut);
        assert_eq!(script.next(Kind::Code), Action::Cut);
        assert_eq!(script.next(Kind::Code), Action::Write { files: None });
        for _ in 0..3 {
            assert_eq!(
                script.next(Kind::Plan),
                Action::Plan {
                    tasks: vec!["a".into(), "b".into()]
                }
            );
        }
    }

    #[test]
    fn a_step_for_one_api_answers_only_its_requests() {
        let mut script =
            Script::parse("{\"api\":\"responses\",\"do\":\"limit\",\"hours\":5}").unwrap();
        assert_eq!(
            script.next_of(Kind::Code, "responses", None, ""),
            Action::Limit { hours: 5 }
        );
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", None, ""),
            Action::Write { files: None }
        );
        assert_eq!(script.next(Kind::Code), Action::Write { files: None });
    }

    #[test]
    fn a_step_for_one_key_answers_only_its_accounts_requests() {
        let mut script =
            Script::parse("{\"key\":\"sk-work\",\"do\":\"limit\",\"hours\":3}").unwrap();
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", Some("sk-work"), ""),
            Action::Limit { hours: 3 }
        );
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", Some("sk-home"), ""),
            Action::Write { files: None }
        );
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", None, ""),
            Action::Write { files: None }
        );
    }

    #[test]
    fn a_step_for_some_words_answers_only_the_requests_holding_them() {
        let mut script = Script::parse(
            "{\"when\":\"code\",\"prompt_contains\":\"Their answer\",\"do\":\"clean\"}",
        )
        .unwrap();
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", None, "Do this task only"),
            Action::Write { files: None }
        );
        assert_eq!(
            script.next_of(Kind::Code, "anthropic", None, "Their answer:\n> 8080"),
            Action::Clean
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let error = Script::parse("{\"do\":\"clean\"}\n{\"do\":\"dance\"}").unwrap_err();
        assert_eq!(error.line, 2);
    }
}
