//! Chats: a seat, standing instructions and the history of earlier exchanges, rendered into each
//! next turn; every turn recorded as a transcript file, its usage (reported by the agent, else
//! estimated) counted per seat.

use std::fmt;
use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use epic_report::{PriceTable, UsageMeter};
use epic_state_store::EpicDir;
use epic_state_store::inbox::{self, Action};
use epic_story_plan::Story;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::pause::{After, SeatPauses};
use epic_agents::{
    Exchange, Leftovers, Progress, Reply, Role, Roster, Seat, SeatError, TurnContext, TurnRequest,
};
use epic_events::{Event, EventSink};
use epic_git_ops::Git;
use epic_guard::{Tampered, TurnGuard};
use epic_process::sandbox::Sandbox;
use epic_process::{Clock, Watchdog, offload};
use epic_protocol::prompts;

/// What one story's chats share: where transcripts go, the turn counter, the usage meter, the
/// event sink.
///
/// Transcripts are `<dir>/NNNN-<role>.md`, one file per turn numbered from 1 in the order the
/// turns started: the rendered prompt, then the reply as it streamed. A reply is streamed to
/// the file up to `file_limit` bytes (8 MiB; unit tests set less); past that,
/// its bytes are only counted, and the file ends with a note naming how many were not stored,
/// followed by the reply's kept tail. So a 200 MB reply costs 8 MiB of disk and, in memory, only
/// the seat's bounded reply.
pub struct Recorder {
    story: String,
    dir: PathBuf,
    turns: AtomicU32,
    usage: Mutex<UsageMeter>,
    events: EventSink,
    file_limit: u64,
    /// The guard on epic's own files, checked after every turn; `None` for a task loop run
    /// on its own.
    guard: Option<Arc<TurnGuard>>,
    /// The run's budget, checked before every turn and charged after it; `None` outside a run.
    budget: Option<Arc<Budget>>,
    /// The run's seat pauses, waited for before every turn and told how it ended; `None`
    /// outside a run (a failed turn then fails, whatever it says).
    pauses: Option<Arc<SeatPauses>>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("story", &self.story)
            .field("dir", &self.dir)
            .field("turns", &self.turns)
            .field("file_limit", &self.file_limit)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder for `story`'s turns, writing transcripts into `dir` (`transcripts/<story>/`,
    /// see `epic_state_store::EpicDir::transcripts`) and pricing usage from `prices`.
    ///
    /// Numbering continues after the highest-numbered transcript already in `dir`, so a resumed
    /// story does not overwrite the turns of its earlier run.
    pub fn new(
        story: impl Into<String>,
        dir: impl Into<PathBuf>,
        prices: PriceTable,
        events: EventSink,
    ) -> Self {
        let dir = dir.into();
        let last = epic_state_store::last_transcript_number(&dir);
        Self {
            story: story.into(),
            dir,
            turns: AtomicU32::new(last),
            usage: Mutex::new(UsageMeter::new(prices)),
            events,
            file_limit: 8 * 1024 * 1024,
            guard: None,
            budget: None,
            pauses: None,
        }
    }

    /// This recorder with `budget` checked before every turn of its chats and charged with
    /// each turn's cost.
    #[must_use]
    pub fn with_budget(mut self, budget: Option<Arc<Budget>>) -> Self {
        self.budget = budget;
        self
    }

    /// This recorder with the run's seat pauses around every turn of its chats.
    #[must_use]
    pub fn with_pauses(mut self, pauses: Option<Arc<SeatPauses>>) -> Self {
        self.pauses = pauses;
        self
    }

    /// This recorder with `guard` checked after every turn of its chats.
    #[must_use]
    pub fn with_guard(mut self, guard: Option<Arc<TurnGuard>>) -> Self {
        self.guard = guard;
        self
    }

    /// This recorder with another cap on the reply bytes stored per transcript file (only tests
    /// set one: a run stores 8 MiB per reply).
    #[cfg(test)]
    #[must_use]
    pub fn with_file_limit(mut self, bytes: u64) -> Self {
        self.file_limit = bytes;
        self
    }

    /// The usage recorded so far, by seat.
    pub fn usage(&self) -> UsageMeter {
        self.usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `Ok` while the run's budget is not reached; past it no turn starts: the story stops as
    /// a cancelled one does ([`SeatError::Cancelled`]: its state kept, a rerun resumes it),
    /// and the run says why.
    pub fn within_budget(&self) -> Result<(), SeatError> {
        match &self.budget {
            Some(budget) if budget.reached().is_some() => Err(SeatError::Cancelled),
            _ => Ok(()),
        }
    }

    /// Sends an event to the sink.
    pub fn emit(&self, event: Event) {
        (self.events)(event);
    }

    /// Sends a [`Event::Note`] about this story.
    pub fn note(&self, message: impl Into<String>) {
        self.emit(Event::Note {
            story: self.story.clone(),
            message: message.into(),
        });
    }
}

/// Where and how long a chat's turns run: everything of a [`TurnContext`] but the deadline,
/// which each turn sets afresh from `turn_timeout`.
#[derive(Debug, Clone)]
pub struct ChatContext {
    /// The epic's id.
    pub epic: String,
    /// The story.
    pub story: Arc<Story>,
    /// The task, for coder chats.
    pub task: Option<String>,
    /// The story's worktree.
    pub worktree: PathBuf,
    /// The concurrency slot.
    pub slot: usize,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// The sandbox the turns run in.
    pub sandbox: Sandbox,
    /// Cancels the chat's turns.
    pub cancel: CancellationToken,
}

/// A conversation with a stateless seat: its history is rendered into every next turn.
///
/// The chat's turns go to the seats of a [`Roster`]: each to the first seat not paused (with the
/// run's seat pauses), a stalled request again to the next seat.
///
/// A chat that tells leftovers ([`telling_leftovers`](Self::telling_leftovers): a run's coder
/// chats) tells a turn that takes up an attempt that never replied what the worktree holds
/// uncommitted: a request run again, for whatever reason (here or in the seat's own retries),
/// and the chat's first turn, which on a worktree with changes takes up a killed run's turn.
#[derive(Debug)]
pub struct Chat {
    roster: Roster,
    /// The seat of the current (or last) turn.
    seat: Arc<dyn Seat>,
    role: Role,
    system: String,
    history: Vec<Exchange>,
    context: ChatContext,
    recorder: Arc<Recorder>,
    /// Reads what the worktree holds uncommitted, for a turn that takes up an attempt that
    /// never replied; `None`: such a turn is told nothing.
    leftovers: Option<Leftovers>,
    /// The epic whose people's notes for the story the next turn reads
    /// ([`reading_notes`](Self::reading_notes)); `None`: it reads none.
    notes: Option<EpicDir>,
}

/// What already went wrong with one request ([`Chat::ask`]): each runs it again only once.
#[derive(Debug, Default)]
struct Troubles {
    stalled: bool,
    looping: bool,
}

/// The transcript file of one turn while it streams.
struct TranscriptFile {
    file: Option<File>,
    stored: u64,
    dropped: u64,
    limit: u64,
    chars: u64,
    failed: Option<String>,
}

impl TranscriptFile {
    fn write(&mut self, text: &str) {
        self.chars = self
            .chars
            .saturating_add(text.encode_utf16().count() as u64);
        let room = self.limit.saturating_sub(self.stored);
        let take = usize::try_from(room).unwrap_or(usize::MAX).min(text.len());
        let take = text.floor_char_boundary(take);
        self.dropped = self.dropped.saturating_add((text.len() - take) as u64);
        if take > 0 {
            self.stored = self.stored.saturating_add(take as u64);
            self.append(&text[..take]);
        }
    }

    fn append(&mut self, text: &str) {
        if let Some(file) = &mut self.file
            && let Err(error) = file.write_all(text.as_bytes())
        {
            self.failed.get_or_insert_with(|| error.to_string());
            self.file = None;
        }
    }
}

impl Chat {
    /// A new chat of `role` on the seats of `roster` (one seat will do) with the standing
    /// instructions `system`.
    pub fn new(
        roster: impl Into<Roster>,
        role: Role,
        system: impl Into<String>,
        context: ChatContext,
        recorder: Arc<Recorder>,
    ) -> Self {
        let roster = roster.into();
        Self {
            seat: Arc::clone(roster.first()),
            roster,
            role,
            system: system.into(),
            history: Vec::new(),
            context,
            recorder,
            leftovers: None,
            notes: None,
        }
    }

    /// This chat, giving each request the notes and answers people gave the story (`epic
    /// tell`, `epic answer`) that the run holds for it in `dir`'s inbox, before the request, in
    /// the order given (`prompts::person_notes`); each is read once: discarded once a turn
    /// that read it replied ([`Event::NotesRead`]), kept for the next request otherwise. For a
    /// run's coder chats.
    #[must_use]
    pub fn reading_notes(mut self, dir: EpicDir) -> Self {
        self.notes = Some(dir);
        self
    }

    /// This chat, telling a turn that takes up an attempt that never replied what that attempt
    /// left uncommitted in the worktree, read through `git` (`prompts::leftovers`): a request it
    /// runs again after a stall, a loop, a usage limit or an outage; an attempt its seat retries
    /// after a transient failure ([`TurnContext::leftovers`]); and its first turn, on a worktree
    /// where a killed run left changes. For the chats of roles that write: epic commits a
    /// task's work only after a coder turn that replied, and such a turn must have been told
    /// what it was replying on.
    #[must_use]
    pub fn telling_leftovers(mut self, git: Arc<dyn Git>) -> Self {
        let worktree = self.context.worktree.clone();
        self.leftovers = Some(Leftovers::new(move || {
            let (git, worktree) = (Arc::clone(&git), worktree.clone());
            Box::pin(async move {
                let listed = offload::git(&git, "list what the last attempt left", move |git| {
                    git.uncommitted(&worktree)
                })
                .await;
                match listed {
                    Ok(changes) => prompts::leftovers(Ok(&changes)),
                    Err(error) => prompts::leftovers(Err(&epic_process::chain(&error))),
                }
            })
        }));
        self
    }

    /// The name of the seat of the chat's last turn (its roster's first before any turn): with
    /// a roster, the seat that answered.
    pub fn seat_name(&self) -> &str {
        self.seat.name()
    }

    /// Asks `prompt` in one turn and returns the reply; the exchange joins the history.
    ///
    /// The turn is recorded to its transcript file, its usage estimated under the seat's name
    /// (failed turns too: their output was produced), and [`Event::TurnStarted`],
    /// [`Event::TurnOutput`], [`Event::TurnRetried`] and [`Event::TurnEnded`] are emitted. A
    /// transcript that cannot be written is reported as a [`Event::Note`], never as a failure
    /// of the turn.
    ///
    /// With a budget (a run's chats) that is reached, no turn starts: [`SeatError::Cancelled`]
    /// comes back at once, and nothing is recorded.
    ///
    /// With a guard on epic's files (a run's chats), the turn is checked when it ends
    /// ([`epic_guard`]): a change to a guarded file is undone and the turn fails with
    /// [`SeatError::GuardedFiles`], whatever the seat replied (a cancelled turn stays
    /// cancelled; its changes are undone all the same).
    ///
    /// With the run's seat pauses ([`SeatPauses`]), the turn goes to the first seat of the
    /// roster that is not paused, and waits only while every one is; a turn that met a usage
    /// limit or an outage runs again (same prompt, same history, a new transcript) on the next
    /// seat free, or on its own once its pause is over; a turn the run stopped on (every seat of
    /// the roster paused past `--max-wait`, a seat not logged in) ends [`SeatError::Cancelled`].
    /// Each turn is then also watched for silence (`--stall-timeout`,
    /// [`SeatPauses::with_stall_timeout`]).
    ///
    /// A turn ended as stalled ([`SeatError::Stalled`]) runs again once, on the roster's next
    /// seat when it has one ([`Event::TurnStalled`]);
    /// one ended as looping ([`SeatError::Looping`]) runs again once with a note after the
    /// prompt that names the call it repeated ([`Event::TurnLooping`]). A second stall, or a
    /// second loop, of the same request is its result: the story fails with it.
    ///
    /// In a chat that tells leftovers ([`telling_leftovers`](Self::telling_leftovers)), every
    /// turn that runs a request again, and the chat's first turn, carries after its prompt what
    /// the worktree then holds uncommitted (none when it holds nothing); the history keeps the
    /// prompt alone.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future ends the turn as [`Seat::turn`] documents (a command seat's process
    /// group is killed); the exchange is then not added to the history.
    pub async fn ask(&mut self, prompt: impl Into<String>) -> Result<Reply, SeatError> {
        let prompt = prompt.into();
        let Some(dir) = self.notes.clone() else {
            return self.ask_seats(prompt).await;
        };
        let story = self.recorder.story.clone();
        let held = {
            let (dir, story) = (dir.clone(), story.clone());
            offload::blocking(move || inbox::held(&dir, &story))
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default()
        };
        let notes: Vec<(bool, &str)> = held
            .iter()
            .filter_map(|sent| match &sent.command.action {
                Action::Answer { text } => Some((true, text.as_str())),
                Action::Tell { text } => Some((false, text.as_str())),
                _ => None,
            })
            .collect();
        let prompt = match prompts::person_notes(&notes) {
            Some(notes) => notes + &prompt,
            None => prompt,
        };
        let result = self.ask_seats(prompt).await;
        if result.is_ok() && !held.is_empty() {
            let paths: Vec<PathBuf> = held.iter().map(|sent| sent.path.clone()).collect();
            offload::blocking(move || {
                for path in paths {
                    inbox::discard(&path).ok();
                }
            })
            .await
            .ok();
            self.recorder.emit(Event::NotesRead {
                story,
                commands: held.into_iter().map(|sent| sent.id).collect(),
            });
        }
        result
    }

    /// [`ask`](Self::ask) without the people's notes: the turn on the roster's seats.
    async fn ask_seats(&mut self, prompt: String) -> Result<Reply, SeatError> {
        self.recorder.within_budget()?;
        let pauses = self.recorder.pauses.clone();
        let mut asked = prompt.clone();
        let mut troubles = Troubles::default();
        // Where the search for a free seat starts: the roster's first, or the seat after one
        // that stalled.
        let mut start = 0;
        // Whether the request runs again: its last attempt ended without a reply.
        let mut again = false;
        loop {
            let index = match &pauses {
                Some(pauses) => {
                    pauses
                        .before_turn(&self.roster.names(), start, &self.context.cancel)
                        .await?
                }
                None => start,
            };
            self.seat = Arc::clone(self.roster.get(index));
            // Read once the seat is free: a wait for it leaves the worktree as it is.
            let note = match &self.leftovers {
                Some(leftovers) if again || self.history.is_empty() => leftovers.note().await,
                _ => None,
            };
            let (turn, result) = self.turn(asked.clone(), note, pauses.as_deref()).await;
            if let Some(next) = self.troubled(turn, &result, &mut troubles, &prompt) {
                // The ended turn spent too: the run's budget may be reached now.
                self.recorder.within_budget()?;
                asked = next;
                again = true;
                start = self.rerun_from(index, &result);
                continue;
            }
            let Some(pauses) = &pauses else {
                return result;
            };
            match pauses.after_turn_of(&*self.seat, &self.recorder.story, &result) {
                After::Done => return result,
                After::Again => again = true,
                After::Stop => return Err(SeatError::Cancelled),
            }
        }
    }

    /// What follows turn `turn` when it ended stalled or looping: the prompt it runs again
    /// with (`prompt`, with a note after it for a loop), the first time each happens for the
    /// request; `None` otherwise (a second time, the result stands). Emits
    /// [`Event::TurnStalled`] or [`Event::TurnLooping`] either way.
    fn troubled(
        &self,
        turn: u32,
        result: &Result<Reply, SeatError>,
        troubles: &mut Troubles,
        prompt: &str,
    ) -> Option<String> {
        let story = self.recorder.story.clone();
        let seat = self.seat.name().to_owned();
        match result {
            Err(SeatError::Stalled { silent, .. }) => {
                let again = !troubles.stalled;
                troubles.stalled = true;
                self.recorder.emit(Event::TurnStalled {
                    story,
                    role: self.role,
                    seat,
                    turn,
                    silent_secs: silent.as_secs(),
                    again,
                });
                again.then(|| prompt.to_owned())
            }
            Err(SeatError::Looping { call, times, .. }) => {
                let again = !troubles.looping;
                troubles.looping = true;
                self.recorder.emit(Event::TurnLooping {
                    story,
                    role: self.role,
                    seat,
                    turn,
                    tool: call.tool.clone(),
                    input: call.input.chars().take(2000).collect(),
                    times: *times,
                    again,
                });
                again.then(|| prompts::loop_note(prompt, call, *times))
            }
            _ => None,
        }
    }

    /// Where the roster is searched from when a stalled or looping request on the seat at
    /// `index` runs again: a stalled seat may be wedged, so the next seat of the roster comes
    /// first (the same seat when it stands alone); a looping turn was the model's doing, and its
    /// seat, told of the loop, goes on.
    fn rerun_from(&self, index: usize, result: &Result<Reply, SeatError>) -> usize {
        match result {
            Err(SeatError::Stalled { .. }) => (index + 1) % self.roster.len(),
            _ => index,
        }
    }

    /// One turn of [`ask`](Self::ask) asking `prompt`, with `note` after it (what an attempt
    /// that never replied left), and its number; with the seat pauses, its output is
    /// watched for an agent that only says it cannot reach its service
    /// ([`crate::pause::OutageWatch`]) and its process for silence (a [`Watchdog`]).
    #[expect(
        clippy::too_many_lines,
        reason = "one turn from start to end: each kind of progress it reports, the guard around it"
    )]
    async fn turn(
        &mut self,
        prompt: String,
        note: Option<String>,
        pauses: Option<&SeatPauses>,
    ) -> (u32, Result<Reply, SeatError>) {
        // The turn's own token, so the outage watch ends this turn and nothing else.
        let cancel = self.context.cancel.child_token();
        let watch = pauses.map(|pauses| pauses.watch(cancel.clone()));
        let watchdog = pauses.and_then(SeatPauses::watchdog);
        let clock = pauses.map_or_else(Clock::system, SeatPauses::clock);
        let recorder = Arc::clone(&self.recorder);
        let story = recorder.story.clone();
        let turn = recorder.turns.fetch_add(1, Ordering::Relaxed) + 1;
        let request = self.request(prompt.clone(), note, cancel, watchdog, clock);
        let rendered = request.render();
        let transcript = Mutex::new(self.open_transcript(turn, &rendered));
        // What epic rejected of an ACP agent's requests, each with its reason: an agent's
        // protocol carries no reason with a rejection, so the chat's next turn is told them.
        let rejected = Mutex::new(Vec::new());

        recorder.emit(Event::TurnStarted {
            story: story.clone(),
            role: self.role,
            seat: self.seat.name().to_owned(),
            turn,
            task: self.context.task.clone(),
        });
        let progress = |progress: Progress<'_>| match progress {
            Progress::Chunk(text) => {
                if let Some(watch) = &watch {
                    watch.chunk(text);
                }
                transcript
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .write(text);
                recorder.emit(Event::TurnOutput {
                    story: story.clone(),
                    turn,
                    text: text.to_owned(),
                });
            }
            Progress::Retrying {
                attempt,
                delay,
                reason,
            } => {
                transcript
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .append(&format!(
                        "\n\n[attempt {attempt} failed; retrying in {} ms]\n\n",
                        delay.as_millis()
                    ));
                recorder.emit(Event::TurnRetried {
                    story: story.clone(),
                    turn,
                    attempt,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    reason: reason.to_owned(),
                });
            }
            Progress::Activity(call) => recorder.emit(Event::TurnActivity {
                story: story.clone(),
                role: self.role,
                turn,
                tool: call.tool.clone(),
                doing: call.doing.clone(),
            }),
            Progress::PermissionRejected { subject, reason } => {
                transcript
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .append(&format!("\n\n[epic rejected {subject}: {reason}]\n\n"));
                rejected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(format!("- {subject}: {reason}"));
                recorder.emit(Event::PermissionRejected {
                    story: story.clone(),
                    role: self.role,
                    seat: self.seat.name().to_owned(),
                    turn,
                    subject: subject.to_owned(),
                    reason: reason.to_owned(),
                });
            }
            // Progress a newer seat reports that this chat does not record.
            _ => {}
        };
        let turn_guard = recorder.guard.as_ref().map(TurnGuard::begin);
        let mut result = self.seat.turn(&request, &progress).await;
        if let Some(watch) = &watch {
            result = watch.ended(self.seat.name(), result);
        }
        // Without the sandbox, what escaped the turn dies before the guard looks: a daemon the
        // agent left cannot change the guarded files after they were checked.
        for message in self.context.sandbox.sweep().await {
            recorder.note(message);
        }
        if let Some(begun) = turn_guard {
            let worktree = self.context.worktree.clone();
            let checked = offload::blocking(move || begun.end(&worktree)).await;
            let tampered = match checked {
                Ok(Ok(())) => None,
                Ok(Err(tampered)) => Some(tampered),
                Err(error) => Some(Box::new(Tampered {
                    unreadable: Some(error.to_string()),
                    ..Tampered::default()
                })),
            };
            if let Some(tampered) = tampered
                && !matches!(result, Err(SeatError::Cancelled))
            {
                result = Err(SeatError::GuardedFiles(tampered));
            }
        }
        let transcript = transcript
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        self.finish(turn, transcript, &rendered, &result);
        if let Ok(reply) = &result {
            let rejected = rejected
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            self.history.push(Exchange {
                prompt,
                reply: with_rejections(&reply.text, &rejected),
            });
        }
        (turn, result)
    }

    /// The request of a turn asking `prompt` (with `note` after it), cancelled by `cancel`, its
    /// deadline from now, watched for silence by `watchdog`, its retries' backoff timed on
    /// `clock`.
    fn request(
        &self,
        prompt: String,
        note: Option<String>,
        cancel: CancellationToken,
        watchdog: Option<Watchdog>,
        clock: Clock,
    ) -> TurnRequest {
        TurnRequest {
            role: self.role,
            system: self.system.clone(),
            history: self.history.clone(),
            prompt,
            leftovers_note: note,
            context: TurnContext {
                epic: self.context.epic.clone(),
                story: Arc::clone(&self.context.story),
                task: self.context.task.clone(),
                worktree: self.context.worktree.clone(),
                slot: self.context.slot,
                deadline: Instant::now() + self.context.turn_timeout,
                cancel,
                sandbox: self.context.sandbox.clone(),
                watchdog,
                clock,
                leftovers: self.leftovers.clone(),
            },
        }
    }

    /// Ends turn `turn`: closes its transcript, records its usage, emits [`Event::TurnEnded`].
    fn finish(
        &self,
        turn: u32,
        mut transcript: TranscriptFile,
        rendered: &str,
        result: &Result<Reply, SeatError>,
    ) {
        let recorder = &self.recorder;
        match result {
            Ok(reply) => {
                if transcript.dropped > 0 {
                    let tail_start = reply
                        .text
                        .ceil_char_boundary(reply.text.len().saturating_sub(64 * 1024));
                    transcript.append(&format!(
                        "\n\n[… {} bytes of this reply were not stored; its end follows …]\n\n{}",
                        transcript.dropped,
                        &reply.text[tail_start..]
                    ));
                }
            }
            Err(error) => transcript.append(&format!("\n\n## Error\n\n{error}\n")),
        }
        transcript.append("\n");
        if let Some(failure) = transcript.failed.take() {
            recorder.note(format!(
                "the transcript of turn {turn} could not be written completely: {failure}"
            ));
        }
        let reply_chars = match result {
            Ok(reply) => reply.chars,
            Err(_) => transcript.chars,
        };
        // The agent's own figures where it reported them (a preset's structured output), else
        // an estimate from the characters of the prompt and the reply.
        // What the agent reported of its usage (a preset's structured output), failed turn or not.
        let reported = match result {
            Ok(Reply { usage, .. }) => *usage,
            Err(SeatError::Failed { usage, .. }) => usage.as_deref().copied(),
            Err(_) => None,
        };
        let estimate = {
            let mut usage = recorder
                .usage
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match &reported {
                Some(reported) => usage.record_reported(self.seat.name(), reported),
                None => usage.record(
                    self.seat.name(),
                    epic_report::count_chars(rendered),
                    reply_chars,
                ),
            }
        };
        if let (Some(budget), Some(cost)) = (&recorder.budget, estimate.cost_usd) {
            budget.spend(cost);
        }
        recorder.emit(Event::TurnEnded {
            story: recorder.story.clone(),
            role: self.role,
            turn,
            ok: result.is_ok(),
            estimated_tokens: estimate.usage.total,
            reported: reported.is_some(),
            error: result.as_ref().err().map(ToString::to_string),
        });
    }

    /// Creates turn `turn`'s transcript file and writes its header and prompt.
    fn open_transcript(&self, turn: u32, rendered: &str) -> TranscriptFile {
        let path = self
            .recorder
            .dir
            .join(format!("{turn:04}-{}.md", self.role.as_str()));
        let mut transcript = TranscriptFile {
            file: None,
            stored: 0,
            dropped: 0,
            limit: self.recorder.file_limit,
            chars: 0,
            failed: None,
        };
        match epic_state_store::create_transcript(&path) {
            Ok(file) => transcript.file = Some(file),
            Err(error) => {
                transcript.failed = Some(format!("{}: {error}", path.display()));
            }
        }
        let task = self
            .context
            .task
            .as_deref()
            .map(|task| format!(" — task: {task}"))
            .unwrap_or_default();
        transcript.append(&format!(
            "# Turn {turn}: {} ({}){task}\n\n## Prompt\n\n{rendered}\n## Reply\n\n",
            self.role.as_str(),
            self.seat.name(),
        ));
        transcript
    }
}

/// A reply as the chat's history keeps it: followed, when epic rejected requests of the turn,
/// by each with its reason, so the next turn of the chat sees why (an ACP agent is shown a
/// rejection, never its reason).
fn with_rejections(reply: &str, rejected: &[String]) -> String {
    if rejected.is_empty() {
        return reply.to_owned();
    }
    format!(
        "{reply}\n\n[epic rejected these requests of that turn before anything was done; \
         say BLOCKED_ON: if the story needs one of them]\n{}",
        rejected.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use epic_story_plan::Story;

    use super::*;
    use epic_agents::ScriptSeat;
    use epic_agents::{CommandSeat, ReplyLimits};
    use epic_events::discard_events;

    fn is_send<T: Send>(_: &T) {}
    fn is_send_sync<T: Send + Sync>() {}

    /// Story `s` of the integration tests' fixture plan.
    fn story() -> Arc<Story> {
        Arc::new(Story::new("s", "The story", ["src"]))
    }

    #[test]
    fn the_recorder_and_a_chats_future_are_send() {
        is_send_sync::<Recorder>();

        let root = tempfile::tempdir().expect("dir");
        let recorder = Arc::new(Recorder::new(
            "s",
            root.path().join("t"),
            PriceTable::default(),
            discard_events(),
        ));
        let mut chat = Chat::new(
            Arc::new(ScriptSeat) as Arc<dyn Seat>,
            Role::Coder,
            "",
            ChatContext {
                epic: "e".into(),
                story: story(),
                task: None,
                worktree: root.path().to_path_buf(),
                slot: 0,
                turn_timeout: Duration::from_secs(1),
                cancel: CancellationToken::new(),
                sandbox: Sandbox::off(),
            },
            recorder,
        );
        let future = chat.ask("hi");
        is_send(&future);
        drop(future);
    }

    #[tokio::test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test reads the transcript the chat left"
    )]
    async fn huge_output_is_bounded_in_memory_and_in_the_transcript() {
        let root = tempfile::tempdir().expect("dir");
        let seat = CommandSeat::shell(
            "cat >/dev/null\nhead -c 20000000 /dev/zero | tr '\\0' a\necho\necho END\n",
        )
        .with_limits(ReplyLimits {
            head: 1000,
            tail: 1000,
            stderr_tail: 1000,
        });
        let dir = root.path().join("transcripts");
        let recorder = Arc::new(
            Recorder::new("s", &dir, PriceTable::default(), discard_events())
                .with_file_limit(64 * 1024),
        );
        let mut chat = Chat::new(
            Arc::new(seat) as Arc<dyn Seat>,
            Role::Coder,
            "rules",
            ChatContext {
                epic: "e".into(),
                story: story(),
                task: Some("one".into()),
                worktree: root.path().to_path_buf(),
                slot: 0,
                turn_timeout: Duration::from_secs(30),
                cancel: CancellationToken::new(),
                sandbox: Sandbox::off(),
            },
            Arc::clone(&recorder),
        );
        let reply = chat.ask("shout").await.expect("ok");
        assert!(reply.text.len() < 3000, "{} bytes kept", reply.text.len());
        assert!(reply.text.starts_with("aaaa"));
        assert!(reply.text.ends_with("\nEND\n"), "the tail is kept");
        assert!(reply.text.contains("bytes of output omitted"));
        assert_eq!(reply.chars, 20_000_000 + 5);

        let transcript = dir.join("0001-coder.md");
        let size = std::fs::metadata(&transcript).expect("transcript").len();
        assert!(size < 200 * 1024, "{size} bytes stored");
        let text = std::fs::read_to_string(&transcript).expect("read");
        assert!(text.contains("were not stored"));
        assert!(text.trim_end().ends_with("END"));
        let usage = recorder.usage().totals();
        assert!(
            usage.usage.completion >= 5_000_000,
            "usage counts all of it"
        );
    }

    #[test]
    fn the_history_tells_the_next_turn_what_epic_rejected_and_why() {
        assert_eq!(with_rejections("Done.", &[]), "Done.");
        let kept = with_rejections(
            "Done.",
            &["- src/b/b.txt: it belongs to story `b`".to_owned()],
        );
        assert!(kept.starts_with("Done.\n\n[epic rejected"), "{kept}");
        assert!(
            kept.ends_with("- src/b/b.txt: it belongs to story `b`"),
            "{kept}"
        );
    }
}
