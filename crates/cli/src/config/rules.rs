//! The house rules every agent's prompt carries (`rules`): the files' text, each under its name,
//! each cut at a cap.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::{ConfigError, NonBlank};

/// The most of one rules file an agent's prompt carries, in bytes: a house-rules file is a page
/// or two; beyond this, the prompt says the file goes on.
pub(crate) const RULES_FILE_CAP: usize = 32 * 1024;

/// The house rules every agent's prompt carries ([`RunConfig::extra_rules`](epic_executor::RunConfig::extra_rules)): the text of each
/// file of `rules` (a relative path from the repository `root`), in order, each under a heading
/// naming it, each cut at [`RULES_FILE_CAP`] bytes with a note; empty without files. A file that
/// cannot be read is an error naming it.
pub(crate) fn house_rules(root: &Path, rules: &[NonBlank]) -> Result<String, ConfigError> {
    let mut out = String::new();
    for rule in rules {
        let name = rule.to_string();
        let path = root.join(&name);
        let bytes = fs::read(&path).map_err(|source| ConfigError::Rules {
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let end = text.floor_char_boundary(RULES_FILE_CAP);
        let cut = if end < text.len() {
            format!(
                "\n[… the file goes on: {} more bytes left out …]",
                text.len() - end
            )
        } else {
            String::new()
        };
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "## {name}\n\n{}{cut}", &text[..end]);
    }
    Ok(out)
}
