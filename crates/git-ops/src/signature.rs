//! The author and committer epic writes into a commit object itself, from the pinned
//! configuration (`pin`), where git would write exactly them: what the in-process commit
//! (`commit::write_commit`) and the in-process ref move's reflog (`refs`) both need.

use crate::error::Cause;
use crate::identity::IDENTITY_VARIABLES;
use crate::repo::GixGit;

/// The author's and the committer's name and email as `git commit-tree` would write them with
/// the pinned configuration, where they come from it alone and need none of git's clean-up;
/// `None` where git is to decide (see `commit::write_commit`).
pub(crate) fn plain_identity(git: &GixGit) -> Result<Option<[(String, String); 2]>, Cause> {
    let Some(pin) = git.cli.pin()? else {
        return Ok(None);
    };
    if pin.sign()
        || pin.had("i18n.commitencoding")
        || IDENTITY_VARIABLES
            .iter()
            .any(|variable| git.cli.env_var(variable).is_some())
    {
        return Ok(None);
    }
    let field = |key: &str| {
        pin.pinned(key)
            .filter(|value| plain_ident(value))
            .map(str::to_owned)
    };
    let person = |role: &str| {
        Some((
            field(&format!("{role}.name"))?,
            field(&format!("{role}.email"))?,
        ))
    };
    Ok(person("author")
        .zip(person("committer"))
        .map(|(author, committer)| [author, committer]))
}

/// Whether git keeps `value` as it is in a commit's identity: not empty, nothing it trims at
/// either end (whitespace and `.,:;<>"\'`), no `<`, `>` or line break inside.
fn plain_ident(value: &str) -> bool {
    // `.` too: older versions of git trim it, newer ones keep it; either way git decides.
    let crud = |c: char| c <= ' ' || ".,:;<>\"\\'".contains(c);
    !value.is_empty()
        && !value.starts_with(crud)
        && !value.ends_with(crud)
        && !value.contains(['<', '>', '\n'])
}
