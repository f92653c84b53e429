//! The report as JSON: `report.json`'s data ([`to_json`]), its version ([`REPORT_VERSION`]) and
//! its JSON Schema ([`report_schema`]).

use crate::model::EpicReport;

/// The version of the report document, carried by its `{"version":N,"data":…}` envelope.
pub const REPORT_VERSION: u32 = 1;

/// The report as `report.json`'s data: pretty JSON with two-space indents and a trailing newline.
///
/// Optional fields that are unset are left out, never written as `null` (a cost that is not a
/// finite number is left out too: JSON cannot write it).
///
/// ```
/// let report = epic_report::EpicReport::new("e", "epic/e");
/// assert_eq!(
///     epic_report::to_json(&report),
///     "{\n  \"epic_id\": \"e\",\n  \"epic_branch\": \"epic/e\",\n  \"estimated\": true,\n  \"stories\": []\n}\n"
/// );
/// ```
pub fn to_json(report: &EpicReport) -> String {
    // Serialising a report cannot fail: every key is a string and every value a string, number,
    // boolean or list of them.
    let mut json = serde_json::to_string_pretty(report).unwrap_or_default();
    json.push('\n');
    json
}

/// The JSON Schema of the report's data (what `epic schema report` prints).
pub fn report_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(EpicReport)).unwrap_or_default()
}
