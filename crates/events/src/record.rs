//! What a run leaves on disk besides the story states: the event log (`events.jsonl`), the
//! report (`report.json`, `report.md`) and the board (`board.md`, and the hook board that pipes
//! each transition into a command).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use epic_report::{EpicReport, format_usd};
use epic_state_store::{EpicDir, EventLog};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::event::{Event, EventSink, LoggedEvent};
use epic_process::offload;
use epic_process::{self as process, Ending, Limits, Spec};

/// `report.json` as a state-store document: the report inside the versioned envelope
/// `{"version":1,"data":…}`.
///
/// ```
/// use epic_events::ReportDocument;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("report.json");
/// epic_state_store::save(&path, &ReportDocument(epic_report::EpicReport::new("e", "epic/e")))?;
/// let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
/// assert_eq!(json["version"], 1);
/// assert_eq!(json["data"]["epic_id"], "e");
/// let back = epic_state_store::load::<ReportDocument>(&path)?.expect("written");
/// assert_eq!(back.0.epic_branch, "epic/e");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(transparent)]
pub struct ReportDocument(pub EpicReport);

impl epic_state_store::Document for ReportDocument {
    const NAME: &'static str = "report";
    const VERSION: u32 = epic_report::REPORT_VERSION;
    const REMEDY: &'static str = "remove it; the next `epic run` writes it again";
}

/// A sink that appends every event but the output chunks to `log` as `{"at":…,"kind":…,…}`
/// and passes every event on to `next`. The first append that fails is told to `next` as a
/// [`Event::RunNote`]; later ones are dropped silently (the run goes on without its log).
pub fn logging_sink(log: EventLog, next: EventSink) -> EventSink {
    let log = Arc::new(log);
    let failed = Arc::new(AtomicBool::new(false));
    Arc::new(move |event: Event| {
        if !matches!(event, Event::TurnOutput { .. }) {
            let appended = stamped(&event)
                .map_err(|error| error.to_string())
                .and_then(|line| log.append(&line).map_err(|error| error.to_string()));
            if let Err(error) = appended
                && !failed.swap(true, Ordering::Relaxed)
            {
                next(Event::RunNote {
                    message: format!(
                        "events can no longer be appended to `{}`: {error}",
                        log.path().display()
                    ),
                });
            }
        }
        next(event);
    })
}

/// The least time between two writes of `board.md`, or of the report (the executor's): each
/// renders the whole epic, so on an epic of thousands of stories they are written at most once
/// a second (and at most a twentieth of the time, [`pace`]), not once a story.
pub const RENDER_EVERY: Duration = Duration::from_secs(1);

/// How long to wait after a whole-epic write (`board.md`, the report) that took `took` before
/// the next: [`RENDER_EVERY`], or twenty times the write where that is longer, so that such
/// writes take at most a twentieth of the time however large the epic.
pub fn pace(took: Duration) -> Duration {
    RENDER_EVERY.max(took.saturating_mul(20))
}

/// Writes `board.md` as `cards` stand each time `moved` says they moved, on the blocking pool,
/// then rests for [`pace`] (moves meanwhile are in the next write; `closing` ends the rest); a
/// write that fails is a [`Event::RunNote`]. Ends once the sender is dropped and the last
/// moves written.
async fn write_boards(
    path: PathBuf,
    (title, cards): (String, Arc<Mutex<Vec<Card>>>),
    mut moved: watch::Receiver<()>,
    closing: CancellationToken,
    events: EventSink,
) {
    while moved.changed().await.is_ok() {
        moved.borrow_and_update();
        let (path, events, title, cards) = (
            path.clone(),
            Arc::clone(&events),
            title.clone(),
            Arc::clone(&cards),
        );
        let started = std::time::Instant::now();
        offload::blocking(move || {
            let text = render_board(&title, &lock_cards(&cards));
            if let Err(error) = epic_state_store::write_atomic(&path, text.as_bytes()) {
                events(Event::RunNote {
                    message: format!(
                        "the board `{}` could not be written: {}",
                        path.display(),
                        epic_process::chain(&error)
                    ),
                });
            }
        })
        .await
        .ok();
        tokio::select! {
            () = tokio::time::sleep(pace(started.elapsed())) => {}
            () = closing.cancelled() => {}
        }
    }
}

fn lock_cards(cards: &Mutex<Vec<Card>>) -> std::sync::MutexGuard<'_, Vec<Card>> {
    cards
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The event as a JSON object with its `"at"` timestamp ([`LoggedEvent`]): RFC 3339 in UTC, to
/// the millisecond (a story's steps are milliseconds apart).
fn stamped(event: &Event) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(LoggedEvent {
        at: format!("{:.3}", epic_report::Timestamp::now()),
        event: event.clone(),
    })
}

/// Writes `report.json` and `report.md`.
pub fn write_report(dir: &EpicDir, report: &ReportDocument) -> Result<(), String> {
    // Taken by reference to the document: a copy of a report of thousands of stories, made at
    // each rewrite, was a large transient allocation of its own.
    epic_state_store::save(dir.report_json(), report)
        .map_err(|error| epic_process::chain(&error))?;
    epic_state_store::write_atomic(
        dir.report_md(),
        epic_report::render_markdown(&report.0).as_bytes(),
    )
    .map_err(|error| epic_process::chain(&error))
}

/// Where a story stands on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// Not started yet.
    Planned,
    /// Being worked.
    Active,
    /// Merged into the epic branch.
    Done,
    /// Failed.
    Failed,
    /// Not run: a dependency failed, or the run stopped first.
    Skipped,
}

impl Column {
    const ORDER: [Self; 5] = [
        Self::Active,
        Self::Planned,
        Self::Done,
        Self::Failed,
        Self::Skipped,
    ];

    fn heading(self) -> &'static str {
        match self {
            Self::Planned => "Planned",
            Self::Active => "Active",
            Self::Done => "Done",
            Self::Failed => "Failed",
            Self::Skipped => "Skipped",
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Active => "active",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// One story on the board, and the JSON a hook reads on its standard input.
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    epic: String,
    story: String,
    title: String,
    wave: usize,
    status: Column,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_cost_usd: Option<f64>,
}

/// A transition to record.
#[derive(Debug, Default)]
pub struct Move {
    /// The story's branch, once it has one.
    pub branch: Option<String>,
    /// A line on what happened (a failure's reason).
    pub detail: Option<String>,
    /// The story's tokens so far, estimated where the agents did not report them.
    pub estimated_tokens: Option<u64>,
    /// The story's cost so far, in US dollars.
    pub estimated_cost_usd: Option<f64>,
}

/// The board: `board.md`, rewritten as stories move (at most once every [`RENDER_EVERY`]: it
/// lists every story), and the optional hook that gets each transition as JSON, at once. Owned
/// by the run loop alone; one writer task renders and writes `board.md`, so its writes are
/// serialised and the latest moves are in the last one written.
#[expect(
    missing_debug_implementations,
    reason = "holds a writer task and channels, nothing worth printing"
)]
pub struct Board {
    title: String,
    /// The cards, shared with the writer task, which renders them off the loop.
    cards: Arc<Mutex<Vec<Card>>>,
    hook: Option<mpsc::UnboundedSender<Card>>,
    worker: Option<JoinHandle<()>>,
    /// Tells `write_boards` the cards moved; `None` once closed.
    file: Option<watch::Sender<()>>,
    /// Ends the writer's rest between writes: the run is over, the last write is due now.
    closing: CancellationToken,
    /// The task that writes `board.md`.
    writer: Option<JoinHandle<()>>,
    /// Moves not yet in `board.md` (see [`flush`](Self::flush)).
    dirty: bool,
}

impl Board {
    /// A board of every story, all planned.
    pub fn new(
        dir: &EpicDir,
        plan: &epic_story_plan::ValidPlan,
        hook: Option<(String, Duration)>,
        cwd: PathBuf,
        events: EventSink,
    ) -> Self {
        let waves = plan.wave_numbers();
        let cards = plan
            .plan()
            .stories
            .iter()
            .zip(waves)
            .map(|(story, wave)| Card {
                epic: dir.epic_id().to_owned(),
                story: story.id.clone(),
                title: story.title.clone(),
                wave: wave + 1,
                status: Column::Planned,
                branch: None,
                detail: None,
                estimated_tokens: None,
                estimated_cost_usd: None,
            })
            .collect();
        let (hook, worker) = match hook {
            Some((command, timeout)) => {
                let (sender, receiver) = mpsc::unbounded_channel();
                let worker = tokio::spawn(run_hooks(
                    command,
                    timeout,
                    cwd,
                    receiver,
                    Arc::clone(&events),
                ));
                (Some(sender), Some(worker))
            }
            None => (None, None),
        };
        let title = format!("Epic: {}", dir.epic_id());
        let cards = Arc::new(Mutex::new(cards));
        let (file, moved) = watch::channel(());
        let closing = CancellationToken::new();
        let writer = tokio::spawn(write_boards(
            dir.board(),
            (title.clone(), Arc::clone(&cards)),
            moved,
            closing.clone(),
            events,
        ));
        Self {
            title,
            cards,
            hook,
            worker,
            file: Some(file),
            closing,
            writer: Some(writer),
            dirty: false,
        }
    }

    /// Sends every card to the hook and writes the file: the start of a run.
    pub fn publish_all(&mut self) {
        if let Some(hook) = &self.hook {
            for card in lock_cards(&self.cards).iter() {
                hook.send(card.clone()).ok();
            }
        }
        self.dirty = false;
        self.write();
    }

    /// Moves story `index` to `column`: at once for the hook, in `board.md` at the next
    /// [`flush`](Self::flush).
    pub fn set(&mut self, index: usize, column: Column, change: Move) {
        let mut cards = lock_cards(&self.cards);
        let Some(card) = cards.get_mut(index) else {
            return;
        };
        card.status = column;
        if change.branch.is_some() {
            card.branch = change.branch;
        }
        // A new start keeps the old detail, as a board does; any other move replaces it.
        if column != Column::Active || change.detail.is_some() {
            card.detail = change.detail;
        }
        card.estimated_tokens = change.estimated_tokens.or(card.estimated_tokens);
        card.estimated_cost_usd = change.estimated_cost_usd.or(card.estimated_cost_usd);
        if let Some(hook) = &self.hook {
            hook.send(card.clone()).ok();
        }
        self.dirty = true;
    }

    /// Has `board.md` written if a move is not in it yet. The run loop calls it once its ready
    /// stories are launched, and the rendering and the write (and its fsync) happen off the
    /// loop, in `write_boards`: it never delays a story's start, and a burst of moves, or of
    /// flushes while a write is under way or within [`pace`] of the last, costs one write.
    pub fn flush(&mut self) {
        if std::mem::take(&mut self.dirty) {
            self.write();
        }
    }

    /// Lets the last write of `board.md` and the hook finish the transitions they were sent (each
    /// hook run under its deadline): `board.md` is as the board stands once it returns.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the writer and the hook worker running until their queues are
    /// empty.
    pub async fn close(mut self) {
        self.flush();
        self.file = None;
        self.closing.cancel();
        if let Some(writer) = self.writer.take() {
            writer.await.ok();
        }
        self.hook = None;
        if let Some(worker) = self.worker.take() {
            worker.await.ok();
        }
    }

    /// Tells `write_boards` the board moved.
    fn write(&self) {
        if let Some(file) = &self.file {
            file.send_replace(());
        }
    }

    /// `board.md`: a count line, then one section per non-empty column.
    pub fn render(&self) -> String {
        render_board(&self.title, &lock_cards(&self.cards))
    }
}

/// `board.md` of the epic `title` with `cards`: a count line, then one section per non-empty
/// column.
fn render_board(title: &str, cards: &[Card]) -> String {
    let mut out = format!("# Board: {title}\n\n");
    let counts: Vec<String> = Column::ORDER
        .iter()
        .map(|column| {
            let n = cards.iter().filter(|card| card.status == *column).count();
            format!("{}: {n}", column.as_str())
        })
        .collect();
    out.push_str(&counts.join(" · "));
    out.push_str(
        "\n\nAll token and cost figures are ESTIMATES (from character counts), not \
         measurements.\n",
    );
    for column in Column::ORDER {
        let cards: Vec<&Card> = cards.iter().filter(|card| card.status == column).collect();
        if cards.is_empty() {
            continue;
        }
        let _ = write!(out, "\n## {}\n\n", column.heading());
        for card in cards {
            let _ = write!(
                out,
                "- **{}** — {} (wave: {})",
                card.story, card.title, card.wave
            );
            if let Some(branch) = &card.branch {
                let _ = write!(out, " branch `{branch}`");
            }
            let mut usage = Vec::new();
            if let Some(tokens) = card.estimated_tokens {
                usage.push(format!("~{tokens} tokens"));
            }
            if let Some(cost) = card.estimated_cost_usd {
                usage.push(format!("~${}", format_usd(cost)));
            }
            if !usage.is_empty() {
                let _ = write!(out, " ({} — estimated)", usage.join(", "));
            }
            if let Some(detail) = &card.detail {
                let detail: Vec<&str> = detail.split_whitespace().collect();
                let _ = write!(out, " — {}", detail.join(" "));
            }
            out.push('\n');
        }
    }
    out
}

/// Runs the hook once per card, in order, each as `sh -c COMMAND` with the card's JSON on
/// standard input; a failure is an [`Event::HookFailed`], never more.
async fn run_hooks(
    command: String,
    timeout: Duration,
    cwd: PathBuf,
    mut cards: mpsc::UnboundedReceiver<Card>,
    events: EventSink,
) {
    while let Some(card) = cards.recv().await {
        let json = serde_json::to_string(&card).unwrap_or_default();
        let spec = Spec {
            program: "sh".into(),
            args: vec!["-c".into(), command.clone().into()],
            cwd: cwd.clone(),
            env: vec![
                (OsString::from("EPIC_EPIC"), Some(card.epic.clone().into())),
                (
                    OsString::from("EPIC_STORY"),
                    Some(card.story.clone().into()),
                ),
                (
                    OsString::from("EPIC_BOARD_STATUS"),
                    Some(card.status.as_str().into()),
                ),
            ],
            stdin: Some(json.into_bytes()),
        };
        let status = run_hook(&spec, timeout).await;
        if let Some(status) = status {
            events(Event::HookFailed {
                story: card.story.clone(),
                status,
            });
        }
    }
}

/// Runs a hook's command (the board hook's, `--notify`'s) under `timeout`, never cancelled from
/// outside: what went wrong, in words, or `None` when it exited 0.
pub(crate) async fn run_hook(spec: &Spec, timeout: Duration) -> Option<String> {
    let limits = Limits {
        stdout_head: 0,
        stdout_tail: 2000,
        stderr_tail: 2000,
    };
    let never = CancellationToken::new();
    let ran = process::run(spec, Instant::now() + timeout, &never, limits, &|_| {}).await;
    match ran {
        Err(error) => Some(format!("could not start: {error}")),
        Ok(mut finished) => match finished.ending {
            Ending::Exited(status) if status.success() => None,
            Ending::Exited(status) => {
                let tail = finished.stderr.last(2000);
                Some(match tail.trim() {
                    "" => process::describe_status(status),
                    tail => format!("{}: {tail}", process::describe_status(status)),
                })
            }
            // No watchdog here: a stall would read as the time-out it stands for.
            Ending::TimedOut | Ending::Stalled => {
                Some(format!("timed out after {}s", timeout.as_secs()))
            }
            Ending::Cancelled => Some("cancelled".to_owned()),
        },
    }
}
