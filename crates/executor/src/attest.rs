//! Attestations: the proof each merge into the epic branch carries, and `epic verify`'s check of
//! the epic branch against them.
//!
//! When a story's merge is proven (its gates green on the merged tree), `epic run` records an
//! [`Attestation`]: the story commit that was checked, the perimeter and test-guard result, the
//! judge's verdict, each gate's command and result (a gate red, then green when run again on the
//! same tree, with its runs and how its red run ended), and the tree they passed on. It is
//! written twice: as a git note on the merge commit under [`NOTES_REF`] (`refs/notes/epic`), so
//! it travels with the branch (`git push origin refs/notes/epic`), and as
//! `attestations/<commit>.json` in the epic's state directory, which agents cannot write (the
//! sandbox keeps it read-only, the turn guard undoes a change), while a notes ref is a ref like
//! any other. [`verify`] walks the epic branch's first-parent line from the commit it started
//! at ([`EpicOrigin`]) and checks every commit against both: a commit without a note (made by
//! hand, or by a stray process), a note the state does not back, a note that contradicts the
//! commit (another story commit merged, gates that passed on another tree), or a story whose
//! state claims a merge no attestation backs.
//!
//! ```no_run
//! use epic_executor::attest;
//! use epic_git_ops::{Git, GixGit};
//! use epic_state_store::EpicDir;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let git = GixGit::discover(".")?;
//! let dir = EpicDir::new(git.common_dir(), "checkout")?;
//! let verification = attest::verify(&git, &dir, std::path::Path::new("."), None)?;
//! for commit in &verification.commits {
//!     println!("{} {}", &commit.commit[..12], commit.problems.join("; "));
//! }
//! assert!(verification.verified());
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use epic_git_ops::{CommitId, Git, LineCommit};
use epic_state_store::{EpicDir, StoryStage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The notes ref attestations are written under.
pub const NOTES_REF: &str = "refs/notes/epic";

/// What an attested commit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttestedKind {
    /// The merge of a story into the epic branch (`epic run`).
    Story,
    /// The merge of the landing's target into the epic branch, or a fix made on it during the
    /// landing (`epic land`).
    Landing,
}

/// The judge's verdict on a merged story.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeVerdict {
    /// The judge's seat.
    pub seat: String,
    /// `cleared`: the only verdict a merged story can have.
    pub verdict: String,
    /// The judge's note, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One gate, as it ran on the attested tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttestedGate {
    /// The command.
    pub command: String,
    /// Its exit code: 0 for a gate that passed; -1 for one that timed out or could not start.
    pub exit_code: i32,
    /// A gate already red on the epic head before the run, which `--allow-red-baseline` lets
    /// fail: its failure is not a problem of this merge.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub known_red: bool,
    /// Set when the gate was red on the attested tree, then green when run again on the same
    /// tree (`--gate-reruns`): it passed on a rerun. Absent from the attestations of gates
    /// green on their first run, and of merges made before epic recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaky: Option<AttestedFlake>,
}

/// A gate that passed on a rerun ([`AttestedGate::flaky`]): what the report's flaky gates keep,
/// but the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttestedFlake {
    /// How many runs it took to pass, the first included (2 with one rerun).
    pub runs: u32,
    /// How its first, red run ended, in words (`exit code 1`, `timed out after 30s`).
    pub status: String,
}

impl AttestedGate {
    /// The gate as `result` says it ran, flaky when it passed on a rerun; `known_red` when the
    /// run allowed it to fail.
    pub fn from_result(result: &crate::gates::GateResult, known_red: bool) -> Self {
        Self {
            known_red,
            flaky: result.flaky.as_ref().map(|flake| AttestedFlake {
                runs: flake.runs,
                status: flake.status.clone(),
            }),
            ..Self::from_status(&result.command, &result.status, result.passed)
        }
    }

    /// The gate `command` that ended as `status` says (`passed`, `exit code 1`, `timed out
    /// after 30s`).
    pub fn from_status(command: &str, status: &str, passed: bool) -> Self {
        let exit_code = if passed {
            0
        } else {
            status
                .strip_prefix("exit code ")
                .and_then(|code| code.parse().ok())
                .unwrap_or(-1)
        };
        Self {
            command: command.to_owned(),
            exit_code,
            known_red: false,
            flaky: None,
        }
    }
}

/// The proof a merge into the epic branch carries: what was checked, and the tree the gates
/// passed on. Kept as a git note on the commit and as `attestations/<commit>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attestation {
    /// What the commit is.
    pub kind: AttestedKind,
    /// The epic.
    pub epic: String,
    /// The number of the epic's run that made it (as the report numbers runs).
    pub run: u32,
    /// The attested commit of the epic branch.
    pub commit: String,
    /// The story merged (none for a landing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    /// The commit merged: the story commit every check passed on, or the landing's target
    /// commit. `None` for a landing's fix on the epic branch, which merges nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// The perimeter check of the story's diff, or of a landing's lander turns (what they
    /// changed outside it put back): `passed`. `None` in landings made before the lander had a
    /// perimeter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perimeter: Option<String>,
    /// The test guard on the story's diff, or on a landing's conflict resolutions and fixes:
    /// `passed`. `None` in landings made before the guard covered them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_guard: Option<String>,
    /// The judge's verdict; `None` when the run had no judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeVerdict>,
    /// Every gate, in order, as it ran on the gated tree; empty when no gate is configured.
    pub gates: Vec<AttestedGate>,
    /// The commit whose tree the gates passed on: this commit, or the last of the merges proven
    /// together with it (a later commit of the first-parent line).
    pub gated_commit: String,
    /// The tree the gates passed on (the tree of `gated_commit`).
    pub gated_tree: String,
    /// A landing's perimeter: what its lander turns could change, and what they changed
    /// outside it that was put back before the gates ran (a landing only; absent from the
    /// attestations of landings made before epic recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lander: Option<LanderPerimeter>,
}

/// The perimeter of a landing's lander turns ([`Attestation::lander`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LanderPerimeter {
    /// The conflicted paths: each story's conflict turn could change its own, the final turn
    /// those no story owns, and nothing else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// What a red-gate round could change: the paths the epic's stories own.
    pub rounds: Vec<String>,
    /// What the turns changed outside their perimeter, put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put_back: Vec<epic_report::PutBack>,
}

impl epic_state_store::Document for Attestation {
    const NAME: &'static str = "attestation";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "`epic verify` names the commit; a rerun of the story attests it again";
}

impl Attestation {
    /// The note's text: the attestation as pretty JSON, one line per field.
    pub fn to_note(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The gates that passed only on a rerun ([`AttestedGate::flaky`]), in order.
    pub fn flaky_gates(&self) -> Vec<FlakyCommand> {
        self.gates
            .iter()
            .filter_map(|gate| {
                gate.flaky.as_ref().map(|flake| FlakyCommand {
                    command: gate.command.clone(),
                    runs: flake.runs,
                    status: flake.status.clone(),
                })
            })
            .collect()
    }

    /// Writes this attestation to the epic's state (`attestations/<commit>.json`, through
    /// `guard`, as every write of epic's own guarded files) and as the note on its commit, from
    /// `worktree`; the state first, so a note never exists without the state that backs it.
    /// Blocking.
    pub fn record(
        &self,
        git: &dyn Git,
        dir: &EpicDir,
        worktree: &Path,
        guard: &epic_guard::TurnGuard,
    ) -> Result<(), String> {
        Self::record_all(std::slice::from_ref(self), git, dir, worktree, guard)
    }

    /// [`record`](Self::record) for several attestations (a batch's merges): every state first,
    /// then the notes as one change of the notes ref ([`Git::write_notes`]). Blocking.
    pub(crate) fn record_all(
        attestations: &[Self],
        git: &dyn Git,
        dir: &EpicDir,
        worktree: &Path,
        guard: &epic_guard::TurnGuard,
    ) -> Result<(), String> {
        let mut notes = Vec::with_capacity(attestations.len());
        for attestation in attestations {
            let path = dir
                .attestation(&attestation.commit)
                .ok_or_else(|| format!("`{}` is not a commit id", attestation.commit))?;
            guard.epic_write(&path, || {
                epic_state_store::save(&path, attestation)
                    .map_err(|error| epic_process::chain(&error))
            })?;
            let commit: CommitId = attestation
                .commit
                .parse()
                .map_err(|error| format!("{error}"))?;
            notes.push((commit, attestation.to_note()));
        }
        git.write_notes(worktree, NOTES_REF, &notes)
            .map_err(|error| epic_process::chain(&error))
    }
}

/// Where the epic branch started, `origin.json`: recorded when a run creates the branch, so
/// [`verify`] knows which commits of its first-parent line are the epic's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EpicOrigin {
    /// The epic branch.
    pub branch: String,
    /// The commit it was created at.
    pub base: String,
    /// The branch that commit was taken from (the main checkout's branch for `--base HEAD`, or
    /// the branch `--base` named); `None` for a detached head or another revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
}

impl epic_state_store::Document for EpicOrigin {
    const NAME: &'static str = "epic origin";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; `epic verify` then checks the epic branch back to where it meets the main checkout";
}

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
    /// The gates its attestation says passed only on a rerun ([`AttestedGate::flaky`]), in
    /// order; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_gates: Vec<FlakyCommand>,
    /// What is wrong; empty when the commit is attested and consistent.
    pub problems: Vec<String>,
}

/// A gate command an attestation says passed only on a rerun ([`Attestation::flaky_gates`],
/// [`CommitCheck::flaky_gates`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlakyCommand {
    /// The command.
    pub command: String,
    /// How many runs it took to pass, the first included.
    pub runs: u32,
    /// How its first, red run ended.
    pub status: String,
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
/// module's docs). `worktree` is any worktree of the repository (the main checkout); `branch`
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::gates::{Flake, GateResult};

    /// An attestation as epic wrote them before it recorded flaky gates.
    const OLDER: &str = r#"{
  "kind": "story",
  "epic": "e",
  "run": 1,
  "commit": "1111111111111111111111111111111111111111",
  "story": "a",
  "checked": "2222222222222222222222222222222222222222",
  "perimeter": "passed",
  "test_guard": "passed",
  "gates": [
    {
      "command": "cargo test",
      "exit_code": 0
    }
  ],
  "gated_commit": "1111111111111111111111111111111111111111",
  "gated_tree": "3333333333333333333333333333333333333333"
}
"#;

    fn passed(command: &str, flaky: Option<Flake>) -> GateResult {
        GateResult {
            command: command.to_owned(),
            passed: true,
            duration: Duration::from_millis(5),
            status: "passed".to_owned(),
            leftovers: Vec::new(),
            flaky,
            tests: None,
        }
    }

    #[test]
    fn an_attestation_written_before_flaky_gates_reads_and_writes_the_same() {
        let attestation: Attestation = serde_json::from_str(OLDER).expect("an older attestation");
        assert_eq!(attestation.gates[0].flaky, None);
        assert_eq!(attestation.to_note(), OLDER);
    }

    #[test]
    fn a_gate_green_only_on_a_rerun_is_attested_flaky_without_its_output() {
        let first_run = Flake {
            status: "exit code 1".to_owned(),
            output: "port 8080 in use".to_owned(),
            runs: 2,
        };
        let flaky = AttestedGate::from_result(&passed("pytest", Some(first_run)), false);
        let steady = AttestedGate::from_result(&passed("ruff check", None), false);
        assert_eq!(
            serde_json::to_value([&flaky, &steady]).expect("JSON"),
            serde_json::json!([
                {"command": "pytest", "exit_code": 0,
                 "flaky": {"runs": 2, "status": "exit code 1"}},
                {"command": "ruff check", "exit_code": 0},
            ])
        );
        let mut attestation: Attestation = serde_json::from_str(OLDER).expect("an attestation");
        attestation.gates = vec![steady, flaky];
        assert_eq!(
            attestation.flaky_gates(),
            [FlakyCommand {
                command: "pytest".to_owned(),
                runs: 2,
                status: "exit code 1".to_owned(),
            }]
        );
    }
}
