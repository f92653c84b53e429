//! A model request read as the server needs it: which API, the model, the tools offered, the
//! text of the user's messages (whose words say the kind), the working directory epic's prompt
//! names, and the tool results the conversation holds so far.

use serde_json::Value;

use crate::script::Kind;

/// The API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Responses (`POST /v1/responses`).
    Responses,
    /// Gemini (`POST /v1beta/models/M:streamGenerateContent` or `:generateContent`).
    Gemini {
        /// `streamGenerateContent` (server-sent events) rather than one JSON body.
        stream: bool,
    },
}

impl Api {
    /// The API `path` (query left out) belongs to, with the model a Gemini path names.
    pub fn of(path: &str) -> Option<(Self, Option<String>)> {
        if path.ends_with("/messages") {
            return Some((Self::Anthropic, None));
        }
        if path.ends_with("/responses") {
            return Some((Self::Responses, None));
        }
        let rest = path.split_once("/models/")?.1;
        let (model, method) = rest.rsplit_once(':')?;
        let stream = match method {
            "streamGenerateContent" => true,
            "generateContent" => false,
            _ => return None,
        };
        Some((Self::Gemini { stream }, Some(model.to_owned())))
    }

    /// Its name in the log.
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Responses => "responses",
            Self::Gemini { stream: true } => "gemini-stream",
            Self::Gemini { stream: false } => "gemini",
        }
    }
}

/// The API key a request is signed with: Anthropic's `x-api-key` (or a bearer token, as an
/// auth token is sent), OpenAI's bearer token, Gemini's `x-goog-api-key` or `key` query
/// parameter.
pub(crate) fn api_key(headers: &hyper::HeaderMap, query: Option<&str>) -> Option<String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    header("x-api-key")
        .or_else(|| header("x-goog-api-key"))
        .or_else(|| {
            header("authorization")
                .and_then(|value| value.strip_prefix("Bearer ").map(str::to_owned))
        })
        .or_else(|| {
            query?
                .split('&')
                .find_map(|pair| pair.strip_prefix("key=").map(str::to_owned))
        })
}

/// What the server read of one request.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// The API.
    pub api: Api,
    /// The model asked for.
    pub model: String,
    /// The names of the tools offered, in the request's order.
    pub tools: Vec<String>,
    /// The kind of request, from the words of its user messages.
    pub kind: Kind,
    /// The text of its user messages (tool results left out).
    pub prompt: String,
    /// How many tool results the conversation holds.
    pub tool_results: usize,
    /// Whether the client asked for a stream (always for Anthropic and Responses here).
    pub stream: bool,
    /// The JSON schema the reply must meet, where a Gemini request gives one (its side
    /// requests: the model router, the next-speaker check).
    pub schema: Option<Value>,
    /// Whether the request is aider's ("Act as an expert …" in its system prompt): it offers no
    /// tools and edits files from the reply's text, in its whole-file "file listing" format.
    pub aider: bool,
}

impl Seen {
    /// Reads `body` as a request of `api`; `model` is the model a Gemini path names.
    pub(crate) fn read(api: Api, model: Option<String>, body: &Value) -> Self {
        let (tools, prompt, tool_results) = match api {
            Api::Anthropic => anthropic(body),
            Api::Responses => responses(body),
            Api::Gemini { .. } => gemini(body),
        };
        let model = model
            .or_else(|| body["model"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let stream = match api {
            Api::Gemini { stream } => stream,
            _ => body["stream"].as_bool().unwrap_or(false),
        };
        let mut kind = Kind::of(&prompt);
        // The CLIs' side requests (Gemini CLI's model router and next-speaker check, opencode's
        // title) carry the user's words but offer no tool: they are not the turn.
        let aider = body["system"].to_string().contains("Act as an expert");
        if tools.is_empty() && !aider {
            kind = Kind::Other;
        }
        let config = &body["generationConfig"];
        let schema = ["responseJsonSchema", "responseSchema"]
            .into_iter()
            .find_map(|key| config.get(key).filter(|schema| schema.is_object()))
            .cloned();
        Self {
            api,
            model,
            tools,
            kind,
            prompt,
            tool_results,
            stream,
            schema,
            aider,
        }
    }

    /// The working directory epic's prompt names ("Your working directory is X, …").
    pub(crate) fn workdir(&self) -> Option<&str> {
        let at = self.prompt.find("Your working directory is ")?;
        let rest = &self.prompt[at + "Your working directory is ".len()..];
        let end = rest.find([',', '\n'])?;
        Some(rest[..end].trim_end_matches('.'))
    }

    /// The note epic adds after a request it asks again (`Note: your previous attempt …`, after
    /// a turn ended as looping), as far as its first line goes: logged, so a case sees the note
    /// reached the model.
    pub(crate) fn note(&self) -> Option<&str> {
        let at = self.prompt.find("Note: your previous attempt")?;
        let rest = &self.prompt[at..];
        Some(rest.split('\n').next().unwrap_or(rest))
    }

    /// A person's answer to the coder's `BLOCKED_ON:` question that epic put before the
    /// request (`epic answer`: `Their answer to the question you stopped on (BLOCKED_ON):`,
    /// then the answer quoted), its first line unquoted: logged, so a case sees the answer
    /// reached the model.
    pub(crate) fn person_answer(&self) -> Option<&str> {
        const HEADING: &str = "Their answer to the question you stopped on (BLOCKED_ON):\n> ";
        let at = self.prompt.find(HEADING)?;
        let rest = &self.prompt[at + HEADING.len()..];
        Some(rest.split('\n').next().unwrap_or(rest))
    }

    /// Whether the request offers the tool `name`.
    pub(crate) fn offers(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool == name)
    }
}

/// Every string under `value`'s `text` keys, in order.
fn texts(value: &Value, into: &mut String) {
    match value {
        Value::String(text) => push(into, text),
        Value::Array(items) => items.iter().for_each(|item| texts(item, into)),
        Value::Object(fields) => {
            if let Some(Value::String(text)) = fields.get("text") {
                push(into, text);
            }
        }
        _ => {}
    }
}

fn push(into: &mut String, text: &str) {
    if !into.is_empty() {
        into.push('\n');
    }
    into.push_str(text);
}

fn names(tools: Option<&Vec<Value>>, key: impl Fn(&Value) -> Option<&str>) -> Vec<String> {
    tools
        .into_iter()
        .flatten()
        .filter_map(|tool| key(tool).map(str::to_owned))
        .collect()
}

/// Anthropic: `tools[].name`; user messages' text blocks; `tool_result` blocks.
fn anthropic(body: &Value) -> (Vec<String>, String, usize) {
    let tools = names(body["tools"].as_array(), |tool| tool["name"].as_str());
    let mut prompt = String::new();
    let mut results = 0;
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] != "user" {
            continue;
        }
        match &message["content"] {
            Value::Array(blocks) => {
                for block in blocks {
                    if block["type"] == "tool_result" {
                        results += 1;
                    } else {
                        texts(block, &mut prompt);
                    }
                }
            }
            content => texts(content, &mut prompt),
        }
    }
    (tools, prompt, results)
}

/// OpenAI Responses: `tools[].name` (or the type of a built-in tool); user messages' content
/// text; `function_call_output` items.
fn responses(body: &Value) -> (Vec<String>, String, usize) {
    let tools = names(body["tools"].as_array(), |tool| {
        tool["name"].as_str().or_else(|| tool["type"].as_str())
    });
    let mut prompt = String::new();
    let mut results = 0;
    match &body["input"] {
        Value::String(text) => push(&mut prompt, text),
        Value::Array(items) => {
            for item in items {
                let kind = item["type"].as_str().unwrap_or("message");
                if kind.ends_with("call_output") {
                    results += 1;
                } else if kind == "message" && item["role"] == "user" {
                    texts(&item["content"], &mut prompt);
                }
            }
        }
        _ => {}
    }
    (tools, prompt, results)
}

/// Gemini: `tools[].functionDeclarations[].name`; user contents' text parts; `functionResponse`
/// parts.
fn gemini(body: &Value) -> (Vec<String>, String, usize) {
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|tool| {
            tool["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .filter_map(|declaration| declaration["name"].as_str().map(str::to_owned))
        .collect();
    let mut prompt = String::new();
    let mut results = 0;
    for content in body["contents"].as_array().into_iter().flatten() {
        if content["role"] == "model" {
            continue;
        }
        for part in content["parts"].as_array().into_iter().flatten() {
            if part.get("functionResponse").is_some() {
                results += 1;
            } else {
                texts(part, &mut prompt);
            }
        }
    }
    (tools, prompt, results)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_key_from_each_apis_header_or_the_query() {
        let mut headers = hyper::HeaderMap::new();
        assert_eq!(
            api_key(&headers, Some("alt=sse&key=g-1")).as_deref(),
            Some("g-1")
        );
        assert_eq!(api_key(&headers, Some("alt=sse")), None);
        headers.insert("authorization", "Bearer sk-openai".parse().unwrap());
        assert_eq!(api_key(&headers, None).as_deref(), Some("sk-openai"));
        headers.insert("x-api-key", "sk-ant".parse().unwrap());
        assert_eq!(api_key(&headers, None).as_deref(), Some("sk-ant"));
    }

    #[test]
    fn paths_name_the_api() {
        assert_eq!(Api::of("/v1/messages"), Some((Api::Anthropic, None)));
        assert_eq!(Api::of("/v1/responses"), Some((Api::Responses, None)));
        assert_eq!(
            Api::of("/v1beta/models/gemini-x:streamGenerateContent"),
            Some((Api::Gemini { stream: true }, Some("gemini-x".into())))
        );
        assert_eq!(
            Api::of("/v1beta/models/gemini-x:generateContent"),
            Some((Api::Gemini { stream: false }, Some("gemini-x".into())))
        );
        assert_eq!(Api::of("/v1/models"), None);
    }

    #[test]
    fn an_anthropic_turn_after_a_tool_call() {
        let body = json!({
            "model": "claude-x", "stream": true,
            "tools": [{"name": "Bash"}, {"name": "Write"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Your working directory is /w/a, the story's own worktree.\nDo this task only"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
            ]
        });
        let seen = Seen::read(Api::Anthropic, None, &body);
        assert_eq!(seen.kind, Kind::Code);
        assert_eq!(seen.tools, ["Bash", "Write"]);
        assert_eq!(seen.tool_results, 1);
        assert_eq!(seen.workdir(), Some("/w/a"));
        assert_eq!(seen.model, "claude-x");
        assert!(seen.stream);
    }

    #[test]
    fn a_persons_answer_before_a_coders_request() {
        let text = "The person running this epic wrote to you.\n\nTheir answer to the question \
                    you stopped on (BLOCKED_ON):\n> 8080\n\nNow carry on with the request \
                    below.\n\nDo this task only";
        let body = json!({"tools": [{"name": "Write"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]});
        let seen = Seen::read(Api::Anthropic, None, &body);
        assert_eq!(seen.kind, Kind::Code);
        assert_eq!(seen.person_answer(), Some("8080"));
        let body = json!({"tools": [{"name": "Write"}],
            "messages": [{"role": "user", "content": "Do this task only"}]});
        assert_eq!(
            Seen::read(Api::Anthropic, None, &body).person_answer(),
            None
        );
    }

    #[test]
    fn a_responses_and_a_gemini_request() {
        let body = json!({
            "model": "gpt-x",
            "tools": [{"type": "function", "name": "exec_command"}, {"type": "web_search"}],
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You judge whether one story"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "You review the work of a coder"}]},
                {"type": "function_call_output", "call_id": "c", "output": "x"}
            ]
        });
        let seen = Seen::read(Api::Responses, None, &body);
        assert_eq!(seen.kind, Kind::Review);
        assert_eq!(seen.tools, ["exec_command", "web_search"]);
        assert_eq!(seen.tool_results, 1);

        let body = json!({
            "tools": [{"functionDeclarations": [{"name": "write_file"}, {"name": "run_shell_command"}]}],
            "contents": [
                {"role": "user", "parts": [{"text": "Plan the implementation of this story"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {}}}]}
            ]
        });
        let seen = Seen::read(Api::Gemini { stream: true }, Some("g".into()), &body);
        assert_eq!(seen.kind, Kind::Plan);
        assert_eq!(seen.tools, ["write_file", "run_shell_command"]);
        assert_eq!(seen.tool_results, 1);
        assert_eq!(seen.model, "g");
        // Gemini CLI's router: the user's words, no tools; the same over Anthropic (a title).
        let body =
            json!({"contents": [{"role": "user", "parts": [{"text": "Do this task only"}]}]});
        assert_eq!(
            Seen::read(Api::Gemini { stream: false }, None, &body).kind,
            Kind::Other
        );
    }
}
