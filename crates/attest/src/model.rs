//! The attestation model: what a merge into the epic branch is proven by ([`Attestation`]), the
//! gates as they ran, a landing's perimeter, and where the epic branch started
//! ([`EpicOrigin`]).

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
}

/// A gate command an attestation says passed only on a rerun ([`Attestation::flaky_gates`],
/// [`CommitCheck::flaky_gates`](crate::CommitCheck::flaky_gates)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlakyCommand {
    /// The command.
    pub command: String,
    /// How many runs it took to pass, the first included.
    pub runs: u32,
    /// How its first, red run ended.
    pub status: String,
}

/// Where the epic branch started, `origin.json`: recorded when a run creates the branch, so
/// [`verify`](crate::verify()) knows which commits of its first-parent line are the epic's.
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn an_attestation_written_before_flaky_gates_reads_and_writes_the_same() {
        let attestation: Attestation = serde_json::from_str(OLDER).expect("an older attestation");
        assert_eq!(attestation.gates[0].flaky, None);
        assert_eq!(attestation.to_note(), OLDER);
    }

    #[test]
    fn a_gate_green_only_on_a_rerun_is_attested_flaky() {
        let flaky = AttestedGate {
            flaky: Some(AttestedFlake {
                runs: 2,
                status: "exit code 1".to_owned(),
            }),
            ..AttestedGate::from_status("pytest", "passed", true)
        };
        let steady = AttestedGate::from_status("ruff check", "passed", true);
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

    #[test]
    fn a_red_gate_is_attested_with_its_exit_code_or_minus_one() {
        assert_eq!(
            AttestedGate::from_status("cargo test", "exit code 101", false).exit_code,
            101
        );
        assert_eq!(
            AttestedGate::from_status("cargo test", "timed out after 30s", false).exit_code,
            -1
        );
    }
}
