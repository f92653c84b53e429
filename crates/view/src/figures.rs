//! The figures of a row in words, as the table and the plain text both print them: elapsed
//! time, tokens, cost, a story's turn.

use crate::model::Row;

/// Seconds as `12s`, `3m05s`, `1h02m`.
pub(crate) fn elapsed(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// Tokens as `950`, `12.3k`, `1.2M`.
pub(crate) fn tokens(count: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a figure shown to one decimal")]
    let value = count as f64;
    match count {
        0..1000 => count.to_string(),
        1000..1_000_000 => format!("{:.1}k", value / 1e3),
        _ => format!("{:.1}M", value / 1e6),
    }
}

/// Dollars as `$0.42`.
pub(crate) fn usd(value: f64) -> String {
    format!("${value:.2}")
}

/// The cells of a row, in the table's order: story, status, wave, turn (seat and role), time,
/// rounds/revisions, tokens, cost, what it is doing (or why it stopped).
pub(crate) fn cells(row: &Row) -> [String; 9] {
    let turn = match (&row.seat, &row.role) {
        (Some(seat), Some(role)) => format!("{role}@{seat}"),
        _ => String::new(),
    };
    [
        row.id.clone(),
        row.status.word().to_owned(),
        row.wave.map(|wave| wave.to_string()).unwrap_or_default(),
        turn,
        row.elapsed_secs.map(elapsed).unwrap_or_default(),
        format!("{}/{}", row.rounds, row.revisions),
        if row.tokens == 0 {
            String::new()
        } else {
            tokens(row.tokens)
        },
        row.cost_usd.map(usd).unwrap_or_default(),
        row.doing
            .clone()
            .or_else(|| row.reason.clone())
            .unwrap_or_default()
            .replace('\n', " "),
    ]
}

/// The table's column titles, in [`cells`]' order.
pub(crate) const TITLES: [&str; 9] = [
    "STORY", "STATUS", "WAVE", "TURN", "TIME", "RND/REV", "TOKENS", "COST", "DOING",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_in_words() {
        assert_eq!(elapsed(12), "12s");
        assert_eq!(elapsed(185), "3m05s");
        assert_eq!(elapsed(3720), "1h02m");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_340), "12.3k");
        assert_eq!(tokens(1_250_000), "1.2M");
        assert_eq!(usd(0.4234), "$0.42");
    }
}
