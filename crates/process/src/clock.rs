//! The clock a run's seat pauses and a turn's stall watchdog read and wait on ([`Clock`]): the
//! system's, or a [`ManualClock`] that moves only when told, so that a test (or a simulation)
//! can run a five-hour usage limit, an outage's probes, `--max-wait` or ten silent minutes of an
//! agent in no time and exactly.
//!
//! Only what is about time in the world goes through it: when a seat may run again (a reset the
//! agent names is a time of day), how long an agent has streamed "cannot reach the service", how
//! long a turn has printed nothing ([`Watchdog`](crate::Watchdog)), how long a turn's retry
//! waits after a transient failure. A turn's or a gate's deadline bounds a real process and
//! stays on tokio's timer.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

/// Where a run reads the time and waits for a later one (`RunConfig::clock` of `epic-executor`). Cheap to clone;
/// [`Clock::system`] by default.
#[derive(Clone, Default)]
pub struct Clock(Source);

#[derive(Clone, Default)]
enum Source {
    #[default]
    System,
    Manual(Arc<watch::Sender<Hands>>),
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::System => f.write_str("Clock::System"),
            Source::Manual(hands) => write!(f, "Clock::Manual({})", hands.borrow().now),
        }
    }
}

impl Clock {
    /// The system's clock: [`Timestamp::now`], and tokio's timer to wait.
    pub fn system() -> Self {
        Self(Source::System)
    }

    /// The time now.
    pub fn now(&self) -> Timestamp {
        match &self.0 {
            Source::System => Timestamp::now(),
            Source::Manual(hands) => hands.borrow().now,
        }
    }

    /// Completes once the clock reads `until` or later (at once if it already does).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn wait_until(&self, until: Timestamp) {
        match &self.0 {
            Source::System => {
                let left = Duration::try_from(until.duration_since(Timestamp::now()))
                    .unwrap_or(Duration::ZERO);
                if !left.is_zero() {
                    tokio::time::sleep(left).await;
                }
            }
            Source::Manual(hands) => {
                let mut seen = hands.subscribe();
                if hands.borrow().now >= until {
                    return;
                }
                let _waiting = Waiting::new(hands, until);
                // The sender lives as long as `hands`: `wait_for` cannot fail. What it returns
                // borrows the hands, which `_waiting` needs back when dropped.
                drop(seen.wait_for(|hands| hands.now >= until).await);
            }
        }
    }
}

/// A manual clock's time and the times its waiters wait for.
#[derive(Debug)]
struct Hands {
    now: Timestamp,
    /// Each time a [`Clock::wait_until`] waits for, with how many wait for it.
    waiters: std::collections::BTreeMap<Timestamp, usize>,
}

/// One waiter of a manual clock, counted from its start until it ends or is dropped.
struct Waiting<'a> {
    hands: &'a watch::Sender<Hands>,
    until: Timestamp,
}

impl<'a> Waiting<'a> {
    fn new(hands: &'a watch::Sender<Hands>, until: Timestamp) -> Self {
        hands.send_modify(|hands| *hands.waiters.entry(until).or_default() += 1);
        Self { hands, until }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.hands.send_modify(|hands| {
            if let Some(count) = hands.waiters.get_mut(&self.until) {
                *count -= 1;
                if *count == 0 {
                    hands.waiters.remove(&self.until);
                }
            }
        });
    }
}

/// A clock that moves only when told ([`advance`](Self::advance), [`set`](Self::set)), for
/// tests and simulations: [`clock`](Self::clock) is the [`Clock`] to hand a run, and
/// [`waiter`](Self::waiter) tells when the run waits on it, and for what time.
///
/// ```
/// use std::time::Duration;
///
/// use epic_process::ManualClock;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let start = "2030-01-01T00:00:00Z".parse().unwrap();
/// let manual = ManualClock::new(start);
/// let clock = manual.clock();
/// let waiting = tokio::spawn(async move {
///     clock.wait_until(start + Duration::from_hours(5)).await;
/// });
/// // Waits until the task waits on the clock, then moves the clock past its time.
/// assert_eq!(manual.waiter().await, start + Duration::from_hours(5));
/// manual.advance(Duration::from_hours(5));
/// waiting.await.unwrap();
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock(Arc<watch::Sender<Hands>>);

impl ManualClock {
    /// A clock that reads `start` until moved.
    pub fn new(start: Timestamp) -> Self {
        Self(Arc::new(watch::Sender::new(Hands {
            now: start,
            waiters: std::collections::BTreeMap::new(),
        })))
    }

    /// The [`Clock`] that reads this one.
    pub fn clock(&self) -> Clock {
        Clock(Source::Manual(Arc::clone(&self.0)))
    }

    /// The time it reads.
    pub fn now(&self) -> Timestamp {
        self.0.borrow().now
    }

    /// Moves the clock `by` later, waking the waiters whose time it reaches.
    pub fn advance(&self, by: Duration) {
        let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
        self.0.send_modify(|hands| {
            hands.now = hands.now.checked_add(by).unwrap_or(Timestamp::MAX);
        });
    }

    /// Sets the clock to `to` (later or earlier, as a system clock may be set), waking the
    /// waiters whose time it reaches.
    pub fn set(&self, to: Timestamp) {
        self.0.send_modify(|hands| hands.now = to);
    }

    /// Waits until something waits on the clock ([`Clock::wait_until`] for a time it does not
    /// read yet): the earliest time a waiter waits for.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn waiter(&self) -> Timestamp {
        let mut seen = self.0.subscribe();
        let hands = seen.wait_for(|hands| !hands.waiters.is_empty()).await.ok();
        // `self` holds the sender: the wait cannot fail, and what it saw has a waiter.
        hands
            .and_then(|hands| hands.waiters.keys().next().copied())
            .unwrap_or(Timestamp::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_a_waiter_only_once_it_reaches_its_time() {
        let start: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        let manual = ManualClock::new(start);
        let clock = manual.clock();
        let until = start + SignedDuration::from_secs(60);
        let waiting = tokio::spawn(async move { clock.wait_until(until).await });
        assert_eq!(manual.waiter().await, until);
        manual.advance(Duration::from_secs(59));
        // Still waiting: woken, it found the time not reached and waits on.
        assert_eq!(manual.waiter().await, until);
        assert!(!waiting.is_finished());
        manual.advance(Duration::from_secs(1));
        waiting.await.unwrap();
        assert!(manual.0.borrow().waiters.is_empty());
        // A time already reached does not wait.
        manual.clock().wait_until(start).await;
        assert_eq!(manual.now(), until);
    }

    #[tokio::test]
    async fn a_dropped_waiter_is_no_longer_counted() {
        let start: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        let manual = ManualClock::new(start);
        let clock = manual.clock();
        let waiting = tokio::spawn(async move {
            clock.wait_until(start + SignedDuration::from_secs(1)).await;
        });
        manual.waiter().await;
        waiting.abort();
        assert!(waiting.await.unwrap_err().is_cancelled());
        assert!(manual.0.borrow().waiters.is_empty());
    }
}
