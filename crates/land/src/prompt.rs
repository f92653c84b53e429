//! The lander's prompts: its standing instructions, a story's conflicts, the final turn's, and
//! red gates after the merge.

use std::fmt::Write as _;

use epic_story_plan::Story;

/// How much of each side of a conflicted file a prompt carries.
const SIDE_LIMIT: usize = 16 * 1024;

/// One conflicted path: the epic branch's version and the target's (`None`: the side has no
/// such file).
#[derive(Debug, Clone)]
pub(crate) struct Sides {
    pub(crate) path: String,
    pub(crate) ours: Option<Vec<u8>>,
    pub(crate) theirs: Option<Vec<u8>>,
}

/// The lander's standing instructions.
pub(crate) fn system(epic: &str, epic_text: &str, target: &str, rules: &str) -> String {
    let mut text = format!(
        "You are landing the epic `{epic}` on the branch `{target}`. epic merged `{target}` into \
         the epic branch in this worktree, the epic branch's own, and resolves what that merge \
         needs with you: conflicted files, then red gates. Edit files only; do not commit, \
         merge, reset or switch branches: epic commits what you leave. A file that still holds \
         conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`) is not resolved. Keep what both \
         sides meant: the target's changes and the epic's work.\n"
    );
    if !epic_text.trim().is_empty() {
        let _ = write!(text, "\nThe epic:\n{}\n", epic_text.trim());
    }
    if !rules.trim().is_empty() {
        let _ = write!(text, "\nHouse rules:\n{}\n", rules.trim());
    }
    text
}

/// A turn on the conflicts of `story` (none: the paths no story owns), with both sides of each.
pub(crate) fn conflicts(story: Option<&Story>, target: &str, sides: &[Sides]) -> String {
    let mut text = String::new();
    match story {
        Some(story) => {
            let _ = writeln!(
                text,
                "These files of story `{}` ({}) conflict between the epic branch and `{target}`.",
                story.id, story.title
            );
            if !story.description.trim().is_empty() {
                let _ = write!(
                    text,
                    "\nWhat the story built:\n{}\n",
                    story.description.trim()
                );
            }
            if !story.provides.is_empty() {
                let _ = writeln!(text, "\nIt provides: {}", story.provides.join(", "));
            }
            let _ = writeln!(text, "It owns: {}", story.owned.join(", "));
        }
        None => {
            let _ = writeln!(
                text,
                "These files conflict between the epic branch and `{target}`, and no story of \
                 the epic owns them."
            );
        }
    }
    for side in sides {
        let _ = write!(
            text,
            "\n## `{}`\n\nThe epic branch's version:\n{}\nThe version on `{target}`:\n{}",
            side.path,
            fenced(side.ours.as_deref()),
            fenced(side.theirs.as_deref())
        );
    }
    text.push_str(
        "\nThe worktree holds each file with conflict markers. Resolve every one of them, \
         keeping what both sides meant, and leave no marker. Change these files only: epic puts \
         back whatever else you change before the gates run.\n",
    );
    text
}

/// A turn on red gates after the merge: what failed, in round `round` of `rounds`, and the
/// paths it may change (the stories' owned paths).
pub(crate) fn red_gates(failure: &str, round: u32, rounds: u32, owned: &[String]) -> String {
    format!(
        "The gates fail on the epic branch with `{}` merged in (round {round} of {rounds}):\n\n\
         {failure}\n\nFix the code so the gates pass. Do not delete or skip tests. Change only \
         the paths the epic's stories own ({}): epic puts back whatever else you change before \
         the gates run again, the gates' own scripts and configuration included.\n",
        "the target",
        owned.join(", ")
    )
}

/// A side's content in a fence, cut to [`SIDE_LIMIT`], or a line saying it has no such file.
fn fenced(content: Option<&[u8]>) -> String {
    let Some(content) = content else {
        return "(no such file on this side)\n".to_owned();
    };
    let text = String::from_utf8_lossy(content);
    let cut = text.floor_char_boundary(SIDE_LIMIT);
    let more = if cut < text.len() {
        format!("\n… ({} more bytes)", text.len() - cut)
    } else {
        String::new()
    };
    format!("````\n{}{more}\n````\n", text[..cut].trim_end_matches('\n'))
}
