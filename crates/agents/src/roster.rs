//! A role's roster: the seats that may take its turns, in the order they are preferred
//! (`--coder claude,codex`). The run gives a turn to the first seat of the roster that is not
//! paused (a usage limit, an outage), so one seat's limit does not stop the role's work while
//! another seat is free.

use std::fmt;
use std::sync::Arc;

use crate::Seat;

/// The seats of one role, in order of preference; never empty.
///
/// ```
/// use std::sync::Arc;
/// use epic_agents::{CommandSeat, Preset, Roster, Seat};
///
/// let claude: Arc<dyn Seat> = Arc::new(CommandSeat::preset(Preset::Claude));
/// let codex: Arc<dyn Seat> = Arc::new(CommandSeat::preset(Preset::Codex));
/// let roster = Roster::new(vec![claude, codex]).expect("two seats");
/// assert_eq!(roster.to_string(), "claude,codex");
/// assert_eq!(roster.first().name(), "claude");
/// assert_eq!(roster.index_of("codex"), Some(1));
/// assert!(Roster::new(Vec::new()).is_none());
/// ```
#[derive(Clone)]
pub struct Roster {
    seats: Arc<[Arc<dyn Seat>]>,
}

impl Roster {
    /// A roster of `seats`, in order of preference; `None` when there is none. A seat named
    /// twice stays once, where it first stood.
    pub fn new(seats: Vec<Arc<dyn Seat>>) -> Option<Self> {
        let mut unique: Vec<Arc<dyn Seat>> = Vec::with_capacity(seats.len());
        for seat in seats {
            if !unique.iter().any(|kept| kept.name() == seat.name()) {
                unique.push(seat);
            }
        }
        (!unique.is_empty()).then(|| Self {
            seats: unique.into(),
        })
    }

    /// The roster of one seat.
    pub fn one(seat: Arc<dyn Seat>) -> Self {
        Self {
            seats: Arc::from([seat]),
        }
    }

    /// The seats, in order of preference.
    pub fn seats(&self) -> &[Arc<dyn Seat>] {
        &self.seats
    }

    /// The seat preferred when none is paused.
    pub fn first(&self) -> &Arc<dyn Seat> {
        &self.seats[0]
    }

    /// The seat at `index` (taken modulo the roster's length).
    pub fn get(&self, index: usize) -> &Arc<dyn Seat> {
        &self.seats[index % self.seats.len()]
    }

    /// How many seats the roster has (at least 1).
    pub fn len(&self) -> usize {
        self.seats.len()
    }

    /// Always `false`: a roster has a seat.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Where the seat named `name` stands, if it is on the roster.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.seats.iter().position(|seat| seat.name() == name)
    }

    /// The seats' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.seats.iter().map(|seat| seat.name()).collect()
    }
}

impl<S: Seat + 'static> From<Arc<S>> for Roster {
    fn from(seat: Arc<S>) -> Self {
        Self::one(seat)
    }
}

impl From<Arc<dyn Seat>> for Roster {
    fn from(seat: Arc<dyn Seat>) -> Self {
        Self::one(seat)
    }
}

/// The names joined with commas, as `--coder` takes them.
impl fmt::Display for Roster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

impl fmt::Debug for Roster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
