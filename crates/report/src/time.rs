//! [`Timestamp`]: an RFC 3339 instant that keeps the text it was written as.
//!
//! The report only needs to parse, order and subtract instants, and to print them in UTC for the
//! timeline, so a small proleptic-Gregorian conversion replaces a date-time dependency. The crate
//! never reads the clock: callers pass their times in.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;

/// An instant written as an RFC 3339 date-time, such as `2026-03-01T09:30:00Z` or
/// `2026-03-01T10:30:00.250+01:00`.
///
/// The text is kept exactly as it was given (so a report reads back byte for byte) alongside the
/// instant it denotes, which orders and subtracts timestamps across offsets. Serialised as that
/// text. Fractions beyond nanoseconds are accepted and truncated; a leap second (`:60`) is the
/// first instant of the next minute.
///
/// Two timestamps are equal when their texts are equal; they are ordered by instant, then text.
///
/// ```
/// use report::Timestamp;
///
/// let start: Timestamp = "2026-03-01T10:30:00+01:00".parse()?;
/// let end: Timestamp = "2026-03-01T09:32:05.5Z".parse()?;
/// assert_eq!(end.duration_since(&start), Some(std::time::Duration::from_millis(125_500)));
/// assert_eq!(start.as_str(), "2026-03-01T10:30:00+01:00");
/// assert!(start < end);
/// # Ok::<(), report::TimestampError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Timestamp {
    text: String,
    /// Seconds since the Unix epoch, UTC.
    seconds: i64,
    /// Nanoseconds past `seconds`, below one billion.
    nanos: u32,
}

/// Why a string is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not an RFC 3339 timestamp like 2026-03-01T09:30:00Z: {problem}")]
pub struct TimestampError {
    input: String,
    problem: &'static str,
}

impl TimestampError {
    fn new(input: &str, problem: &'static str) -> Self {
        Self {
            input: input.to_owned(),
            problem,
        }
    }

    /// The text that failed to parse.
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl Timestamp {
    /// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or an
    /// offset `±HH:MM`. The `T` may be `t` or a space and the `Z` may be `z`, as RFC 3339 allows.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        let fail = |problem| TimestampError::new(text, problem);
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(fail("too short"));
        }
        let year = digits(b, 0, 4).ok_or_else(|| fail("expected a four-digit year"))?;
        expect(b, 4, b'-').ok_or_else(|| fail("expected `-` after the year"))?;
        let month = digits(b, 5, 2).ok_or_else(|| fail("expected a two-digit month"))?;
        expect(b, 7, b'-').ok_or_else(|| fail("expected `-` after the month"))?;
        let day = digits(b, 8, 2).ok_or_else(|| fail("expected a two-digit day"))?;
        if !matches!(b[10], b'T' | b't' | b' ') {
            return Err(fail("expected `T` between the date and the time"));
        }
        let hour = digits(b, 11, 2).ok_or_else(|| fail("expected a two-digit hour"))?;
        expect(b, 13, b':').ok_or_else(|| fail("expected `:` after the hour"))?;
        let minute = digits(b, 14, 2).ok_or_else(|| fail("expected two-digit minutes"))?;
        expect(b, 16, b':').ok_or_else(|| fail("expected `:` after the minutes"))?;
        let second = digits(b, 17, 2).ok_or_else(|| fail("expected two-digit seconds"))?;

        let mut at = 19;
        let mut nanos = 0u32;
        if b[at] == b'.' {
            at += 1;
            let start = at;
            while at < b.len() && b[at].is_ascii_digit() {
                if at - start < 9 {
                    nanos = nanos * 10 + u32::from(b[at] - b'0');
                }
                at += 1;
            }
            if at == start {
                return Err(fail("expected digits after the decimal point"));
            }
            for _ in (at - start)..9 {
                nanos *= 10;
            }
        }

        let offset_seconds: i64 = match b.get(at) {
            Some(b'Z' | b'z') if at + 1 == b.len() => 0,
            Some(&sign @ (b'+' | b'-')) if at + 6 == b.len() => {
                let hours = digits(b, at + 1, 2).ok_or_else(|| fail("expected offset hours"))?;
                expect(b, at + 3, b':').ok_or_else(|| fail("expected `:` in the offset"))?;
                let minutes =
                    digits(b, at + 4, 2).ok_or_else(|| fail("expected offset minutes"))?;
                if hours > 23 || minutes > 59 {
                    return Err(fail("offset out of range"));
                }
                let magnitude = i64::from(hours * 3600 + minutes * 60);
                if sign == b'-' { -magnitude } else { magnitude }
            }
            _ => return Err(fail("expected `Z` or an offset like `+01:00` at the end")),
        };

        if !(1..=12).contains(&month) {
            return Err(fail("month out of range"));
        }
        if day == 0 || day > days_in_month(i64::from(year), month) {
            return Err(fail("day out of range for the month"));
        }
        if hour > 23 || minute > 59 || second > 60 {
            return Err(fail("time of day out of range"));
        }

        let days = days_from_civil(i64::from(year), month, day);
        let seconds =
            days * SECONDS_PER_DAY + i64::from(hour * 3600 + minute * 60 + second) - offset_seconds;
        Ok(Self {
            text: text.to_owned(),
            seconds,
            nanos,
        })
    }

    /// The UTC timestamp `seconds` and `nanos` after the Unix epoch, written like
    /// `2026-03-01T09:30:00.25Z` (the fraction only when there is one, without trailing zeros).
    ///
    /// `None` when `nanos` is a whole second or more, or the instant falls outside years 0000 to
    /// 9999, which RFC 3339 cannot write.
    ///
    /// ```
    /// let t = report::Timestamp::from_unix(1_772_357_400, 250_000_000).unwrap();
    /// assert_eq!(t.as_str(), "2026-03-01T09:30:00.25Z");
    /// ```
    pub fn from_unix(seconds: i64, nanos: u32) -> Option<Self> {
        if i128::from(nanos) >= NANOS_PER_SECOND {
            return None;
        }
        let parts = UtcParts::of(seconds, nanos);
        if !(0..=9999).contains(&parts.year) {
            return None;
        }
        let mut text = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second
        );
        if nanos > 0 {
            let fraction = format!("{nanos:09}");
            text.push('.');
            text.push_str(fraction.trim_end_matches('0'));
        }
        text.push('Z');
        Some(Self {
            text,
            seconds,
            nanos,
        })
    }

    /// The UTC timestamp of a [`SystemTime`], as [`from_unix`](Self::from_unix) writes it.
    ///
    /// The caller reads the clock; this only converts. `None` outside years 0000 to 9999.
    pub fn from_system_time(time: SystemTime) -> Option<Self> {
        let (seconds, nanos) = match time.duration_since(UNIX_EPOCH) {
            Ok(after) => (i64::try_from(after.as_secs()).ok()?, after.subsec_nanos()),
            Err(before) => {
                let before = before.duration();
                let mut seconds = -i64::try_from(before.as_secs()).ok()?;
                let mut nanos = before.subsec_nanos();
                if nanos > 0 {
                    seconds -= 1;
                    nanos = 1_000_000_000 - nanos;
                }
                (seconds, nanos)
            }
        };
        Self::from_unix(seconds, nanos)
    }

    /// The text, exactly as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whole seconds since the Unix epoch (negative before 1970).
    pub fn unix_seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past [`unix_seconds`](Self::unix_seconds), below one billion.
    pub fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// How long after `earlier` this instant is, or `None` if it is before `earlier`.
    pub fn duration_since(&self, earlier: &Self) -> Option<Duration> {
        let delta = self.unix_nanos() - earlier.unix_nanos();
        let seconds = u64::try_from(delta.div_euclid(NANOS_PER_SECOND)).ok()?;
        let nanos = u32::try_from(delta.rem_euclid(NANOS_PER_SECOND)).ok()?;
        Some(Duration::new(seconds, nanos))
    }

    fn unix_nanos(&self) -> i128 {
        i128::from(self.seconds) * NANOS_PER_SECOND + i128::from(self.nanos)
    }

    /// The instant in UTC as Mermaid's `YYYY-MM-DD HH:mm:ss.SSS` (milliseconds truncated), or
    /// `None` when it falls outside years 0000 to 9999.
    pub(crate) fn mermaid_utc(&self) -> Option<String> {
        let p = UtcParts::of(self.seconds, self.nanos);
        (0..=9999).contains(&p.year).then(|| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
                p.year,
                p.month,
                p.day,
                p.hour,
                p.minute,
                p.second,
                p.nanos / 1_000_000
            )
        })
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.seconds, self.nanos, &self.text).cmp(&(other.seconds, other.nanos, &other.text))
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({:?})", self.text)
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Timestamp {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "An RFC 3339 date-time, such as 2026-03-01T09:30:00Z."
        })
    }
}

/// The UTC calendar fields of an instant.
struct UtcParts {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
}

impl UtcParts {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "`rem_euclid` by a day leaves a non-negative value below 86 400"
    )]
    fn of(seconds: i64, nanos: u32) -> Self {
        let days = seconds.div_euclid(SECONDS_PER_DAY);
        let in_day = seconds.rem_euclid(SECONDS_PER_DAY) as u32;
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: in_day / 3600,
            minute: in_day / 60 % 60,
            second: in_day % 60,
            nanos,
        }
    }
}

/// The value of the `len` ASCII digits at `at`, if they are all digits.
fn digits(b: &[u8], at: usize, len: usize) -> Option<u32> {
    b.get(at..at + len)?.iter().try_fold(0u32, |value, &c| {
        c.is_ascii_digit().then(|| value * 10 + u32::from(c - b'0'))
    })
}

fn expect(b: &[u8], at: usize, wanted: u8) -> Option<()> {
    (b.get(at) == Some(&wanted)).then_some(())
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "month and day are in 1..=12 and 1..=31 by construction"
)]
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trips_over_many_days() {
        for days in (-800_000..3_000_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn known_instants() {
        let t = Timestamp::parse("2026-03-01T09:30:00Z").unwrap();
        assert_eq!(t.unix_seconds(), 1_772_357_400);
        let t = Timestamp::parse("0000-01-01T00:00:00Z").unwrap();
        assert_eq!(t.unix_seconds(), -62_167_219_200);
        let t = Timestamp::parse("9999-12-31T23:59:59.999999999Z").unwrap();
        assert_eq!(
            (t.unix_seconds(), t.subsec_nanos()),
            (253_402_300_799, 999_999_999)
        );
    }

    #[test]
    fn mermaid_form_is_utc_with_milliseconds() {
        let t = Timestamp::parse("2026-03-01T10:30:00.123999+01:00").unwrap();
        assert_eq!(t.mermaid_utc().as_deref(), Some("2026-03-01 09:30:00.123"));
        let early = Timestamp::parse("0000-01-01T00:00:00+01:00").unwrap();
        assert_eq!(early.mermaid_utc(), None);
    }
}
