//! The renderer thread: the executor's sink sends each event down a channel (it must not block),
//! and a thread of its own owns the terminal, keeps the [`Tracker`] and draws through the
//! [`View`] the [`Mode`] chooses.

use std::io::IsTerminal as _;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use epic_events::{Event, EventSink};
use epic_story_plan::ValidPlan;

use super::describe::describe;
use super::live::Live;
use super::output_lines::OutputLines;
use super::plain::Plain;
use super::silent::Silent;
use super::tracker::Tracker;
use super::view::View;

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
