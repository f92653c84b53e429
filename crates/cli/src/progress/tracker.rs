//! The picture of the run the events paint ([`Tracker`]): each story's state, task, step,
//! elapsed time and tokens, the header and the wave picture drawn from it. Plain data: the
//! views draw it, and it is tested without a terminal.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use epic_events::Event;
use epic_story_plan::ValidPlan;

use crate::plan_file::count;

use super::words::{elapsed, paused_until, thousands};

/// Where one story stands, as the view shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Waiting,
    Running,
    Done,
    Failed,
    Skipped,
}

impl State {
    fn glyph(self) -> char {
        match self {
            Self::Waiting => '·',
            Self::Running => '●',
            Self::Done => '✓',
            Self::Failed => '✗',
            Self::Skipped => '⊘',
        }
    }
}

/// One story in the view.
#[derive(Debug)]
pub(super) struct StoryView {
    pub(super) id: String,
    wave: usize,
    pub(super) state: State,
    /// The task at work, from 1, and how many there are.
    task: Option<(usize, usize)>,
    /// How many tasks the plan has, once planned.
    tasks: Option<usize>,
    step: String,
    started: Option<Instant>,
    tokens: u64,
    /// Whether some of `tokens` are estimates (an agent that reports its usage gives its own).
    estimated: bool,
}

impl StoryView {
    /// `a  task 2/3  coder turn  0:12  ~1.2k tokens (est.)` (`1.2k tokens` when the agent
    /// reported them all).
    pub(super) fn line(&self, width: usize) -> String {
        let mut line = format!("{:width$}", self.id);
        match (self.task, self.tasks) {
            (Some((i, n)), _) => write!(line, "  task {i}/{n}").ok(),
            (None, Some(n)) => write!(line, "  {}", count(n, "task", "tasks")).ok(),
            (None, None) => None,
        };
        write!(line, "  {}", self.step).ok();
        if let Some(started) = self.started {
            write!(line, "  {}", elapsed(started.elapsed())).ok();
        }
        if self.tokens > 0 && self.estimated {
            write!(line, "  ~{} tokens (est.)", thousands(self.tokens)).ok();
        } else if self.tokens > 0 {
            write!(line, "  {} tokens", thousands(self.tokens)).ok();
        }
        line
    }
}

/// The picture of the run the events paint.
#[derive(Debug)]
pub(super) struct Tracker {
    epic: String,
    pub(super) stories: Vec<StoryView>,
    /// Each story's place in `stories`, by id: every event names its story, and a search from
    /// the front cost each event of a ten-thousand-story epic thousands of comparisons.
    positions: HashMap<String, usize>,
    waves: usize,
}

impl Tracker {
    pub(super) fn new(plan: &ValidPlan) -> Self {
        let numbers = plan.wave_numbers();
        let stories = plan
            .plan()
            .stories
            .iter()
            .zip(numbers.iter().copied().chain(std::iter::repeat(0)))
            .map(|(story, wave)| StoryView {
                id: story.id.clone(),
                wave,
                state: State::Waiting,
                task: None,
                tasks: None,
                step: String::new(),
                started: None,
                tokens: 0,
                estimated: false,
            })
            .collect();
        let positions = plan
            .plan()
            .stories
            .iter()
            .enumerate()
            .map(|(position, story)| (story.id.clone(), position))
            .collect();
        Self {
            epic: plan.plan().epic_id.clone(),
            stories,
            positions,
            waves: numbers.iter().max().map_or(0, |max| max + 1),
        }
    }

    fn story(&mut self, id: &str) -> Option<&mut StoryView> {
        let position = *self.positions.get(id)?;
        self.stories.get_mut(position)
    }

    fn step(&mut self, id: &str, step: impl Into<String>) {
        if let Some(story) = self.story(id) {
            story.step = step.into();
        }
    }

    fn set(&mut self, id: &str, state: State) {
        if let Some(story) = self.story(id) {
            story.state = state;
        }
    }

    pub(super) fn apply(&mut self, event: &Event) {
        match event {
            Event::StoryStarted { story, .. } => {
                if let Some(view) = self.story(story) {
                    view.state = State::Running;
                    view.started = Some(Instant::now());
                    "preparing its worktree".clone_into(&mut view.step);
                }
            }
            Event::StoryAlreadyMerged { story, .. } | Event::StoryMerged { story, .. } => {
                self.set(story, State::Done);
            }
            Event::StoryFailed { story, .. } | Event::StoryStopped { story } => {
                self.set(story, State::Failed);
            }
            Event::StorySkipped { story, .. } => self.set(story, State::Skipped),
            Event::StoryWaiting { story, question } => {
                self.step(story, format!("waiting for your answer: {question}"));
            }
            Event::StoryPrepared { story, how, .. } => {
                self.step(story, format!("worktree ready ({how})"));
            }
            Event::StoryCaughtUp { story, .. } => self.step(story, "caught up with the epic"),
            Event::SetupRan { story, command, .. } => {
                self.step(story, format!("setup `{command}`"));
            }
            Event::TasksPlanned {
                story, tasks, done, ..
            } => {
                if let Some(view) = self.story(story) {
                    view.tasks = Some(tasks.len());
                    view.step = format!("{} done", count(*done, "task", "tasks"));
                }
            }
            Event::TaskStarted {
                story, index, of, ..
            } => {
                if let Some(view) = self.story(story) {
                    view.task = Some((*index, *of));
                    "coding".clone_into(&mut view.step);
                }
            }
            Event::TurnStarted { story, role, .. } => self.step(story, format!("{role} turn")),
            Event::TurnActivity { .. } | Event::TurnStalled { .. } | Event::TurnLooping { .. } => {
                self.agent_step(event);
            }
            Event::TurnEnded {
                story,
                estimated_tokens,
                reported,
                ..
            } => {
                if let Some(view) = self.story(story) {
                    view.tokens += estimated_tokens;
                    view.estimated |= !reported;
                }
            }
            Event::GatePassed { story, command, .. } | Event::GateFailed { story, command, .. } => {
                self.step(story, format!("gate `{command}`"));
            }
            Event::ReviewRound { story, round, .. } => {
                self.step(story, format!("review round {round}"));
            }
            Event::StoryJudged { story, round, .. } => {
                self.step(story, format!("judged (round {round})"));
            }
            Event::MergeStarted { story, .. } => {
                self.step(story, "merging; gates on the epic branch");
            }
            Event::StoryRolledBack { story, .. } => self.step(story, "merge undone"),
            Event::MergeQueued { story } => self.step(story, "waiting to merge"),
            Event::MergeBatch { batch, stories, .. } => {
                for story in stories {
                    self.step(story, format!("merging in batch {batch}"));
                }
            }
            Event::BatchGated {
                batch,
                step,
                stories,
                ..
            } if *step > 0 => {
                for story in stories {
                    self.step(story, format!("bisecting batch {batch} (step {step})"));
                }
            }
            Event::SeatPaused {
                seat,
                story,
                until,
                since,
                reason,
                ..
            } => self.step(story, paused_until(seat, since, until, reason)),
            Event::RunStarted { epic, .. } => epic.clone_into(&mut self.epic),
            _ => {}
        }
    }

    /// The step of a story whose agent reported what it is doing, or whose turn was ended as
    /// stalled or looping and runs again.
    fn agent_step(&mut self, event: &Event) {
        match event {
            Event::TurnActivity {
                story, role, doing, ..
            } => self.step(story, format!("{role} {doing}")),
            Event::TurnStalled {
                story,
                role,
                again: true,
                ..
            } => self.step(story, format!("{role} stalled; running it again")),
            Event::TurnLooping {
                story,
                role,
                again: true,
                ..
            } => self.step(story, format!("{role} looping; running it again")),
            _ => {}
        }
    }

    fn count(&self, state: State) -> usize {
        self.stories
            .iter()
            .filter(|story| story.state == state)
            .count()
    }

    /// `epic demo: 2/6 done · 1 failed · 0 skipped · 2 running · 1 waiting`.
    pub(super) fn header(&self) -> String {
        format!(
            "epic {}: {}/{} done · {} failed · {} skipped · {} running · {} waiting",
            self.epic,
            self.count(State::Done),
            self.stories.len(),
            self.count(State::Failed),
            self.count(State::Skipped),
            self.count(State::Running),
            self.count(State::Waiting),
        )
    }

    /// `waves 1 [✓ a ✓ b] 2 [● c ✗ d] 3 [· e ⊘ f]`.
    pub(super) fn wave_picture(&self) -> String {
        let mut picture = "waves".to_owned();
        for wave in 0..self.waves {
            write!(picture, "  {} [", wave + 1).ok();
            let mut first = true;
            for story in self.stories.iter().filter(|story| story.wave == wave) {
                if !first {
                    picture.push(' ');
                }
                first = false;
                write!(picture, "{} {}", story.state.glyph(), story.id).ok();
            }
            picture.push(']');
        }
        picture
    }

    pub(super) fn id_width(&self) -> usize {
        self.stories
            .iter()
            .filter(|story| story.state == State::Running)
            .map(|story| story.id.len())
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::describe::describe;
    use crate::progress::words::silence;

    #[test]
    fn the_tracker_follows_a_story() {
        let plan = epic_story_plan::StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                epic_story_plan::Story::new("a", "A", ["a"]),
                epic_story_plan::Story::new("b", "B", ["b"]).depending_on(["a"]),
            ],
        }
        .validate()
        .unwrap();
        let mut tracker = Tracker::new(&plan);
        tracker.apply(&Event::StoryStarted {
            story: "a".into(),
            slot: 0,
        });
        tracker.apply(&Event::TaskStarted {
            story: "a".into(),
            task: "t".into(),
            index: 1,
            of: 2,
        });
        let line = tracker.stories[0].line(1);
        assert!(line.starts_with("a  task 1/2  coding  0:0"), "{line}");
        assert_eq!(tracker.wave_picture(), "waves  1 [● a]  2 [· b]");
        tracker.apply(&Event::StoryFailed {
            story: "a".into(),
            reason: "r".into(),
        });
        assert_eq!(
            tracker.header(),
            "epic e: 0/2 done · 1 failed · 0 skipped · 0 running · 1 waiting"
        );
    }

    #[test]
    fn what_an_agent_does_and_a_stalled_or_looping_turn_are_told() {
        use epic_agents::Role;

        let plan = epic_story_plan::StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![epic_story_plan::Story::new("api", "API", ["api"])],
        }
        .validate()
        .unwrap();
        let mut tracker = Tracker::new(&plan);
        let doing = Event::TurnActivity {
            story: "api".into(),
            role: Role::Coder,
            turn: 2,
            tool: "Bash".into(),
            doing: "running `cargo test`".into(),
        };
        tracker.apply(&doing);
        let line = tracker.stories[0].line(3);
        assert!(
            line.starts_with("api  coder running `cargo test`"),
            "{line}"
        );
        assert_eq!(describe(&doing, false), None, "the live line shows it");
        assert_eq!(
            describe(&doing, true).as_deref(),
            Some("story api: coder running `cargo test`")
        );
        let stalled = |again| Event::TurnStalled {
            story: "api".into(),
            role: Role::Coder,
            seat: "claude".into(),
            turn: 2,
            silent_secs: 600,
            again,
        };
        assert_eq!(
            describe(&stalled(true), false).as_deref(),
            Some(
                "story api: coder turn 2 (claude) printed nothing for 10m; ended as stalled, \
                 running it again"
            )
        );
        assert!(
            describe(&stalled(false), false)
                .is_some_and(|line| line.ends_with("a second time: the story fails"))
        );
        let looping = Event::TurnLooping {
            story: "api".into(),
            role: Role::Coder,
            seat: "codex".into(),
            turn: 3,
            tool: "command_execution".into(),
            input: "\"npm test\"".into(),
            times: 5,
            again: true,
        };
        assert_eq!(
            describe(&looping, false).as_deref(),
            Some(
                "story api: coder turn 3 (codex) called `command_execution` with the same \
                 input 5 times in a row; ended as looping, running it again with a note"
            )
        );
        assert_eq!(silence(90), "1m30s");
        assert_eq!(silence(3600), "1h");
    }
}
