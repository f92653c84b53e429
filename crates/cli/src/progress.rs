//! The view of a run as it goes, drawn from the executor's [`Event`]s.
//!
//! Progress goes to **stderr**, as cargo's does: stdout carries only the command's result (the
//! summary, or the report's JSON), so `epic run … > summary.txt` keeps it clean.
//!
//! - **Live** ([`Mode::Live`], stderr is a terminal): a header with the counts by state, the
//!   wave picture, and one line per running story (id, task i/n, current step, elapsed,
//!   estimated tokens), refreshed in place (indicatif); each transition is printed above it as
//!   a line that stays.
//! - **Plain** ([`Mode::Plain`], stderr is not a terminal, or `--no-progress`): the same
//!   transitions as timestamped lines, `HH:MM:SS story a: merged`, local time.
//! - **Silent** (`-q`): nothing.
//!
//! `-v` adds the minor steps (turns, gates, setup) and streams each agent's output as lines
//! prefixed by the story id (`a | …`).
//!
//! The executor's sink must not block, so events go through a channel to a thread of their own
//! that owns the terminal ([`ProgressDisplay`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use epic_executor::{Event, EventSink};
use epic_story_plan::ValidPlan;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output;
use crate::plan_file::count;

mod words;

use words::{elapsed, short, silence};
pub(crate) use words::{first_line, flaky, local, paused_until, thousands};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Redrawn in place on a terminal.
    Live,
    /// Timestamped lines.
    Plain,
    /// Nothing (`-q`).
    Silent,
}

impl Mode {
    /// The mode the options and stderr ask for: nothing with `-q`, lines with `--no-progress` or
    /// when stderr is not a terminal (or is a dumb one), live otherwise.
    pub(crate) fn choose(no_progress: bool, quiet: bool) -> Self {
        let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
        if quiet {
            Self::Silent
        } else if no_progress || dumb || !std::io::stderr().is_terminal() {
            Self::Plain
        } else {
            Self::Live
        }
    }
}

/// A run's progress shown on stderr, as its [`Mode`] draws it: the renderer thread and the way
/// to it.
#[derive(Debug)]
pub(crate) struct ProgressDisplay {
    sender: mpsc::Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

/// What the renderer gets.
#[derive(Debug)]
enum Message {
    Event(Event),
    Line(String),
}

impl ProgressDisplay {
    /// Starts showing the run of `plan`.
    pub(crate) fn start(plan: &ValidPlan, mode: Mode, verbose: bool) -> Self {
        let (sender, receiver) = mpsc::channel();
        let tracker = Tracker::new(plan);
        let thread = std::thread::Builder::new()
            .name("epic-progress".to_owned())
            .spawn(move || render(&receiver, tracker, mode, verbose))
            .ok();
        Self { sender, thread }
    }

    /// The sink to hand to the executor.
    pub(crate) fn sink(&self) -> EventSink {
        let sender = self.sender.clone();
        std::sync::Arc::new(move |event| {
            // The renderer ends only after the run: a failed send means nobody is looking.
            sender.send(Message::Event(event)).ok();
        })
    }

    /// A line of our own among the progress (the interrupt notice).
    pub(crate) fn liner(&self) -> impl Fn(String) + Send + Sync + 'static {
        let sender = self.sender.clone();
        move |text| {
            sender.send(Message::Line(text)).ok();
        }
    }

    /// Waits until everything sent is shown, then clears the live view.
    pub(crate) fn finish(mut self) {
        let (sender, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.sender, sender));
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

/// The renderer thread's loop.
fn render(receiver: &mpsc::Receiver<Message>, mut tracker: Tracker, mode: Mode, verbose: bool) {
    let mut view: Box<dyn View> = match mode {
        Mode::Live => Box::new(Live::new()),
        Mode::Plain => Box::new(Plain),
        Mode::Silent => Box::new(Silent),
    };
    let mut output = OutputLines::default();
    loop {
        match receiver.recv_timeout(Duration::from_millis(150)) {
            Ok(Message::Event(event)) => {
                tracker.apply(&event);
                if verbose && let Event::TurnOutput { story, text, .. } = &event {
                    for line in output.push(story, text) {
                        view.line(&line);
                    }
                    continue;
                }
                if verbose && let Event::TurnEnded { story, .. } = &event {
                    for line in output.flush(story) {
                        view.line(&line);
                    }
                }
                if let Some(line) = describe(&event, verbose) {
                    view.line(&line);
                }
                view.refresh(&tracker);
            }
            Ok(Message::Line(text)) => view.line(&text),
            Err(RecvTimeoutError::Timeout) => view.refresh(&tracker),
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    view.finish();
}

/// A way of showing progress.
trait View {
    /// A line that stays.
    fn line(&mut self, text: &str);
    /// The picture of the run changed, or time passed.
    fn refresh(&mut self, tracker: &Tracker);
    /// The run is over.
    fn finish(&mut self);
}

/// `-q`: nothing.
struct Silent;

impl View for Silent {
    fn line(&mut self, _: &str) {}
    fn refresh(&mut self, _: &Tracker) {}
    fn finish(&mut self) {}
}

/// Timestamped lines.
struct Plain;

impl View for Plain {
    fn line(&mut self, text: &str) {
        output::diagnostic(&format!("{} {text}\n", clock()));
    }
    fn refresh(&mut self, _: &Tracker) {}
    fn finish(&mut self) {}
}

/// The local wall-clock time, `HH:MM:SS`.
fn clock() -> String {
    jiff::ZonedDateTime::now().strftime("%H:%M:%S").to_string()
}

/// The live view: lines above, a region redrawn in place below.
struct Live {
    multi: MultiProgress,
    header: ProgressBar,
    waves: ProgressBar,
    running: BTreeMap<String, ProgressBar>,
    style: ProgressStyle,
}

impl Live {
    fn new() -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        let plain = ProgressStyle::with_template("{wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let header = multi.add(ProgressBar::new_spinner().with_style(plain.clone()));
        let waves = multi.add(ProgressBar::new_spinner().with_style(plain));
        let style = ProgressStyle::with_template("  {spinner} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        Self {
            multi,
            header,
            waves,
            running: BTreeMap::new(),
            style,
        }
    }
}

impl View for Live {
    fn line(&mut self, text: &str) {
        self.multi.println(text).ok();
    }

    fn refresh(&mut self, tracker: &Tracker) {
        self.header.set_message(tracker.header());
        self.waves.set_message(tracker.wave_picture());
        let running: Vec<&StoryView> = tracker
            .stories
            .iter()
            .filter(|story| story.state == State::Running)
            .collect();
        self.running.retain(|id, bar| {
            let keep = running.iter().any(|story| story.id == *id);
            if !keep {
                bar.finish_and_clear();
            }
            keep
        });
        let width = tracker.id_width();
        for story in running {
            let bar = self.running.entry(story.id.clone()).or_insert_with(|| {
                self.multi
                    .add(ProgressBar::new_spinner().with_style(self.style.clone()))
            });
            bar.set_message(story.line(width));
            bar.tick();
        }
    }

    fn finish(&mut self) {
        for bar in self.running.values() {
            bar.finish_and_clear();
        }
        self.header.finish_and_clear();
        self.waves.finish_and_clear();
        self.multi.clear().ok();
    }
}

/// Where one story stands, as the view shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
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
struct StoryView {
    id: String,
    wave: usize,
    state: State,
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
    fn line(&self, width: usize) -> String {
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
struct Tracker {
    epic: String,
    stories: Vec<StoryView>,
    waves: usize,
}

impl Tracker {
    fn new(plan: &ValidPlan) -> Self {
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
        Self {
            epic: plan.plan().epic_id.clone(),
            stories,
            waves: numbers.iter().max().map_or(0, |max| max + 1),
        }
    }

    fn story(&mut self, id: &str) -> Option<&mut StoryView> {
        self.stories.iter_mut().find(|story| story.id == id)
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

    fn apply(&mut self, event: &Event) {
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
            Event::StoryFailed { story, .. } => self.set(story, State::Failed),
            Event::StorySkipped { story, .. } => self.set(story, State::Skipped),
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
    fn header(&self) -> String {
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
    fn wave_picture(&self) -> String {
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

    fn id_width(&self) -> usize {
        self.stories
            .iter()
            .filter(|story| story.state == State::Running)
            .map(|story| story.id.len())
            .max()
            .unwrap_or(0)
    }
}

/// Agents' output cut into lines, per story (a chunk may end mid-line).
#[derive(Debug, Default)]
struct OutputLines {
    partial: BTreeMap<String, String>,
}

impl OutputLines {
    /// The complete lines `text` ends, each `story | line`.
    fn push(&mut self, story: &str, text: &str) -> Vec<String> {
        let buffer = self.partial.entry(story.to_owned()).or_default();
        buffer.push_str(text);
        let mut lines = Vec::new();
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            lines.push(format!("{story} | {}", line.trim_end()));
        }
        lines
    }

    /// The unfinished last line of `story`'s turn, if any.
    fn flush(&mut self, story: &str) -> Vec<String> {
        self.partial
            .remove(story)
            .filter(|rest| !rest.trim().is_empty())
            .map(|rest| vec![format!("{story} | {}", rest.trim_end())])
            .unwrap_or_default()
    }
}

/// The line an event is shown as, if it is shown (`-v` shows the minor steps).
#[expect(
    clippy::too_many_lines,
    reason = "one arm per event kind, each a line of text: splitting it would only scatter them"
)]
fn describe(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::RunStarted {
            epic,
            epic_branch,
            stories,
            concurrency,
            epic_worktree,
            ..
        } => {
            let mut line = format!(
                "epic {epic}: {} into {epic_branch}, {concurrency} at once",
                count(*stories, "story", "stories")
            );
            if verbose {
                write!(line, " (epic worktree {epic_worktree})").ok();
            }
            line
        }
        Event::BaselineChecked {
            commit,
            passed,
            failed,
            cached,
        } => {
            let cached = if *cached { " (cached)" } else { "" };
            if failed.is_empty() {
                format!(
                    "baseline: {} green on {}{cached}",
                    count(passed.len(), "gate", "gates"),
                    short(commit)
                )
            } else {
                format!(
                    "baseline: failing on {}{cached}: {}",
                    short(commit),
                    failed.join(", ")
                )
            }
        }
        Event::EpicGate {
            story,
            command,
            passed,
            status,
            ..
        } => {
            if *passed && !verbose {
                return None;
            }
            let result = if *passed { "passed" } else { status.as_str() };
            match story {
                Some(story) => {
                    format!("story {story}: gate `{command}` on the epic branch: {result}")
                }
                None => format!("baseline: gate `{command}`: {result}"),
            }
        }
        Event::StoryAlreadyMerged { story, .. } => {
            format!("story {story}: merged on a previous run")
        }
        Event::StoryStarted { story, .. } => format!("story {story}: started"),
        Event::StoryPrepared {
            story,
            how,
            branch,
            worktree,
        } => {
            if verbose {
                format!("story {story}: worktree {worktree} on {branch} ({how})")
            } else if how == "fresh" {
                return None;
            } else {
                format!("story {story}: {how} on its branch {branch}")
            }
        }
        Event::SlotSwitched {
            story,
            slot,
            commit,
            ..
        } if verbose => {
            format!(
                "story {story}: slot {slot} switched to its branch at {} and proven clean",
                short(commit)
            )
        }
        Event::SlotRetired {
            story, worktree, ..
        } if verbose => {
            format!("story {story}: its worktree leaves the slots' rotation, kept at {worktree}")
        }
        Event::WorktreeSeeded { story, paths } if verbose => {
            format!(
                "story {story}: copied what .worktreeinclude names: {}",
                paths.join(", ")
            )
        }
        Event::StoryCaughtUp { story, commit } if verbose => {
            format!(
                "story {story}: caught up with the epic branch ({})",
                short(commit)
            )
        }
        Event::SetupRan {
            story,
            command,
            passed,
            status,
            ..
        } if verbose || !passed => {
            let result = if *passed { "passed" } else { status.as_str() };
            format!("story {story}: setup `{command}`: {result}")
        }
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
        Event::GatePassed { story, command, .. } if verbose => {
            format!("story {story}: gate `{command}` passed")
        }
        Event::GateFailed {
            story,
            command,
            status,
            ..
        } if verbose => format!("story {story}: gate `{command}` failed: {status}"),
        Event::GateFlaky {
            story,
            command,
            runs,
            status,
            output,
        } => {
            let whose = story
                .as_ref()
                .map_or_else(|| "epic".to_owned(), |story| format!("story {story}"));
            format!("{whose}: {}", flaky(command, *runs, status, output))
        }
        Event::GateLeftovers {
            story,
            command,
            paths,
        } => {
            let whose = story
                .as_ref()
                .map_or_else(|| "epic".to_owned(), |story| format!("story {story}"));
            let shown = paths.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            let more = match paths.len() {
                0..=3 => String::new(),
                n => format!(" and {} more", n - 3),
            };
            format!(
                "{whose}: `{command}` left {shown}{more}; removed (not the story's work: add \
                 them to .gitignore to keep them)"
            )
        }
        Event::TurnStarted {
            story,
            role,
            seat,
            turn,
            ..
        } if verbose => format!("story {story}: {role} turn {turn} ({seat})"),
        Event::TurnEnded {
            story,
            role,
            turn,
            ok,
            estimated_tokens,
            reported,
            error,
        } if verbose || !ok => match error {
            Some(error) => format!(
                "story {story}: {role} turn {turn} failed: {}",
                first_line(error)
            ),
            None if *reported => format!(
                "story {story}: {role} turn {turn} ended ({} tokens, reported)",
                thousands(*estimated_tokens)
            ),
            None => format!(
                "story {story}: {role} turn {turn} ended (~{} tokens, est.)",
                thousands(*estimated_tokens)
            ),
        },
        Event::TurnRetried {
            story,
            turn,
            attempt,
            delay_ms,
            reason,
        } => format!(
            "story {story}: turn {turn} attempt {attempt} failed, retrying in {:.1}s: {}",
            Duration::from_millis(*delay_ms).as_secs_f64(),
            first_line(reason)
        ),
        Event::TurnActivity {
            story, role, doing, ..
        } if verbose => format!("story {story}: {role} {doing}"),
        Event::TurnStalled {
            story,
            role,
            seat,
            turn,
            silent_secs,
            again,
        } => format!(
            "story {story}: {role} turn {turn} ({seat}) printed nothing for {}; ended as stalled, \
             {}",
            silence(*silent_secs),
            if *again {
                "running it again"
            } else {
                "a second time: the story fails"
            }
        ),
        Event::TurnLooping {
            story,
            role,
            seat,
            turn,
            tool,
            times,
            again,
            ..
        } => format!(
            "story {story}: {role} turn {turn} ({seat}) called `{tool}` with the same input \
             {times} times in a row; ended as looping, {}",
            if *again {
                "running it again with a note"
            } else {
                "a second time: the story fails"
            }
        ),
        Event::Blocked { story, need } => format!("story {story}: blocked on {need}"),
        Event::BlockedRejected {
            story, need, by, ..
        } => format!(
            "story {story}: BLOCKED_ON {need} rejected by the {}; the coder carries on",
            by.as_str()
        ),
        Event::Note { story, message } => format!("story {story}: {}", first_line(message)),
        Event::PerimeterRestored { story, paths } => format!(
            "story {story}: put back {} outside its perimeter: {}",
            count(paths.len(), "path", "paths"),
            paths.join(", ")
        ),
        Event::StoryJudged {
            story,
            round,
            cleared,
            issues,
        } => {
            if *cleared {
                format!("story {story}: judge round {round}: cleared")
            } else {
                format!(
                    "story {story}: judge round {round}: not cleared: {}",
                    issues.join("; ")
                )
            }
        }
        Event::MergeStarted { story, .. } if verbose => {
            format!("story {story}: merging into the epic branch")
        }
        Event::MergeConflicted { story, paths } => {
            format!("story {story}: merge conflicted in {}", paths.join(", "))
        }
        Event::StoryRolledBack { story, reason, .. } => {
            format!("story {story}: merge undone: {}", first_line(reason))
        }
        Event::StoryMerged {
            story,
            in_place: Some(in_place),
            ..
        } => format!(
            "story {story}: already in place, nothing merged (evidence: {})",
            in_place.paths()
        ),
        Event::StoryMerged { story, .. } => format!("story {story}: merged"),
        Event::MergeQueued { story } if verbose => {
            format!("story {story}: waiting to merge")
        }
        Event::MergeBatch {
            batch,
            stories,
            checkpoint,
        } => format!(
            "merge batch {batch}: {} merged together on {}: {}",
            count(stories.len(), "story", "stories"),
            short(checkpoint),
            stories.join(", ")
        ),
        Event::BatchGated {
            batch,
            step,
            stories,
            commit,
            passed,
        } => {
            let verdict = if *passed { "green" } else { "red" };
            if *step == 0 {
                format!("merge batch {batch}: gates {verdict} on {}", short(commit))
            } else {
                format!(
                    "merge batch {batch}: bisection step {step}: gates {verdict} on {} with {}",
                    short(commit),
                    stories.join(", ")
                )
            }
        }
        Event::BatchProven {
            batch,
            stories,
            commit,
        } => format!(
            "merge batch {batch}: proven together on {}: {}",
            short(commit),
            stories.join(", ")
        ),
        Event::CulpritPinned { batch, story, .. } => {
            format!("merge batch {batch}: the red gates are pinned on story {story}")
        }
        event @ Event::MergeRevision { .. } => crate::revision::line(event),
        Event::WorktreeRemoved { story, worktree } if verbose => {
            format!("story {story}: removed its worktree {worktree}")
        }
        Event::StoryFailed { story, reason } => {
            format!("story {story}: failed: {}", first_line(reason))
        }
        Event::StorySkipped { story, reason } => {
            format!("story {story}: skipped: {}", first_line(reason))
        }
        Event::HookFailed { story, status } => {
            format!("story {story}: the board hook failed: {status}")
        }
        Event::SeatPaused {
            seat,
            story,
            until,
            since,
            reason,
            message,
        } => format!(
            "story {story}: {}: {}",
            paused_until(seat, since, until, reason),
            first_line(message)
        ),
        Event::SeatResumed { seat } => format!("seat {seat}: resumed"),
        Event::RunNote { message } => format!("note: {}", first_line(message)),
        Event::BudgetReached { message, .. } => {
            format!(
                "{message}: no new agent turn starts; a rerun with a larger --budget-usd carries on"
            )
        }
        Event::RunFinished {
            done,
            failed,
            skipped,
            interrupted,
        } => format!(
            "{}: {done} done, {failed} failed, {skipped} skipped",
            if *interrupted {
                "interrupted"
            } else {
                "finished"
            }
        ),
        _ => return None,
    };
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_reads_in_local_time() {
        let until = jiff::Timestamp::now()
            .to_zoned_datetime(jiff::tz::TimeZone::system())
            .with()
            .hour(23)
            .minute(59)
            .build()
            .unwrap();
        assert_eq!(
            paused_until("claude", "", &until.timestamp().to_string(), "usage limit"),
            "paused until 23:59 (claude: usage limit)"
        );
        let since = until.with().hour(23).minute(41).build().unwrap();
        assert_eq!(
            paused_until(
                "codex",
                &since.timestamp().to_string(),
                &until.timestamp().to_string(),
                "outage"
            ),
            "paused: codex: API unreachable since 23:41, next probe 23:59"
        );
        assert_eq!(
            paused_until("codex", "", "2020-01-02T03:04:05Z", "outage")
                .split_once(" (")
                .map(|(_, seat)| seat),
            Some("codex: outage)")
        );
    }

    #[test]
    fn a_batch_its_bisection_and_its_culprit_read_as_lines() {
        let stories = vec!["a".to_owned(), "b".to_owned()];
        let line = |event: Event| describe(&event, false).unwrap();
        assert_eq!(
            line(Event::MergeBatch {
                batch: 2,
                stories: stories.clone(),
                checkpoint: "0123456789abcdef".into(),
            }),
            "merge batch 2: 2 stories merged together on 0123456789: a, b"
        );
        assert_eq!(
            line(Event::BatchGated {
                batch: 2,
                step: 0,
                stories: stories.clone(),
                commit: "fedcba9876543210".into(),
                passed: false,
            }),
            "merge batch 2: gates red on fedcba9876"
        );
        assert_eq!(
            line(Event::BatchGated {
                batch: 2,
                step: 1,
                stories: vec!["a".to_owned()],
                commit: "fedcba9876543210".into(),
                passed: true,
            }),
            "merge batch 2: bisection step 1: gates green on fedcba9876 with a"
        );
        assert_eq!(
            line(Event::BatchProven {
                batch: 2,
                stories: vec!["a".to_owned()],
                commit: "fedcba9876543210".into(),
            }),
            "merge batch 2: proven together on fedcba9876: a"
        );
        assert_eq!(
            line(Event::CulpritPinned {
                batch: 2,
                story: "b".into(),
                commit: "fedcba9876543210".into(),
            }),
            "merge batch 2: the red gates are pinned on story b"
        );
        assert!(describe(&Event::MergeQueued { story: "a".into() }, false).is_none());
    }

    #[test]
    fn output_is_cut_into_lines_per_story() {
        let mut lines = OutputLines::default();
        assert!(lines.push("a", "hel").is_empty());
        assert_eq!(lines.push("b", "one\ntw"), ["b | one"]);
        assert_eq!(lines.push("a", "lo\nworld\n"), ["a | hello", "a | world"]);
        assert_eq!(lines.flush("b"), ["b | tw"]);
        assert!(lines.flush("a").is_empty());
    }

    #[test]
    fn task_titles_are_quoted_with_their_quotes_escaped() {
        let line = describe(
            &Event::TaskCommitted {
                story: "a".into(),
                task: r#"use "compose""#.into(),
                commit: None,
            },
            false,
        );
        assert_eq!(
            line.as_deref(),
            Some(r#"story a: committed "use \"compose\"""#)
        );
    }

    #[test]
    fn a_turn_says_whether_its_tokens_were_reported_or_estimated() {
        let ended = |reported| Event::TurnEnded {
            story: "a".into(),
            role: epic_agents::Role::Coder,
            turn: 2,
            ok: true,
            estimated_tokens: 1234,
            reported,
            error: None,
        };
        assert_eq!(
            describe(&ended(true), true).as_deref(),
            Some("story a: coder turn 2 ended (1.2k tokens, reported)")
        );
        assert_eq!(
            describe(&ended(false), true).as_deref(),
            Some("story a: coder turn 2 ended (~1.2k tokens, est.)")
        );
    }

    #[test]
    fn a_flaky_gate_is_named_with_its_first_run() {
        let flaky = |story: Option<&str>| Event::GateFlaky {
            story: story.map(String::from),
            command: "pytest".into(),
            runs: 2,
            status: "exit code 1".into(),
            output: "collected 3 items\n\nFAILED test_port.py::test_bind\n".into(),
        };
        assert_eq!(
            describe(&flaky(Some("a")), false).as_deref(),
            Some(
                "story a: gate `pytest` is flaky: red (exit code 1: FAILED \
                 test_port.py::test_bind), green on run 2; passed"
            )
        );
        assert!(
            describe(&flaky(None), false)
                .is_some_and(|line| line.starts_with("epic: gate `pytest` is flaky"))
        );
    }

    #[test]
    fn leftovers_are_named_with_the_way_to_keep_them() {
        let line = describe(
            &Event::GateLeftovers {
                story: Some("a".into()),
                command: "pytest".into(),
                paths: ["a.pyc", "b.pyc", "c.pyc", "report.xml", "x"]
                    .map(String::from)
                    .to_vec(),
            },
            false,
        );
        assert_eq!(
            line.as_deref(),
            Some(
                "story a: `pytest` left a.pyc, b.pyc, c.pyc and 2 more; removed (not the \
                 story's work: add them to .gitignore to keep them)"
            )
        );
    }

    #[test]
    fn figures_for_people() {
        assert_eq!(elapsed(Duration::from_secs(7)), "0:07");
        assert_eq!(elapsed(Duration::from_secs(3723)), "1:02:03");
        assert_eq!(thousands(950), "950");
        assert_eq!(thousands(1234), "1.2k");
        assert_eq!(thousands(3_400_000), "3.4M");
        assert_eq!(first_line("a\nb"), "a …");
    }

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
