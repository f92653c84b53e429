//! Attestations: the proof each merge into the epic branch carries, and `epic verify`'s check of
//! the epic branch against them.
//!
//! When a story's merge is proven (its gates green on the merged tree), `epic run` records an
//! [`Attestation`]: the story commit that was checked, the perimeter and test-guard result, the
//! judge's verdict, each gate's command and result (a gate red, then green when run again on the
//! same tree, with its runs and how its red run ended), and the tree they passed on; `epic land`
//! records one for the merge of its target and each fix it made. It is written twice
//! ([`Attestation::record`]): as a git note on the merge commit under [`NOTES_REF`]
//! (`refs/notes/epic`), so it travels with the branch (`git push origin refs/notes/epic`), and
//! as `attestations/<commit>.json` in the epic's state directory, which agents cannot write (the
//! sandbox keeps it read-only, the turn guard undoes a change), while a notes ref is a ref like
//! any other. [`verify()`] walks the epic branch's first-parent line from the commit it started
//! at ([`EpicOrigin`]) and checks every commit against both: a commit without a note (made by
//! hand, or by a stray process), a note the state does not back, a note that contradicts the
//! commit (another story commit merged, gates that passed on another tree), or a story whose
//! state claims a merge no attestation backs.
//!
//! The crate is below the executor and `epic land`, which both attest their merges, and beside
//! the CLI's `epic verify`: it depends on git-ops and state-store for the note and the state's
//! copy, and on the guard, through which the copy is written.
//!
//! A gate as an attestation keeps it:
//!
//! ```
//! use epic_attest::AttestedGate;
//!
//! let gate = AttestedGate::from_status("cargo test", "exit code 101", false);
//! assert_eq!(gate.exit_code, 101);
//! assert_eq!(AttestedGate::from_status("cargo test", "passed", true).exit_code, 0);
//! ```
//!
//! The epic branch of the current repository's `checkout` epic, verified:
//!
//! ```no_run
//! use epic_git_ops::{Git, GixGit};
//! use epic_state_store::EpicDir;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let git = GixGit::discover(".")?;
//! let dir = EpicDir::new(git.common_dir(), "checkout")?;
//! let verification = epic_attest::verify(&git, &dir, std::path::Path::new("."), None)?;
//! for commit in &verification.commits {
//!     println!("{} {}", &commit.commit[..12], commit.problems.join("; "));
//! }
//! assert!(verification.verified());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod model;
mod record;
mod verify;

pub use model::{
    Attestation, AttestedFlake, AttestedGate, AttestedKind, EpicOrigin, FlakyCommand, JudgeVerdict,
    LanderPerimeter, NOTES_REF,
};
pub use verify::{CommitCheck, Verification, VerifyError, verify};
