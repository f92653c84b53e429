//! Reading a plan from JSON, TOML or Markdown text.
//!
//! Parsing only decodes; [`StoryPlan::validate`](crate::StoryPlan::validate) checks the graph, so
//! "unreadable" and "invalid" stay distinct errors (exit codes 2 and 1 of `epic validate`).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::StoryPlan;

/// The syntax a plan is written in, chosen by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// A JSON document (`.json`).
    Json,
    /// A TOML document (`.toml`) with the same keys as the JSON form.
    Toml,
    /// Markdown (`.md`, `.markdown`) holding the JSON plan in its first fenced block whose info
    /// string is `json storyplan`.
    Markdown,
}

impl PlanFormat {
    /// The format of a plan file, from its extension (case-insensitive).
    ///
    /// ```
    /// use epic_story_plan::PlanFormat;
    /// assert_eq!(PlanFormat::from_path("epic/plan.MD".as_ref()), Some(PlanFormat::Markdown));
    /// assert_eq!(PlanFormat::from_path("plan.yaml".as_ref()), None);
    /// ```
    pub fn from_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "json" => Some(Self::Json),
            "toml" => Some(Self::Toml),
            "md" | "markdown" => Some(Self::Markdown),
            _ => None,
        }
    }
}

/// A plan that could not be decoded: where, and what was expected.
///
/// Displays as `FILE:LINE:COLUMN: MESSAGE`, with the parts that are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    path: Option<PathBuf>,
    line: Option<usize>,
    column: Option<usize>,
    kind: ParseErrorKind,
    message: String,
}

/// What kind of problem a [`ParseError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The file's extension names no plan format.
    UnknownFormat,
    /// A Markdown plan has no ```` ```json storyplan ```` block, or does not close it.
    NoPlanBlock,
    /// The JSON or TOML text is malformed.
    Syntax,
    /// The text is well-formed but not a plan: a missing field, a wrong type.
    Schema,
}

impl ParseError {
    fn new(kind: ParseErrorKind, message: impl Into<String>) -> Self {
        Self {
            path: None,
            line: None,
            column: None,
            kind,
            message: message.into(),
        }
    }

    fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// This error, naming the file it came from.
    #[must_use]
    fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The file, when known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The 1-based line, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The 1-based column (in characters), when known.
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ParseErrorKind {
        self.kind
    }

    /// What went wrong, without the location.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
            if let Some(line) = self.line {
                write!(f, "{line}:")?;
                if let Some(column) = self.column {
                    write!(f, "{column}:")?;
                }
            }
            f.write_str(" ")?;
        } else if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "line {line}, column {column}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

impl StoryPlan {
    /// Decodes a plan written in `format`.
    ///
    /// ```
    /// use epic_story_plan::{PlanFormat, StoryPlan};
    /// let plan = StoryPlan::parse(
    ///     r#"{"epicId": "shop", "stories": [{"id": "cart", "title": "Cart", "owned": ["src/cart"]}]}"#,
    ///     PlanFormat::Json,
    /// )?;
    /// assert_eq!(plan.epic_id, "shop");
    /// # Ok::<(), epic_story_plan::ParseError>(())
    /// ```
    pub fn parse(text: &str, format: PlanFormat) -> Result<Self, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        match format {
            PlanFormat::Json => parse_json(text, 0),
            PlanFormat::Toml => parse_toml(text),
            PlanFormat::Markdown => {
                let block = find_plan_block(text)?;
                parse_json(block.body, block.first_line - 1)
            }
        }
    }

    /// Decodes the contents of the plan file at `path`, choosing the format by its extension;
    /// every error names the file.
    pub fn parse_file(path: &Path, text: &str) -> Result<Self, ParseError> {
        let Some(format) = PlanFormat::from_path(path) else {
            return Err(ParseError::new(
                ParseErrorKind::UnknownFormat,
                "unknown plan format: the file name must end in .json, .toml or .md",
            )
            .with_path(path));
        };
        Self::parse(text, format).map_err(|error| error.with_path(path))
    }
}

fn parse_json(text: &str, line_offset: usize) -> Result<StoryPlan, ParseError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let plan: StoryPlan = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| json_error(&error, line_offset))?;
    deserializer
        .end()
        .map_err(|error| json_error_inner(&error, "", line_offset))?;
    Ok(plan)
}

fn json_error(
    error: &serde_path_to_error::Error<serde_json::Error>,
    line_offset: usize,
) -> ParseError {
    json_error_inner(error.inner(), &element_path(error.path()), line_offset)
}

/// The path of the element that failed, without the `?` segments `serde_path_to_error` writes for
/// a key it never read (`stories[0].?` is `stories[0]`); empty for the document itself.
fn element_path(path: &serde_path_to_error::Path) -> String {
    let path = path.to_string();
    let mut known = path.as_str();
    while let Some(shorter) = known.strip_suffix(".?").or_else(|| known.strip_suffix('?')) {
        known = shorter;
    }
    if known == "." {
        String::new()
    } else {
        known.to_owned()
    }
}

fn json_error_inner(error: &serde_json::Error, path: &str, line_offset: usize) -> ParseError {
    use serde_json::error::Category;
    let kind = match error.classify() {
        Category::Data => ParseErrorKind::Schema,
        Category::Io | Category::Syntax | Category::Eof => ParseErrorKind::Syntax,
    };
    // serde_json's Display appends " at line L column C"; the location is ours to place.
    let full = error.to_string();
    let bare = match full.rfind(" at line ") {
        Some(cut) => &full[..cut],
        None => &full,
    };
    let message = if path.is_empty() {
        format!("invalid plan: {bare}")
    } else {
        format!("invalid plan at `{path}`: {bare}")
    };
    let parse_error = ParseError::new(kind, message);
    if error.line() == 0 {
        parse_error
    } else {
        parse_error.at(error.line() + line_offset, error.column())
    }
}

fn parse_toml(text: &str) -> Result<StoryPlan, ParseError> {
    let deserializer = toml::de::Deserializer::parse(text).map_err(|error| {
        let located = toml_error(text, &error, "");
        ParseError {
            kind: ParseErrorKind::Syntax,
            ..located
        }
    })?;
    serde_path_to_error::deserialize(deserializer)
        .map_err(|error| toml_error(text, error.inner(), &element_path(error.path())))
}

fn toml_error(text: &str, error: &toml::de::Error, path: &str) -> ParseError {
    let bare = error.message().trim_end();
    let message = if path.is_empty() {
        format!("invalid plan: {bare}")
    } else {
        format!("invalid plan at `{path}`: {bare}")
    };
    let parse_error = ParseError::new(ParseErrorKind::Schema, message);
    match error.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            parse_error.at(line, column)
        }
        None => parse_error,
    }
}

/// The line and column, both from 1, of byte `offset` in `text`, the column counted in
/// characters: what an error message shows of a parser's byte span (a plan's, `epic.toml`'s).
/// An offset inside a character is that character's; one past the end is the end.
///
/// ```
/// use epic_story_plan::line_column;
///
/// assert_eq!(line_column("ab\ncé d", 7), (2, 4));
/// // Byte 5 is inside `é` (bytes 4 and 5): the position is the `é`'s.
/// assert_eq!(line_column("ab\ncé d", 5), (2, 2));
/// ```
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    (line, before[line_start..].chars().count() + 1)
}

struct PlanBlock<'a> {
    /// The block's contents, between the fences.
    body: &'a str,
    /// The 1-based line of the body's first line in the whole file.
    first_line: usize,
}

/// The first ```` ```json storyplan ```` block: its opening fence is a line holding ```` ``` ````,
/// `json`, blanks and `storyplan`; it closes at the next line holding only ```` ``` ````.
fn find_plan_block(text: &str) -> Result<PlanBlock<'_>, ParseError> {
    let mut offset = 0;
    let mut opened: Option<(usize, usize)> = None; // (line number of the fence, body start)
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let line_start = offset;
        offset += line.len();
        let content = fence_view(line);
        match opened {
            None if is_plan_fence(content) => opened = Some((index + 1, offset)),
            Some((_, body_start)) if content == "```" => {
                let body = text[body_start..line_start].trim_end_matches(['\n', '\r']);
                let first_line = opened.map_or(1, |(fence, _)| fence + 1);
                return Ok(PlanBlock { body, first_line });
            }
            _ => {}
        }
    }
    Err(match opened {
        Some((fence_line, _)) => ParseError::new(
            ParseErrorKind::NoPlanBlock,
            "the ```json storyplan block opened here is never closed: end it with a line holding only ```",
        )
        .at(fence_line, 1),
        None => ParseError::new(
            ParseErrorKind::NoPlanBlock,
            "no ```json storyplan fenced block: a Markdown plan holds its plan as JSON in a block opened by a line ```json storyplan",
        ),
    })
}

/// A line as the fence search sees it: without its line ending, trimmed.
pub(crate) fn fence_view(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r']).trim()
}

/// Whether a line (as the parser sees it: without its line ending, trimmed) opens a plan block.
pub(crate) fn is_plan_fence(line: &str) -> bool {
    line.strip_prefix("```json")
        .is_some_and(|rest| rest.starts_with([' ', '\t']) && rest.trim() == "storyplan")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("", 0), (1, 1));
        assert_eq!(line_column("x", 99), (1, 2));
    }

    #[test]
    fn an_offset_inside_a_character_is_that_characters() {
        // `é` is bytes 4..6, `😀` bytes 8..12 of the second line's text.
        let text = "ab\ncé d😀!";
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(line_column(text, 5), (2, 2));
        for inside in 8..12 {
            assert_eq!(line_column(text, inside), (2, 5), "offset {inside}");
        }
        assert_eq!(line_column(text, 12), (2, 6));
    }

    #[test]
    fn fence_needs_the_info_string() {
        assert!(is_plan_fence("```json storyplan"));
        assert!(is_plan_fence("```json \t storyplan  "));
        assert!(!is_plan_fence("```jsonstoryplan"));
        assert!(!is_plan_fence("```json"));
        assert!(!is_plan_fence("```json storyplans"));
    }
}
