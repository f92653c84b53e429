//! `epic schema [NAME]`: the JSON Schema of a document `epic` reads or writes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{Format, GlobalArgs, SchemaArgs, SchemaName};
use crate::commands::json;
use crate::error::CliError;
use crate::output;

/// Prints the schema `args` names as pretty JSON (the same for `--format text` and `json`).
pub(crate) fn run(global: &GlobalArgs, args: &SchemaArgs) -> Result<(), CliError> {
    global.format_for("schema", &[Format::Text, Format::Json])?;
    let schema = match args.name {
        SchemaName::Plan => story_plan::plan_schema(),
        SchemaName::State => state_store::state_schema(),
        SchemaName::Report => state_store::envelope_schema::<ReportDocument>(),
    };
    output::data(&json(&schema))
}

/// `report.json` as a state-store document: the report inside the versioned envelope.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(transparent)]
struct ReportDocument(report::EpicReport);

impl state_store::Document for ReportDocument {
    const NAME: &'static str = "report";
    const VERSION: u32 = report::REPORT_VERSION;
    const REMEDY: &'static str = "remove it; the next `epic run` writes it again";
}
