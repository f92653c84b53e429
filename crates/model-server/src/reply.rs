//! What the server answers, in each API's own shape: a reply of text and tool calls as
//! server-sent events (or one JSON body), usage figures, an error status with the API's body
//! and headers.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::request::{Api, Seen};
use crate::script::{Action, Kind};

/// One part of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Text.
    Text(String),
    /// A call of the tool `name` with `args`.
    Call {
        /// The tool.
        name: String,
        /// Its arguments.
        args: Value,
    },
}

/// What a request gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// A whole reply.
    Reply(Vec<Part>),
    /// A reply whose stream stops half way, the connection closed.
    Cut(Vec<Part>),
    /// A stream that opens and then says nothing.
    Silent,
    /// An error status.
    Status(u16),
    /// A 429 in the API's usage-limit form, its reset this many seconds away.
    Limit(u64),
}

/// The harmless command of [`Action::Repeat`].
pub const REPEATED: &str = "ls";

/// What `action` answers to the request `seen`.
pub(crate) fn answer(seen: &Seen, action: &Action) -> Answer {
    match action {
        Action::Text { .. } if seen.kind == Kind::Other && seen.schema.is_some() => {
            let instance = seen.schema.as_ref().map(instance).unwrap_or_default();
            Answer::Reply(vec![Part::Text(instance.to_string())])
        }
        Action::Text { text } => Answer::Reply(vec![Part::Text(text.clone())]),
        Action::Plan { tasks } => {
            let tasks: Vec<Value> = tasks
                .iter()
                .map(|title| json!({"title": title, "description": title}))
                .collect();
            Answer::Reply(vec![Part::Text(json!({ "tasks": tasks }).to_string())])
        }
        Action::Clean => {
            Answer::Reply(vec![Part::Text(r#"{"clean":true,"issues":[]}"#.to_owned())])
        }
        Action::Write { files } => {
            let files = files.clone().unwrap_or_else(|| file_blocks(&seen.prompt));
            Answer::Reply(write(seen, &files))
        }
        Action::Repeat => Answer::Reply(shell_call(seen, REPEATED).map_or_else(
            || vec![Part::Text("No shell tool was offered.".to_owned())],
            |call| vec![call],
        )),
        Action::Status { status } => Answer::Status(*status),
        Action::Limit { hours } => Answer::Limit(u64::from(*hours) * 3600),
        Action::Cut => Answer::Cut(vec![Part::Text(
            "A reply that is cut half way through, never to be finished.".to_owned(),
        )]),
        Action::Silent => Answer::Silent,
    }
}

/// A value that meets `schema`: each required property of an object, the first value of an
/// enumeration (Gemini CLI's next-speaker check lists `user` first), the middle of a number's
/// range (its router's complexity score), a string.
fn instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    let kind = schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "object" => {
            let mut object = serde_json::Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                if let Some(name) = name.as_str() {
                    object.insert(name.to_owned(), instance(&schema["properties"][name]));
                }
            }
            Value::Object(object)
        }
        "integer" | "number" => {
            let low = schema["minimum"].as_i64().unwrap_or(1);
            let high = schema["maximum"].as_i64().unwrap_or(100);
            i64::midpoint(low, high).into()
        }
        "boolean" => false.into(),
        "array" => json!([]),
        _ => "scripted".into(),
    }
}

/// The files the prompt's file blocks name: ```` ```file PATH ````, the contents, ```` ``` ````.
pub fn file_blocks(prompt: &str) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut lines = prompt.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line.trim().strip_prefix("```file ") else {
            continue;
        };
        let mut contents = String::new();
        for line in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            contents.push_str(line);
            contents.push('\n');
        }
        files.insert(path.trim().to_owned(), contents);
    }
    files
}

/// The file tools a CLI speaking `api` may offer (the tool, its path argument, its contents
/// argument), tried before a shell: Claude Code's `Write`, opencode's `write`, Gemini CLI's
/// `write_file`.
fn file_tools(api: Api) -> &'static [(&'static str, &'static str, &'static str)] {
    match api {
        Api::Anthropic => &[
            ("Write", "file_path", "content"),
            ("write", "filePath", "content"),
        ],
        Api::Gemini { .. } => &[("write_file", "file_path", "content")],
        Api::Responses => &[],
    }
}

/// `files` written: the next file with the file tool (one call per file), or all with one shell
/// command; a short reply once the calls have had their results.
fn write(seen: &Seen, files: &BTreeMap<String, String>) -> Vec<Part> {
    if files.is_empty() {
        return vec![Part::Text("There is nothing to write.".to_owned())];
    }
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    let done = || vec![Part::Text(format!("Done: wrote {}.", names.join(", ")))];
    if seen.aider && seen.tools.is_empty() {
        // aider's whole-file edit format: each file's path, then its contents fenced.
        let mut text = String::from("Here are the files.\n\n");
        for (path, contents) in files {
            text.push_str(path);
            text.push_str("\n```\n");
            text.push_str(contents);
            if !contents.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("```\n\n");
        }
        text.push_str("Done: wrote ");
        text.push_str(&names.join(", "));
        text.push('.');
        return vec![Part::Text(text)];
    }
    if let Some(&(tool, path_key, contents_key)) = file_tools(seen.api)
        .iter()
        .find(|(tool, _, _)| seen.offers(tool))
        && let Some(dir) = seen.workdir()
    {
        return match files.iter().nth(seen.tool_results) {
            Some((path, contents)) => vec![Part::Call {
                name: tool.to_owned(),
                args: json!({
                    path_key: format!("{}/{path}", dir.trim_end_matches('/')),
                    contents_key: contents,
                }),
            }],
            None => done(),
        };
    }
    if seen.tool_results > 0 {
        return done();
    }
    let command: Option<Vec<String>> = files
        .iter()
        .map(|(path, contents)| {
            let mkdir = match path.rsplit_once('/') {
                Some((dir, _)) => format!("mkdir -p {} && ", quote(dir)?),
                None => String::new(),
            };
            Some(format!(
                "{mkdir}printf '%s' {} > {}",
                quote(contents)?,
                quote(path)?
            ))
        })
        .collect();
    let Some(command) = command else {
        return vec![Part::Text(
            "A file holds a NUL byte, which no shell command can write.".to_owned(),
        )];
    };
    shell_call(seen, &command.join(" && ")).map_or_else(
        || {
            vec![Part::Text(
                "No tool to write files with was offered.".to_owned(),
            )]
        },
        |call| vec![call],
    )
}

/// A call of the shell tool the request offers, running `command` in the working directory.
fn shell_call(seen: &Seen, command: &str) -> Option<Part> {
    let call = |name: &str, args: Value| {
        Some(Part::Call {
            name: name.to_owned(),
            args,
        })
    };
    let description = "Run the command the task needs";
    match seen.api {
        Api::Anthropic if seen.offers("Bash") => call(
            "Bash",
            json!({"command": command, "description": description}),
        ),
        // opencode's.
        Api::Anthropic if seen.offers("bash") => call(
            "bash",
            json!({"command": command, "description": description}),
        ),
        Api::Gemini { .. } if seen.offers("run_shell_command") => call(
            "run_shell_command",
            json!({"command": command, "description": description}),
        ),
        Api::Responses if seen.offers("exec_command") => {
            let mut args = json!({"cmd": command});
            if let Some(dir) = seen.workdir() {
                args["workdir"] = dir.into();
            }
            call("exec_command", args)
        }
        Api::Responses if seen.offers("shell") => {
            let mut args = json!({"command": ["bash", "-lc", command]});
            if let Some(dir) = seen.workdir() {
                args["workdir"] = dir.into();
            }
            call("shell", args)
        }
        Api::Responses if seen.offers("shell_command") => {
            call("shell_command", json!({"command": command}))
        }
        _ => None,
    }
}

/// `text` as one word for a POSIX shell, quoted by [`shlex`] where it needs quoting; `None` for
/// a NUL byte, which no shell word can hold.
fn quote(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    shlex::try_quote(text).ok()
}

/// The tokens a reply reports: the request's bytes and the reply's characters, four a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

impl Usage {
    /// The usage of `parts` answering a request of `bytes` bytes.
    pub(crate) fn of(bytes: usize, parts: &[Part]) -> Self {
        let out: usize = parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.len(),
                Part::Call { name, args } => name.len() + args.to_string().len(),
            })
            .sum();
        Self {
            input: (bytes as u64).div_ceil(4).max(1),
            output: (out as u64).div_ceil(4).max(1),
        }
    }
}

/// One server-sent event: its name (Anthropic's and OpenAI's) and data.
fn event(name: Option<&str>, data: &Value) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// `text` in two halves (at a character boundary), so a cut stream has sent some of it.
fn halves(text: &str) -> [&str; 2] {
    let mut at = text.len() / 2;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    [&text[..at], &text[at..]]
}

/// The reply `parts` as the events of `api`'s stream; `id` tells replies apart.
pub(crate) fn events(api: Api, model: &str, id: u64, parts: &[Part], usage: Usage) -> Vec<String> {
    match api {
        Api::Anthropic => anthropic_events(model, id, parts, usage),
        Api::Responses => responses_events(model, id, parts, usage),
        Api::Gemini { .. } => gemini_events(model, id, parts, usage),
    }
}

/// The reply `parts` as one JSON body (a request that asked for no stream).
pub(crate) fn whole(api: Api, model: &str, id: u64, parts: &[Part], usage: Usage) -> Value {
    match api {
        Api::Anthropic => json!({
            "id": format!("msg_{id}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": parts.iter().enumerate().map(|(n, part)| anthropic_block(id, n, part, true)).collect::<Vec<_>>(),
            "stop_reason": anthropic_stop(parts),
            "stop_sequence": null,
            "usage": anthropic_usage(usage),
        }),
        Api::Responses => responses_object(model, id, parts, usage),
        Api::Gemini { .. } => gemini_chunk(model, id, parts, Some(usage)),
    }
}

fn anthropic_usage(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

fn anthropic_stop(parts: &[Part]) -> &'static str {
    if parts.iter().any(|part| matches!(part, Part::Call { .. })) {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn anthropic_block(id: u64, n: usize, part: &Part, whole: bool) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": if whole { text.as_str() } else { "" }}),
        Part::Call { name, args } => json!({
            "type": "tool_use",
            "id": format!("toolu_{id}_{n}"),
            "name": name,
            "input": if whole { args.clone() } else { json!({}) },
        }),
    }
}

fn anthropic_events(model: &str, id: u64, parts: &[Part], usage: Usage) -> Vec<String> {
    let mut events = vec![event(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": anthropic_usage(Usage { input: usage.input, output: 1 }),
        }}),
    )];
    for (n, part) in parts.iter().enumerate() {
        events.push(event(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": n, "content_block": anthropic_block(id, n, part, false)}),
        ));
        let deltas: Vec<Value> = match part {
            Part::Text(text) => halves(text)
                .iter()
                .map(|half| json!({"type": "text_delta", "text": half}))
                .collect(),
            Part::Call { args, .. } => {
                let args = args.to_string();
                halves(&args)
                    .iter()
                    .map(|half| json!({"type": "input_json_delta", "partial_json": half}))
                    .collect()
            }
        };
        for delta in deltas {
            events.push(event(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": n, "delta": delta}),
            ));
        }
        events.push(event(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": n}),
        ));
    }
    events.push(event(
        Some("message_delta"),
        &json!({"type": "message_delta",
            "delta": {"stop_reason": anthropic_stop(parts), "stop_sequence": null},
            "usage": anthropic_usage(usage)}),
    ));
    events.push(event(
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    ));
    events
}

fn responses_item(id: u64, n: usize, part: &Part, done: bool) -> Value {
    let status = if done { "completed" } else { "in_progress" };
    match part {
        Part::Text(text) => json!({
            "type": "message", "id": format!("msg_{id}_{n}"), "role": "assistant", "status": status,
            "content": if done { json!([{"type": "output_text", "text": text, "annotations": []}]) } else { json!([]) },
        }),
        Part::Call { name, args } => json!({
            "type": "function_call", "id": format!("fc_{id}_{n}"), "call_id": format!("call_{id}_{n}"),
            "name": name, "arguments": if done { args.to_string() } else { String::new() }, "status": status,
        }),
    }
}

fn responses_object(model: &str, id: u64, parts: &[Part], usage: Usage) -> Value {
    json!({
        "id": format!("resp_{id}"), "object": "response", "status": "completed", "model": model,
        "output": parts.iter().enumerate().map(|(n, part)| responses_item(id, n, part, true)).collect::<Vec<_>>(),
        "usage": {
            "input_tokens": usage.input, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input + usage.output,
        },
    })
}

fn responses_events(model: &str, id: u64, parts: &[Part], usage: Usage) -> Vec<String> {
    let mut events = vec![event(
        Some("response.created"),
        &json!({"type": "response.created", "response": {
            "id": format!("resp_{id}"), "object": "response", "status": "in_progress",
            "model": model, "output": [],
        }}),
    )];
    for (n, part) in parts.iter().enumerate() {
        events.push(event(
            Some("response.output_item.added"),
            &json!({"type": "response.output_item.added", "output_index": n, "item": responses_item(id, n, part, false)}),
        ));
        match part {
            Part::Text(text) => {
                for half in halves(text) {
                    events.push(event(
                        Some("response.output_text.delta"),
                        &json!({"type": "response.output_text.delta", "item_id": format!("msg_{id}_{n}"),
                            "output_index": n, "content_index": 0, "delta": half}),
                    ));
                }
            }
            Part::Call { args, .. } => {
                let args = args.to_string();
                for half in halves(&args) {
                    events.push(event(
                        Some("response.function_call_arguments.delta"),
                        &json!({"type": "response.function_call_arguments.delta",
                            "item_id": format!("fc_{id}_{n}"), "output_index": n, "delta": half}),
                    ));
                }
            }
        }
        events.push(event(
            Some("response.output_item.done"),
            &json!({"type": "response.output_item.done", "output_index": n, "item": responses_item(id, n, part, true)}),
        ));
    }
    events.push(event(
        Some("response.completed"),
        &json!({"type": "response.completed", "response": responses_object(model, id, parts, usage)}),
    ));
    events
}

fn gemini_part(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({"text": text}),
        Part::Call { name, args } => json!({"functionCall": {"name": name, "args": args}}),
    }
}

/// One Gemini response chunk; `usage` and a finish reason on the last only.
fn gemini_chunk(model: &str, id: u64, parts: &[Part], usage: Option<Usage>) -> Value {
    let mut candidate = json!({
        "content": {"role": "model", "parts": parts.iter().map(gemini_part).collect::<Vec<_>>()},
        "index": 0,
    });
    let mut chunk = json!({"modelVersion": model, "responseId": format!("resp_{id}")});
    if let Some(usage) = usage {
        candidate["finishReason"] = "STOP".into();
        chunk["usageMetadata"] = json!({
            "promptTokenCount": usage.input,
            "candidatesTokenCount": usage.output,
            "totalTokenCount": usage.input + usage.output,
        });
    }
    chunk["candidates"] = json!([candidate]);
    chunk
}

fn gemini_events(model: &str, id: u64, parts: &[Part], usage: Usage) -> Vec<String> {
    // Text in two chunks (the second finishing), a call in one: Gemini streams a call whole.
    let mut events = Vec::new();
    let mut last = Vec::new();
    for part in parts {
        match part {
            Part::Text(text) => {
                let [first, second] = halves(text);
                events.push(event(
                    None,
                    &gemini_chunk(model, id, &[Part::Text(first.to_owned())], None),
                ));
                last.push(Part::Text(second.to_owned()));
            }
            call @ Part::Call { .. } => last.push(call.clone()),
        }
    }
    events.push(event(None, &gemini_chunk(model, id, &last, Some(usage))));
    events
}

/// An error status as `api` sends it: the headers and the JSON body.
pub(crate) fn error(api: Api, status: u16) -> (Vec<(&'static str, String)>, Value) {
    match api {
        Api::Anthropic => {
            let (kind, message, headers) = match status {
                429 => (
                    "rate_limit_error",
                    "This request would exceed your account's rate limit. Please try again later.",
                    vec![
                        ("retry-after", "30".to_owned()),
                        ("anthropic-ratelimit-requests-limit", "50".to_owned()),
                        ("anthropic-ratelimit-requests-remaining", "0".to_owned()),
                    ],
                ),
                529 => ("overloaded_error", "Overloaded", Vec::new()),
                401 => ("authentication_error", "invalid x-api-key", Vec::new()),
                _ => ("api_error", "Internal server error", Vec::new()),
            };
            (
                headers,
                json!({"type": "error", "error": {"type": kind, "message": message}}),
            )
        }
        Api::Responses => {
            let (kind, code, message, headers) = match status {
                429 => (
                    "requests",
                    "rate_limit_exceeded",
                    "Rate limit reached for requests. Please try again in 20s.",
                    vec![
                        ("retry-after", "20".to_owned()),
                        ("x-ratelimit-limit-requests", "50".to_owned()),
                        ("x-ratelimit-remaining-requests", "0".to_owned()),
                        ("x-ratelimit-reset-requests", "20s".to_owned()),
                    ],
                ),
                529 => (
                    "server_error",
                    "server_is_overloaded",
                    "The server is overloaded. Please try again later.",
                    Vec::new(),
                ),
                401 => (
                    "invalid_request_error",
                    "invalid_api_key",
                    "Incorrect API key provided: sk-local. You can find your API key at \
                     https://platform.openai.com/account/api-keys.",
                    Vec::new(),
                ),
                _ => (
                    "server_error",
                    "server_error",
                    "The server had an error while processing your request.",
                    Vec::new(),
                ),
            };
            (
                headers,
                json!({"error": {"message": message, "type": kind, "param": null, "code": code}}),
            )
        }
        Api::Gemini { .. } => {
            let body = match status {
                429 => json!({"error": {
                    "code": 429,
                    "message": "You exceeded your current quota, please check your plan and billing details. Please retry in 30s.",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}],
                }}),
                529 => json!({"error": {
                    "code": 529, "message": "The model is overloaded. Please try again later.",
                    "status": "UNAVAILABLE",
                }}),
                401 => json!({"error": {
                    "code": 401, "message": "API key not valid. Please pass a valid API key.",
                    "status": "UNAUTHENTICATED",
                }}),
                _ => json!({"error": {
                    "code": status, "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
                    "status": "INTERNAL",
                }}),
            };
            (Vec::new(), body)
        }
    }
}

/// A 429 as `api` sends an account's usage limit, its reset `secs` away (at `now`, seconds
/// since the epoch): the headers and the JSON body.
pub(crate) fn limit(api: Api, secs: u64, now: u64) -> (Vec<(&'static str, String)>, Value) {
    let resets = now + secs;
    match api {
        Api::Anthropic => (
            vec![
                ("anthropic-ratelimit-unified-status", "rejected".to_owned()),
                ("anthropic-ratelimit-unified-reset", resets.to_string()),
                (
                    "anthropic-ratelimit-unified-representative-claim",
                    "five_hour".to_owned(),
                ),
                ("anthropic-ratelimit-unified-5h-reset", resets.to_string()),
                ("retry-after", secs.to_string()),
            ],
            json!({"type": "error", "error": {
                "type": "rate_limit_error",
                "message": format!("Claude AI usage limit reached|{resets}"),
            }}),
        ),
        Api::Responses => (
            vec![("retry-after", secs.to_string())],
            json!({"error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": resets,
                "resets_in_seconds": secs,
            }}),
        ),
        Api::Gemini { .. } => (
            Vec::new(),
            json!({"error": {
                "code": 429,
                "message": format!("You exceeded your current quota, please check your plan and billing details. Please retry in {secs}s."),
                "status": "RESOURCE_EXHAUSTED",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}],
            }}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(api: Api, tools: &[&str], tool_results: usize) -> Seen {
        Seen {
            api,
            model: "m".into(),
            tools: tools.iter().map(|tool| (*tool).to_owned()).collect(),
            kind: Kind::Code,
            prompt: "Your working directory is /w/a, the story's own worktree.\n\n```file src/a/a.txt\nalpha\n```\nDo this task only".into(),
            tool_results,
            stream: true,
            schema: None,
            aider: false,
        }
    }

    #[test]
    fn a_verdict_is_bare_json_for_every_cli() {
        let mut aider = seen(Api::Anthropic, &[], 0);
        aider.aider = true;
        let Answer::Reply(parts) = answer(&aider, &Action::Clean) else {
            panic!()
        };
        assert_eq!(parts, [Part::Text("{\"clean\":true,\"issues\":[]}".into())]);
    }

    #[test]
    fn whole_files_in_aiders_listing_format() {
        let mut aider = seen(Api::Anthropic, &[], 0);
        aider.aider = true;
        let Answer::Reply(parts) = answer(&aider, &Action::Write { files: None }) else {
            panic!()
        };
        assert_eq!(
            parts,
            [Part::Text(
                "Here are the files.\n\nsrc/a/a.txt\n```\nalpha\n```\n\nDone: wrote src/a/a.txt."
                    .into()
            )]
        );
    }

    #[test]
    fn a_reply_that_meets_the_schema_asked_for() {
        let schema = json!({"type": "OBJECT", "properties": {
            "complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER"},
            "next_speaker": {"type": "string", "enum": ["user", "model"]},
        }, "required": ["complexity_reasoning", "complexity_score", "next_speaker"]});
        assert_eq!(
            instance(&schema),
            json!({"complexity_reasoning": "scripted", "complexity_score": 50, "next_speaker": "user"})
        );
    }

    #[test]
    fn file_blocks_of_a_prompt() {
        let files = file_blocks("x\n```file src/a.txt\none\ntwo\n```\n```file b\n```\n");
        assert_eq!(files["src/a.txt"], "one\ntwo\n");
        assert_eq!(files["b"], "");
    }

    #[test]
    fn writes_with_the_file_tool_then_replies() {
        let write = Action::Write { files: None };
        let Answer::Reply(parts) = answer(&seen(Api::Anthropic, &["Bash", "Write"], 0), &write)
        else {
            panic!()
        };
        assert_eq!(
            parts,
            [Part::Call {
                name: "Write".into(),
                args: json!({"file_path": "/w/a/src/a/a.txt", "content": "alpha\n"})
            }]
        );
        let Answer::Reply(parts) = answer(&seen(Api::Anthropic, &["Write"], 1), &write) else {
            panic!()
        };
        assert_eq!(parts, [Part::Text("Done: wrote src/a/a.txt.".into())]);
    }

    #[test]
    fn writes_with_the_shell_where_there_is_no_file_tool() {
        let write = Action::Write { files: None };
        let Answer::Reply(parts) = answer(&seen(Api::Responses, &["exec_command"], 0), &write)
        else {
            panic!()
        };
        assert_eq!(
            parts,
            [Part::Call {
                name: "exec_command".into(),
                args: json!({"cmd": "mkdir -p src/a && printf '%s' 'alpha\n' > src/a/a.txt", "workdir": "/w/a"})
            }]
        );
        let Answer::Reply(parts) = answer(
            &seen(Api::Gemini { stream: true }, &["run_shell_command"], 0),
            &Action::Repeat,
        ) else {
            panic!()
        };
        assert!(matches!(&parts[0], Part::Call { name, .. } if name == "run_shell_command"));
    }

    #[test]
    fn opencodes_tools_over_anthropic() {
        let write = Action::Write { files: None };
        let Answer::Reply(parts) = answer(&seen(Api::Anthropic, &["bash", "write"], 0), &write)
        else {
            panic!()
        };
        assert_eq!(
            parts,
            [Part::Call {
                name: "write".into(),
                args: json!({"filePath": "/w/a/src/a/a.txt", "content": "alpha\n"})
            }]
        );
        let Answer::Reply(parts) = answer(&seen(Api::Anthropic, &["bash"], 0), &Action::Repeat)
        else {
            panic!()
        };
        assert!(matches!(&parts[0], Part::Call { name, .. } if name == "bash"));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("it's").as_deref(), Some(r#""it's""#));
        assert_eq!(quote("a b").as_deref(), Some("'a b'"));
        assert_eq!(quote("src/a/a.txt").as_deref(), Some("src/a/a.txt"));
        assert_eq!(quote("").as_deref(), Some("''"));
        assert_eq!(quote("a\0b"), None);
        // The shell reads each back as the one word it was.
        for text in ["it's", "a 'b' \"c\" $d `e` \\f\n\tg", "^x", "-n", "é ü"] {
            let quoted = quote(text).expect("no NUL");
            assert_eq!(
                shlex::split(&quoted),
                Some(vec![text.to_owned()]),
                "{quoted}"
            );
        }
    }

    #[test]
    fn a_file_no_shell_can_write_is_said_so() {
        let files = BTreeMap::from([("a.txt".to_owned(), "a\0b".to_owned())]);
        assert_eq!(
            write(&seen(Api::Responses, &["exec_command"], 0), &files),
            [Part::Text(
                "A file holds a NUL byte, which no shell command can write.".into()
            )]
        );
    }
}
