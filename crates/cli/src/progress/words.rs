//! The run's figures and states in words, as the live view, `epic status` and `epic land`
//! show them: durations, token counts, first lines, a seat's pause, a flaky gate.

use std::fmt::Write as _;
use std::time::Duration;

/// `0:07`, `12:34`, `1:02:03`.
pub(crate) fn elapsed(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// `950`, `1.2k`, `3.4M`.
pub(crate) fn thousands(n: u64) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "a rounded figure for display; precision is not the point"
    )]
    let x = n as f64;
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{:.1}M", x / 1e6)
    }
}

/// The first line of `text`, with `…` when there is more.
pub(crate) fn first_line(text: &str) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default().trim().to_owned();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}

/// A commit id shortened for people.
pub(crate) fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// A seat's pause for people, in local time: `paused until 15:02 (claude: usage limit)`, or for
/// an outage `paused: claude: API unreachable since 14:02, next probe 14:06`; a time on
/// another day carries its date.
pub(crate) fn paused_until(seat: &str, since: &str, until: &str, reason: &str) -> String {
    if reason == "outage" && !since.is_empty() {
        format!(
            "paused: {seat}: API unreachable since {}, next probe {}",
            local(since),
            local(until)
        )
    } else {
        format!("paused until {} ({seat}: {reason})", local(until))
    }
}

/// An RFC 3339 time in the local time zone: `15:00` today, `Dec 7 15:00` another day; the
/// text as it is when it is not a time.
pub(crate) fn local(time: &str) -> String {
    match time.parse::<jiff::Timestamp>() {
        Ok(time) => {
            let zone = jiff::tz::TimeZone::system();
            let local = time.to_zoned_datetime(zone.clone());
            if local.date() == jiff::Timestamp::now().to_zoned_datetime(zone).date() {
                local.strftime("%H:%M").to_string()
            } else {
                local.strftime("%b %-d %H:%M").to_string()
            }
        }
        Err(_) => time.to_owned(),
    }
}

/// `10m`, `90s`, `1h30m`: how long a turn was silent.
pub(crate) fn silence(secs: u64) -> String {
    let (hours, minutes, seconds) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut words = String::new();
    for (n, unit) in [(hours, 'h'), (minutes, 'm'), (seconds, 's')] {
        if n > 0 {
            write!(words, "{n}{unit}").ok();
        }
    }
    if words.is_empty() {
        "0s".to_owned()
    } else {
        words
    }
}

/// A flaky gate in words: the command, how its first run ended with the last line of its
/// output, and the run that passed (what the live view and `epic land` show).
pub(crate) fn flaky(command: &str, runs: u32, status: &str, output: &str) -> String {
    let last = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty());
    let first = match last {
        Some(line) => format!("{status}: {line}"),
        None => status.to_owned(),
    };
    format!("gate `{command}` is flaky: red ({first}), green on run {runs}; passed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_reads_in_local_time() {
        let until = jiff::Timestamp::now()
            .to_zoned_datetime(jiff::tz::TimeZone::system())
            .with()
            .hour(23)
            .minute(59)
            .build()
            .unwrap();
        assert_eq!(
            paused_until("claude", "", &until.timestamp().to_string(), "usage limit"),
            "paused until 23:59 (claude: usage limit)"
        );
        let since = until.with().hour(23).minute(41).build().unwrap();
        assert_eq!(
            paused_until(
                "codex",
                &since.timestamp().to_string(),
                &until.timestamp().to_string(),
                "outage"
            ),
            "paused: codex: API unreachable since 23:41, next probe 23:59"
        );
        assert_eq!(
            paused_until("codex", "", "2020-01-02T03:04:05Z", "outage")
                .split_once(" (")
                .map(|(_, seat)| seat),
            Some("codex: outage)")
        );
    }

    #[test]
    fn figures_for_people() {
        assert_eq!(elapsed(Duration::from_secs(7)), "0:07");
        assert_eq!(elapsed(Duration::from_secs(3723)), "1:02:03");
        assert_eq!(thousands(950), "950");
        assert_eq!(thousands(1234), "1.2k");
        assert_eq!(thousands(3_400_000), "3.4M");
        assert_eq!(first_line("a\nb"), "a …");
    }
}
