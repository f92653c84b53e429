//! The HTTP/1.1 server: a listener on 127.0.0.1, one task per connection, every request read,
//! answered as the script says and logged.

use std::convert::Infallible;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::reply::{self, Answer, Part, Usage};
use crate::request::{Api, Seen};
use crate::script::Script;

/// How long a silent stream holds its connection at most, should the client never leave.
const SILENCE: Duration = Duration::from_mins(10);

/// What the server is started with.
#[derive(Debug, Default)]
pub struct Config {
    /// The case's steps.
    pub script: Script,
    /// A file every request is appended to as a JSON line.
    pub log: Option<PathBuf>,
}

struct Shared {
    script: Script,
    log: Option<File>,
    requests: Vec<Value>,
}

/// A running server; it stops when dropped.
#[derive(Debug)]
#[must_use = "the server stops when dropped"]
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    accept: JoinHandle<()>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("requests", &self.requests.len())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds 127.0.0.1 on a port of its own and serves on the current tokio runtime.
    pub async fn start(config: Config) -> io::Result<Self> {
        let log = match &config.log {
            Some(path) => Some(OpenOptions::new().create(true).append(true).open(path)?),
            None => None,
        };
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared {
            script: config.script,
            log,
            requests: Vec::new(),
        }));
        let accept = tokio::spawn(accept(listener, Arc::clone(&shared)));
        Ok(Self {
            addr,
            shared,
            accept,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, as the log has it.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared).requests.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn accept(listener: TcpListener, shared: Arc<Mutex<Shared>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |request| serve(request, Arc::clone(&shared)));
            // A client that leaves mid-reply (a cut or silent stream) is no error of the server.
            http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
                .ok();
        });
    }
}

/// A reply body: whole, or a stream of chunks sent as they come (an `Err` cuts the
/// connection).
enum Payload {
    Whole(Option<Bytes>),
    Stream(mpsc::Receiver<io::Result<Bytes>>),
}

impl Body for Payload {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<io::Result<Frame<Bytes>>>> {
        match self.get_mut() {
            Self::Whole(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Self::Stream(chunks) => chunks
                .poll_recv(cx)
                .map(|chunk| chunk.map(|chunk| chunk.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Whole(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Self::Stream(_) => SizeHint::default(),
        }
    }
}

fn json_response(status: u16, headers: &[(&str, String)], body: &Value) -> Response<Payload> {
    let mut response = Response::new(Payload::Whole(Some(Bytes::from(body.to_string()))));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let map = response.headers_mut();
    map.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            map.insert(name, value);
        }
    }
    response
}

fn sse_response(chunks: mpsc::Receiver<io::Result<Bytes>>) -> Response<Payload> {
    let mut response = Response::new(Payload::Stream(chunks));
    let map = response.headers_mut();
    map.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    map.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    response
}

async fn serve(
    request: Request<Incoming>,
    shared: Arc<Mutex<Shared>>,
) -> Result<Response<Payload>, Infallible> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let key = crate::request::api_key(request.headers(), request.uri().query());
    let body = request
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let mut entry = json!({"method": method.as_str(), "path": path, "bytes": body.len()});
    let api = Api::of(&path).filter(|_| method == Method::POST);
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let (Some((api, model)), Some(parsed)) = (api, parsed) else {
        let response = json_response(
            404,
            &[],
            &json!({"error": {"code": 404, "message": format!("no such endpoint: {method} {path}")}}),
        );
        entry["answer"] = "status 404".into();
        record(&shared, entry);
        return Ok(response);
    };
    let seen = Seen::read(api, model, &parsed);
    let (id, action) = {
        let mut shared = lock(&shared);
        let action = shared
            .script
            .next_of(seen.kind, api.name(), key.as_deref(), &seen.prompt);
        (shared.requests.len() as u64 + 1, action)
    };
    let answer = reply::answer(&seen, &action);
    entry["api"] = api.name().into();
    entry["model"] = seen.model.as_str().into();
    entry["stream"] = seen.stream.into();
    entry["tools"] = seen.tools.clone().into();
    entry["kind"] = serde_json::to_value(seen.kind).unwrap_or_default();
    entry["key"] = key.into();
    entry["tool_results"] = seen.tool_results.into();
    entry["answer"] = action.to_string().into();
    if let Some(note) = seen.note() {
        entry["note"] = note.into();
    }
    if let Some(answer) = seen.person_answer() {
        entry["person_answer"] = answer.into();
    }
    if let Answer::Reply(parts) | Answer::Cut(parts) = &answer {
        let calls: Vec<Value> = parts
            .iter()
            .filter_map(|part| match part {
                Part::Call { name, args } => Some(json!({"name": name, "args": args})),
                Part::Text(_) => None,
            })
            .collect();
        entry["calls"] = calls.into();
        if let Answer::Reply(parts) = &answer {
            let usage = Usage::of(body.len(), parts);
            entry["usage"] = json!({"input": usage.input, "output": usage.output});
        }
    }
    record(&shared, entry);
    Ok(respond(&seen, id, body.len(), answer))
}

fn respond(seen: &Seen, id: u64, bytes: usize, answer: Answer) -> Response<Payload> {
    let (parts, cut) = match answer {
        Answer::Status(status) => {
            let (headers, body) = reply::error(seen.api, status);
            return json_response(status, &headers, &body);
        }
        Answer::Limit(secs) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs());
            let (headers, body) = reply::limit(seen.api, secs, now);
            return json_response(429, &headers, &body);
        }
        Answer::Silent => {
            let (sender, chunks) = mpsc::channel(1);
            tokio::spawn(async move {
                tokio::select! {
                    () = sender.closed() => {}
                    () = tokio::time::sleep(SILENCE) => {}
                }
            });
            return sse_response(chunks);
        }
        Answer::Reply(parts) => (parts, false),
        Answer::Cut(parts) => (parts, true),
    };
    let usage = Usage::of(bytes, &parts);
    if !seen.stream && !cut {
        return json_response(
            200,
            &[],
            &reply::whole(seen.api, &seen.model, id, &parts, usage),
        );
    }
    let mut events = reply::events(seen.api, &seen.model, id, &parts, usage);
    if cut {
        events.truncate(events.len().div_ceil(2).max(1));
    }
    let (sender, chunks) = mpsc::channel(events.len() + 1);
    tokio::spawn(async move {
        for event in events {
            if sender.send(Ok(Bytes::from(event))).await.is_err() {
                return;
            }
        }
        if cut {
            // Let the half that was sent reach the client, then break the connection.
            tokio::time::sleep(Duration::from_millis(100)).await;
            sender
                .send(Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "stream cut half way",
                )))
                .await
                .ok();
        }
    });
    sse_response(chunks)
}

fn record(shared: &Mutex<Shared>, mut entry: Value) {
    let mut shared = lock(shared);
    entry["n"] = (shared.requests.len() + 1).into();
    if let Some(log) = &mut shared.log {
        // The log is for the tests; a full disk shows there, not here.
        writeln!(log, "{entry}").and_then(|()| log.flush()).ok();
    }
    shared.requests.push(entry);
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;

    use super::*;

    /// The prompt of a coder's turn with one file block.
    const CODE: &str = "Your working directory is /w/a, the story's own worktree.\n\n```file src/a/a.txt\nalpha\n```\n\nDo this task only, then stop.";

    async fn server(steps: &str) -> Server {
        Server::start(Config {
            script: Script::parse(steps).unwrap(),
            log: None,
        })
        .await
        .unwrap()
    }

    /// Sends `body` to `path` over a fresh connection and reads until the server closes it (or
    /// `wait` passes): the head and the body as text, and whether the server closed.
    async fn post(server: &Server, path: &str, body: &Value, wait: Duration) -> (String, bool) {
        let mut stream = TcpStream::connect(server.addr()).await.unwrap();
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut read = Vec::new();
        let closed = tokio::time::timeout(wait, async {
            let mut buffer = [0; 4096];
            loop {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read.extend_from_slice(&buffer[..n]),
                }
            }
        })
        .await
        .is_ok();
        (String::from_utf8_lossy(&read).into_owned(), closed)
    }

    fn anthropic(tool_result: bool) -> Value {
        let mut messages =
            vec![json!({"role": "user", "content": [{"type": "text", "text": CODE}]})];
        if tool_result {
            messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Write", "input": {}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}));
        }
        json!({"model": "claude-x", "stream": true, "tools": [{"name": "Bash"}, {"name": "Write"}], "messages": messages})
    }

    /// The JSON of every `data:` line of a stream.
    fn data(text: &str) -> Vec<Value> {
        text.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_coding_turn_over_anthropic_writes_with_its_tool_then_replies() {
        let log = tempfile_path();
        let server = Server::start(Config {
            script: Script::default(),
            log: Some(log.clone()),
        })
        .await
        .unwrap();
        let (text, closed) = post(
            &server,
            "/v1/messages?beta=true",
            &anthropic(false),
            Duration::from_secs(5),
        )
        .await;
        assert!(closed);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("content-type: text/event-stream"), "{text}");
        let events = data(&text);
        assert_eq!(events[0]["type"], "message_start");
        assert_eq!(events[1]["content_block"]["name"], "Write");
        let args: String = events
            .iter()
            .filter_map(|event| event["delta"]["partial_json"].as_str())
            .collect();
        let args: Value = serde_json::from_str(&args).unwrap();
        assert_eq!(
            args,
            json!({"file_path": "/w/a/src/a/a.txt", "content": "alpha\n"})
        );
        let last = &events[events.len() - 2];
        assert_eq!(last["delta"]["stop_reason"], "tool_use");
        assert!(last["usage"]["input_tokens"].as_u64().unwrap() > 10);
        assert_eq!(events[events.len() - 1]["type"], "message_stop");

        let (text, _) = post(
            &server,
            "/v1/messages",
            &anthropic(true),
            Duration::from_secs(5),
        )
        .await;
        let reply: String = data(&text)
            .iter()
            .filter_map(|event| event["delta"]["text"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(reply, "Done: wrote src/a/a.txt.");

        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0]["kind"], "code");
        assert_eq!(requests[0]["tools"], json!(["Bash", "Write"]));
        assert_eq!(requests[0]["path"], "/v1/messages");
        assert_eq!(requests[0]["calls"][0]["name"], "Write");
        assert_eq!(requests[1]["tool_results"], 1);
        let logged = std::fs::read_to_string(&log).unwrap();
        assert_eq!(logged.lines().count(), 2);
        let first: Value = serde_json::from_str(logged.lines().next().unwrap()).unwrap();
        assert_eq!(first["answer"], "write");
        assert_eq!(
            first["usage"]["input"],
            requests[0]["bytes"].as_u64().unwrap().div_ceil(4)
        );
        std::fs::remove_file(log).ok();
    }

    fn tempfile_path() -> PathBuf {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        std::env::temp_dir().join(format!(
            "epic-model-server-{}-{}.jsonl",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ))
    }

    #[tokio::test]
    async fn a_coding_turn_over_responses_runs_exec_command() {
        let server = server("").await;
        let body = json!({"model": "gpt-x", "stream": true,
            "tools": [{"type": "function", "name": "exec_command"}, {"type": "web_search"}],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": CODE}]}]});
        let (text, _) = post(&server, "/v1/responses", &body, Duration::from_secs(5)).await;
        let events = data(&text);
        assert_eq!(events[0]["type"], "response.created");
        let done = events
            .iter()
            .find(|event| event["type"] == "response.output_item.done")
            .unwrap();
        assert_eq!(done["item"]["type"], "function_call");
        assert_eq!(done["item"]["name"], "exec_command");
        let args: Value =
            serde_json::from_str(done["item"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["workdir"], "/w/a");
        assert!(args["cmd"].as_str().unwrap().contains("> src/a/a.txt"));
        let completed = events.last().unwrap();
        assert_eq!(completed["type"], "response.completed");
        assert!(
            completed["response"]["usage"]["total_tokens"]
                .as_u64()
                .unwrap()
                > 0
        );
    }

    #[tokio::test]
    async fn gemini_plans_streaming_and_answers_its_router_whole() {
        let server = server(r#"{"when": "plan", "do": "plan", "tasks": ["one", "two"]}"#).await;
        let plan = json!({"tools": [{"functionDeclarations": [{"name": "write_file"}]}],
            "contents": [{"role": "user", "parts": [{"text": "Plan the implementation of this story"}]}]});
        let (text, _) = post(
            &server,
            "/v1beta/models/g-pro:streamGenerateContent?alt=sse",
            &plan,
            Duration::from_secs(5),
        )
        .await;
        let reply: String = data(&text)
            .iter()
            .flat_map(|chunk| {
                chunk["candidates"][0]["content"]["parts"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|part| part["text"].as_str().map(str::to_owned))
            .collect();
        let tasks: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(tasks["tasks"][1]["title"], "two");
        assert!(
            data(&text).last().unwrap()["usageMetadata"]["totalTokenCount"]
                .as_u64()
                .is_some()
        );

        let router = json!({"contents": [{"role": "user", "parts": [{"text": "Plan the implementation of this story"}]}]});
        let (text, _) = post(
            &server,
            "/v1beta/models/g-lite:generateContent",
            &router,
            Duration::from_secs(5),
        )
        .await;
        let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["candidates"][0]["content"]["parts"][0]["text"], "OK");
        assert_eq!(server.requests()[1]["kind"], "other");
        assert_eq!(server.requests()[1]["model"], "g-lite");
    }

    #[tokio::test]
    async fn limits_and_failures_in_each_apis_form() {
        let server = server(
            "{\"do\": \"status\", \"status\": 429, \"times\": 3}\n{\"do\": \"status\", \"status\": 529, \"times\": 1}\n{\"do\": \"status\", \"status\": 401, \"times\": 3}\n{\"do\": \"status\", \"status\": 500}",
        )
        .await;
        let wait = Duration::from_secs(5);
        let (text, _) = post(&server, "/v1/messages", &anthropic(false), wait).await;
        assert!(text.starts_with("HTTP/1.1 429"), "{text}");
        assert!(text.contains("retry-after: 30"), "{text}");
        assert!(text.contains("rate_limit_error"), "{text}");
        let (text, _) = post(&server, "/v1/responses", &json!({"input": "x"}), wait).await;
        assert!(text.starts_with("HTTP/1.1 429"), "{text}");
        assert!(text.contains("rate_limit_exceeded"), "{text}");
        let (text, _) = post(
            &server,
            "/v1beta/models/g:generateContent",
            &json!({}),
            wait,
        )
        .await;
        assert!(
            text.contains("RESOURCE_EXHAUSTED") && text.contains("retryDelay"),
            "{text}"
        );
        let (text, _) = post(&server, "/v1/messages", &anthropic(false), wait).await;
        assert!(
            text.starts_with("HTTP/1.1 529") && text.contains("overloaded_error"),
            "{text}"
        );
        // A key the API refuses, in each API's words.
        let (text, _) = post(&server, "/v1/messages", &anthropic(false), wait).await;
        assert!(
            text.starts_with("HTTP/1.1 401") && text.contains("authentication_error"),
            "{text}"
        );
        let (text, _) = post(&server, "/v1/responses", &json!({"input": "x"}), wait).await;
        assert!(text.contains("invalid_api_key"), "{text}");
        let (text, _) = post(
            &server,
            "/v1beta/models/g:generateContent",
            &json!({}),
            wait,
        )
        .await;
        assert!(
            text.starts_with("HTTP/1.1 401") && text.contains("API key not valid"),
            "{text}"
        );
        let (text, _) = post(&server, "/v1/messages", &anthropic(false), wait).await;
        assert!(
            text.starts_with("HTTP/1.1 500") && text.contains("api_error"),
            "{text}"
        );
        let (text, _) = post(&server, "/v1/models", &json!({}), wait).await;
        assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    }

    #[tokio::test]
    async fn a_cut_stream_ends_unfinished_and_a_silent_one_holds() {
        let server = server("{\"do\": \"cut\", \"times\": 1}\n{\"do\": \"silent\"}").await;
        let (text, closed) = post(
            &server,
            "/v1/messages",
            &anthropic(false),
            Duration::from_secs(5),
        )
        .await;
        assert!(closed, "the server closes a cut stream");
        assert!(text.contains("message_start"), "{text}");
        assert!(!text.contains("message_stop"), "{text}");
        // Chunked, and the last chunk (`0`) never came.
        assert!(!text.ends_with("0\r\n\r\n"), "{text}");

        let (text, closed) = post(
            &server,
            "/v1/messages",
            &anthropic(false),
            Duration::from_millis(700),
        )
        .await;
        assert!(!closed, "a silent stream holds its connection");
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(data(&text).is_empty(), "{text}");
    }

    #[tokio::test]
    async fn repeat_calls_the_same_command_every_time() {
        let server = server(r#"{"when": "code", "do": "repeat"}"#).await;
        for results in 0..3 {
            let mut body = anthropic(results > 0);
            body["tools"] = json!([{"name": "Bash"}]);
            let (text, _) = post(&server, "/v1/messages", &body, Duration::from_secs(5)).await;
            let args: String = data(&text)
                .iter()
                .filter_map(|event| event["delta"]["partial_json"].as_str())
                .collect();
            assert_eq!(
                serde_json::from_str::<Value>(&args).unwrap()["command"],
                REPEATED_COMMAND
            );
        }
    }

    const REPEATED_COMMAND: &str = crate::REPEATED;
}
