//! The run's budget (`--budget-usd`): the epic's spend so far, across runs, against a limit,
//! checked before every agent turn.
//!
//! The spend is what the earlier runs' report lists by seat ([`EpicReport::spent_usd`]) plus
//! every turn of this run as it ends: the agents' reported costs where they report them,
//! estimates priced from the table where not (a turn of a seat with no known price adds
//! nothing). Once the spend reaches the limit no new turn starts ([`Budget::reached`], asked by
//! every chat before its turn); turns already running finish and add their cost, so the spend
//! may end a little over the limit, which the reason says.
//!
//! [`EpicReport::spent_usd`]: epic_report::EpicReport::spent_usd

use std::fmt;
use std::sync::{Mutex, PoisonError};

use epic_report::format_usd;

/// The budget of a run: a limit (none: unlimited) and the spend so far.
#[derive(Debug)]
pub struct Budget {
    limit: Option<f64>,
    spent: Mutex<f64>,
}

/// The budget is reached: `spent` of `limit` dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetReached {
    /// The epic's spend so far, in US dollars.
    pub spent: f64,
    /// The limit, in US dollars.
    pub limit: f64,
}

impl fmt::Display for BudgetReached {
    /// `budget reached: $10.02 of $10.00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "budget reached: ${} of ${}",
            format_usd(self.spent),
            format_usd(self.limit)
        )
    }
}

impl Budget {
    /// A budget of `limit` dollars (none: unlimited) of which `earlier` (the earlier runs'
    /// spend) is spent.
    pub fn new(limit: Option<f64>, earlier: f64) -> Self {
        Self {
            limit,
            spent: Mutex::new(if earlier.is_finite() { earlier } else { 0.0 }),
        }
    }

    /// No limit: never reached (a task loop or an architect run on its own).
    #[cfg(test)]
    pub fn unlimited() -> Self {
        Self::new(None, 0.0)
    }

    /// Adds the cost of a turn that ended (a cost that is not a finite, non-negative number
    /// adds nothing).
    pub fn spend(&self, cost_usd: f64) {
        if cost_usd.is_finite() && cost_usd > 0.0 {
            *self.spent.lock().unwrap_or_else(PoisonError::into_inner) += cost_usd;
        }
    }

    /// The spend so far.
    pub fn spent(&self) -> f64 {
        *self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the spend has reached the limit: then no new turn starts.
    pub fn reached(&self) -> Option<BudgetReached> {
        let limit = self.limit?;
        let spent = self.spent();
        (spent >= limit).then_some(BudgetReached { spent, limit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reached_once_the_spend_is_at_the_limit() {
        let budget = Budget::new(Some(10.0), 9.5);
        assert_eq!(budget.reached(), None);
        budget.spend(0.52);
        let reached = budget.reached().expect("reached");
        assert_eq!(reached.to_string(), "budget reached: $10.02 of $10.00");
        budget.spend(f64::NAN);
        budget.spend(-3.0);
        assert!((budget.spent() - 10.02).abs() < 1e-9);
        let unlimited = Budget::unlimited();
        unlimited.spend(1e9);
        assert_eq!(unlimited.reached(), None);
    }
}
