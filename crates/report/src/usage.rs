//! Usage: tokens and costs the agents reported ([`ReportedUsage`]), else estimated from
//! character counts and priced from a [`PriceTable`]; totals by seat, with where each figure
//! came from ([`UsageSource`]).
//!
//! An agent that reports its usage (Claude Code's, Codex's and Gemini CLI's structured output)
//! is taken at its word; a turn without (any other command, output that did not parse) is
//! estimated: about four characters a token over its prompt and reply.
//!
//! "Characters" are Unicode scalar values (`str::chars`). The reference counted UTF-16 code
//! units; the two differ only for characters outside the Basic Multilingual Plane (emoji, some
//! CJK), which count once here and twice there. Either is a rough proxy for a tokenizer; this one
//! is what Rust strings count natively and does not depend on an encoding.

use std::collections::BTreeMap;
use std::iter::Sum;
use std::ops::{Add, AddAssign};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::price::PriceTable;
use crate::tokens::{Usage, count_chars, estimate_tokens};

/// The usage an agent reported for one turn (its structured output).
///
/// `input_tokens` counts every prompt token, cached ones included; `cost_usd` is absent when the
/// agent reports no cost (Codex): the tokens are then priced from the [`PriceTable`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReportedUsage {
    /// Prompt (input) tokens, cached ones included.
    pub input_tokens: u64,
    /// Reply (output) tokens.
    pub output_tokens: u64,
    /// The cost in US dollars, when the agent reports one.
    pub cost_usd: Option<f64>,
}

/// Where a usage figure came from.
///
/// A turn's figures are `reported` when the agent reported both its tokens and its cost, and
/// `estimated` when it reported neither (tokens from character counts, priced from the table);
/// a turn whose agent reported tokens but no cost (Codex) is `mixed`: reported tokens, a cost
/// priced from the table. Many turns together are `reported` or `estimated` when all of them
/// are, else `mixed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UsageSource {
    /// Every figure is the agents' own report.
    Reported,
    /// Every figure is an estimate.
    Estimated,
    /// Some figures are reported, some estimated.
    Mixed,
}

impl UsageSource {
    /// The source of figures from `self` and `other` together.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        if self == other { self } else { Self::Mixed }
    }

    /// The source as the report writes it: `reported`, `estimated` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reported => "reported",
            Self::Estimated => "estimated",
            Self::Mixed => "mixed",
        }
    }
}

/// The estimate of one turn: its usage and, when the seat has a known price, its cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimated tokens.
    pub usage: Usage,
    /// The estimated cost in dollars, or `None` when the seat has no known price.
    pub cost_usd: Option<f64>,
}

/// Usage added up over turns, with the cost summed over the turns that had a price.
///
/// A cost is only as good as its least-known turn: [`cost_usd`](Self::cost_usd) is `None` as soon
/// as one turn had no known price, so a total is never silently an undercount. The partial sum
/// stays available as [`priced_cost_usd`](Self::priced_cost_usd) with the number of
/// [`unpriced_turns`](Self::unpriced_turns), for a rendering that says what it leaves out.
///
/// ```
/// use epic_report::{Estimate, UsageTotals, estimate_tokens};
///
/// let mut totals = UsageTotals::default();
/// totals.add(Estimate { usage: estimate_tokens(400, 100), cost_usd: Some(0.002) });
/// assert_eq!(totals.cost_usd(), Some(0.002));
/// totals.add(Estimate { usage: estimate_tokens(40, 10), cost_usd: None });
/// assert_eq!((totals.usage.total, totals.turns), (138, 2));
/// assert_eq!(totals.cost_usd(), None);
/// assert_eq!((totals.priced_cost_usd, totals.unpriced_turns), (0.002, 1));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    /// How many turns were added.
    pub turns: u64,
    /// Their tokens.
    pub usage: Usage,
    /// The cost of the turns that had a known price.
    pub priced_cost_usd: f64,
    /// How many turns had no known price.
    pub unpriced_turns: u64,
    /// How many turns' tokens the agent reported (the others' are estimates).
    pub reported_token_turns: u64,
    /// How many turns' costs the agent reported (the others' are priced from the table).
    pub reported_cost_turns: u64,
}

impl UsageTotals {
    /// Adds one turn whose agent reported its tokens, and its cost when `cost_reported`.
    pub fn add_reported(&mut self, turn: Estimate, cost_reported: bool) {
        self.add(turn);
        self.reported_token_turns = self.reported_token_turns.saturating_add(1);
        if cost_reported {
            self.reported_cost_turns = self.reported_cost_turns.saturating_add(1);
        }
    }

    /// Where the figures came from (see [`UsageSource`]); no turns are `estimated`.
    ///
    /// ```
    /// use epic_report::{Estimate, UsageSource, UsageTotals, estimate_tokens};
    ///
    /// let turn = Estimate { usage: estimate_tokens(400, 100), cost_usd: Some(0.01) };
    /// let mut totals = UsageTotals::default();
    /// totals.add_reported(turn, true);
    /// assert_eq!(totals.source(), UsageSource::Reported);
    /// totals.add(turn);
    /// assert_eq!(totals.source(), UsageSource::Mixed);
    /// ```
    pub fn source(&self) -> UsageSource {
        if self.turns > 0
            && self.reported_token_turns >= self.turns
            && self.reported_cost_turns >= self.turns
        {
            UsageSource::Reported
        } else if self.reported_token_turns == 0 && self.reported_cost_turns == 0 {
            UsageSource::Estimated
        } else {
            UsageSource::Mixed
        }
    }

    /// Adds one estimated turn.
    pub fn add(&mut self, turn: Estimate) {
        self.turns = self.turns.saturating_add(1);
        self.usage += turn.usage;
        match turn.cost_usd {
            Some(cost) => self.priced_cost_usd += cost,
            None => self.unpriced_turns = self.unpriced_turns.saturating_add(1),
        }
    }

    /// The total cost, or `None` if any turn had no known price (then the total is unknown, and
    /// [`priced_cost_usd`](Self::priced_cost_usd) is only a lower bound). No turns cost nothing.
    pub fn cost_usd(&self) -> Option<f64> {
        (self.unpriced_turns == 0).then_some(self.priced_cost_usd)
    }

    /// Whether some turns had a price and some did not.
    pub fn is_cost_partial(&self) -> bool {
        self.unpriced_turns > 0 && self.unpriced_turns < self.turns
    }
}

impl Add for UsageTotals {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            turns: self.turns.saturating_add(other.turns),
            usage: self.usage + other.usage,
            priced_cost_usd: self.priced_cost_usd + other.priced_cost_usd,
            unpriced_turns: self.unpriced_turns.saturating_add(other.unpriced_turns),
            reported_token_turns: self
                .reported_token_turns
                .saturating_add(other.reported_token_turns),
            reported_cost_turns: self
                .reported_cost_turns
                .saturating_add(other.reported_cost_turns),
        }
    }
}

impl AddAssign for UsageTotals {
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

impl Sum for UsageTotals {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Add::add)
    }
}

/// Records the estimated usage of seat turns, by seat, priced from a [`PriceTable`].
///
/// One meter per story gives the story's figures ([`totals`](Self::totals)); absorbing the
/// stories' meters into one ([`absorb`](Self::absorb)) gives the run's usage by seat
/// ([`seat_usage`](Self::seat_usage)), which the report carries as
/// [`EpicReport::seats`](crate::EpicReport::seats). Seats iterate in name order.
///
/// ```
/// use epic_report::{PriceTable, UsageMeter};
///
/// let mut meter = UsageMeter::new(PriceTable::default());
/// meter.record("claude", 400, 100); // 125 tokens
/// meter.record_text("script", "apply the file blocks", "done");
/// let totals = meter.totals();
/// assert_eq!((totals.turns, totals.usage.total), (2, 125 + 6 + 1));
/// assert!(totals.cost_usd().is_some());
///
/// meter.record("aider", 40, 40);
/// assert_eq!(meter.totals().cost_usd(), None, "aider has no known price");
/// assert_eq!(meter.seat_usage()[0].seat, "aider");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UsageMeter {
    prices: PriceTable,
    seats: BTreeMap<String, UsageTotals>,
}

impl UsageMeter {
    /// An empty meter pricing turns from `prices`.
    pub fn new(prices: PriceTable) -> Self {
        Self {
            prices,
            seats: BTreeMap::new(),
        }
    }

    /// Records one turn of `seat` (the name the price table is keyed on: a seat or model name)
    /// with a prompt and a reply of so many characters, and returns its estimate.
    pub fn record(&mut self, seat: &str, prompt_chars: u64, reply_chars: u64) -> Estimate {
        let usage = estimate_tokens(prompt_chars, reply_chars);
        let turn = Estimate {
            usage,
            cost_usd: self.prices.cost_of(seat, &usage),
        };
        self.seats.entry(seat.to_owned()).or_default().add(turn);
        turn
    }

    /// Records one turn of `seat` whose agent reported its usage: its tokens as reported, its
    /// cost as reported or, when the agent reports none, priced from the table (a reported cost
    /// that is not a finite, non-negative number is priced from the table too).
    ///
    /// ```
    /// use epic_report::{PriceTable, ReportedUsage, UsageMeter, UsageSource};
    ///
    /// let mut meter = UsageMeter::new(PriceTable::default());
    /// meter.record_reported("claude", &ReportedUsage { input_tokens: 1000, output_tokens: 10, cost_usd: Some(0.25) });
    /// assert_eq!(meter.totals().cost_usd(), Some(0.25));
    /// assert_eq!(meter.totals().source(), UsageSource::Reported);
    /// meter.record_reported("codex", &ReportedUsage { input_tokens: 1_000_000, output_tokens: 0, cost_usd: None });
    /// assert_eq!(meter.seat("codex").unwrap().cost_usd(), Some(5.0), "priced at $5 a million");
    /// assert_eq!(meter.totals().source(), UsageSource::Mixed);
    /// ```
    pub fn record_reported(&mut self, seat: &str, reported: &ReportedUsage) -> Estimate {
        let usage = Usage {
            prompt: reported.input_tokens,
            completion: reported.output_tokens,
            total: reported.input_tokens.saturating_add(reported.output_tokens),
        };
        let cost = reported
            .cost_usd
            .filter(|cost| cost.is_finite() && *cost >= 0.0);
        let turn = Estimate {
            usage,
            cost_usd: cost.or_else(|| self.prices.cost_of(seat, &usage)),
        };
        self.seats
            .entry(seat.to_owned())
            .or_default()
            .add_reported(turn, cost.is_some());
        turn
    }

    /// Records one turn of `seat` with this prompt and reply text.
    pub fn record_text(&mut self, seat: &str, prompt: &str, reply: &str) -> Estimate {
        self.record(seat, count_chars(prompt), count_chars(reply))
    }

    /// Adds every seat's totals of `other` to this meter's (prices were applied when recorded).
    pub fn absorb(&mut self, other: &UsageMeter) {
        for (seat, totals) in &other.seats {
            *self.seats.entry(seat.clone()).or_default() += *totals;
        }
    }

    /// The totals over every seat.
    pub fn totals(&self) -> UsageTotals {
        self.seats.values().copied().sum()
    }

    /// The totals of one seat, if it recorded anything.
    pub fn seat(&self, seat: &str) -> Option<&UsageTotals> {
        self.seats.get(seat)
    }

    /// Each seat's totals, in seat-name order.
    pub fn seats(&self) -> impl Iterator<Item = (&str, &UsageTotals)> {
        self.seats
            .iter()
            .map(|(seat, totals)| (seat.as_str(), totals))
    }

    /// The price table turns are priced from.
    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }
}
