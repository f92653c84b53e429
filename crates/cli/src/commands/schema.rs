//! `epic schema [NAME]`: the JSON Schema of a document `epic` reads or writes.

use crate::args::{Format, GlobalArgs, SchemaArgs, SchemaName};
use crate::commands::json;
use crate::config::RunOptions;
use crate::error::CommandError;
use crate::output;
use epic_events::ReportDocument;

/// Prints the schema `args` names as pretty JSON (the same for `--format text` and `json`).
pub(crate) fn run(global: &GlobalArgs, args: &SchemaArgs) -> Result<(), CommandError> {
    global.format_for("schema", &[Format::Text, Format::Json])?;
    let schema = match args.name {
        SchemaName::Plan => epic_story_plan::plan_schema(),
        SchemaName::State => epic_state_store::state_schema(),
        SchemaName::Report => epic_state_store::envelope_schema::<ReportDocument>(),
        SchemaName::Config => serde_json::to_value(schemars::schema_for!(RunOptions))
            .expect("a JSON Schema is a JSON value"),
        SchemaName::Events => epic_events::events_schema(),
    };
    output::data(&json(&schema))
}
