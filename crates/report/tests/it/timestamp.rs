//! Timestamps: RFC 3339 in with any offset, compared and subtracted as instants, written in UTC.

use std::time::Duration;

use epic_report::{OutcomeStatus, StoryOutcome, Timestamp};

use crate::support::at;

#[test]
fn accepts_rfc_3339_and_writes_utc() {
    for (text, utc) in [
        ("2026-03-01T09:30:00Z", "2026-03-01T09:30:00Z"),
        ("2026-03-01t09:30:00z", "2026-03-01T09:30:00Z"),
        ("2026-03-01 09:30:00Z", "2026-03-01T09:30:00Z"),
        ("2026-03-01T10:30:00+01:00", "2026-03-01T09:30:00Z"),
        ("2026-03-01T04:00:00-05:30", "2026-03-01T09:30:00Z"),
        ("2026-03-01T09:30:00.5Z", "2026-03-01T09:30:00.5Z"),
        ("2026-03-01T09:30:00.250+01:00", "2026-03-01T08:30:00.25Z"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
        ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
        // A leap second is read as the second before it.
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59Z"),
    ] {
        let t: Timestamp = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(t.to_string(), utc, "{text}");
        assert_eq!(at(utc), t, "{text} reads back");
    }
}

/// jiff reads a little more than RFC 3339 (ISO 8601 forms such as `2026-03-01T09:30Z`, offsets
/// `+0100` or `+01`, `20260301T093000Z`, a trailing `[Europe/Paris]`), so those are not here.
#[test]
fn refuses_what_is_not_a_timestamp() {
    for text in [
        "",
        "soon",
        "waiting",
        "2026-03-01",
        "2026-03-01T09:30:00",
        "2026-3-01T09:30:00Z",
        "2026-03-01T09:30:00.Z",
        "2026-03-01T09:30:00.123456789012Z",
        "2026-03-01T09:30:00ZZ",
        "2026-13-01T09:30:00Z",
        "2026-00-01T09:30:00Z",
        "2025-02-29T09:30:00Z",
        "1900-02-29T09:30:00Z",
        "2026-04-31T09:30:00Z",
        "2026-03-01T24:00:00Z",
        "2026-03-01T09:60:00Z",
        "2026-03-01T09:30:61Z",
        "+2026-03-01T09:30:00Z",
        "2026-03-01T09:30:00Z ",
        "２０２６-03-01T09:30:00Z",
        // Past the last instant jiff holds (9999-12-30T22:00:00.999999999Z).
        "9999-12-31T23:59:59Z",
    ] {
        assert!(text.parse::<Timestamp>().is_err(), "{text:?} was accepted");
    }
}

#[test]
fn equal_instants_are_equal_across_offsets() {
    let paris = at("2026-03-01T10:30:00+01:00");
    let utc = at("2026-03-01T09:30:00Z");
    assert_eq!(paris, utc, "equality is by instant");
    let later = at("2026-03-01T09:30:00.000000001Z");
    assert!(later > paris);
    let story = |start, finish| {
        StoryOutcome::new("a", "A", OutcomeStatus::Done)
            .started(start)
            .finished(finish)
            .duration()
    };
    assert_eq!(story(paris, utc), Some(Duration::ZERO));
    assert_eq!(story(utc, later), Some(Duration::from_nanos(1)));
    assert_eq!(story(later, utc), None, "finished before it started");
}

#[test]
fn serialises_as_utc_text() {
    let t = at("2026-03-01T10:30:00.250+01:00");
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(json, "\"2026-03-01T09:30:00.25Z\"");
    assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
    assert!(serde_json::from_str::<Timestamp>("\"soon\"").is_err());
    assert!(serde_json::from_str::<Timestamp>("12").is_err());
}
