//! `epic report [EPIC]`: the report the last run of an epic wrote.
//!
//! Markdown (`report.md`) by default and with `--format md`; `--format json` prints
//! `report.json`'s data (the report without its version envelope), as `epic_report::to_json` writes
//! it. A `report.md` that is missing beside a `report.json` is rendered from it.

use std::fs;

use crate::args::{EpicArgs, Format, GlobalArgs};
use crate::epics;
use crate::error::{CommandError, Kind, Message, WithSource};
use crate::output::{self, Output};
use crate::repo;

/// Runs `epic report`.
pub(crate) fn run(global: &GlobalArgs, args: &EpicArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("report", &[Format::Text, Format::Md, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.as_deref(), "report")?;
    let epic = dir.epic_id().to_owned();
    let no_report = || {
        CommandError::new(
            Kind::Repository,
            Message::new(format!("epic `{epic}` has no report yet")),
        )
        .hint("a run writes its report when it ends")
        .hint(format!(
            "`epic status {epic}` shows each story's state meanwhile"
        ))
    };
    let text = if format == Format::Json {
        let report = epics::load_report(&dir)?.ok_or_else(no_report)?;
        epic_report::to_json(&report)
    } else if let Some(path) = epics::report_md(&dir) {
        out.note(&format!("read `{}`", path.display()));
        fs::read_to_string(&path).map_err(|error| {
            CommandError::new(
                Kind::Repository,
                WithSource {
                    message: format!("failed to read report `{}`", path.display()),
                    source: error,
                },
            )
        })?
    } else {
        let report = epics::load_report(&dir)?.ok_or_else(no_report)?;
        epic_report::render_markdown(&report)
    };
    output::data(&text)
}
