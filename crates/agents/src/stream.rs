//! What an agent is doing, read from its stream as it arrives: each tool call Claude Code
//! (`stream-json`), Codex (`exec --json`) and Gemini CLI (`stream-json`) report ([`ToolCall`]),
//! and a turn that repeats the same call ([`LOOP_REPEATS`] times in a row) caught as looping.
//!
//! [`StreamWatch`] takes the output chunk by chunk and reads each complete line once (a line
//! split across chunks waits for its end), so watching costs one JSON parse per line of the
//! stream, never a reparse of the whole output. What each CLI prints for a tool call:
//!
//! - **Claude Code**: an `assistant` event whose `message.content` holds `tool_use` blocks
//!   (`name`, `input`): `Bash` (`command`), `Edit`/`Write`/`MultiEdit` (`file_path`),
//!   `Read` (`file_path`), `Grep`/`Glob` (`pattern`), …
//! - **Codex**: `item.started` / `item.completed` of an item whose type is `command_execution`
//!   (`command`), `file_change` (`changes[].path`), `mcp_tool_call` (`server`, `tool`,
//!   `arguments`) or `web_search` (`query`); an item is one call however many events name it
//!   (by its `id`).
//! - **Gemini CLI**: a `tool_use` event (`tool_name`, `tool_id`, `parameters`):
//!   `run_shell_command` (`command`), `write_file`/`replace` (`file_path`), `read_file`, …

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

use crate::preset::Preset;

/// How many times in a row the same tool call (same tool, same input) ends a turn as looping.
pub const LOOP_REPEATS: u32 = 5;

/// The longest line the watch keeps waiting for its end: a longer one (a huge tool result) is
/// skipped, not held in memory.
const LINE_CAP: usize = 1024 * 1024;

/// How many characters of a tool call's input a description quotes.
const QUOTE_CAP: usize = 120;

/// One tool call an agent's stream reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool, as the agent names it (`Bash`, `command_execution`, `run_shell_command`).
    pub tool: String,
    /// Its input, as compact JSON (what makes two calls the same).
    pub input: String,
    /// What it does, in a few words: ``running `cargo test` ``, `editing src/lib.rs`.
    pub doing: String,
}

impl ToolCall {
    fn new(tool: &str, input: &Value, doing: String) -> Self {
        Self {
            tool: tool.to_owned(),
            input: input.to_string(),
            doing,
        }
    }

    /// Whether `other` is the same call: same tool, same input.
    fn same(&self, other: &Self) -> bool {
        self.tool == other.tool && self.input == other.input
    }
}

impl fmt::Display for ToolCall {
    /// `Bash` with `{"command":"cargo test"}`, the input cut at a few hundred characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input: String = self.input.chars().take(300).collect();
        let more = if input.len() < self.input.len() {
            "…"
        } else {
            ""
        };
        write!(f, "`{}` with `{input}{more}`", self.tool)
    }
}

/// Reads one turn's stream as it arrives (see the module's docs).
#[derive(Debug)]
pub(crate) struct StreamWatch {
    preset: Preset,
    /// The start of a line whose end has not arrived yet; `None` while skipping a line past
    /// [`LINE_CAP`].
    partial: Option<String>,
    /// The last call and how many times in a row it came.
    last: Option<(ToolCall, u32)>,
    /// Codex's items already counted, by id.
    items: HashSet<String>,
    /// The call repeated [`LOOP_REPEATS`] times, once it was.
    looping: Option<ToolCall>,
}

impl StreamWatch {
    /// A watch over a turn of `preset`.
    pub(crate) fn new(preset: Preset) -> Self {
        Self {
            preset,
            partial: Some(String::new()),
            last: None,
            items: HashSet::new(),
            looping: None,
        }
    }

    /// The call that was repeated [`LOOP_REPEATS`] times in a row, once one was.
    pub(crate) fn looping(&self) -> Option<&ToolCall> {
        self.looping.as_ref()
    }

    /// Reads a chunk of the stream; the tool calls its complete lines reported, in order.
    pub(crate) fn chunk(&mut self, text: &str) -> Vec<ToolCall> {
        let mut calls = Vec::new();
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            let (piece, after) = rest.split_at(end);
            rest = &after[1..];
            // `None`: the end of a line too long to keep, skipped.
            if let Some(mut line) = self.partial.take() {
                line.push_str(piece);
                calls.extend(self.line(&line));
            }
            self.partial = Some(String::new());
        }
        if let Some(partial) = &mut self.partial {
            if partial.len() + rest.len() > LINE_CAP {
                self.partial = None;
            } else {
                partial.push_str(rest);
            }
        }
        calls
    }

    /// The tool calls of one complete line, counted for the loop.
    fn line(&mut self, line: &str) -> Vec<ToolCall> {
        let line = line.trim();
        if !line.starts_with('{') {
            return Vec::new();
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        let calls = match self.preset {
            Preset::Claude => claude_calls(&event),
            Preset::Codex => self.codex_call(&event).into_iter().collect(),
            Preset::Gemini => gemini_call(&event).into_iter().collect(),
            Preset::Aider | Preset::Opencode => Vec::new(),
        };
        for call in &calls {
            self.count(call);
        }
        calls
    }

    /// Counts `call` towards a loop.
    fn count(&mut self, call: &ToolCall) {
        let times = match &self.last {
            Some((last, times)) if last.same(call) => times + 1,
            _ => 1,
        };
        self.last = Some((call.clone(), times));
        if times >= LOOP_REPEATS && self.looping.is_none() {
            self.looping = Some(call.clone());
        }
    }

    /// Codex's call in `event`, once per item.
    fn codex_call(&mut self, event: &Value) -> Option<ToolCall> {
        let kind = event.get("type").and_then(Value::as_str)?;
        if !matches!(kind, "item.started" | "item.completed") {
            return None;
        }
        let item = event.get("item")?;
        let item_type = item
            .get("type")
            .or_else(|| item.get("item_type"))
            .and_then(Value::as_str)?;
        let call = match item_type {
            "command_execution" => {
                let command = item.get("command").cloned().unwrap_or(Value::Null);
                let doing = format!("running `{}`", quote(&text_of(&command)));
                ToolCall::new(item_type, &command, doing)
            }
            "file_change" => {
                let changes = item.get("changes").cloned().unwrap_or(Value::Null);
                let paths: Vec<String> = changes
                    .as_array()
                    .map(|changes| {
                        changes
                            .iter()
                            .filter_map(|change| change.get("path").and_then(Value::as_str))
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                ToolCall::new(item_type, &changes, format!("editing {}", paths.join(", ")))
            }
            "mcp_tool_call" => {
                let tool = item.get("tool").and_then(Value::as_str).unwrap_or("a tool");
                let input = serde_json::json!({
                    "server": item.get("server"),
                    "tool": tool,
                    "arguments": item.get("arguments"),
                });
                ToolCall::new(item_type, &input, format!("using {tool}"))
            }
            "web_search" => {
                let query = item.get("query").cloned().unwrap_or(Value::Null);
                let doing = format!("searching the web for `{}`", quote(&text_of(&query)));
                ToolCall::new(item_type, &query, doing)
            }
            _ => return None,
        };
        // An item without an id is counted each time it shows.
        if let Some(id) = item.get("id").and_then(Value::as_str)
            && !self.items.insert(id.to_owned())
        {
            return None;
        }
        Some(call)
    }
}

/// Claude Code's calls in `event`: the `tool_use` blocks of an `assistant` message.
fn claude_calls(event: &Value) -> Vec<ToolCall> {
    if event.get("type").and_then(Value::as_str) != Some("assistant") {
        return Vec::new();
    }
    let Some(content) = event.pointer("/message/content").and_then(Value::as_array) else {
        return Vec::new();
    };
    content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|block| {
            let name = block.get("name").and_then(Value::as_str)?;
            let input = block.get("input").cloned().unwrap_or(Value::Null);
            Some(ToolCall::new(name, &input, doing(name, &input)))
        })
        .collect()
}

/// Gemini CLI's call in `event`: a `tool_use` event.
fn gemini_call(event: &Value) -> Option<ToolCall> {
    if event.get("type").and_then(Value::as_str) != Some("tool_use") {
        return None;
    }
    let name = event.get("tool_name").and_then(Value::as_str)?;
    let input = event.get("parameters").cloned().unwrap_or(Value::Null);
    Some(ToolCall::new(name, &input, doing(name, &input)))
}

/// What a call of tool `name` with `input` does, in words, from the fields Claude Code's and
/// Gemini CLI's tools take.
fn doing(name: &str, input: &Value) -> String {
    let field = |key: &str| input.get(key).map(text_of);
    if let Some(command) = field("command") {
        return format!("running `{}`", quote(&command));
    }
    let path = field("file_path")
        .or_else(|| field("absolute_path"))
        .or_else(|| field("notebook_path"))
        .or_else(|| field("path"));
    let lower = name.to_ascii_lowercase();
    match path {
        Some(path) if lower.contains("read") => format!("reading {}", quote(&path)),
        Some(path)
            if ["edit", "write", "replace"]
                .iter()
                .any(|verb| lower.contains(verb)) =>
        {
            format!("editing {}", quote(&path))
        }
        _ => match field("pattern").or_else(|| field("query")) {
            Some(pattern) => format!("using {name} for `{}`", quote(&pattern)),
            None => format!("using {name}"),
        },
    }
}

/// A JSON value as text: a string as it is, an array of strings joined by spaces (Codex's
/// argv), anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(words) if words.iter().all(Value::is_string) => words
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// `text` on one line, at most [`QUOTE_CAP`] characters.
fn quote(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > QUOTE_CAP {
        let cut: String = line.chars().take(QUOTE_CAP).collect();
        format!("{cut}…")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// Claude Code's `stream-json` of a turn that calls `Bash` with `cargo test` `times` times.
    fn claude_bash(times: usize) -> String {
        let mut out = String::from(
            r#"{"type":"system","subtype":"init","session_id":"s","tools":["Bash","Edit"]}"#,
        );
        out.push('\n');
        for n in 0..times {
            let _ = writeln!(
                out,
                r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"toolu_{n}","name":"Bash","input":{{"command":"cargo test","description":"Run the tests"}}}}]}}}}"#
            );
            let _ = writeln!(
                out,
                r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"toolu_{n}","content":"error: 1 test failed","is_error":true}}]}}}}"#
            );
        }
        out
    }

    #[test]
    fn claude_tool_calls_are_read_line_by_line_across_chunks() {
        let stream = format!(
            "{}{}\n",
            claude_bash(1),
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Now the fix."},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"src/lib.rs","old_string":"a","new_string":"b"}}]}}"#
        );
        let mut watch = StreamWatch::new(Preset::Claude);
        let mut calls = Vec::new();
        // Fed in pieces of 7 bytes, lines split anywhere (on char boundaries).
        let mut at = 0;
        while at < stream.len() {
            let end = stream.ceil_char_boundary((at + 7).min(stream.len()));
            calls.extend(watch.chunk(&stream[at..end]));
            at = end;
        }
        let doing: Vec<&str> = calls.iter().map(|call| call.doing.as_str()).collect();
        assert_eq!(doing, ["running `cargo test`", "editing src/lib.rs"]);
        assert_eq!(calls[0].tool, "Bash");
        assert!(watch.looping().is_none());
    }

    #[test]
    fn the_same_call_five_times_in_a_row_is_a_loop() {
        let mut watch = StreamWatch::new(Preset::Claude);
        watch.chunk(&claude_bash(4));
        assert!(watch.looping().is_none(), "four is not yet a loop");
        watch.chunk(&claude_bash(1));
        let looping = watch.looping().expect("a loop");
        assert_eq!(looping.tool, "Bash");
        assert!(looping.to_string().contains("cargo test"), "{looping}");
    }

    #[test]
    fn another_call_between_breaks_the_run() {
        let mut watch = StreamWatch::new(Preset::Claude);
        watch.chunk(&claude_bash(4));
        watch.chunk(
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"Read\",\"input\":{\"file_path\":\"src/a.rs\"}}]}}\n",
        );
        watch.chunk(&claude_bash(4));
        assert!(watch.looping().is_none());
        // The same tool with another input is another call.
        let other = claude_bash(1).replace("cargo test", "cargo test -p a");
        for _ in 0..3 {
            watch.chunk(&other);
            watch.chunk(&claude_bash(1));
        }
        assert!(watch.looping().is_none());
    }

    #[test]
    fn codex_items_count_once_whatever_events_name_them() {
        let mut watch = StreamWatch::new(Preset::Codex);
        let mut calls = Vec::new();
        for n in 0..5 {
            calls.extend(watch.chunk(&format!(
                "{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"command_execution\",\"command\":\"bash -lc 'npm test'\",\"status\":\"in_progress\"}}}}\n\
                 {{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"command_execution\",\"command\":\"bash -lc 'npm test'\",\"exit_code\":1,\"status\":\"failed\"}}}}\n"
            )));
        }
        assert_eq!(calls.len(), 5);
        assert_eq!(calls[0].doing, "running `bash -lc 'npm test'`");
        assert!(watch.looping().is_some());
        let edit = watch.chunk(
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_9\",\"type\":\"file_change\",\"changes\":[{\"path\":\"src/main.rs\",\"kind\":\"update\"}],\"status\":\"completed\"}}\n",
        );
        assert_eq!(edit[0].doing, "editing src/main.rs");
    }

    #[test]
    fn gemini_tool_use_events() {
        let mut watch = StreamWatch::new(Preset::Gemini);
        let calls = watch.chunk(
            "{\"type\":\"init\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"session_id\":\"s\",\"model\":\"gemini-3-pro\"}\n\
             {\"type\":\"tool_use\",\"timestamp\":\"t\",\"tool_name\":\"run_shell_command\",\"tool_id\":\"c1\",\"parameters\":{\"command\":\"pytest -q\"}}\n\
             {\"type\":\"tool_result\",\"timestamp\":\"t\",\"tool_id\":\"c1\",\"status\":\"success\",\"output\":\"ok\"}\n\
             {\"type\":\"tool_use\",\"timestamp\":\"t\",\"tool_name\":\"write_file\",\"tool_id\":\"c2\",\"parameters\":{\"file_path\":\"app.py\",\"content\":\"x\"}}\n",
        );
        let doing: Vec<&str> = calls.iter().map(|call| call.doing.as_str()).collect();
        assert_eq!(doing, ["running `pytest -q`", "editing app.py"]);
    }

    #[test]
    fn prose_and_huge_lines_are_skipped() {
        let mut watch = StreamWatch::new(Preset::Claude);
        assert!(
            watch
                .chunk("I will now edit the file.\n{not json}\n")
                .is_empty()
        );
        let huge = "x".repeat(LINE_CAP + 10);
        assert!(watch.chunk(&huge).is_empty());
        assert!(watch.partial.is_none(), "not kept");
        // The next line is read again.
        let calls = watch.chunk(&format!("\n{}", claude_bash(1)));
        assert_eq!(calls.len(), 1);
    }
}
