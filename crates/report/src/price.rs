//! [`PriceTable`]: what a seat's tokens cost, by name prefix, with a default for each preset.

use crate::tokens::Usage;

/// The month the default prices were read.
pub const PRICES_AS_OF: &str = "2026-07";

/// A price in US dollars per million tokens, input (the prompt) and output (the reply).
///
/// Both figures are finite and non-negative, so a cost computed from a `Price` is a cost.
///
/// ```
/// use epic_report::{Price, Usage};
///
/// let sonnet = Price::new(3.0, 15.0)?;
/// let usage = Usage { prompt: 1_000_000, completion: 100_000, total: 1_100_000 };
/// assert_eq!(sonnet.cost(&usage), 4.5);
/// assert!(Price::new(-1.0, 15.0).is_err());
/// # Ok::<(), epic_report::PriceError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    input_per_million: f64,
    output_per_million: f64,
}

/// A price that is negative or not a finite number.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("a price must be a finite, non-negative number of dollars per million tokens, not {value}")]
pub struct PriceError {
    /// The rejected figure.
    pub value: f64,
}

impl Price {
    /// A price of `input` and `output` dollars per million prompt and reply tokens.
    pub fn new(input: f64, output: f64) -> Result<Self, PriceError> {
        for value in [input, output] {
            if !value.is_finite() || value < 0.0 {
                return Err(PriceError { value });
            }
        }
        Ok(Self {
            input_per_million: input,
            output_per_million: output,
        })
    }

    /// Free: the built-in script seat.
    pub const FREE: Self = Self {
        input_per_million: 0.0,
        output_per_million: 0.0,
    };

    /// Dollars per million input (prompt) tokens.
    pub fn input_per_million(&self) -> f64 {
        self.input_per_million
    }

    /// Dollars per million output (reply) tokens.
    pub fn output_per_million(&self) -> f64 {
        self.output_per_million
    }

    /// The cost in dollars of `usage` at this price.
    #[expect(
        clippy::cast_precision_loss,
        reason = "token counts are estimates; above 2^53 tokens the last digits do not matter"
    )]
    pub fn cost(&self, usage: &Usage) -> f64 {
        usage.prompt as f64 / 1e6 * self.input_per_million
            + usage.completion as f64 / 1e6 * self.output_per_million
    }

    /// A price from figures known to be valid (the defaults).
    const fn known(input_per_million: f64, output_per_million: f64) -> Self {
        Self {
            input_per_million,
            output_per_million,
        }
    }
}

/// One line of a [`PriceTable`]: names starting with `prefix` cost `price`, or have no known
/// price when `price` is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    /// The start of the seat or model names this line prices.
    pub prefix: String,
    /// The price, or `None` for "known to have no known price", which stops the search so a
    /// broader line further down cannot misprice the name.
    pub price: Option<Price>,
}

/// Prices by seat or model name: the first rate whose prefix starts the name wins.
///
/// A name with no matching rate, or whose first matching rate has no price, has no price and so no
/// cost: an unknown price is never guessed. [`PriceTable::default`] prices the presets:
///
/// | prefix | $ in / out per million | why |
/// | --- | --- | --- |
/// | `claude-fable-5`, `claude-opus-4`, `claude-sonnet-4`, `claude-haiku-4` | 10/50, 15/75, 3/15, 1/5 | model names |
/// | `gemini-2.5-pro`, `gemini-2.5-flash` | 1.25/10, 0.3/2.5 | model names |
/// | `gpt-5.5` | 5/30 | model name |
/// | `grok-4.5`, `grok-4.3`, `grok-4.20`, `grok-build-0.1` | 2/6, 1.25/2.5, 1.25/2.5, 1/2 | model names |
/// | `claude-`, `gemini-`, `gpt-`, `grok-`, `codex-` | unknown | other models of those families are not priced as the preset |
/// | `claude` | 3/15 | the `claude` seat: a Sonnet-class model |
/// | `codex` | 5/30 | the `codex` seat: GPT-5.5 |
/// | `gemini` | 1.25/10 | the `gemini` seat: Gemini 2.5 Pro |
/// | `script` | 0/0 | the built-in script seat runs no model |
/// | `aider`, `opencode`, `exec:` | unknown | the model is the user's choice: configure it |
///
/// Prices as of [`PRICES_AS_OF`]; they go stale, hence [`merge`](Self::merge).
///
/// ```
/// use epic_report::{Price, PriceTable};
///
/// let prices = PriceTable::default();
/// assert_eq!(prices.price_of("claude"), Some(Price::new(3.0, 15.0)?));
/// assert_eq!(prices.price_of("claude-opus-4-1"), Some(Price::new(15.0, 75.0)?));
/// assert_eq!(prices.price_of("claude-opus-9"), None, "not the preset's price");
/// assert_eq!(prices.price_of("aider"), None);
///
/// let ours = PriceTable::empty().with("aider", Price::new(0.5, 1.0)?);
/// let prices = prices.merge(ours);
/// assert_eq!(prices.price_of("aider"), Some(Price::new(0.5, 1.0)?));
/// # Ok::<(), epic_report::PriceError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    rates: Vec<Rate>,
}

impl Default for PriceTable {
    /// The defaults for the presets (see the table above).
    fn default() -> Self {
        const PRICED: &[(&str, f64, f64)] = &[
            ("claude-fable-5", 10.0, 50.0),
            ("claude-opus-4", 15.0, 75.0),
            ("claude-sonnet-4", 3.0, 15.0),
            ("claude-haiku-4", 1.0, 5.0),
            ("gemini-2.5-pro", 1.25, 10.0),
            ("gemini-2.5-flash", 0.3, 2.5),
            ("gpt-5.5", 5.0, 30.0),
            ("grok-4.5", 2.0, 6.0),
            ("grok-4.3", 1.25, 2.5),
            ("grok-4.20", 1.25, 2.5),
            ("grok-build-0.1", 1.0, 2.0),
        ];
        const FAMILIES: &[&str] = &["claude-", "gemini-", "gpt-", "grok-", "codex-"];
        const SEATS: &[(&str, f64, f64)] = &[
            ("claude", 3.0, 15.0),
            ("codex", 5.0, 30.0),
            ("gemini", 1.25, 10.0),
            ("script", 0.0, 0.0),
        ];
        const UNPRICED_SEATS: &[&str] = &["aider", "opencode", "exec:", "acp:"];

        let priced = |&(prefix, input, output): &(&str, f64, f64)| Rate {
            prefix: prefix.to_owned(),
            price: Some(Price::known(input, output)),
        };
        let unknown = |prefix: &&str| Rate {
            prefix: (*prefix).to_owned(),
            price: None,
        };
        Self {
            rates: PRICED
                .iter()
                .map(priced)
                .chain(FAMILIES.iter().map(unknown))
                .chain(SEATS.iter().map(priced))
                .chain(UNPRICED_SEATS.iter().map(unknown))
                .collect(),
        }
    }
}

impl PriceTable {
    /// A table with no rates: nothing has a price.
    pub fn empty() -> Self {
        Self { rates: Vec::new() }
    }

    /// This table with one more rate, tried after the existing ones.
    #[must_use]
    pub fn with(mut self, prefix: impl Into<String>, price: Price) -> Self {
        self.rates.push(Rate {
            prefix: prefix.into(),
            price: Some(price),
        });
        self
    }

    /// This table with one more rate that marks names starting with `prefix` as having no known
    /// price, tried after the existing ones.
    #[must_use]
    pub fn with_unknown(mut self, prefix: impl Into<String>) -> Self {
        self.rates.push(Rate {
            prefix: prefix.into(),
            price: None,
        });
        self
    }

    /// This table under `overrides`: the overriding rates come first, in their order, and a rate of
    /// this table whose prefix an override repeats is dropped.
    #[must_use]
    pub fn merge(self, overrides: PriceTable) -> Self {
        let mut rates = overrides.rates;
        let shadowed = rates.len();
        for rate in self.rates {
            if !rates[..shadowed].iter().any(|o| o.prefix == rate.prefix) {
                rates.push(rate);
            }
        }
        Self { rates }
    }

    /// The rates, in the order they are tried.
    pub fn rates(&self) -> &[Rate] {
        &self.rates
    }

    /// The first rate whose prefix starts `name`, if any.
    pub fn rate_of(&self, name: &str) -> Option<&Rate> {
        self.rates
            .iter()
            .find(|rate| name.starts_with(&rate.prefix))
    }

    /// The price of `name` (a seat or model name), or `None` if it has no known price.
    pub fn price_of(&self, name: &str) -> Option<Price> {
        self.rate_of(name).and_then(|rate| rate.price)
    }

    /// The cost in dollars of `usage` by `name`, or `None` if `name` has no known price.
    pub fn cost_of(&self, name: &str, usage: &Usage) -> Option<f64> {
        self.price_of(name).map(|price| price.cost(usage))
    }
}
