//! `epic answer`, `epic tell`, `epic stop` and `epic retry`: a person's commands to an epic,
//! each queued in its inbox ([`epic_state_store::inbox`]) for the running epic to take, or the
//! next `epic run`.
//!
//! Each reads the story's state (its state file, safe while a run is going, as `epic status`
//! reads it) to refuse, before anything is written, a command the story cannot take: an answer
//! to a story that waits on none, a note for a merged story, a stop of a story that is not
//! running, a retry of one that neither failed nor was stopped. Every refusal is exit 2 with one
//! line saying what the story is doing and what to run instead. None of them takes the epic's
//! lock: the inbox is the one part of the state a person writes while a run goes on.

use epic_land::RunPlan;
use epic_state_store::inbox::{self, Action, Command, Sent};
use epic_state_store::{EpicDir, Hold, StoryStage, StoryState};
use serde_json::json;

use crate::args::{Format, GlobalArgs, MessageArgs, RetryArgs, StopArgs};
use crate::commands::json;
use crate::epics::{self, lock_holder};
use crate::error::{CommandError, Kind, Message};
use crate::output::{self, Output};
use crate::repo;

/// Runs `epic answer STORY TEXT`.
pub(crate) fn answer(
    global: &GlobalArgs,
    args: &MessageArgs,
    out: Output,
) -> Result<(), CommandError> {
    let request = Request::Answer(args.text.clone());
    give(
        global,
        Some(&args.story),
        args.epic.epic.as_deref(),
        request,
        out,
    )
}

/// Runs `epic tell STORY TEXT`.
pub(crate) fn tell(
    global: &GlobalArgs,
    args: &MessageArgs,
    out: Output,
) -> Result<(), CommandError> {
    let request = Request::Tell(args.text.clone());
    give(
        global,
        Some(&args.story),
        args.epic.epic.as_deref(),
        request,
        out,
    )
}

/// Runs `epic stop STORY` or `epic stop --all`.
pub(crate) fn stop(global: &GlobalArgs, args: &StopArgs, out: Output) -> Result<(), CommandError> {
    let story = if args.all {
        None
    } else {
        args.story.as_deref()
    };
    give(global, story, args.epic.epic.as_deref(), Request::Stop, out)
}

/// Runs `epic retry STORY [--fresh]`.
pub(crate) fn retry(
    global: &GlobalArgs,
    args: &RetryArgs,
    out: Output,
) -> Result<(), CommandError> {
    let request = Request::Retry { fresh: args.fresh };
    give(
        global,
        Some(&args.story),
        args.epic.epic.as_deref(),
        request,
        out,
    )
}

/// A person's command, before it is checked against the story and queued: what `epic
/// answer`, `tell`, `stop` and `retry` give, and `epic watch`'s keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `epic answer`: the words.
    Answer(String),
    /// `epic tell`: the words.
    Tell(String),
    /// `epic stop` (of the whole run, without a story).
    Stop,
    /// `epic retry`, from the checkpoint or `fresh`.
    Retry { fresh: bool },
}

impl Request {
    /// The command's name, as `epic` spells it.
    fn command(&self) -> &'static str {
        match self {
            Self::Answer(_) => "answer",
            Self::Tell(_) => "tell",
            Self::Stop => "stop",
            Self::Retry { .. } => "retry",
        }
    }

    /// The action for `story`, which is `doing` what it does, or the refusal's line.
    fn decide(self, story: &str, doing: Doing) -> Result<Action, String> {
        match self {
            Self::Answer(text) => match doing {
                Doing::Waiting => Ok(Action::Answer { text }),
                Doing::Merged => Err(format!(
                    "story `{story}` waits on no answer: it is merged, nothing is left to tell it"
                )),
                Doing::Failed | Doing::Stopped => Err(format!(
                    "story `{story}` waits on no answer: it is {doing}; `epic retry {story}` runs \
                     it again, `epic tell {story} TEXT` leaves a note for its next coder turn",
                    doing = doing.describe()
                )),
                Doing::NotStarted | Doing::Started { .. } => Err(format!(
                    "story `{story}` waits on no answer: it is {doing}; `epic tell {story} TEXT` \
                     leaves a note for its next coder turn",
                    doing = doing.describe()
                )),
            },
            Self::Tell(text) => match doing {
                Doing::Merged => Err(format!(
                    "story `{story}` is merged: no coder turn of it is left to read a note"
                )),
                _ => Ok(Action::Tell { text }),
            },
            Self::Stop => match doing {
                Doing::Merged => Err(format!("story `{story}` is merged: nothing to stop")),
                Doing::Stopped => Err(format!(
                    "story `{story}` is already stopped; `epic retry {story}` runs it again"
                )),
                Doing::Failed => Err(format!(
                    "story `{story}` failed: nothing to stop; `epic retry {story}` runs it again"
                )),
                _ => Ok(Action::Stop),
            },
            Self::Retry { fresh } => match doing {
                Doing::Failed | Doing::Stopped => Ok(Action::Retry { fresh }),
                Doing::Merged => Err(format!(
                    "story `{story}` is merged, neither failed nor stopped: nothing to retry"
                )),
                Doing::Waiting => Err(format!(
                    "story `{story}` is {}, neither failed nor stopped: `epic answer {story} \
                     TEXT` answers it",
                    doing.describe()
                )),
                Doing::NotStarted | Doing::Started { .. } => Err(format!(
                    "story `{story}` is {}, neither failed nor stopped: nothing to retry",
                    doing.describe()
                )),
            },
        }
    }
}

/// A command queued by [`queue`].
#[derive(Debug)]
pub(crate) struct Queued {
    /// The command as the inbox holds it.
    pub(crate) sent: Sent,
    /// Whether a run was going when it was queued.
    pub(crate) running: bool,
}

/// What a story is doing, as its state file says (and whether a run is going).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    /// No state yet: no run has started it.
    NotStarted,
    /// Started; running when a run is going.
    Started { running: bool },
    /// It waits on a person's answer.
    Waiting,
    /// A person stopped it.
    Stopped,
    /// It failed.
    Failed,
    /// It is merged into the epic branch.
    Merged,
}

impl Doing {
    /// What `state` says the story is doing; `running`: whether a run holds the lock.
    fn of(state: Option<&StoryState>, running: bool) -> Self {
        let Some(state) = state else {
            return Self::NotStarted;
        };
        match (state.status, &state.hold) {
            (StoryStage::Merged, _) => Self::Merged,
            (_, Some(Hold::Stopped { .. })) => Self::Stopped,
            (_, Some(Hold::Waiting { .. })) => Self::Waiting,
            (StoryStage::Failed, None) => Self::Failed,
            (StoryStage::Started, None) => Self::Started { running },
        }
    }

    /// The story's state in words, after "it is".
    fn describe(self) -> &'static str {
        match self {
            Self::NotStarted => "not started",
            Self::Started { running: true } => "running",
            Self::Started { running: false } => "started, with no run going",
            Self::Waiting => "waiting on an answer",
            Self::Stopped => "stopped",
            Self::Failed => "failed",
            Self::Merged => "merged",
        }
    }
}

/// `text`, or a usage error when nothing but blanks is in it.
fn words(text: String, command: &str, story: &str) -> Result<String, CommandError> {
    if text.trim().is_empty() {
        return Err(CommandError::new(
            Kind::Usage,
            Message::new(format!(
                "the text is empty: `epic {command} {story} TEXT` needs the words for the coder"
            )),
        ));
    }
    Ok(text)
}

/// Checks `request` for `story` (none: the whole run) of the epic `dir` and queues it in the
/// epic's inbox: the story is checked to exist, what it is doing turns the request into the
/// action or the refusal (a usage error, its line saying what to run instead). The one way a
/// person's command is given: `epic answer`, `tell`, `stop`, `retry` and `epic watch`'s keys.
pub(crate) fn queue(
    dir: &EpicDir,
    story: Option<&str>,
    request: Request,
) -> Result<Queued, CommandError> {
    let command = request.command();
    let request = match (request, story) {
        (Request::Answer(text), Some(story)) => Request::Answer(words(text, command, story)?),
        (Request::Tell(text), Some(story)) => Request::Tell(words(text, command, story)?),
        (request, _) => request,
    };
    let (running, _) = lock_holder(dir)?;
    let action = match story {
        Some(story) => {
            let state = story_state(dir, story)?;
            request
                .decide(story, Doing::of(state.as_ref(), running))
                .map_err(|line| CommandError::new(Kind::Usage, Message::new(line)))?
        }
        None if running => Action::StopAll,
        None => {
            return Err(CommandError::new(
                Kind::Usage,
                Message::new(format!(
                    "no run of epic `{}` is going: nothing to stop",
                    dir.epic_id()
                )),
            ));
        }
    };
    let uid = rustix::process::getuid().as_raw();
    let sent = inbox::send(dir, &Command::new(story, action, uid)).map_err(repository)?;
    Ok(Queued { sent, running })
}

/// Gives `request` for `story` (none: the whole run) of the epic `epic` names, and prints
/// what was queued.
fn give(
    global: &GlobalArgs,
    story: Option<&str>,
    epic: Option<&str>,
    request: Request,
    out: Output,
) -> Result<(), CommandError> {
    let command = request.command();
    let format = global.format_for(command, &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let usage = format!("{command} --epic");
    let dir = epics::select_one(&repo, epic, &usage)?;
    let queued = queue(&dir, story, request)?;
    match format {
        Format::Json => output::data(&json(&json!({
            "id": queued.sent.id,
            "epic": dir.epic_id(),
            "story": story,
            "action": queued.sent.command.action.as_str(),
            "running": queued.running,
        }))),
        _ if out.quiet() => Ok(()),
        _ => output::data(&format!("{}\n", said(&dir, &queued))),
    }
}

/// The line saying what was queued, for whom, and when a run takes it.
pub(crate) fn said(dir: &EpicDir, queued: &Queued) -> String {
    let (sent, running) = (&queued.sent, queued.running);
    let epic = dir.epic_id();
    let whom = match &sent.command.story {
        Some(story) => format!("story `{story}` of epic `{epic}`"),
        None => format!("the whole run of epic `{epic}`"),
    };
    let what = match sent.command.action {
        Action::Answer { .. } => format!("an answer for {whom}"),
        Action::Tell { .. } => format!("a note for {whom}"),
        Action::Stop | Action::StopAll => format!("a stop of {whom}"),
        Action::Retry { fresh: false } => format!("a retry of {whom}"),
        Action::Retry { fresh: true } => format!("a fresh retry of {whom}"),
    };
    let when = if running {
        "the running epic takes it within a second"
    } else {
        "no run is going: the next `epic run` takes it"
    };
    format!("queued {what} (command {}); {when}", sent.id)
}

/// The state of `story`, if it has one; an error listing the epic's stories when it is not one
/// of them (the stories of the last run's plan, or without one those with a state file).
fn story_state(dir: &EpicDir, story: &str) -> Result<Option<StoryState>, CommandError> {
    let known = match epic_state_store::load::<RunPlan>(dir.run_plan()).map_err(repository)? {
        Some(recorded) => recorded
            .plan
            .stories
            .into_iter()
            .map(|story| story.id)
            .collect(),
        None => dir.story_ids().map_err(repository)?,
    };
    if !known.iter().any(|id| id == story) {
        let listed = if known.is_empty() {
            "it has none yet".to_owned()
        } else {
            format!("its stories: {}", known.join(", "))
        };
        return Err(CommandError::new(
            Kind::Usage,
            Message::new(format!(
                "epic `{}` has no story `{story}`; {listed}",
                dir.epic_id()
            )),
        ));
    }
    let path = dir.story_state(story).map_err(repository)?;
    epic_state_store::load::<StoryState>(&path).map_err(repository)
}

/// An error reading the epic's state.
fn repository(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> CommandError {
    CommandError::new(Kind::Repository, error)
}
