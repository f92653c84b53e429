//! Local branches: exists, delete and those under a directory of names with gix; create with
//! `git update-ref`.

use gix::bstr::ByteSlice;

use crate::cli::args;
use crate::error::{BranchError, Cause};
use crate::repo::GixGit;
use crate::types::CommitId;

/// The full reference name of the local branch `name`, validated.
pub(crate) fn full_name(name: &str) -> Result<gix::refs::FullName, BranchError> {
    let invalid = || BranchError::InvalidName {
        name: name.to_owned(),
    };
    if name.is_empty() || name.starts_with('-') || name.starts_with("refs/") || name == "HEAD" {
        return Err(invalid());
    }
    gix::refs::FullName::try_from(format!("refs/heads/{name}")).map_err(|_| invalid())
}

pub(crate) fn exists(git: &GixGit, name: &str) -> Result<bool, BranchError> {
    let full = full_name(name)?;
    let repo = git.main_repo();
    repo.try_find_reference(full.as_ref())
        .map(|found| found.is_some())
        .map_err(|error| BranchError::Failed {
            name: name.to_owned(),
            source: Cause::gix(error),
        })
}

/// The local branches named `directory/…`, short and sorted.
pub(crate) fn under(git: &GixGit, directory: &str) -> Result<Vec<String>, BranchError> {
    let failed = |error: gix::Error| BranchError::Failed {
        name: directory.to_owned(),
        source: Cause::gix(error),
    };
    let prefix = format!("{directory}/");
    let repo = git.main_repo();
    let references = repo.references().map_err(failed)?;
    let mut found = Vec::new();
    for reference in references.local_branches().map_err(failed)? {
        let name = reference.map_err(failed)?.name().shorten().to_string();
        if name.starts_with(&prefix) {
            found.push(name);
        }
    }
    found.sort();
    Ok(found)
}

pub(crate) fn create(git: &GixGit, name: &str, at: &CommitId) -> Result<(), BranchError> {
    let full = full_name(name)?;
    let repo = git.main_repo();
    let is_commit = repo
        .find_object(at.0)
        .is_ok_and(|object| object.kind == gix::object::Kind::Commit);
    if !is_commit {
        return Err(BranchError::MissingCommit { commit: *at });
    }
    if exists(git, name)? {
        return Err(BranchError::AlreadyExists {
            name: name.to_owned(),
        });
    }
    // git, not gix: gix's transaction locks `packed-refs` to look the name up there, and a
    // process killed inside it leaves `packed-refs.lock`, which fails every later ref change in
    // the repository until someone deletes it. git locks only the new ref's own file (a stale
    // one epic clears: `executor`'s lock clean-up). The empty old value: the ref must not exist.
    let message = format!("branch: Created from {at}");
    git.cli
        .run(
            git.anchor(),
            args![
                "update-ref",
                "-m",
                &message,
                full.as_bstr().to_str_lossy().as_ref(),
                &at.to_hex(),
                ""
            ],
        )
        .map(drop)
        .map_err(|error| BranchError::Failed {
            name: name.to_owned(),
            source: Cause::Cli(error),
        })
}

pub(crate) fn delete(git: &GixGit, name: &str) -> Result<(), BranchError> {
    let full = full_name(name)?;
    let mut repo = git.main_repo();
    match repo.delete_local_branches([full]) {
        Ok(_) => Ok(()),
        Err(error)
            if error
                .downcast_any_ref::<gix::repository::branch::delete::CheckedOutError>()
                .is_some() =>
        {
            Err(BranchError::CheckedOut {
                name: name.to_owned(),
            })
        }
        Err(error) => Err(BranchError::Failed {
            name: name.to_owned(),
            source: Cause::gix(error),
        }),
    }
}
