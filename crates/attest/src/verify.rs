//! `epic verify`: the epic branch's first-parent line from where it started, every commit
//! checked against its note and the state's copy, and every merged story's state against the
//! attestations.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use epic_git_ops::{CommitId, Git, LineCommit};
use epic_state_store::{EpicDir, StoryStage};
use serde::Serialize;

use crate::model::{Attestation, AttestedKind, EpicOrigin, FlakyCommand, NOTES_REF};

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// The epic.
    pub epic: String,
    /// The epic branch checked.
    pub branch: String,
    /// The commit the check started after (the epic branch's base).
    pub base: String,
    /// Where `base` comes from: `origin.json`, or where the branch meets the main checkout's
    /// head for an epic whose origin was not recorded.
    pub base_from: String,
    /// Every commit of the first-parent line after `base`, oldest first.
    pub commits: Vec<CommitCheck>,
    /// Stories whose state says merged where no attestation backs it.
    pub claims: Vec<String>,
}

impl Verification {
    /// Whether every commit is attested and consistent, and every merge claimed is backed.
    pub fn verified(&self) -> bool {
        self.claims.is_empty() && self.commits.iter().all(|commit| commit.problems.is_empty())
    }

    /// The commits that are not attested or not consistent with their attestation.
    pub fn unattested(&self) -> impl Iterator<Item = &CommitCheck> {
        self.commits
            .iter()
            .filter(|commit| !commit.problems.is_empty())
    }
}

/// One commit of the epic branch, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitCheck {
    /// The commit.
    pub commit: String,
    /// The first line of its message.
    pub summary: String,
    /// Its author.
    pub author: String,
    /// The story its attestation names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    /// Its attestation's kind, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<AttestedKind>,
    /// The gates its attestation says passed only on a rerun
    /// ([`AttestedGate::flaky`](crate::AttestedGate::flaky)), in order; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_gates: Vec<FlakyCommand>,
    /// What is wrong; empty when the commit is attested and consistent.
    pub problems: Vec<String>,
}

/// An error of [`verify`]: the epic branch or the notes could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The epic branch does not exist.
    #[error("the epic branch `{branch}` does not exist")]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// Git could not be read.
    #[error("failed to {what}")]
    Git {
        /// What was being read.
        what: &'static str,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A state file could not be read.
    #[error(transparent)]
    State(#[from] epic_state_store::LoadError),
}

impl VerifyError {
    fn git(what: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Git {
            what,
            source: Box::new(source),
        }
    }
}

/// Checks every commit of the epic branch after its base against its attestation (see the
/// crate's docs). `worktree` is any worktree of the repository (the main checkout); `branch`
/// is the epic branch when the epic's origin does not name it (default `epic/<id>`).
pub fn verify(
    git: &dyn Git,
    dir: &EpicDir,
    worktree: &Path,
    branch: Option<&str>,
) -> Result<Verification, VerifyError> {
    let origin: Option<EpicOrigin> = epic_state_store::load(dir.origin())?;
    let branch = origin.as_ref().map_or_else(
        || branch.map_or_else(|| format!("epic/{}", dir.epic_id()), ToOwned::to_owned),
        |origin| origin.branch.clone(),
    );
    let exists = git
        .branch_exists(&branch)
        .map_err(|error| VerifyError::git("look up the epic branch", error))?;
    if !exists {
        return Err(VerifyError::NoBranch { branch });
    }
    let tip = format!("refs/heads/{branch}");
    let (base, base_from) = match &origin {
        Some(origin) => (
            origin.base.parse::<CommitId>().ok(),
            "origin.json".to_owned(),
        ),
        None => {
            // An epic started before origins were recorded: its commits are those the main
            // checkout's head does not have.
            let head = git
                .rev_parse(worktree, "HEAD")
                .map_err(|error| VerifyError::git("read the main checkout's head", error))?;
            let mut found = None;
            let (line, _) = git
                .first_parent_line(worktree, None, &tip)
                .map_err(|error| VerifyError::git("read the epic branch", error))?;
            for commit in line.iter().rev() {
                let shared = git
                    .is_ancestor(worktree, &commit.id.to_hex(), &head.to_hex())
                    .map_err(|error| VerifyError::git("read the epic branch", error))?;
                if shared {
                    found = Some(commit.id);
                    break;
                }
            }
            (
                found,
                "where the epic branch meets the main checkout's head".to_owned(),
            )
        }
    };
    let (line, _) = git
        .first_parent_line(worktree, base.as_ref(), &tip)
        .map_err(|error| VerifyError::git("read the epic branch", error))?;
    let notes = git
        .notes(worktree, NOTES_REF)
        .map_err(|error| VerifyError::git("read the notes", error))?;
    let trees: BTreeMap<String, (usize, String)> = line
        .iter()
        .enumerate()
        .map(|(at, commit)| (commit.id.to_hex(), (at, commit.tree.clone())))
        .collect();
    let mut commits = Vec::with_capacity(line.len());
    for (at, commit) in line.iter().enumerate() {
        commits.push(check_commit(
            dir,
            commit,
            at,
            notes.get(&commit.id),
            &trees,
        )?);
    }
    let claims = unbacked_claims(dir, base.as_ref(), &commits)?;
    Ok(Verification {
        epic: dir.epic_id().to_owned(),
        branch,
        base: base.map(|base| base.to_hex()).unwrap_or_default(),
        base_from,
        commits,
        claims,
    })
}

/// Checks one commit of the line (at index `at`) against its note and the state's copy.
fn check_commit(
    dir: &EpicDir,
    commit: &LineCommit,
    at: usize,
    note: Option<&String>,
    trees: &BTreeMap<String, (usize, String)>,
) -> Result<CommitCheck, VerifyError> {
    let id = commit.id.to_hex();
    let mut check = CommitCheck {
        commit: id.clone(),
        summary: commit.summary.clone(),
        author: commit.author.clone(),
        story: None,
        kind: None,
        flaky_gates: Vec::new(),
        problems: Vec::new(),
    };
    let Some(note) = note else {
        check.problems.push(
            "no attestation: a commit epic did not prove (made by hand, or by a stray process)"
                .to_owned(),
        );
        return Ok(check);
    };
    let Ok(attestation) = serde_json::from_str::<Attestation>(note) else {
        check.problems.push(format!(
            "its note under {NOTES_REF} is not an attestation epic wrote"
        ));
        return Ok(check);
    };
    check.story.clone_from(&attestation.story);
    check.kind = Some(attestation.kind);
    check.flaky_gates = attestation.flaky_gates();
    let state: Option<Attestation> = match dir.attestation(&id) {
        Some(path) => epic_state_store::load(path)?,
        None => None,
    };
    match state {
        None => check.problems.push(
            "its note is not backed by the epic's state (no attestations/<commit>.json): \
             a note epic did not write"
                .to_owned(),
        ),
        Some(state) if state != attestation => check
            .problems
            .push("its note differs from the attestation in the epic's state".to_owned()),
        Some(_) => {}
    }
    if attestation.commit != id {
        check.problems.push(format!(
            "its attestation is of another commit, {}",
            attestation.commit
        ));
    }
    match (&attestation.checked, commit.parents.get(1)) {
        (Some(checked), Some(merged)) if *checked != merged.to_hex() => {
            check.problems.push(format!(
                "it merges {merged}, but the attestation's checks passed on {checked}"
            ));
        }
        (Some(checked), None) => check.problems.push(format!(
            "it is not a merge, but the attestation says {checked} was merged"
        )),
        (None, Some(merged)) => check.problems.push(format!(
            "it merges {merged}, which the attestation does not name"
        )),
        _ => {}
    }
    if attestation.kind == AttestedKind::Story {
        for (what, result) in [
            ("perimeter", &attestation.perimeter),
            ("test guard", &attestation.test_guard),
        ] {
            if result.as_deref() != Some("passed") {
                check
                    .problems
                    .push(format!("the attestation does not say its {what} passed"));
            }
        }
    }
    for gate in &attestation.gates {
        if gate.exit_code != 0 && !gate.known_red {
            check.problems.push(format!(
                "gate `{}` exited with {} on the attested tree",
                gate.command, gate.exit_code
            ));
        }
    }
    match trees.get(&attestation.gated_commit) {
        Some((gated_at, tree)) if *gated_at >= at => {
            if *tree != attestation.gated_tree {
                check.problems.push(format!(
                    "the gates passed on tree {}, but {} has tree {tree}",
                    attestation.gated_tree, attestation.gated_commit
                ));
            }
        }
        _ => check.problems.push(format!(
            "the gates passed on {}, which is not this commit or a later one of the epic branch",
            attestation.gated_commit
        )),
    }
    Ok(check)
}

/// The stories whose state says merged at a commit no attestation backs. A story's merge is
/// backed when its state names the commit attested for it; a story no attestation names (it had
/// nothing left to merge) is backed when its state names the base or an attested commit, one
/// that already held all of it.
fn unbacked_claims(
    dir: &EpicDir,
    base: Option<&CommitId>,
    commits: &[CommitCheck],
) -> Result<Vec<String>, VerifyError> {
    let ids = dir.story_ids().map_err(|error| VerifyError::Git {
        what: "list the stories' state",
        source: Box::new(error),
    })?;
    let mut attested: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for commit in commits {
        if let Some(story) = &commit.story {
            attested
                .entry(story.as_str())
                .or_default()
                .insert(commit.commit.as_str());
        }
    }
    let clean: BTreeSet<&str> = commits
        .iter()
        .filter(|commit| commit.problems.is_empty())
        .map(|commit| commit.commit.as_str())
        .collect();
    let mut claims = Vec::new();
    for id in ids {
        let Ok(path) = dir.story_state(&id) else {
            continue;
        };
        let Some(state) = epic_state_store::load::<epic_state_store::StoryState>(path)? else {
            continue;
        };
        if state.status != StoryStage::Merged {
            continue;
        }
        let Some(merge) = state.merge else {
            claims.push(format!(
                "story '{id}': its state says merged, naming no commit"
            ));
            continue;
        };
        let backed = match attested.get(id.as_str()) {
            Some(merges) => merges.contains(merge.as_str()) && clean.contains(merge.as_str()),
            None => {
                base.is_some_and(|base| base.to_hex() == merge) || clean.contains(merge.as_str())
            }
        };
        if !backed {
            claims.push(format!(
                "story '{id}': its state says merged at {merge}, which no attestation backs"
            ));
        }
    }
    Ok(claims)
}
