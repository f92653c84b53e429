//! `epic report [EPIC] [--open]`: the report the last run of an epic wrote.
//!
//! Markdown (`report.md`) by default and with `--format md`; `--format json` prints
//! `report.json`'s data (the report without its version envelope), as `epic_report::to_json` writes
//! it. A `report.md` that is missing beside a `report.json` is rendered from it. `--format html`
//! prints one self-contained page with pictures (`epic_report::render_html`), drawn from
//! `report.json`, the plan's dependencies (`plan.json`) and the event log ([`pictures`]);
//! `--open` writes it to `report.html` in the epic's state directory (through state-store) and
//! opens it in the browser.

mod pictures;

use std::fs;
use std::path::Path;
use std::process::Stdio;

use epic_report::EpicReport;
use epic_state_store::EpicDir;

use crate::args::{Format, GlobalArgs, ReportArgs};
use crate::epics;
use crate::error::{CommandError, Kind, Message, WithSource};
use crate::output::{self, Output};
use crate::repo;

/// Runs `epic report`.
pub(crate) fn run(global: &GlobalArgs, args: &ReportArgs, out: Output) -> Result<(), CommandError> {
    let supported = [Format::Text, Format::Md, Format::Json, Format::Html];
    let format = global.format_for("report", &supported)?;
    if args.open && !matches!(format, Format::Text | Format::Html) {
        return Err(CommandError::new(
            Kind::Usage,
            Message::new("--open opens the HTML page; it cannot be given with --format md or json"),
        )
        .hint("drop --format, or print the report with `epic report --format md`"));
    }
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.epic.as_deref(), "report")?;
    if args.open {
        let page = html(&dir)?;
        let path = dir.report_html();
        epic_state_store::write_atomic(&path, page.as_bytes())
            .map_err(|error| CommandError::new(Kind::Repository, error))?;
        open(&path, out)?;
        return output::data(&format!("{}\n", path.display()));
    }
    let text = match format {
        Format::Json => epic_report::to_json(&load(&dir)?),
        Format::Html => html(&dir)?,
        _ => markdown(&dir, out)?,
    };
    output::data(&text)
}

/// The report of the epic in `dir`, or exit 2 when it has none yet.
fn load(dir: &EpicDir) -> Result<EpicReport, CommandError> {
    epics::load_report(dir)?.ok_or_else(|| {
        let epic = dir.epic_id();
        CommandError::new(
            Kind::Repository,
            Message::new(format!("epic `{epic}` has no report yet")),
        )
        .hint("a run writes its report when it ends")
        .hint(format!(
            "`epic status {epic}` shows each story's state meanwhile"
        ))
    })
}

/// `report.md` as the run wrote it, or rendered from `report.json` when it is missing.
fn markdown(dir: &EpicDir, out: Output) -> Result<String, CommandError> {
    let Some(path) = epics::report_md(dir) else {
        return Ok(epic_report::render_markdown(&load(dir)?));
    };
    out.note(&format!("read `{}`", path.display()));
    fs::read_to_string(&path).map_err(|error| {
        CommandError::new(
            Kind::Repository,
            WithSource {
                message: format!("failed to read report `{}`", path.display()),
                source: error,
            },
        )
    })
}

/// The HTML page of the epic in `dir`.
fn html(dir: &EpicDir) -> Result<String, CommandError> {
    let report = load(dir)?;
    let pictures = pictures::gather(dir)?;
    Ok(epic_report::render_html(&report, &pictures))
}

/// The program that opens a file in the user's browser.
const OPENER: &str = if cfg!(target_os = "macos") {
    "open"
} else {
    "xdg-open"
};

/// Opens `path` with [`OPENER`], waiting for it to hand the file over.
#[expect(
    clippy::disallowed_methods,
    reason = "the user's own browser opener, given the page epic-state-store wrote; not git, an \
              agent or a gate"
)]
fn open(path: &Path, out: Output) -> Result<(), CommandError> {
    out.note(&format!("$ {OPENER} {}", path.display()));
    let status = std::process::Command::new(OPENER)
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status();
    let failed = match status {
        Ok(status) if status.success() => return Ok(()),
        Ok(status) => format!("`{OPENER}` failed ({status})"),
        Err(error) => format!("cannot run `{OPENER}`: {error}"),
    };
    Err(CommandError::new(
        Kind::Repository,
        Message::new(format!(
            "{failed}; the page is written to `{}`",
            path.display()
        )),
    )
    .hint("open that file in a browser"))
}
