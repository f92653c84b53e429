//! RFC 3339 timestamps in UTC, formatted from `SystemTime` without a date-time crate.
//!
//! The lock's `started_at` and the events' `at` need nothing more than "this instant, in UTC, to
//! the second"; the civil-date conversion is the well-known days-from-epoch algorithm of Howard
//! Hinnant (`civil_from_days`), exact for the whole proleptic Gregorian calendar.

use std::time::{SystemTime, UNIX_EPOCH};

const SECONDS_PER_DAY: i64 = 86_400;

/// Formats `time` as an RFC 3339 UTC timestamp to the second, such as `2026-08-01T09:30:00Z`.
///
/// Instants before 1970 are formatted too (`1969-12-31T23:59:59Z`); fractions of a second are
/// dropped, never rounded up.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let time = UNIX_EPOCH + Duration::from_secs(1_785_576_600);
/// assert_eq!(state_store::rfc3339(time), "2026-08-01T09:30:00Z");
/// ```
pub fn rfc3339(time: SystemTime) -> String {
    let seconds = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => {
            let before = before.duration();
            let whole = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            // 0.5 s before the epoch is still in the second that starts at -1 s.
            if before.subsec_nanos() == 0 {
                -whole
            } else {
                -whole - 1
            }
        }
    };
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let in_day = seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day % 3600 / 60,
        in_day % 60
    )
}

/// The current instant as [`rfc3339`].
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// The Gregorian date `days` days after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are in range by construction: day in 1..=31, month in 1..=12.
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: i64) -> String {
        let time = if seconds >= 0 {
            UNIX_EPOCH + Duration::from_secs(seconds.unsigned_abs())
        } else {
            UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs())
        };
        rfc3339(time)
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(-1), "1969-12-31T23:59:59Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(253_402_300_799), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn fractions_are_truncated_towards_the_past() {
        let half_before = UNIX_EPOCH - Duration::from_millis(500);
        assert_eq!(rfc3339(half_before), "1969-12-31T23:59:59Z");
        let half_after = UNIX_EPOCH + Duration::from_millis(1500);
        assert_eq!(rfc3339(half_after), "1970-01-01T00:00:01Z");
    }
}
