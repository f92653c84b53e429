//! `epic watch [EPIC]`: the epic live on the whole terminal (`epic-view` reads and draws it),
//! or, when standard output is not a terminal, its table once as plain text, or `--format
//! json`. Read-only and lock-free like `epic status`; the keys that give a story a command
//! queue it through [`people::queue`], as `epic answer`, `tell`, `stop` and `retry` do.
//!
//! The loop owns the terminal and only wires three things: keys and resizes from a thread
//! that reads the terminal, the state from a thread that reads it whenever it changes (kernel
//! notification, [`epic_view::Follow`]) and each second, and the view's state, which draws
//! itself. No file is read in the loop: a read arrives on the channel, as a key does. Raw mode and
//! the alternate screen are given back on every way out: a guard on drop, and a panic hook.

use std::io::IsTerminal as _;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use epic_land::RunPlan;
use epic_state_store::EpicDir;
use epic_view::{App, Board, Detail, Effect, Key, Known, LogTail, Verb};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::args::{Format, GlobalArgs, WatchArgs};
use crate::commands::json;
use crate::commands::people::{self, Request};
use crate::config::LastRun;
use crate::epics;
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::repo;

/// How often the state is read and drawn again with no change reported: elapsed times move,
/// and a run's start or end shows (its lock is no file change).
const TICK: Duration = Duration::from_secs(1);

/// Runs `epic watch`.
pub(crate) fn run(global: &GlobalArgs, args: &WatchArgs, _out: Output) -> Result<(), CommandError> {
    let format = global.format_for("watch", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.as_deref(), "watch")?;
    let mut log = LogTail::default();
    let board = read(&dir, &mut log)?;
    match format {
        Format::Json => output::data(&json(&board)),
        _ if !std::io::stdout().is_terminal() => output::data(&epic_view::plain(&board)),
        _ => live(&dir, board, log),
    }
}

/// The board of the epic `dir` now, with the plan and budget its last run recorded; `log`
/// takes in what its event log gained since the last read.
fn read(dir: &EpicDir, log: &mut LogTail) -> Result<Board, CommandError> {
    let repository = |error| CommandError::new(Kind::Repository, error);
    // A recorded plan or options file that cannot be read only costs the view its order, waves
    // and budget: the stories' own files still say where each is.
    let plan = epic_state_store::load::<RunPlan>(dir.run_plan())
        .ok()
        .flatten()
        .map(|recorded| recorded.plan);
    let budget_usd = epic_state_store::load::<LastRun>(dir.run_options())
        .ok()
        .flatten()
        .and_then(|last| last.0.budget_usd)
        .map(crate::config::Dollars::get);
    epic_view::read_board(
        dir,
        Known {
            plan: plan.as_ref(),
            budget_usd,
            now: jiff::Timestamp::now(),
        },
        log,
    )
    .map_err(repository)
}

/// What the loop waits on.
#[derive(Debug)]
enum Message {
    /// A key.
    Key(Key),
    /// Ctrl-C: leave, as `q` does.
    Interrupt,
    /// The terminal changed size.
    Resize,
    /// The state read: the board (or why it could not be), and the detail of `story`.
    Read(Box<Read>),
}

/// One read of the state, from the reader thread.
#[derive(Debug)]
struct Read {
    /// The board, or why it could not be read.
    board: Result<Board, String>,
    /// The story selected when it was read.
    story: Option<String>,
    /// That story's detail.
    detail: Detail,
}

/// The terminal in raw mode on the alternate screen, given back when dropped.
struct Screen {
    terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Screen")
    }
}

impl Screen {
    /// Takes the terminal, and makes a panic give it back before its message is printed.
    fn enter() -> Result<Self, CommandError> {
        let terminal_error = |error| CommandError::new(Kind::Repository, error);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        crossterm::terminal::enable_raw_mode().map_err(terminal_error)?;
        let mut screen = Self {
            terminal: Terminal::new(CrosstermBackend::new(std::io::stdout()))
                .map_err(terminal_error)?,
        };
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::cursor::Hide
        )
        .map_err(terminal_error)?;
        screen.terminal.clear().map_err(terminal_error)?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// The terminal given back: the main screen, the cursor, cooked mode. Done twice is harmless.
fn restore() {
    crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    )
    .ok();
    crossterm::terminal::disable_raw_mode().ok();
}

/// The view's key for a terminal key; `None` for keys it has no use for.
fn key(event: &crossterm::event::KeyEvent) -> Option<Message> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let key = match event.code {
        KeyCode::Char('c') if event.modifiers.contains(KeyModifiers::CONTROL) => {
            return Some(Message::Interrupt);
        }
        KeyCode::Char(char) => Key::Char(char),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    };
    Some(Message::Key(key))
}

/// The full-screen view until `q` (or Ctrl-C).
fn live(dir: &EpicDir, board: Board, log: LogTail) -> Result<(), CommandError> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let mut app = App::new(board, color);
    app.detail = detail(dir, app.selected.as_deref(), &log);
    let (send, messages) = mpsc::channel();
    let keys = send.clone();
    // Both threads end with the process; each stops early once the loop is gone.
    std::thread::spawn(move || {
        while let Ok(event) = crossterm::event::read() {
            let message = match event {
                Event::Key(event) => key(&event),
                Event::Resize(..) => Some(Message::Resize),
                _ => None,
            };
            if let Some(message) = message
                && keys.send(message).is_err()
            {
                break;
            }
        }
    });
    let (asks, asked) = mpsc::channel();
    let reader = Reader {
        dir: dir.clone(),
        log,
        selected: app.selected.clone(),
    };
    std::thread::spawn(move || reader.run(&asked, &send));
    let mut screen = Screen::enter()?;
    let terminal_error = |error| CommandError::new(Kind::Repository, error);
    loop {
        screen
            .terminal
            .draw(|frame| epic_view::draw(frame, &app))
            .map_err(terminal_error)?;
        let Ok(message) = messages.recv() else {
            return Ok(());
        };
        match message {
            Message::Interrupt => return Ok(()),
            Message::Resize => {
                screen.terminal.autoresize().map_err(terminal_error)?;
            }
            Message::Key(key) => match app.key(key) {
                Effect::Quit => return Ok(()),
                Effect::Selected => {
                    asks.send(app.selected.clone()).ok();
                }
                Effect::Send { verb, story, text } => {
                    app.message = Some(give(dir, verb, &story, text));
                    asks.send(app.selected.clone()).ok();
                }
                Effect::None => {}
            },
            Message::Read(read) => {
                let Read {
                    board,
                    story,
                    detail,
                } = *read;
                match board {
                    Ok(board) => app.set_board(board),
                    Err(error) => app.message = Some(error),
                }
                if app.selected == story {
                    app.detail = detail;
                } else {
                    // Another story was selected meanwhile, or this one is gone.
                    asks.send(app.selected.clone()).ok();
                }
            }
        }
    }
}

/// How long the reader waits for a change at a time, so that a story selected meanwhile has
/// its detail read soon.
const SLICE: Duration = Duration::from_millis(100);

/// The thread that reads the state, off the loop that draws and takes keys: on each change
/// the kernel reports, each second, and each time the loop asks (another story selected, a
/// command given) it reads the board and the selected story's detail and sends them over.
#[derive(Debug)]
struct Reader {
    dir: EpicDir,
    log: LogTail,
    selected: Option<String>,
}

impl Reader {
    /// Reads until the loop is gone: `asked` gives the story selected each time the loop wants
    /// a read now, and every read goes to `send`.
    fn run(mut self, asked: &mpsc::Receiver<Option<String>>, send: &mpsc::Sender<Message>) {
        let follow = epic_view::Follow::new(&self.dir);
        let mut due = Instant::now() + TICK;
        let mut now = false;
        loop {
            loop {
                match asked.try_recv() {
                    Ok(selected) => {
                        self.selected = selected;
                        now = true;
                    }
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => return,
                }
            }
            // A change, a second gone by (the clock moves elapsed times, and a run that takes
            // or leaves the lock changes no file the view is told about), or the loop's ask.
            if !now && !follow.wait(SLICE) && Instant::now() < due {
                continue;
            }
            let started = Instant::now();
            let board = read(&self.dir, &mut self.log).map_err(|error| said(&error));
            let message = Message::Read(Box::new(Read {
                board,
                detail: detail(&self.dir, self.selected.as_deref(), &self.log),
                story: self.selected.clone(),
            }));
            if send.send(message).is_err() {
                return;
            }
            now = false;
            // A read of a large epic takes a while (half a second at 10,000 stories), and a
            // busy run changes something all the time: the next read of a change waits as long
            // as this one took, so that following the run takes at most half a core rather than
            // all of one. The loop's ask is read at once.
            let took = started.elapsed();
            if took > SLICE {
                match asked.recv_timeout(took) {
                    Ok(selected) => {
                        self.selected = selected;
                        now = true;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
            due = Instant::now() + TICK;
        }
    }
}

/// The detail of `story`, if one is selected.
fn detail(dir: &EpicDir, story: Option<&str>, log: &LogTail) -> Detail {
    story
        .map(|story| epic_view::read_detail(dir, story, log))
        .unwrap_or_default()
}

/// A key's command queued as the `epic` command of its name would queue it: the line saying
/// what was queued, or why not.
fn give(dir: &EpicDir, verb: Verb, story: &str, text: String) -> String {
    let request = match verb {
        Verb::Answer => Request::Answer(text),
        Verb::Tell => Request::Tell(text),
        Verb::Stop => Request::Stop,
        Verb::Retry => Request::Retry { fresh: false },
        Verb::RetryFresh => Request::Retry { fresh: true },
    };
    match people::queue(dir, Some(story), request) {
        Ok(queued) => people::said(dir, &queued),
        Err(error) => said(&error),
    }
}

/// An error as one line.
fn said(error: &CommandError) -> String {
    error
        .cause()
        .unwrap_or_else(|| "the command failed".to_owned())
}
