//! `epic verify [EPIC]`: every commit of the epic branch checked against the attestation `epic
//! run` recorded when it proved the merge (see [`epic_attest`]).
//!
//! Text: one line per commit of the epic branch's first-parent line after its base, oldest
//! first, `ok` or `FAIL`, then the gates its attestation says passed only on a rerun (flaky) and
//! what is missing, then the stories whose state claims a merge no attestation backs. `--format json` prints the [`Verification`]. Exit 0 when every commit is
//! attested and consistent, 1 otherwise, 2 when there is no such epic or branch.

use std::fmt::Write as _;

use epic_attest::{AttestedKind, Verification, VerifyError};

use crate::args::{EpicArgs, Format, GlobalArgs};
use crate::commands::{json, render};
use crate::epics;
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::repo;

/// Runs `epic verify`.
pub(crate) fn run(global: &GlobalArgs, args: &EpicArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("verify", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.as_deref(), "verify")?;
    let branch = epics::load_report(&dir)
        .ok()
        .flatten()
        .map(|report| report.epic_branch);
    let verification = epic_attest::verify(repo.git.as_ref(), &dir, &repo.root, branch.as_deref())
        .map_err(|error| match error {
            VerifyError::NoBranch { .. } => {
                CommandError::new(Kind::Repository, error).hint(format!(
                    "`epic run` creates it; `epic status {}` shows the epic's stories",
                    dir.epic_id()
                ))
            }
            other => CommandError::new(Kind::Repository, other),
        })?;
    let text = match format {
        Format::Json => json(&verification),
        _ => text(&verification),
    };
    output::data(&text)?;
    if verification.verified() {
        return Ok(());
    }
    out.hint(
        "a commit epic did not prove has no place on the epic branch: reset the branch to the \
         commit before it (`git reset --hard` in the epic worktree) and rerun `epic run`, which \
         merges and proves the stories again",
    );
    Err(CommandError::reported(Kind::Unverified))
}

/// The verification for people.
fn text(verification: &Verification) -> String {
    render(|text| {
        writeln!(
            text,
            "epic {} — branch {}, after {} ({})",
            verification.epic,
            verification.branch,
            short(&verification.base),
            verification.base_from
        )?;
        for commit in &verification.commits {
            let what = match (&commit.kind, &commit.story) {
                (Some(AttestedKind::Story), Some(story)) => format!("story {story}"),
                (Some(AttestedKind::Landing), _) => "landing".to_owned(),
                _ => format!("\"{}\" by {}", commit.summary, commit.author),
            };
            let verdict = if commit.problems.is_empty() {
                "ok  "
            } else {
                "FAIL"
            };
            writeln!(text, "{verdict}  {} {what}", short(&commit.commit))?;
            for flaky in &commit.flaky_gates {
                writeln!(
                    text,
                    "      flaky: gate `{}` red ({}), green on run {}",
                    flaky.command, flaky.status, flaky.runs
                )?;
            }
            for problem in &commit.problems {
                writeln!(text, "      {problem}")?;
            }
        }
        for claim in &verification.claims {
            writeln!(text, "FAIL  {claim}")?;
        }
        let failed = verification.unattested().count() + verification.claims.len();
        if failed == 0 {
            writeln!(
                text,
                "verified: {} commits, each attested and consistent",
                verification.commits.len()
            )
        } else {
            writeln!(
                text,
                "not verified: {failed} of {} checks failed",
                verification.commits.len() + verification.claims.len()
            )
        }
    })
}

/// The first twelve digits of a commit id.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_keep_twelve_digits_and_short_text_whole() {
        assert_eq!(short("0123456789abcdef"), "0123456789ab");
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn an_unverified_epic_names_each_problem() {
        let verification = Verification {
            epic: "e".into(),
            branch: "epic/e".into(),
            base: "a".repeat(40),
            base_from: "origin.json".into(),
            commits: vec![epic_attest::CommitCheck {
                commit: "b".repeat(40),
                summary: "hand edit".into(),
                author: "Ada <ada@example.invalid>".into(),
                story: None,
                kind: None,
                flaky_gates: Vec::new(),
                problems: vec!["no attestation".into()],
            }],
            claims: vec!["story 'x': its state says merged".into()],
        };
        let shown = text(&verification);
        assert!(
            shown.contains("FAIL  bbbbbbbbbbbb \"hand edit\" by Ada"),
            "{shown}"
        );
        assert!(shown.contains("      no attestation"), "{shown}");
        assert!(shown.contains("FAIL  story 'x'"), "{shown}");
        assert!(!shown.contains("flaky") && !json(&verification).contains("flaky_gates"));
        assert!(
            shown.contains("not verified: 2 of 2 checks failed"),
            "{shown}"
        );
    }

    #[test]
    fn a_gate_green_only_on_a_rerun_is_named_under_its_commit() {
        let verification = Verification {
            epic: "e".into(),
            branch: "epic/e".into(),
            base: "a".repeat(40),
            base_from: "origin.json".into(),
            commits: vec![epic_attest::CommitCheck {
                commit: "c".repeat(40),
                summary: "e: merge a".into(),
                author: "epic <epic@example.invalid>".into(),
                story: Some("a".into()),
                kind: Some(AttestedKind::Story),
                flaky_gates: vec![epic_attest::FlakyCommand {
                    command: "pytest".into(),
                    runs: 2,
                    status: "exit code 1".into(),
                }],
                problems: Vec::new(),
            }],
            claims: Vec::new(),
        };
        let shown = text(&verification);
        assert!(
            shown.contains(
                "ok    cccccccccccc story a\n      \
                 flaky: gate `pytest` red (exit code 1), green on run 2\n\
                 verified: 1 commits"
            ),
            "{shown}"
        );
        let data: serde_json::Value =
            serde_json::from_str(&json(&verification)).expect("the JSON verification");
        assert_eq!(
            data["commits"][0]["flaky_gates"],
            serde_json::json!([{"command": "pytest", "runs": 2, "status": "exit code 1"}]),
            "{data}"
        );
    }
}
