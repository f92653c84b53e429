//! Seat pauses: a usage limit or an outage pauses the seat it hit (by seat name) for the whole
//! run, instead of failing the story whose turn met it.
//!
//! [`SeatPauses`] is one run-wide object, held by every story's [`Recorder`](crate::chat::Recorder):
//! [`Chat::ask`](crate::chat::Chat::ask) calls [`SeatPauses::before_turn`] (which picks the
//! first seat of the role's roster that is not paused, and waits only while every one is) and
//! hands the turn's result to [`SeatPauses::after_turn_of`], which
//! classifies a failure ([`epic_agents::classify`]) and says whether the turn runs again, fails, or
//! stops:
//!
//! - a usage limit pauses the seat until its reset (or [`DEFAULT_LIMIT_WAIT`]); the turn then
//!   runs again with the same prompt and history, on the roster's next free seat (or on its own
//!   once the pause is over);
//! - an outage (the agent cannot reach its service, or a transient failure outlasted the seat's
//!   own retries) pauses the seat for 30 s, then 1 min, 2 min, … up to [`OUTAGE_CAP`]: each
//!   rerun of the turn is the probe, and a turn on the seat that succeeds ends the outage;
//! - once every seat of a roster is paused, each until more than `max_wait` after its pause
//!   began, the run stops ([`SeatStop::MaxWait`]): it stops launching, cancels its running stories and ends as
//!   an interrupted run does;
//! - a seat that is not logged in stops the run from launching ([`SeatStop::NotLoggedIn`]);
//!   turns on other seats finish, no new turn on that seat starts, and the stories whose turns
//!   were refused end cancelled (resumable), not failed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio_util::sync::CancellationToken;

use epic_agents::classify::{self, Class, DEFAULT_LIMIT_WAIT};
use epic_agents::{Reply, Seat, SeatError};
use epic_events::{Event, EventSink};
use epic_process::{Clock, Watchdog};

/// The first wait of an outage; each next probe doubles it.
pub const OUTAGE_FIRST: Duration = Duration::from_secs(30);

/// The longest wait between two probes of an outage.
pub const OUTAGE_CAP: Duration = Duration::from_mins(10);

/// The shortest pause on a usage limit: a reset already past (a clock behind the service's)
/// must not turn into a loop of turns that fail at once.
const MIN_LIMIT_WAIT: Duration = Duration::from_secs(2);

/// Why a run stopped because of one of its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SeatStop {
    /// A seat's pause would end past `--max-wait` after it began (docs/contract.md: exit 130, the
    /// state kept; a rerun resumes).
    MaxWait {
        /// The seat.
        seat: String,
        /// What paused it and until when, in words.
        reason: String,
    },
    /// A seat is not logged in (docs/contract.md: exit 2).
    NotLoggedIn {
        /// The seat.
        seat: String,
        /// What the agent said.
        message: String,
        /// The command that logs it in.
        fix: String,
    },
}

impl SeatStop {
    /// Whether the run ends as an interrupted one (exit 130) rather than on a seat that cannot
    /// run (exit 2).
    pub fn interrupts(&self) -> bool {
        matches!(self, Self::MaxWait { .. })
    }
}

impl fmt::Display for SeatStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaxWait { reason, .. } => write!(f, "{reason}"),
            Self::NotLoggedIn { seat, message, .. } => {
                write!(f, "`{seat}` is not logged in: {message}")
            }
        }
    }
}

/// What the turn's caller does next ([`SeatPauses::after_turn_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// The result stands (a reply, or a failure of the story).
    Done,
    /// The seat is paused: the same turn runs again once [`SeatPauses::before_turn`] lets it.
    Again,
    /// The run stops on this seat: the turn ends cancelled.
    Stop,
}

/// Why a seat is paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    UsageLimit,
    Outage,
}

impl Why {
    fn as_str(self) -> &'static str {
        match self {
            Self::UsageLimit => "usage limit",
            Self::Outage => "outage",
        }
    }
}

/// One seat's pause.
#[derive(Debug, Clone)]
struct Pause {
    /// When turns may start again.
    until: Timestamp,
    /// When the pause began (a pause extended by a second limit keeps its start: `max_wait`
    /// bounds the whole).
    since: Timestamp,
    /// Outage probes so far.
    probes: u32,
    /// What paused it.
    why: Why,
    /// The agent's words for it (a first line).
    message: String,
}

/// Which seat of a roster a turn may take ([`SeatPauses::pick`]).
#[derive(Debug)]
enum Pick {
    /// The seat at this index is free.
    Free(usize),
    /// Every seat is paused; the first pause within `max_wait` ends then.
    Wait(Timestamp),
    /// Every seat is paused past `max_wait`: why, in words.
    Stuck(String),
    /// Every seat is refused (not logged in).
    Refused,
}

#[derive(Debug, Default)]
struct State {
    seats: BTreeMap<String, Pause>,
    /// Seats no turn may start on (not logged in).
    refused: BTreeSet<String>,
    stop: Option<SeatStop>,
}

/// The run's seat pauses (see the module's docs).
pub struct SeatPauses {
    max_wait: Duration,
    /// How long a turn may stream only "cannot reach the service" lines before it is ended as
    /// an outage of its seat.
    outage_wait: Duration,
    state: Mutex<State>,
    stopped: CancellationToken,
    events: EventSink,
    /// What "now" is, and what the pauses wait on.
    clock: Clock,
    /// How long a turn may print nothing before it is ended as stalled; `None`: never.
    stall_timeout: Option<Duration>,
}

impl fmt::Debug for SeatPauses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeatPauses")
            .field("max_wait", &self.max_wait)
            .field("stall_timeout", &self.stall_timeout)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl SeatPauses {
    /// No seat paused; a pause may last `max_wait`; a turn that streams only "cannot reach the
    /// service" for `outage_wait` is ended as an outage (`OutageWatch`); [`Event::SeatPaused`]
    /// and [`Event::SeatResumed`] go to `events`; the time is read from `clock`, and pauses wait
    /// on it.
    pub fn new(max_wait: Duration, outage_wait: Duration, events: EventSink, clock: Clock) -> Self {
        Self {
            max_wait,
            outage_wait,
            state: Mutex::new(State::default()),
            stopped: CancellationToken::new(),
            events,
            clock,
            stall_timeout: None,
        }
    }

    /// These pauses with every turn of the run watched for silence: a turn that prints nothing
    /// for `stall_timeout` is ended as stalled ([`Watchdog`], timed on the run's clock);
    /// `Duration::ZERO`: never (`--stall-timeout 0`).
    #[must_use]
    pub fn with_stall_timeout(mut self, stall_timeout: Duration) -> Self {
        self.stall_timeout = Some(stall_timeout).filter(|timeout| !timeout.is_zero());
        self
    }

    /// The clock the run's pauses are timed on, which a turn's retries wait on too.
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// The watchdog of a turn of the run, if turns are watched for silence.
    pub fn watchdog(&self) -> Option<Watchdog> {
        self.stall_timeout.map(|silence| Watchdog {
            silence,
            clock: self.clock.clone(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A watch over one turn's output, ending the turn (`cancel`) once it has streamed only
    /// "cannot reach the service" lines for the outage wait.
    pub fn watch(&self, cancel: CancellationToken) -> OutageWatch {
        OutageWatch {
            wait: self.outage_wait,
            clock: self.clock.clone(),
            cancel,
            state: Mutex::new(Watched::default()),
        }
    }

    /// Why the run stops, once a seat stopped it (every seat of a roster paused past
    /// `--max-wait`, a seat not logged in); a turn it stopped ends as cancelled.
    pub fn stop(&self) -> Option<SeatStop> {
        self.state().stop.clone()
    }

    /// Completes once a seat stopped the run.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn stopped(&self) {
        self.stopped.cancelled().await;
    }

    /// The seat of `roster` (seat names, in order of preference) a turn goes to: the first that
    /// is not paused, searched from `start` (wrapping round); while every one is paused, waits
    /// for the first pause to end. `Err(Cancelled)` when `cancel` fires meanwhile, when the run
    /// stopped (a seat not logged in, a stop of another roster), or when every seat of the
    /// roster is paused past `max_wait`: the run then stops ([`SeatStop::MaxWait`]).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn before_turn(
        &self,
        roster: &[&str],
        start: usize,
        cancel: &CancellationToken,
    ) -> Result<usize, SeatError> {
        loop {
            let until = {
                let mut state = self.state();
                if state.stop.as_ref().is_some_and(SeatStop::interrupts) {
                    return Err(SeatError::Cancelled);
                }
                match self.pick(&state, roster, start) {
                    Pick::Free(index) => return Ok(index),
                    Pick::Wait(until) => until,
                    Pick::Refused => return Err(SeatError::Cancelled),
                    Pick::Stuck(reason) => {
                        let seat = roster.join(",");
                        state.stop.get_or_insert(SeatStop::MaxWait { seat, reason });
                        drop(state);
                        self.stopped.cancel();
                        return Err(SeatError::Cancelled);
                    }
                }
            };
            tokio::select! {
                () = self.clock.wait_until(until) => {}
                () = cancel.cancelled() => return Err(SeatError::Cancelled),
                () = self.stopped.cancelled() => {}
            }
        }
    }

    /// Which seat of `roster` a turn may take now (see [`before_turn`](Self::before_turn)).
    fn pick(&self, state: &State, roster: &[&str], start: usize) -> Pick {
        let now = self.clock.now();
        let mut wait: Option<Timestamp> = None;
        let mut over = Vec::new();
        let mut refused = 0;
        for offset in 0..roster.len() {
            let index = (start + offset) % roster.len();
            let seat = roster[index];
            if state.refused.contains(seat) {
                refused += 1;
                continue;
            }
            match state.seats.get(seat).filter(|pause| pause.until > now) {
                None => return Pick::Free(index),
                Some(pause) if self.past_max_wait(pause) => over.push((seat, pause)),
                Some(pause) => {
                    wait = Some(wait.map_or(pause.until, |wait| wait.min(pause.until)));
                }
            }
        }
        if let Some(until) = wait {
            return Pick::Wait(until);
        }
        if refused == roster.len() {
            return Pick::Refused;
        }
        let seconds = |at: Timestamp| Timestamp::from_second(at.as_second()).unwrap_or(at);
        let each: Vec<String> = over
            .iter()
            .map(|(seat, pause)| {
                format!(
                    "`{seat}` would be paused ({}) until {}, longer than --max-wait {} (its \
                     pause began at {}): {}",
                    pause.why.as_str(),
                    seconds(pause.until),
                    words(self.max_wait),
                    seconds(pause.since),
                    pause.message
                )
            })
            .collect();
        Pick::Stuck(if roster.len() == 1 {
            each.concat()
        } else {
            format!(
                "every seat of the roster {} is paused: {}",
                roster.join(","),
                each.join("; ")
            )
        })
    }

    /// Whether `pause` ends more than `max_wait` after it began.
    fn past_max_wait(&self, pause: &Pause) -> bool {
        pause.until.duration_since(pause.since)
            > SignedDuration::try_from(self.max_wait).unwrap_or(SignedDuration::MAX)
    }

    /// What follows a turn on `seat` of `story` that ended with `result` (see [`After`]).
    pub fn after_turn_of(
        &self,
        seat: &dyn Seat,
        story: &str,
        result: &Result<Reply, SeatError>,
    ) -> After {
        self.after(seat.name(), &|| seat.login_fix(), story, result)
    }

    /// [`after_turn_of`](Self::after_turn_of) a preset's seat, by name.
    #[cfg(test)]
    fn after_turn(&self, seat: &str, story: &str, result: &Result<Reply, SeatError>) -> After {
        self.after(seat, &|| classify::login_fix(seat), story, result)
    }

    /// What follows a turn on the seat named `seat`, which `fix` logs in, of `story` that ended
    /// with `result`.
    fn after(
        &self,
        seat: &str,
        fix: &dyn Fn() -> String,
        story: &str,
        result: &Result<Reply, SeatError>,
    ) -> After {
        let now = self.clock.now();
        let (status, tail) = match result {
            Ok(_) => {
                self.resumed(seat, now);
                return After::Done;
            }
            Err(SeatError::Failed { status, tail, .. }) => (status, tail),
            Err(_) => return After::Done,
        };
        match classify::classify(status, tail, now, &jiff::tz::TimeZone::system()) {
            Class::UsageLimit { resets } => {
                let until = resets
                    .and_then(|resets| remaining(now, resets).map(|_| resets))
                    .unwrap_or_else(|| {
                        later(
                            now,
                            if resets.is_some() {
                                MIN_LIMIT_WAIT
                            } else {
                                DEFAULT_LIMIT_WAIT
                            },
                        )
                    });
                let until = until.max(later(now, MIN_LIMIT_WAIT));
                self.pause(seat, story, Why::UsageLimit, until, now, tail)
            }
            // A transient failure here has outlasted the seat's own retries.
            Class::Outage | Class::Transient => {
                let until = {
                    let state = self.state();
                    match state.seats.get(seat) {
                        // Another story's turn already set the next probe.
                        Some(pause) if pause.until > now => None,
                        Some(pause) => Some(later(now, outage_wait(pause.probes + 1))),
                        None => Some(later(now, outage_wait(1))),
                    }
                };
                match until {
                    Some(until) => self.pause(seat, story, Why::Outage, until, now, tail),
                    None => After::Again,
                }
            }
            Class::NotLoggedIn => {
                let fix = fix();
                let message = classify::login_line(tail).unwrap_or_else(|| first_line(tail));
                let mut state = self.state();
                state.refused.insert(seat.to_owned());
                state.stop.get_or_insert(SeatStop::NotLoggedIn {
                    seat: seat.to_owned(),
                    message,
                    fix,
                });
                drop(state);
                self.stopped.cancel();
                After::Stop
            }
            Class::Other => After::Done,
        }
    }

    /// Pauses `seat` until `until` (extending a shorter pause). A pause that ends more than
    /// `max_wait` after it began is kept all the same: the roster's other seats take the turns,
    /// and the run stops only once every seat of a roster is paused so
    /// ([`before_turn`](Self::before_turn)).
    fn pause(
        &self,
        seat: &str,
        story: &str,
        why: Why,
        until: Timestamp,
        now: Timestamp,
        tail: &str,
    ) -> After {
        let mut state = self.state();
        let (since, probes, current) = match state.seats.get(seat) {
            Some(pause) => (pause.since, pause.probes, Some(pause.until)),
            None => (now, 0, None),
        };
        let extends = current.is_none_or(|current| until > current);
        let pause = Pause {
            until: current.filter(|_| !extends).unwrap_or(until),
            since,
            probes: probes + u32::from(why == Why::Outage),
            why,
            message: first_line(tail),
        };
        state.seats.insert(seat.to_owned(), pause);
        drop(state);
        if extends {
            (self.events)(Event::SeatPaused {
                seat: seat.to_owned(),
                story: story.to_owned(),
                until: until.to_string(),
                since: since.to_string(),
                reason: why.as_str().to_owned(),
                message: first_line(tail),
            });
        }
        After::Again
    }

    /// A turn on `seat` succeeded: a pause that is over ends.
    fn resumed(&self, seat: &str, now: Timestamp) {
        let mut state = self.state();
        if state
            .seats
            .get(seat)
            .is_some_and(|pause| pause.until <= now)
        {
            state.seats.remove(seat);
            drop(state);
            (self.events)(Event::SeatResumed {
                seat: seat.to_owned(),
            });
        }
    }
}

/// What an [`OutageWatch`] has seen.
#[derive(Debug, Default)]
struct Watched {
    /// Since when every line has been an outage line.
    since: Option<Timestamp>,
    /// The last of them.
    line: String,
    /// Whether the watch ended the turn.
    fired: bool,
    /// The end of a line split across chunks.
    partial: String,
}

/// Watches one turn's streamed output for an agent that keeps saying it cannot reach its
/// service (Codex retries for ever): once every line for the outage wait said so, the turn is
/// cancelled, and [`ended`](Self::ended) gives the failure that makes it an outage of its seat
/// (a pause with probes) rather than a turn that burns its whole deadline.
#[derive(Debug)]
pub struct OutageWatch {
    wait: Duration,
    clock: Clock,
    cancel: CancellationToken,
    state: Mutex<Watched>,
}

impl OutageWatch {
    /// Looks at a chunk of the turn's output.
    pub fn chunk(&self, text: &str) {
        self.chunk_at(text, self.clock.now());
    }

    /// [`chunk`](Self::chunk), as seen at `now`.
    fn chunk_at(&self, text: &str, now: Timestamp) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let joined = format!("{}{text}", std::mem::take(&mut state.partial));
        let mut lines: Vec<&str> = joined.split('\n').collect();
        if let Some(last) = lines.pop() {
            state.partial = last
                .chars()
                .rev()
                .take(4096)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
        }
        for line in lines
            .iter()
            .map(|line| line.trim())
            .filter(|line| !line.is_empty())
        {
            if classify::is_outage_line(line) {
                state.since.get_or_insert(now);
                state.line = line.chars().take(300).collect();
            } else {
                state.since = None;
            }
        }
        if !state.fired
            && state
                .since
                .is_some_and(|since| remaining(since, now).unwrap_or_default() >= self.wait)
        {
            state.fired = true;
            self.cancel.cancel();
        }
    }

    /// The turn's result as the watch leaves it: a turn it ended is a failure whose output is
    /// the agent's last outage line.
    pub fn ended(
        &self,
        program: &str,
        result: Result<Reply, SeatError>,
    ) -> Result<Reply, SeatError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Err(SeatError::Cancelled) if state.fired => Err(SeatError::Failed {
                program: program.to_owned(),
                status: format!(
                    "no connection to its service for {} (ended by epic)",
                    words(self.wait)
                ),
                attempts: 1,
                tail: state.line.clone(),
                usage: None,
            }),
            other => other,
        }
    }
}

/// The wait before outage probe `probe` (from 1): 30 s doubling, capped at [`OUTAGE_CAP`].
fn outage_wait(probe: u32) -> Duration {
    OUTAGE_FIRST
        .saturating_mul(2_u32.saturating_pow(probe.saturating_sub(1)))
        .min(OUTAGE_CAP)
}

/// How long from `now` until `until`, if it is later.
fn remaining(now: Timestamp, until: Timestamp) -> Option<Duration> {
    Duration::try_from(until.duration_since(now))
        .ok()
        .filter(|wait| !wait.is_zero())
}

/// `now` plus `wait` (saturating).
fn later(now: Timestamp, wait: Duration) -> Timestamp {
    SignedDuration::try_from(wait)
        .ok()
        .and_then(|wait| now.checked_add(wait).ok())
        .unwrap_or(Timestamp::MAX)
}

/// The first non-empty line of `text`, at most 300 characters: what an event quotes.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    line.chars().take(300).collect()
}

/// `6h`, `90m`, `45s`: a duration as `--max-wait` takes it.
fn words(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs.is_multiple_of(3600) && secs > 0 {
        format!("{}h", secs / 3600)
    } else if secs.is_multiple_of(60) && secs > 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use epic_process::ManualClock;

    fn failed(tail: &str) -> Result<Reply, SeatError> {
        Err(SeatError::Failed {
            program: "claude".into(),
            status: "exit code 1".into(),
            attempts: 1,
            tail: tail.into(),
            usage: None,
        })
    }

    /// Any fixed time: the tests read no other clock.
    fn start() -> Timestamp {
        "2030-01-01T08:00:00Z".parse().unwrap()
    }

    /// Seat pauses on a manual clock at [`start`], with `max_wait` and a 2-minute outage wait.
    fn pauses(max_wait: Duration, events: EventSink) -> (SeatPauses, ManualClock) {
        let manual = ManualClock::new(start());
        let pauses = SeatPauses::new(max_wait, Duration::from_mins(2), events, manual.clock());
        (pauses, manual)
    }

    fn recording() -> (EventSink, Arc<Mutex<Vec<Event>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        (
            Arc::new(move |event| sink.lock().unwrap().push(event)),
            seen,
        )
    }

    #[test]
    fn outage_waits_double_up_to_the_cap() {
        assert_eq!(outage_wait(1), Duration::from_secs(30));
        assert_eq!(outage_wait(2), Duration::from_mins(1));
        assert_eq!(outage_wait(3), Duration::from_mins(2));
        assert_eq!(outage_wait(10), OUTAGE_CAP);
    }

    #[test]
    fn a_usage_limit_pauses_only_its_seat() {
        let (events, seen) = recording();
        let (pauses, _) = pauses(Duration::from_hours(6), events);
        let reset = start().as_second() + 3600;
        let after = pauses.after_turn(
            "claude",
            "a",
            &failed(&format!("Claude AI usage limit reached|{reset}")),
        );
        assert_eq!(after, After::Again);
        let state = pauses.state();
        assert_eq!(state.seats["claude"].until.as_second(), reset);
        assert!(!state.seats.contains_key("codex"));
        drop(state);
        let seen = seen.lock().unwrap();
        assert!(
            matches!(&seen[..], [Event::SeatPaused { seat, reason, .. }] if seat == "claude" && reason == "usage limit"),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn a_turn_on_a_paused_seat_waits_on_the_clock_until_the_reset() {
        let (events, _) = recording();
        let (pauses, manual) = pauses(Duration::from_hours(6), events);
        let reset = start() + Duration::from_hours(5);
        let limit = failed(&format!(
            "Claude AI usage limit reached|{}",
            reset.as_second()
        ));
        assert_eq!(pauses.after_turn("claude", "a", &limit), After::Again);
        let pauses = Arc::new(pauses);
        let cancel = CancellationToken::new();
        let turn = tokio::spawn({
            let (pauses, cancel) = (Arc::clone(&pauses), cancel.clone());
            async move { pauses.before_turn(&["claude"], 0, &cancel).await }
        });
        // Another seat is not held.
        assert!(matches!(
            pauses.before_turn(&["codex"], 0, &cancel).await,
            Ok(0)
        ));
        assert_eq!(manual.waiter().await, reset);
        manual.advance(Duration::from_hours(5) - Duration::from_secs(1));
        // Woken a second early, it waits on until the reset.
        assert_eq!(manual.waiter().await, reset);
        assert!(!turn.is_finished());
        manual.advance(Duration::from_secs(1));
        assert!(matches!(turn.await.unwrap(), Ok(0)));
    }

    #[test]
    fn a_reset_already_past_pauses_for_the_floor() {
        let (events, _) = recording();
        let (pauses, _) = pauses(Duration::from_hours(6), events);
        // The service's clock is a minute ahead of ours, or the line was read late.
        let past = start().as_second() - 60;
        let limit = failed(&format!("Claude AI usage limit reached|{past}"));
        assert_eq!(pauses.after_turn("claude", "a", &limit), After::Again);
        assert_eq!(
            pauses.state().seats["claude"].until,
            start() + MIN_LIMIT_WAIT
        );
    }

    #[test]
    fn a_pause_past_max_wait_stops_the_run() {
        let (events, _) = recording();
        let (pauses, _) = pauses(Duration::from_mins(30), events);
        let after = pauses.after_turn(
            "codex",
            "a",
            &failed("You've hit your usage limit. Try again in 2 hours."),
        );
        assert_eq!(after, After::Again);
        let cancel = CancellationToken::new();
        let next = futures_lite(pauses.before_turn(&["codex"], 0, &cancel));
        assert!(matches!(next, Some(Err(SeatError::Cancelled))), "{next:?}");
        let stop = pauses.stop().unwrap();
        assert!(stop.interrupts());
        assert!(stop.to_string().contains("--max-wait 30m"), "{stop}");
    }

    #[test]
    fn a_roster_goes_on_with_the_seat_that_is_not_paused() {
        let (events, seen) = recording();
        let (pauses, manual) = pauses(Duration::from_mins(30), events);
        let cancel = CancellationToken::new();
        let roster = ["claude", "codex"];
        assert!(matches!(
            futures_lite(pauses.before_turn(&roster, 0, &cancel)),
            Some(Ok(0))
        ));
        // Claude's limit lasts past --max-wait: its turns go to Codex, and the run goes on.
        let reset = start().as_second() + 5 * 3600;
        let limit = failed(&format!("Claude AI usage limit reached|{reset}"));
        assert_eq!(pauses.after_turn("claude", "a", &limit), After::Again);
        assert!(matches!(
            futures_lite(pauses.before_turn(&roster, 0, &cancel)),
            Some(Ok(1))
        ));
        assert!(pauses.stop().is_none());
        // A search from the second seat finds it first.
        assert!(matches!(
            futures_lite(pauses.before_turn(&roster, 1, &cancel)),
            Some(Ok(1))
        ));
        // Codex goes down too, for a while within --max-wait: the roster waits for it.
        let outage = failed("API Error: Can't reach the API server (ENOTFOUND)");
        assert_eq!(pauses.after_turn("codex", "b", &outage), After::Again);
        assert!(futures_lite(pauses.before_turn(&roster, 0, &cancel)).is_none());
        manual.advance(OUTAGE_FIRST);
        assert!(matches!(
            futures_lite(pauses.before_turn(&roster, 0, &cancel)),
            Some(Ok(1))
        ));
        assert!(pauses.stop().is_none());
        // Claude's pause ends: it is first again.
        manual.set(Timestamp::from_second(reset).unwrap());
        assert!(matches!(
            futures_lite(pauses.before_turn(&roster, 0, &cancel)),
            Some(Ok(0))
        ));
        let pauses_seen = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|event| matches!(event, Event::SeatPaused { .. }))
            .count();
        assert_eq!(pauses_seen, 2);
    }

    #[test]
    fn a_roster_whose_every_seat_is_paused_past_max_wait_stops_the_run() {
        let (events, _) = recording();
        let (pauses, _) = pauses(Duration::from_mins(30), events);
        let cancel = CancellationToken::new();
        let roster = ["claude", "codex"];
        for seat in roster {
            let after = pauses.after_turn(
                seat,
                "a",
                &failed("You've hit your usage limit. Try again in 2 hours."),
            );
            assert_eq!(after, After::Again);
        }
        let next = futures_lite(pauses.before_turn(&roster, 0, &cancel));
        assert!(matches!(next, Some(Err(SeatError::Cancelled))), "{next:?}");
        let stop = pauses.stop().unwrap();
        assert!(stop.interrupts());
        let words = stop.to_string();
        assert!(
            words.contains("every seat of the roster claude,codex"),
            "{words}"
        );
        assert!(
            words.contains("`claude`") && words.contains("`codex`"),
            "{words}"
        );
        // Another roster's turns stop with it.
        let other = futures_lite(pauses.before_turn(&["gemini"], 0, &cancel));
        assert!(matches!(other, Some(Err(SeatError::Cancelled))));
    }

    #[test]
    fn not_logged_in_refuses_the_seat() {
        let (events, _) = recording();
        let (pauses, _) = pauses(Duration::from_hours(6), events);
        let after = pauses.after_turn("claude", "a", &failed("Not logged in · Please run /login"));
        assert_eq!(after, After::Stop);
        let Some(SeatStop::NotLoggedIn { fix, .. }) = pauses.stop() else {
            panic!("not stopped on the login");
        };
        assert!(fix.contains("/login"));
        let cancel = CancellationToken::new();
        let refused = futures_lite(pauses.before_turn(&["claude"], 0, &cancel));
        assert!(matches!(refused, Some(Err(SeatError::Cancelled))));
        let other = futures_lite(pauses.before_turn(&["codex"], 0, &cancel));
        assert!(matches!(other, Some(Ok(0))));
        // On a roster, the seat not logged in is passed over.
        let roster = futures_lite(pauses.before_turn(&["claude", "codex"], 0, &cancel));
        assert!(matches!(roster, Some(Ok(1))));
    }

    #[test]
    fn an_outage_probes_with_growing_waits_and_a_success_ends_it() {
        let (events, seen) = recording();
        let (pauses, manual) = pauses(Duration::from_hours(6), events);
        let outage = failed("API Error: Can't reach the API server (ENOTFOUND)");
        assert_eq!(pauses.after_turn("claude", "a", &outage), After::Again);
        let first = pauses.state().seats["claude"].until;
        assert_eq!(first, start() + OUTAGE_FIRST);
        // Another story's turn meets it before the probe: it waits for the same probe.
        assert_eq!(pauses.after_turn("claude", "b", &outage), After::Again);
        assert_eq!(pauses.state().seats["claude"].until, first);
        // The probe (the turn run again) fails too: the next wait doubles.
        manual.set(first);
        // A transient failure that outlasted the seat's retries counts as the outage.
        assert_eq!(
            pauses.after_turn("claude", "a", &failed("HTTP 503 Service Unavailable")),
            After::Again
        );
        let state = pauses.state();
        assert_eq!(state.seats["claude"].probes, 2);
        assert_eq!(state.seats["claude"].until, first + Duration::from_mins(1));
        drop(state);
        // The next probe succeeds: the seat is no longer paused.
        manual.advance(Duration::from_mins(1));
        assert_eq!(
            pauses.after_turn("claude", "a", &Ok(Reply::new("ok"))),
            After::Done
        );
        assert!(pauses.state().seats.is_empty());
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.iter()
                .filter(
                    |event| matches!(event, Event::SeatPaused { reason, .. } if reason == "outage")
                )
                .count(),
            2,
            "{seen:?}"
        );
        assert!(matches!(seen.last(), Some(Event::SeatResumed { seat }) if seat == "claude"));
    }

    #[test]
    fn a_turn_that_only_reconnects_is_ended_as_an_outage() {
        let (events, _) = recording();
        let (pauses, _) = pauses(Duration::from_hours(6), events);
        let cancel = CancellationToken::new();
        let watch = pauses.watch(cancel.clone());
        let at = |minutes: u64| start() + Duration::from_mins(minutes);
        let line = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed)"}"#;
        watch.chunk_at(&format!("{{\"type\":\"turn.started\"}}\n{line}\n"), at(0));
        watch.chunk_at(&format!("{line}\n"), at(1));
        assert!(!cancel.is_cancelled());
        // Another kind of line starts the count again.
        watch.chunk_at("{\"type\":\"item.completed\"}\n", at(1));
        watch.chunk_at(&format!("{line}\n"), at(2));
        watch.chunk_at(&format!("{line}\n"), at(3));
        assert!(!cancel.is_cancelled());
        // A line split across chunks counts once whole.
        watch.chunk_at(&line[..20], at(4));
        watch.chunk_at(&format!("{}\n", &line[20..]), at(4));
        assert!(cancel.is_cancelled());
        let ended = watch.ended("codex", Err(SeatError::Cancelled));
        let Err(SeatError::Failed { status, tail, .. }) = &ended else {
            panic!("not a failure: {ended:?}");
        };
        assert!(status.contains("2m"), "{status}");
        assert_eq!(tail, line);
        assert_eq!(pauses.after_turn("codex", "a", &ended), After::Again);
        // A cancellation that was not the watch's stays one.
        let other = pauses.watch(CancellationToken::new());
        assert!(matches!(
            other.ended("codex", Err(SeatError::Cancelled)),
            Err(SeatError::Cancelled)
        ));
    }

    #[test]
    fn other_failures_stand() {
        let (events, seen) = recording();
        let (pauses, _) = pauses(Duration::from_hours(6), events);
        assert_eq!(
            pauses.after_turn("claude", "a", &failed("error: no such file")),
            After::Done
        );
        assert!(seen.lock().unwrap().is_empty());
    }

    /// Polls `future` once, on a runtime of its own: its output if it is ready at once, `None`
    /// if it would wait (no clock involved).
    fn futures_lite<F: Future>(future: F) -> Option<F::Output> {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(async {
                let mut future = std::pin::pin!(future);
                std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(match future.as_mut().poll(cx) {
                        std::task::Poll::Ready(output) => Some(output),
                        std::task::Poll::Pending => None,
                    })
                })
                .await
            })
    }
}
