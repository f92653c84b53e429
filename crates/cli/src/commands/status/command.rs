//! `epic status [EPIC]` as a command: the options, the epic or epics selected, the model
//! gathered and printed as JSON or text.

use epic_state_store::EpicDir;

use crate::args::{Format, GlobalArgs, StatusArgs};
use crate::commands::json;
use crate::epics::{self, Selected, lock_holder};
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::repo;

use super::gather::{in_plan_order, status};
use super::model::{EpicSummary, EpicsJson};
use super::text::{several_text, text};

/// Runs `epic status`.
pub(crate) fn run(global: &GlobalArgs, args: &StatusArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("status", &[Format::Text, Format::Json])?;
    let plan = args
        .plan
        .as_deref()
        .map(|path| crate::plan_file::load(path, out))
        .transpose()?;
    let repo = repo::discover(global.repo.as_deref())?;
    let epic = args
        .epic
        .clone()
        .or_else(|| plan.as_ref().map(|plan| plan.epic_id.clone()));
    let selected = match (&plan, &epic) {
        // The plan's epic, run or not: its stories are listed either way.
        (Some(_), Some(epic)) => Selected::One(
            EpicDir::new(&repo.common_dir, epic)
                .map_err(|error| CommandError::new(Kind::Input, error))?,
        ),
        _ => epics::select(&repo, epic.as_deref())?,
    };
    match selected {
        Selected::One(dir) => {
            let mut status = status(&dir)?;
            if let Some(plan) = &plan {
                in_plan_order(&mut status, plan);
            }
            let text = match format {
                Format::Json => json(&status),
                _ => text(&status, out),
            };
            output::data(&text)
        }
        Selected::Several(ids) => {
            let mut epics = Vec::with_capacity(ids.len());
            for id in ids {
                let dir = EpicDir::new(&repo.common_dir, &id)
                    .map_err(|error| CommandError::new(Kind::Repository, error))?;
                let (running, _) = lock_holder(&dir)?;
                epics.push(EpicSummary {
                    epic_id: id,
                    running,
                });
            }
            let hint = epics.first().map(|first| {
                format!(
                    "several epics have run here; name one: `epic status {}`",
                    first.epic_id
                )
            });
            let text = match format {
                Format::Json => json(&EpicsJson { epics }),
                _ => several_text(&epics),
            };
            output::data(&text)?;
            if let Some(hint) = hint {
                out.hint(&hint);
            }
            Ok(())
        }
    }
}
