//! Agents' output (`-v`) cut into lines, per story, each `story | line`.

use std::collections::BTreeMap;

/// Agents' output cut into lines, per story (a chunk may end mid-line).
#[derive(Debug, Default)]
pub(super) struct OutputLines {
    partial: BTreeMap<String, String>,
}

impl OutputLines {
    /// The complete lines `text` ends, each `story | line`.
    pub(super) fn push(&mut self, story: &str, text: &str) -> Vec<String> {
        let buffer = self.partial.entry(story.to_owned()).or_default();
        buffer.push_str(text);
        let mut lines = Vec::new();
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            lines.push(format!("{story} | {}", line.trim_end()));
        }
        lines
    }

    /// The unfinished last line of `story`'s turn, if any.
    pub(super) fn flush(&mut self, story: &str) -> Vec<String> {
        self.partial
            .remove(story)
            .filter(|rest| !rest.trim().is_empty())
            .map(|rest| vec![format!("{story} | {}", rest.trim_end())])
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_cut_into_lines_per_story() {
        let mut lines = OutputLines::default();
        assert!(lines.push("a", "hel").is_empty());
        assert_eq!(lines.push("b", "one\ntw"), ["b | one"]);
        assert_eq!(lines.push("a", "lo\nworld\n"), ["a | hello", "a | world"]);
        assert_eq!(lines.flush("b"), ["b | tw"]);
        assert!(lines.flush("a").is_empty());
    }
}
