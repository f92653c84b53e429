//! The seat check of a run's seats ([`check_seats`]): every seat checked, and every one that
//! cannot take turns named at once ([`SeatsNotReady`]).

use std::path::Path;
use std::sync::Arc;

use crate::readiness::NotReady;
use crate::seat::Seat;

/// The seats a check found unable to take turns, in the order they were checked: at least one.
///
/// Shown as each seat's [`NotReady`], one after another, so that one check names every seat to
/// fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatsNotReady(pub Vec<NotReady>);

impl std::fmt::Display for SeatsNotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, seat) in self.0.iter().enumerate() {
            if n > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{seat}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SeatsNotReady {}

/// Checks each of `seats` in `dir`, one after another ([`Seat::ready`]), and fails with every
/// one that cannot take turns, not only the first.
///
/// # Errors
///
/// [`SeatsNotReady`] with each seat that failed its check, in the order given.
pub async fn check_seats<'a>(
    seats: impl IntoIterator<Item = &'a Arc<dyn Seat>>,
    dir: &Path,
) -> Result<(), SeatsNotReady> {
    let mut not_ready = Vec::new();
    for seat in seats {
        if let Err(problem) = seat.ready(dir).await {
            not_ready.push(problem);
        }
    }
    if not_ready.is_empty() {
        Ok(())
    } else {
        Err(SeatsNotReady(not_ready))
    }
}
