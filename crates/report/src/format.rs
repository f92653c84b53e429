//! Number formatting for the renderings: money, ratios and durations.

use std::time::Duration;

/// `value` with `places` decimals, rounding half away from zero on the exact binary value.
///
/// Rust's `{:.2}` rounds an exact tie to even (`0.125` gives `0.12`); the reference used
/// JavaScript's `toFixed`, which rounds it up (`0.13`). Both look at the exact binary value, so
/// `2.675` (really `2.67499999…`) gives `2.67` either way. Not-a-number and the infinities are
/// written `NaN`, `inf` and `-inf`.
///
/// ```
/// use epic_report::round_half_away;
///
/// assert_eq!(round_half_away(0.125, 2), "0.13");
/// assert_eq!(round_half_away(-0.125, 2), "-0.13");
/// assert_eq!(round_half_away(2.675, 2), "2.67");
/// assert_eq!(round_half_away(1.75, 1), "1.8");
/// ```
pub fn round_half_away(value: f64, places: usize) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    // Rust prints the exact decimal expansion of a float when asked for enough digits (an f64
    // has at most 1074 of them after the point), so deciding on the digit after the last kept one
    // is rounding on the exact value: >= 5 rounds away from zero, ties included.
    let exact = format!("{:.1100}", value.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((exact.as_str(), ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes().take(places)).collect();
    if frac
        .as_bytes()
        .get(places)
        .is_some_and(|&next| next >= b'5')
    {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let split = digits.len() - places;
    let (int, frac) = digits.split_at(split);
    let mut out = String::with_capacity(digits.len() + 2);
    if value.is_sign_negative() && digits.iter().any(|&d| d != b'0') {
        out.push('-');
    }
    out.extend(int.iter().map(|&d| char::from(d)));
    if places > 0 {
        out.push('.');
        out.extend(frac.iter().map(|&d| char::from(d)));
    }
    out
}

/// Dollars with two decimals, rounded half away from zero: `0.125` gives `0.13`.
///
/// ```
/// assert_eq!(epic_report::format_usd(0.004), "0.00");
/// assert_eq!(epic_report::format_usd(1234.5), "1234.50");
/// ```
pub fn format_usd(value: f64) -> String {
    round_half_away(value, 2)
}

/// A duration for people: `850ms`, `42s`, `3m 05s`, `2h 03m` (shorter units truncated).
pub(crate) fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0 => format!("{}ms", duration.subsec_millis()),
        1..60 => format!("{seconds}s"),
        60..3600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, seconds / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_rounds_half_away_from_zero_on_the_exact_value() {
        let cases = [
            (0.0, "0.00"),
            (-0.0, "0.00"),
            (0.125, "0.13"),
            (0.375, "0.38"),
            (-0.125, "-0.13"),
            (0.005, "0.01"), // really 0.005000000000000000104…
            (0.015, "0.01"), // really 0.014999999999999999444…
            (1.005, "1.00"), // really 1.00499999999999989342…
            (2.675, "2.67"), // really 2.67499999999999982236…
            (0.994, "0.99"),
            (0.995, "0.99"), // really 0.99499999999999999555…
            (0.9951, "1.00"),
            (9.999, "10.00"),
            (99.995, "100.00"), // really 99.9950000000000045474…
            (-0.001, "0.00"),
            (-0.004_999, "0.00"),
            (1e20, "100000000000000000000.00"),
            (12_345_678_901_234_567_890.0, "12345678901234567168.00"),
            (f64::MIN_POSITIVE, "0.00"),
            (5e-324, "0.00"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_usd(value), expected, "{value:e}");
        }
        assert_eq!(format_usd(f64::NAN), "NaN");
        assert_eq!(format_usd(f64::INFINITY), "inf");
        assert!(format_usd(f64::MAX).ends_with(".00"));
        assert_eq!(format_usd(f64::MAX).len(), 309 + 3);
    }

    #[test]
    fn other_precisions() {
        assert_eq!(round_half_away(0.5, 0), "1");
        assert_eq!(round_half_away(-0.5, 0), "-1");
        assert_eq!(round_half_away(0.49, 0), "0");
        assert_eq!(round_half_away(1.25, 1), "1.3");
        assert_eq!(round_half_away(1.8333, 1), "1.8");
        assert_eq!(round_half_away(0.0001, 6), "0.000100");
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(Duration::ZERO), "0ms");
        assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(format_duration(Duration::from_secs(185)), "3m 05s");
        assert_eq!(format_duration(Duration::from_mins(123)), "2h 03m");
        assert_eq!(format_duration(Duration::from_millis(1_999)), "1s");
        assert_eq!(format_duration(Duration::from_secs(59)), "59s");
        assert_eq!(format_duration(Duration::from_mins(1)), "1m 00s");
        assert_eq!(format_duration(Duration::from_secs(3_599)), "59m 59s");
        assert_eq!(format_duration(Duration::from_hours(1)), "1h 00m");
        assert_eq!(format_duration(Duration::from_hours(25)), "25h 00m");
        assert_eq!(
            format_duration(Duration::MAX),
            format!("{}h {:02}m", u64::MAX / 3600, u64::MAX / 60 % 60)
        );
    }
}
