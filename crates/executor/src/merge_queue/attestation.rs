//! The attestation of a batch's proven merges ([`Attestation`]): one per merge of an accepted
//! candidate, with the gates that proved it, recorded in the epic's state and as a git note.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_process::{chain, offload};

use super::batch::{Batch, Entry};
use epic_attest::{Attestation, AttestedGate, AttestedKind, JudgeVerdict};
use epic_events::Event;
use epic_gates::GateResult;

impl Batch<'_> {
    /// Records the attestation of each merge of `segment` ([`Attestation`]), proven by the
    /// gates `results` on `tip`: in the epic's state and as its git note. Best effort: a merge
    /// without it is proven all the same, and `epic verify` names it; a run note says why.
    pub(super) async fn attest(&self, segment: &[Entry], results: &[GateResult], tip: CommitId) {
        let shared = self.shared;
        if tip == self.base {
            return;
        }
        // A gate that failed on a proven candidate is one the red baseline allowed, or one red
        // only with tests red before it (inherited).
        let gates: Vec<AttestedGate> = results
            .iter()
            .map(|result| result.attested(!result.passed || result.inherited_only()))
            .collect();
        let attestations: Vec<Attestation> = segment
            .iter()
            .filter_map(|entry| {
                let commit = entry.commit?;
                Some(Attestation {
                    kind: AttestedKind::Story,
                    epic: shared.dir.epic_id().to_owned(),
                    run: shared.run,
                    commit: commit.to_hex(),
                    story: Some(entry.id().to_owned()),
                    checked: Some(entry.request.checked.to_hex()),
                    perimeter: Some("passed".to_owned()),
                    test_guard: Some("passed".to_owned()),
                    judge: shared.config.judge.as_ref().map(|roster| JudgeVerdict {
                        seat: entry
                            .request
                            .judge_seat
                            .clone()
                            .unwrap_or_else(|| roster.to_string()),
                        verdict: "cleared".to_owned(),
                        note: entry.request.judge.clone(),
                    }),
                    gates: gates.clone(),
                    gated_commit: tip.to_hex(),
                    gated_tree: String::new(),
                    lander: None,
                })
            })
            .collect();
        let (git, dir, epic, guard, base) = (
            Arc::clone(&shared.git),
            shared.dir.clone(),
            shared.epic_worktree.clone(),
            Arc::clone(&shared.guard),
            self.base,
        );
        let recorded = offload::blocking(move || {
            let (line, _) = git
                .first_parent_line(&epic, Some(&base), &tip.to_hex())
                .map_err(|error| chain(&error))?;
            let tree = line
                .last()
                .map(|last| last.tree.clone())
                .unwrap_or_default();
            let attestations: Vec<Attestation> = attestations
                .into_iter()
                .map(|mut attestation| {
                    attestation.gated_tree.clone_from(&tree);
                    attestation
                })
                .collect();
            Attestation::record_all(&attestations, git.as_ref(), &dir, &epic, &guard)
        })
        .await;
        let failed = match recorded {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(error) => error.to_string(),
        };
        self.emit(Event::RunNote {
            message: format!("the merges proven at {tip} could not be attested: {failed}"),
        });
    }
}
