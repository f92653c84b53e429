//! Timestamps: RFC 3339 in, instants compared and subtracted, text kept.

use std::time::{Duration, UNIX_EPOCH};

use report::Timestamp;

#[test]
fn accepts_rfc_3339() {
    for text in [
        "2026-03-01T09:30:00Z",
        "2026-03-01t09:30:00z",
        "2026-03-01 09:30:00Z",
        "2026-03-01T10:30:00+01:00",
        "2026-03-01T04:00:00-05:30",
        "2026-03-01T09:30:00.5Z",
        "2026-03-01T09:30:00.123456789012Z",
        "2024-02-29T00:00:00Z",
        "2016-12-31T23:59:60Z",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
    ] {
        let t = Timestamp::parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.as_str(), text);
        assert_eq!(t.to_string(), text);
    }
}

#[test]
fn refuses_what_is_not_rfc_3339() {
    for text in [
        "",
        "2026-03-01",
        "2026-03-01T09:30:00",
        "2026-03-01T09:30Z",
        "2026-3-01T09:30:00Z",
        "2026-03-01T09:30:00+0100",
        "2026-03-01T09:30:00+01",
        "2026-03-01T09:30:00.Z",
        "2026-03-01T09:30:00ZZ",
        "2026-13-01T09:30:00Z",
        "2026-00-01T09:30:00Z",
        "2025-02-29T09:30:00Z",
        "1900-02-29T09:30:00Z",
        "2026-04-31T09:30:00Z",
        "2026-03-01T24:00:00Z",
        "2026-03-01T09:60:00Z",
        "2026-03-01T09:30:61Z",
        "2026-03-01T09:30:00+24:00",
        "+2026-03-01T09:30:00Z",
        "2026-03-01T09:30:00Z ",
        "２０２６-03-01T09:30:00Z",
    ] {
        let err = Timestamp::parse(text).unwrap_err();
        assert_eq!(err.input(), text);
        assert!(err.to_string().contains("not an RFC 3339 timestamp"));
    }
}

#[test]
fn orders_and_subtracts_across_offsets() {
    let paris: Timestamp = "2026-03-01T10:30:00+01:00".parse().unwrap();
    let utc: Timestamp = "2026-03-01T09:30:00Z".parse().unwrap();
    assert_ne!(paris, utc, "equality is by text");
    assert_eq!(paris.unix_seconds(), utc.unix_seconds());
    assert_eq!(utc.duration_since(&paris), Some(Duration::ZERO));
    let later: Timestamp = "2026-03-01T09:30:00.000000001Z".parse().unwrap();
    assert!(later > paris && later > utc);
    assert_eq!(later.duration_since(&utc), Some(Duration::from_nanos(1)));
    assert_eq!(utc.duration_since(&later), None);
    let leap: Timestamp = "2016-12-31T23:59:60Z".parse().unwrap();
    let new_year: Timestamp = "2017-01-01T00:00:00Z".parse().unwrap();
    assert_eq!(new_year.duration_since(&leap), Some(Duration::ZERO));
}

#[test]
fn from_unix_and_system_time() {
    let t = Timestamp::from_unix(0, 0).unwrap();
    assert_eq!(t.as_str(), "1970-01-01T00:00:00Z");
    let t = Timestamp::from_unix(-1, 500_000_000).unwrap();
    assert_eq!(t.as_str(), "1969-12-31T23:59:59.5Z");
    assert_eq!(Timestamp::parse(t.as_str()).unwrap(), t);
    assert_eq!(Timestamp::from_unix(0, 1_000_000_000), None);
    assert_eq!(Timestamp::from_unix(253_402_300_800, 0), None, "year 10000");
    assert!(Timestamp::from_unix(253_402_300_799, 999_999_999).is_some());
    assert_eq!(Timestamp::from_unix(-62_167_219_201, 0), None, "year -1");

    let time = UNIX_EPOCH + Duration::new(1_772_357_400, 250_000_000);
    assert_eq!(
        Timestamp::from_system_time(time).unwrap().as_str(),
        "2026-03-01T09:30:00.25Z"
    );
    let before = UNIX_EPOCH - Duration::from_millis(1_500);
    assert_eq!(
        Timestamp::from_system_time(before).unwrap().as_str(),
        "1969-12-31T23:59:58.5Z"
    );
}

#[test]
fn serialises_as_its_text() {
    let t: Timestamp = "2026-03-01T10:30:00.250+01:00".parse().unwrap();
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(json, "\"2026-03-01T10:30:00.250+01:00\"");
    assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
    assert!(serde_json::from_str::<Timestamp>("\"soon\"").is_err());
    assert!(serde_json::from_str::<Timestamp>("12").is_err());
}
