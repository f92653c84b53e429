//! Reading the epics' state for `epic status`, `epic report` and the commands a person gives
//! a run: which epics have run in a repository, which one a command means, whether a run holds
//! its lock, and its report.
//!
//! Reads only, through state-store; the state directory is written by `epic run` alone, but for
//! its inbox, which the commands a person gives write.

use std::path::PathBuf;

use epic_events::ReportDocument;
use epic_state_store::{EpicDir, EpicLock, Holder, LockError};

use crate::error::{CommandError, Kind, Message};
use crate::repo::Repo;

/// The epic a command that takes `[EPIC]` works on.
#[derive(Debug)]
pub(crate) enum Selected {
    /// The epic named, or the only one.
    One(EpicDir),
    /// No epic named and several have run: their ids, sorted.
    Several(Vec<String>),
}

/// The ids of the epics that have state in `repo`, sorted.
pub(crate) fn epic_ids(repo: &Repo) -> Result<Vec<String>, CommandError> {
    EpicDir::epic_ids(&repo.common_dir).map_err(|error| CommandError::new(Kind::Repository, error))
}

/// The epic `name` in `repo`, or without a name the only epic that has run there.
///
/// Exit 2 when no epic has run, or `name` is not one that has.
pub(crate) fn select(repo: &Repo, name: Option<&str>) -> Result<Selected, CommandError> {
    let ids = epic_ids(repo)?;
    let id = match (name, ids.as_slice()) {
        (Some(name), _) if ids.iter().any(|id| id == name) => name,
        (Some(name), []) => {
            return Err(no_epics(&format!(
                "no epic `{name}` has run in this repository"
            )));
        }
        (Some(name), _) => {
            return Err(CommandError::new(
                Kind::Repository,
                Message::new(format!("no epic `{name}` has run in this repository")),
            )
            .hint(format!("epics that have run here: {}", ids.join(", "))));
        }
        (None, []) => return Err(no_epics("no epic has run in this repository")),
        (None, [only]) => only,
        (None, _) => return Ok(Selected::Several(ids)),
    };
    EpicDir::new(&repo.common_dir, id)
        .map(Selected::One)
        .map_err(|error| CommandError::new(Kind::Repository, error))
}

/// The epic `name` in `repo`, or the only one; for `epic <command>`, which needs exactly one, an
/// error naming the epics when several have run and none is named.
pub(crate) fn select_one(
    repo: &Repo,
    name: Option<&str>,
    command: &str,
) -> Result<EpicDir, CommandError> {
    match select(repo, name)? {
        Selected::One(dir) => Ok(dir),
        Selected::Several(ids) => Err(CommandError::new(
            Kind::Repository,
            Message::new(format!(
                "several epics have run in this repository: {}",
                ids.join(", ")
            )),
        )
        .hint(format!("name one: `epic {command} {}`", ids[0]))),
    }
}

fn no_epics(message: &str) -> CommandError {
    CommandError::new(Kind::Repository, Message::new(message))
        .hint("`epic run PLAN` runs an epic; its state is kept in the repository's git directory")
        .hint("run epic in the repository the epic ran in, or name it with `--repo DIR`")
}

/// Whether a run holds `dir`'s lock, and who; the lock is probed, never taken, so this is safe
/// while a run is going.
pub(crate) fn lock_holder(dir: &EpicDir) -> Result<(bool, Option<Holder>), CommandError> {
    match EpicLock::holder(dir) {
        Ok(holder) => Ok((holder.is_some(), holder)),
        Err(LockError::Held { holder, .. }) => Ok((true, holder)),
        Err(error) => Err(CommandError::new(Kind::Repository, error)),
    }
}

/// The epic's last report (`report.json`), if it has one.
pub(crate) fn load_report(dir: &EpicDir) -> Result<Option<epic_report::EpicReport>, CommandError> {
    epic_state_store::load::<ReportDocument>(dir.report_json())
        .map(|document| document.map(|document| document.0))
        .map_err(|error| CommandError::new(Kind::Repository, error))
}

/// The path of `report.md`, if it exists.
pub(crate) fn report_md(dir: &EpicDir) -> Option<PathBuf> {
    let path = dir.report_md();
    path.is_file().then_some(path)
}
