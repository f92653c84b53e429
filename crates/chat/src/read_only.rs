//! Judges and reviewers read; they do not write. Their presets start each CLI in its read-only
//! mode where it has one, but a turn is untrusted whatever its flags: the worktree's whole
//! state (branch, head, every file, uncommitted work included) is taken before the turn and
//! put back after it (`epic_git_ops::Git::worktree_state`, `put_back`), and what the turn
//! changed is named in a warning.

use epic_agents::Role;

/// The warning for a `role` turn whose changes were discarded: the files it changed (empty when
/// it only committed or checked out a branch).
pub fn discarded(role: Role, files: &[String]) -> String {
    const SHOWN: usize = 5;
    let what = if files.is_empty() {
        "made commits or checked out another branch".to_owned()
    } else {
        let shown = files
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        match files.len().saturating_sub(SHOWN) {
            0 => format!("changed {shown}"),
            more => format!("changed {shown} and {more} more"),
        }
    };
    format!("the {role} turn {what}; discarded: a {role} only reads the work it checks")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_was_discarded() {
        assert_eq!(
            discarded(Role::Judge, &[]),
            "the judge turn made commits or checked out another branch; discarded: a judge \
             only reads the work it checks"
        );
        let files: Vec<String> = (1..=7).map(|n| format!("f{n}")).collect();
        assert_eq!(
            discarded(Role::Reviewer, &files),
            "the reviewer turn changed f1, f2, f3, f4, f5 and 2 more; discarded: a reviewer \
             only reads the work it checks"
        );
    }
}
