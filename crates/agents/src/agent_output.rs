//! The agents' structured output, decoded: what Claude Code (`--output-format stream-json
//! --verbose`, or `json`), Codex (`exec --json`) and Gemini CLI (`--output-format stream-json`,
//! or `json`) print, read into the reply's text, the usage they report and the error they
//! report ([`Decoded`]), from the stream's final result. Every preset streams, so that what the
//! agent does is seen as it happens (`stream.rs`) and a silent turn can be told apart; the older
//! one-object forms are still read.
//!
//! Each agent's format, as its documentation and its real output show it:
//!
//! - **Claude Code**: one result object on stdout, or (with `--verbose`, or verbose in the
//!   user's settings) an array of events ending with it, or NDJSON lines (`stream-json`). The
//!   reply is `.result`; `.is_error: true` is an error whatever the exit code and whatever
//!   `subtype` says (an API failure arrives as `subtype: "success"` with `is_error: true`), as is
//!   an `error_…` subtype; usage is `.usage` (`input_tokens` plus the cache tokens, and
//!   `output_tokens`) with the cost `.total_cost_usd` (`.total_cost` in old versions).
//! - **Codex**: JSON lines. The reply is the last `item.completed` whose item is an
//!   `agent_message`; usage is the last `turn.completed`'s `usage` (the thread's running total,
//!   `input_tokens` with the cached ones included, `output_tokens`), with no cost; `turn.failed`
//!   and a top-level `error` are errors even with exit 0, unless a later `turn.completed` shows
//!   the turn went through after all (Codex reports reconnects as `error` events).
//! - **Gemini CLI**: `stream-json` is NDJSON events (`init`, `message`, `tool_use`,
//!   `tool_result`, `error`, and a final `result`). The reply is the assistant's `message`
//!   contents after its last tool call (all of them if it said nothing after it), usage the
//!   `result`'s `stats` (`input_tokens`, `output_tokens`), no cost; a `result` whose `status`
//!   is `error` is an error (its `error.message`), and so is an `error` event of severity
//!   `error` in a stream that never reached its result. The `json` form is one object on stdout:
//!   the reply is `.response`, usage the sum over `.stats.models.*.tokens` (`prompt`, else
//!   `input`; `candidates` plus `thoughts`). Either way an error object (with its `message`) on
//!   stderr is an error: Gemini puts it there when the turn failed before answering.
//!
//! - **aider**: its standard output is its banner, the files it added to the chat, the reply
//!   and its token line, as text; the reply alone is read from the log of the model's replies
//!   it writes with `--llm-history-file` ([`aider_reply`]): the last `LLM RESPONSE` entry, each
//!   line of it after `ASSISTANT `.
//!
//! Output that does not parse falls back to the raw text, with no usage and no error: a preset
//! whose CLI printed something else (an old version, a wrapper script) still works as a plain
//! text seat. Other presets and `exec:` commands are never decoded.

use epic_report::ReportedUsage;
use serde_json::{Map, Value};

use crate::preset::Preset;

/// A turn's output, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decoded {
    /// The reply text.
    pub text: String,
    /// The usage the agent reported, if it did.
    pub usage: Option<ReportedUsage>,
    /// The error the agent reported, in its own words, if it did.
    pub error: Option<String>,
}

impl Decoded {
    /// The raw text, undecoded.
    fn raw(stdout: &str) -> Self {
        Self {
            text: stdout.to_owned(),
            usage: None,
            error: None,
        }
    }
}

/// Whether `preset`'s output is decoded at all.
pub(crate) fn is_structured(preset: Preset) -> bool {
    matches!(preset, Preset::Claude | Preset::Codex | Preset::Gemini)
}

/// The model's last reply in aider's log of its replies (`--llm-history-file`): the lines of
/// the last `LLM RESPONSE <time>` entry, each written as `ASSISTANT <line>`, up to the next
/// entry; `None` when the log holds no reply (aider failed before one, or wrote no log).
pub(crate) fn aider_reply(log: &str) -> Option<String> {
    // Every line of an entry's content carries its role (`ASSISTANT `, `USER `, …), so a line
    // starting an entry is never the content of one.
    let mut reply: Option<Vec<&str>> = None;
    for line in log.lines() {
        if line.starts_with("LLM RESPONSE ") {
            reply = Some(Vec::new());
        } else if line.starts_with("TO LLM ") {
            // A request after the last reply: that exchange has no reply (yet).
            reply = None;
        } else if let Some(lines) = &mut reply
            && let Some(rest) = line.strip_prefix("ASSISTANT")
            && (rest.is_empty() || rest.starts_with(' '))
        {
            lines.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    let text = reply?.join("\n");
    (!text.trim().is_empty()).then_some(text)
}

/// What Gemini CLI prints on stderr when it ignores the approval mode it was given in a folder
/// it does not trust.
const TRUST_FALLBACK: &str = "Approval mode overridden";

/// Decodes what `preset` printed on standard output and standard error.
pub(crate) fn decode(preset: Preset, stdout: &str, stderr: &str) -> Decoded {
    let decoded = match preset {
        Preset::Claude => claude(stdout),
        Preset::Codex => codex(stdout),
        Preset::Gemini => gemini(stdout, stderr),
        Preset::Aider | Preset::Opencode => None,
    };
    decoded.unwrap_or_else(|| Decoded::raw(stdout))
}

/// Claude Code's result object, from one object, an array of events, or NDJSON lines.
fn claude(stdout: &str) -> Option<Decoded> {
    let is_result = |value: &Value| {
        value.get("type").and_then(Value::as_str) == Some("result")
            || (value.get("result").is_some() && value.get("is_error").is_some())
    };
    let result = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Array(events)) => events.into_iter().rev().find(is_result)?,
        Ok(value) if is_result(&value) => value,
        Ok(_) => return None,
        Err(_) => json_lines(stdout).rev().find(is_result)?,
    };
    let object = result.as_object()?;
    let text = string(object, "result").unwrap_or_default();
    let subtype = string(object, "subtype").unwrap_or_default();
    let is_error = object.get("is_error").and_then(Value::as_bool) == Some(true)
        || subtype.starts_with("error");
    let error = is_error.then(|| {
        let errors: Vec<String> = object
            .get("errors")
            .and_then(Value::as_array)
            .map(|errors| errors.iter().map(message_of).collect())
            .unwrap_or_default();
        [text.trim().to_owned(), errors.join("; ")]
            .into_iter()
            .find(|message| !message.is_empty())
            .unwrap_or_else(|| format!("claude reported an error ({subtype})"))
    });
    let usage_object = object.get("usage").and_then(Value::as_object);
    let cost = object
        .get("total_cost_usd")
        .or_else(|| object.get("total_cost"))
        .and_then(Value::as_f64);
    let usage = (usage_object.is_some() || cost.is_some()).then(|| {
        let tokens = |key: &str| {
            usage_object
                .and_then(|usage| usage.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        ReportedUsage {
            input_tokens: tokens("input_tokens")
                .saturating_add(tokens("cache_read_input_tokens"))
                .saturating_add(tokens("cache_creation_input_tokens")),
            output_tokens: tokens("output_tokens"),
            cost_usd: cost,
        }
    });
    Some(Decoded { text, usage, error })
}

/// Codex's JSON lines.
fn codex(stdout: &str) -> Option<Decoded> {
    let mut any = false;
    let mut text: Option<String> = None;
    let mut usage = None;
    let mut error: Option<String> = None;
    for event in json_lines(stdout) {
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            continue;
        };
        any = true;
        match kind {
            "item.completed" => {
                let item = event.get("item");
                let item_type = item
                    .and_then(|item| item.get("type").or_else(|| item.get("item_type")))
                    .and_then(Value::as_str);
                if item_type == Some("agent_message")
                    && let Some(message) = item
                        .and_then(|item| item.get("text"))
                        .and_then(Value::as_str)
                {
                    text = Some(message.to_owned());
                }
            }
            "turn.completed" => {
                error = None;
                if let Some(reported) = event.get("usage").and_then(Value::as_object) {
                    let tokens = |key: &str| reported.get(key).and_then(Value::as_u64).unwrap_or(0);
                    usage = Some(ReportedUsage {
                        input_tokens: tokens("input_tokens"),
                        output_tokens: tokens("output_tokens"),
                        cost_usd: None,
                    });
                }
            }
            "turn.failed" => {
                error = Some(
                    event
                        .get("error")
                        .map_or_else(|| "the turn failed".to_owned(), message_of),
                );
            }
            "error" => error = Some(message_of(&event)),
            _ => {}
        }
    }
    any.then(|| Decoded {
        text: text.unwrap_or_default(),
        usage,
        error,
    })
}

/// Gemini CLI's object, its error on stdout or stderr.
fn gemini(stdout: &str, stderr: &str) -> Option<Decoded> {
    let out = json_object_in(stdout);
    let err = json_object_in(stderr).filter(|value| value.get("error").is_some());
    // Gemini CLI in a folder it does not trust drops the approval mode it was given and says so
    // on stderr: its tools would then wait for approvals nobody gives. That is an error of the
    // seat, never a silent downgrade.
    let downgraded = stderr
        .lines()
        .find(|line| line.contains(TRUST_FALLBACK))
        .map(|line| {
            format!(
                "{}: Gemini CLI ran without the approvals its seat asked for (the preset passes \
                 --skip-trust; an older Gemini CLI may not know it)",
                line.trim()
            )
        });
    if let Some(mut decoded) = gemini_stream(stdout) {
        if decoded.error.is_none() {
            decoded.error = err
                .as_ref()
                .and_then(|value| value.get("error"))
                .map(message_of)
                .or(downgraded);
        }
        return Some(decoded);
    }
    if out.is_none() && err.is_none() {
        return downgraded.map(|error| Decoded {
            text: stdout.to_owned(),
            usage: None,
            error: Some(error),
        });
    }
    let text = out
        .as_ref()
        .and_then(|value| value.get("response"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let error = [out.as_ref(), err.as_ref()]
        .into_iter()
        .flatten()
        .find_map(|value| value.get("error").filter(|error| !error.is_null()))
        .map(message_of)
        .or(downgraded);
    let usage = out
        .as_ref()
        .and_then(|value| value.pointer("/stats/models"))
        .and_then(Value::as_object)
        .map(|models| {
            let mut usage = ReportedUsage::default();
            for model in models.values() {
                let tokens = |key: &str| {
                    model
                        .pointer(&format!("/tokens/{key}"))
                        .and_then(Value::as_u64)
                };
                let input = tokens("prompt").or_else(|| tokens("input")).unwrap_or(0);
                let output = tokens("candidates")
                    .unwrap_or(0)
                    .saturating_add(tokens("thoughts").unwrap_or(0));
                usage.input_tokens = usage.input_tokens.saturating_add(input);
                usage.output_tokens = usage.output_tokens.saturating_add(output);
            }
            usage
        });
    Some(Decoded { text, usage, error })
}

/// The event types of Gemini CLI's `stream-json`.
const GEMINI_EVENTS: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];

/// Gemini CLI's `stream-json` events, when `stdout` holds any.
fn gemini_stream(stdout: &str) -> Option<Decoded> {
    let mut any = false;
    let mut all = String::new();
    let mut since_tool = String::new();
    let mut result: Option<Value> = None;
    let mut failed: Option<String> = None;
    for event in json_lines(stdout) {
        let Some(kind) = event
            .get("type")
            .and_then(Value::as_str)
            .filter(|kind| GEMINI_EVENTS.contains(kind))
        else {
            continue;
        };
        any = true;
        match kind {
            "message" if event.get("role").and_then(Value::as_str) == Some("assistant") => {
                let content = event.get("content").and_then(Value::as_str).unwrap_or("");
                all.push_str(content);
                since_tool.push_str(content);
            }
            "tool_use" => since_tool.clear(),
            "error" if event.get("severity").and_then(Value::as_str) != Some("warning") => {
                failed = Some(message_of(&event));
            }
            "result" => result = Some(event),
            _ => {}
        }
    }
    if !any {
        return None;
    }
    let text = if since_tool.trim().is_empty() {
        all
    } else {
        since_tool
    };
    let Some(result) = result else {
        // A stream that never reached its result: its last error, if it said one.
        return Some(Decoded {
            text,
            usage: None,
            error: failed,
        });
    };
    let error = (result.get("status").and_then(Value::as_str) == Some("error")).then(|| {
        result
            .get("error")
            .map_or_else(|| "gemini reported an error".to_owned(), message_of)
    });
    let usage = result.get("stats").and_then(Value::as_object).map(|stats| {
        let tokens = |key: &str| stats.get(key).and_then(Value::as_u64).unwrap_or(0);
        ReportedUsage {
            input_tokens: tokens("input_tokens"),
            output_tokens: tokens("output_tokens"),
            cost_usd: None,
        }
    });
    Some(Decoded { text, usage, error })
}

/// The JSON values of the lines of `text` that are JSON objects, in order.
fn json_lines(text: &str) -> impl DoubleEndedIterator<Item = Value> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(Value::is_object)
        .collect::<Vec<_>>()
        .into_iter()
}

/// The JSON object `text` holds: the whole text, else from its first line that opens one (a
/// CLI may print a notice before it).
fn json_object_in(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    let start = trimmed
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|&at| trimmed[at..].starts_with('{'))?;
    match serde_json::from_str::<Value>(&trimmed[start..]) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

/// A string field of an object.
fn string(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The message of an error value: its `message` (or a nested `error.message`), else its text.
fn message_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Object(object) => object
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| object.get("error").map(message_of))
            .unwrap_or_else(|| value.to_string()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiders_reply_is_the_last_response_of_its_log() {
        let log = "TO LLM 2026-12-06T20:00:00\n-------\nSYSTEM Act as an expert\nUSER judge it\n\
                   LLM RESPONSE 2026-12-06T20:00:01\nASSISTANT first try\n\
                   TO LLM 2026-12-06T20:00:02\nUSER again\n\
                   LLM RESPONSE 2026-12-06T20:00:03\nASSISTANT ```json\nASSISTANT {\"clean\":true,\"issues\":[]}\n\
                   ASSISTANT \nASSISTANT ```\n";
        assert_eq!(
            aider_reply(log).as_deref(),
            Some("```json\n{\"clean\":true,\"issues\":[]}\n\n```")
        );
        // A request after the last reply (aider failed on it): no reply of that exchange.
        assert_eq!(
            aider_reply("LLM RESPONSE t\nASSISTANT old\nTO LLM t\nUSER more\n"),
            None
        );
        assert_eq!(aider_reply(""), None);
        assert_eq!(aider_reply("LLM RESPONSE t\n"), None);
    }

    #[test]
    fn claude_result_object() {
        let out = decode(
            Preset::Claude,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.125,"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":7}}"#,
            "",
        );
        assert_eq!(out.text, "done");
        assert_eq!(out.error, None);
        assert_eq!(
            out.usage,
            Some(ReportedUsage {
                input_tokens: 115,
                output_tokens: 7,
                cost_usd: Some(0.125)
            })
        );
    }

    #[test]
    fn claude_is_error_is_an_error_whatever_the_subtype() {
        let out = decode(
            Preset::Claude,
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1767225600","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#,
            "",
        );
        assert_eq!(
            out.error.as_deref(),
            Some("Claude AI usage limit reached|1767225600")
        );
        let out = decode(
            Preset::Claude,
            r#"{"type":"result","subtype":"error_max_turns","is_error":false,"result":"","errors":["max turns"]}"#,
            "",
        );
        assert_eq!(out.error.as_deref(), Some("max turns"));
    }

    #[test]
    fn claude_verbose_array_and_stream_lines() {
        let array = r#"[{"type":"system","subtype":"init"},{"type":"assistant"},{"type":"result","is_error":false,"result":"A","total_cost_usd":1.0}]"#;
        assert_eq!(decode(Preset::Claude, array, "").text, "A");
        let lines =
            "{\"type\":\"system\"}\n{\"type\":\"result\",\"is_error\":false,\"result\":\"B\"}\n";
        assert_eq!(decode(Preset::Claude, lines, "").text, "B");
    }

    #[test]
    fn prose_falls_back_to_the_raw_text() {
        for preset in [Preset::Claude, Preset::Codex, Preset::Gemini] {
            let out = decode(preset, "I did it.\n", "some notice");
            assert_eq!(out, Decoded::raw("I did it.\n"), "{preset}");
        }
        let out = decode(
            Preset::Aider,
            r#"{"type":"result","result":"x","is_error":true}"#,
            "",
        );
        assert_eq!(out.error, None, "aider is never decoded");
    }

    #[test]
    fn codex_last_message_last_usage_and_failures() {
        let stream = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"0","type":"agent_message","text":"first"}}
{"type":"item.completed","item":{"id":"1","type":"reasoning","text":"hmm"}}
{"type":"item.completed","item":{"id":"2","type":"agent_message","text":"second"}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":80,"output_tokens":20}}
{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":80,"output_tokens":50}}
"#;
        let out = decode(Preset::Codex, stream, "");
        assert_eq!(out.text, "second");
        assert_eq!(out.error, None);
        assert_eq!(
            out.usage,
            Some(ReportedUsage {
                input_tokens: 300,
                output_tokens: 50,
                cost_usd: None
            })
        );
        let failed = "{\"type\":\"turn.started\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"You've hit your usage limit. Try again at 3:28 PM.\"}}\n";
        assert_eq!(
            decode(Preset::Codex, failed, "").error.as_deref(),
            Some("You've hit your usage limit. Try again at 3:28 PM.")
        );
        let recovered = "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n";
        assert_eq!(decode(Preset::Codex, recovered, "").error, None);
        let top = "{\"type\":\"error\",\"message\":\"stream disconnected\"}\n";
        assert_eq!(
            decode(Preset::Codex, top, "").error.as_deref(),
            Some("stream disconnected")
        );
    }

    /// Claude Code's `stream-json --verbose` of a turn that ran a command and replied.
    const CLAUDE_STREAM: &str = r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":["Bash","Edit","Read"],"model":"claude-opus-5-5","permissionMode":"acceptEdits"}
{"type":"assistant","message":{"id":"m1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test","description":"Run the tests"}}],"usage":{"input_tokens":5,"output_tokens":3}},"session_id":"s"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"test result: ok","is_error":false}]},"session_id":"s","tool_use_result":{"stdout":"test result: ok","stderr":"","interrupted":false}}
{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1767225600,"rateLimitType":"five_hour"}}
{"type":"assistant","message":{"id":"m2","type":"message","role":"assistant","content":[{"type":"text","text":"All green."}]},"session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":900,"num_turns":2,"result":"All green.","session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":20,"cache_creation_input_tokens":0,"output_tokens":4}}
"#;

    #[test]
    fn claude_stream_json_reads_the_final_result() {
        let out = decode(Preset::Claude, CLAUDE_STREAM, "");
        assert_eq!(out.text, "All green.");
        assert_eq!(out.error, None);
        assert_eq!(
            out.usage,
            Some(ReportedUsage {
                input_tokens: 30,
                output_tokens: 4,
                cost_usd: Some(0.5)
            })
        );
        // At a usage limit: the same result object, in the stream.
        let limited = "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\",\"resetsAt\":1767225600}}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,\"terminal_reason\":\"api_error\",\"result\":\"You've hit your limit · resets 1pm (Europe/Lisbon)\",\"total_cost_usd\":0}\n";
        assert_eq!(
            decode(Preset::Claude, limited, "").error.as_deref(),
            Some("You've hit your limit · resets 1pm (Europe/Lisbon)")
        );
    }

    /// Gemini CLI's `stream-json` of a turn that ran a command and replied.
    const GEMINI_STREAM: &str = r#"{"type":"init","timestamp":"2026-12-06T10:00:00.000Z","session_id":"s","model":"gemini-3.1-pro-preview"}
{"type":"message","timestamp":"2026-12-06T10:00:00.100Z","role":"user","content":"Carry out the request above."}
{"type":"message","timestamp":"2026-12-06T10:00:01.000Z","role":"assistant","content":"Running the tests first.","delta":true}
{"type":"tool_use","timestamp":"2026-12-06T10:00:02.000Z","tool_name":"run_shell_command","tool_id":"c1","parameters":{"command":"pytest -q"}}
{"type":"tool_result","timestamp":"2026-12-06T10:00:03.000Z","tool_id":"c1","status":"success","output":"3 passed"}
{"type":"message","timestamp":"2026-12-06T10:00:04.000Z","role":"assistant","content":"All ","delta":true}
{"type":"message","timestamp":"2026-12-06T10:00:04.100Z","role":"assistant","content":"green.","delta":true}
{"type":"result","timestamp":"2026-12-06T10:00:05.000Z","status":"success","stats":{"total_tokens":130,"input_tokens":100,"output_tokens":30,"cached":40,"input":60,"duration_ms":5000,"tool_calls":1}}
"#;

    #[test]
    fn gemini_stream_json_reads_the_reply_after_the_last_tool_and_the_results_stats() {
        let out = decode(Preset::Gemini, GEMINI_STREAM, "");
        assert_eq!(out.text, "All green.");
        assert_eq!(out.error, None);
        assert_eq!(
            out.usage,
            Some(ReportedUsage {
                input_tokens: 100,
                output_tokens: 30,
                cost_usd: None
            })
        );
        let failed = "{\"type\":\"init\",\"session_id\":\"s\",\"model\":\"m\"}\n{\"type\":\"error\",\"severity\":\"warning\",\"message\":\"Loop detected, stopping execution\"}\n{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":\"Error\",\"message\":\"You have exhausted your daily quota on this model.\"},\"stats\":{\"input_tokens\":1,\"output_tokens\":0}}\n";
        let out = decode(Preset::Gemini, failed, "");
        assert_eq!(
            out.error.as_deref(),
            Some("You have exhausted your daily quota on this model.")
        );
        // Cut off before its result: its last error stands; with none, none.
        let cut = "{\"type\":\"init\",\"session_id\":\"s\",\"model\":\"m\"}\n{\"type\":\"error\",\"severity\":\"error\",\"message\":\"fetch failed\"}\n";
        assert_eq!(
            decode(Preset::Gemini, cut, "").error.as_deref(),
            Some("fetch failed")
        );
        // Its error object on stderr, as before any event.
        let out = decode(
            Preset::Gemini,
            "{\"type\":\"init\",\"session_id\":\"s\",\"model\":\"m\"}\n",
            "{\"session_id\":\"s\",\"error\":{\"type\":\"Error\",\"message\":\"Please set an Auth method\",\"code\":41}}",
        );
        assert_eq!(out.error.as_deref(), Some("Please set an Auth method"));
    }

    #[test]
    fn gemini_response_stats_and_errors_on_stderr() {
        let out = decode(
            Preset::Gemini,
            r#"{"session_id":"s","response":"ok","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":100,"candidates":10,"thoughts":5,"total":115}},"gemini-2.5-flash":{"tokens":{"prompt":20,"candidates":2,"total":22}}}}}"#,
            "",
        );
        assert_eq!(out.text, "ok");
        assert_eq!(out.error, None);
        assert_eq!(
            out.usage,
            Some(ReportedUsage {
                input_tokens: 120,
                output_tokens: 17,
                cost_usd: None
            })
        );
        let out = decode(
            Preset::Gemini,
            "",
            "YOLO mode is enabled.\n{\n  \"session_id\": \"s\",\n  \"error\": {\"type\": \"Error\", \"message\": \"Please set an Auth method\", \"code\": 41}\n}\n",
        );
        assert_eq!(out.error.as_deref(), Some("Please set an Auth method"));
        assert_eq!(out.text, "");
    }
}
