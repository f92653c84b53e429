//! Token counts ([`Usage`]) and their estimate from text: about four characters a token, where
//! "characters" are Unicode scalar values (see `usage.rs` for why). Below the prices, which
//! price a count, and the usage totals, which add them up.

use std::ops::{Add, AddAssign};

/// About how many characters make a token.
pub(crate) const CHARS_PER_TOKEN: u64 = 4;

/// Token counts of one turn or many: prompt (input), completion (reply, output) and their total.
///
/// Adding saturates at `u64::MAX` rather than wrapping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt: u64,
    /// Completion (reply, output) tokens.
    pub completion: u64,
    /// `prompt + completion`.
    pub total: u64,
}

/// The estimated usage of one turn: `ceil(chars / 4)` tokens each for the prompt and the reply.
///
/// ```
/// let usage = epic_report::estimate_tokens(400, 101);
/// assert_eq!((usage.prompt, usage.completion, usage.total), (100, 26, 126));
/// ```
pub fn estimate_tokens(prompt_chars: u64, reply_chars: u64) -> Usage {
    let prompt = prompt_chars.div_ceil(CHARS_PER_TOKEN);
    let completion = reply_chars.div_ceil(CHARS_PER_TOKEN);
    Usage {
        prompt,
        completion,
        total: prompt.saturating_add(completion),
    }
}

/// The number of characters (Unicode scalar values) in `text`, as usage estimates count them.
///
/// ```
/// assert_eq!(epic_report::count_chars("naïve 🦀"), 7);
/// ```
pub fn count_chars(text: &str) -> u64 {
    u64::try_from(text.chars().count()).unwrap_or(u64::MAX)
}

impl Usage {
    /// The estimated usage of a turn with this prompt and reply text.
    pub fn of_text(prompt: &str, reply: &str) -> Self {
        estimate_tokens(count_chars(prompt), count_chars(reply))
    }
}

impl Add for Usage {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            prompt: self.prompt.saturating_add(other.prompt),
            completion: self.completion.saturating_add(other.completion),
            total: self.total.saturating_add(other.total),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}
