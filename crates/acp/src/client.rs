//! One turn of an ACP agent, from the client's side ([`run_turn`]): `initialize` (epic offers
//! the `fs` capabilities, no terminal), `session/new` in the worktree, one `session/prompt`;
//! meanwhile the agent's updates go out as [`Note`]s, its permission requests are answered by
//! the policy ([`crate::decide`]), and its file reads and writes are done inside the perimeter
//! or refused with a JSON-RPC error that carries the reason. When the caller asks it to stop
//! (a stall, a stop, a deadline), it sends `session/cancel` and goes on reading until the agent
//! ends the prompt or the caller gives up on it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities,
    InitializeRequest, NewSessionRequest, PermissionOptionKind, PromptRequest, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
    SetSessionModeRequest, TextContent, ToolCallLocation, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client, Error as RpcError, ErrorCode};
use epic_story_plan::Story;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::disk;
use crate::lines::{Broken, lines};
use crate::policy::{Access, Ask, Decision, decide, decide_write, inside, readable, shown};

/// The JSON-RPC error code of a file write or read epic refuses: the request was understood and
/// is not allowed (ACP reserves no code for it; -32000 is `auth_required`).
const REFUSED: i32 = -32001;

/// The largest file epic reads for an agent (`fs/read_text_file`): a bigger one is refused, so
/// an agent cannot make epic hold a huge file in memory.
const READ_CAP: u64 = 8 * 1024 * 1024;

/// One turn to take: where, for whom, what to ask.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The story's worktree: the session's `cwd`, and the root of every file epic reads or
    /// writes for the agent.
    pub worktree: PathBuf,
    /// The story, whose owned paths the agent may edit (with [`Access::Edit`]).
    pub story: Arc<Story>,
    /// What the turn's agent may do.
    pub access: Access,
    /// The prompt, sent as one text block.
    pub prompt: String,
    /// Whether epic offers to read files for the agent (`fs.readTextFile`); it always offers to
    /// write them. Gemini CLI's ACP mode reads a file through the client before it writes it
    /// and takes any error of that read, "not found" included, for a failed write, so a new
    /// file could never be made: its preset is offered writes only, and reads from its own
    /// sandboxed process.
    pub offer_reads: bool,
    /// The session mode to set after `session/new` (`session/set_mode`), where the agent starts
    /// in one that cannot do the role's work (Codex's adapter starts `read-only`); `None`: the
    /// agent's own.
    pub mode: Option<String>,
}

/// What the agent did while the turn ran, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// A piece of the agent's reply (`agent_message_chunk`).
    Chunk(String),
    /// A tool call it started (`tool_call`).
    Tool {
        /// The tool: its name where the agent gave one, else its kind.
        tool: String,
        /// Its input, as compact JSON (its raw input, else its title).
        input: String,
        /// What it does, in a few words (its title).
        doing: String,
    },
    /// epic rejected a request (a permission, a file write or read).
    Rejected {
        /// What was asked: the path, the command, the title.
        subject: String,
        /// Why, as the agent was told.
        reason: String,
    },
    /// The agent said something that is not the reply or a call, but shows it is alive (a
    /// thought, a plan, a tool call's update).
    Alive,
}

/// How a prompt ended, as the agent said.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// Its stop reason: `end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`.
    pub stop_reason: String,
    /// The tokens it reported for the turn, if it did: input (cached included) and output.
    pub usage: Option<(u64, u64)>,
    /// What the turn cost in US dollars, if the agent said (`usage_update`'s cumulative
    /// `cost` in `USD`; a turn is its session's only prompt, so the session's cost is the
    /// turn's).
    pub cost_usd: Option<f64>,
}

/// Why a turn failed in the protocol.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AcpError {
    /// The agent answered a request with a JSON-RPC error.
    #[error("the agent answered `{method}` with error {code}: {message}")]
    Answered {
        /// The request (`initialize`, `session/new`, `session/prompt`).
        method: &'static str,
        /// The error's code.
        code: i32,
        /// Its message, and its data where it had any.
        message: String,
    },
    /// The agent needs to be logged in (`auth_required`, or no session without
    /// `authenticate`).
    #[error(
        "the agent is not logged in: it answered `{method}` with: {message} (its ways to log in: {methods})"
    )]
    NotLoggedIn {
        /// The request it refused.
        method: &'static str,
        /// What it said.
        message: String,
        /// The `authMethods` it offered at `initialize`, by id.
        methods: String,
    },
    /// The agent broke the protocol: a line that is not JSON, a line past the cap.
    #[error("the agent broke the protocol: {0}")]
    Broken(String),
    /// The agent closed its output (it exited) before it ended the prompt.
    #[error("the agent closed its output before it ended the turn")]
    Closed,
}

/// What the handlers share with the turn.
struct Shared {
    turn: Turn,
    notes: UnboundedSender<Note>,
    /// The session, once made: requests of any other are refused.
    session: Mutex<Option<String>>,
    /// The tool calls told so far, by id: an agent may announce a call (`tool_call`), ask
    /// permission for it without announcing it (Gemini CLI, for the calls it asks about), or
    /// both (Claude Code's adapter); each is one call of the turn's activity.
    calls: Mutex<std::collections::HashSet<String>>,
    /// The session's cost as the agent last told it, in US dollars.
    cost_usd: Mutex<Option<f64>>,
}

impl Shared {
    fn note(&self, note: Note) {
        // The turn stopped listening: nothing is left to tell.
        drop(self.notes.send(note));
    }

    /// Tells the tool call `id`: always when the agent announces it (`announced`: a
    /// `tool_call`, which an agent that repeats a call sends each time), and when it asks
    /// permission for a call it did not announce first.
    fn call(
        &self,
        id: &str,
        announced: bool,
        (kind, title, input): (Option<String>, Option<&str>, Option<&Value>),
    ) {
        let first = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned());
        if first || announced {
            let doing = title.unwrap_or_default().to_owned();
            let input = input.map_or_else(|| Value::String(doing.clone()), Clone::clone);
            self.note(Note::Tool {
                tool: kind.unwrap_or_else(|| "other".to_owned()),
                input: input.to_string(),
                doing,
            });
        }
    }

    fn reject(&self, subject: String, reason: &str) {
        self.note(Note::Rejected {
            subject,
            reason: reason.to_owned(),
        });
    }
}

/// Takes one turn with the agent at the other end of `reader` (its standard output) and `writer`
/// (its standard input): see the module's docs. Notes go to `notes` as they happen; cancelling
/// `stop` sends `session/cancel` once and goes on until the agent ends the prompt.
///
/// # Cancel safety
///
/// Dropping the future drops the connection: the caller kills the agent.
pub async fn run_turn<R, W>(
    reader: R,
    writer: W,
    turn: Turn,
    notes: UnboundedSender<Note>,
    stop: CancellationToken,
) -> Result<Ended, AcpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let broken = Broken::default();
    let transport = lines(reader, writer, broken.clone());
    let shared = Arc::new(Shared {
        turn,
        notes,
        session: Mutex::new(None),
        calls: Mutex::default(),
        cost_usd: Mutex::default(),
    });
    let on_update = Arc::clone(&shared);
    let on_permission = Arc::clone(&shared);
    let on_write = Arc::clone(&shared);
    let on_read = Arc::clone(&shared);
    let main = Arc::clone(&shared);
    let outcome: Result<Result<Ended, AcpError>, RpcError> = Client
        .v1()
        .name("epic")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                update(&on_update, notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                responder.respond(permission(&on_permission, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| match write(
                &on_write, &request,
            )
            .await
            {
                Ok(()) => responder.respond(WriteTextFileResponse::new()),
                Err(error) => responder.respond_with_error(error),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| match read(&on_read, &request)
                .await
            {
                Ok(content) => responder.respond(ReadTextFileResponse::new(content)),
                Err(error) => responder.respond_with_error(error),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            Ok(converse(&cx, &main, &stop).await)
        })
        .await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => Err(failure("the connection", &error, "")),
    };
    // A line that broke the protocol ended the stream: that is the turn's failure, whatever
    // the requests still waiting made of it.
    if let Some(line) = broken.take() {
        return Err(AcpError::Broken(line));
    }
    outcome
}

/// The requests of one turn, in order.
async fn converse(
    cx: &ConnectionTo<Agent>,
    shared: &Shared,
    stop: &CancellationToken,
) -> Result<Ended, AcpError> {
    let capabilities = ClientCapabilities::new().fs(FileSystemCapabilities::new()
        .read_text_file(shared.turn.offer_reads)
        .write_text_file(true));
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
        .block_task()
        .await
        .map_err(|error| failure("initialize", &error, ""))?;
    let methods: Vec<String> = init
        .auth_methods
        .iter()
        .map(|method| method.id().to_string())
        .collect();
    let methods = methods.join(", ");
    let session = cx
        .send_request(NewSessionRequest::new(shared.turn.worktree.clone()))
        .block_task()
        .await
        .map_err(|error| failure("session/new", &error, &methods))?;
    let session_id = session.session_id;
    if let Some(mode) = &shared.turn.mode {
        cx.send_request(SetSessionModeRequest::new(session_id.clone(), mode.clone()))
            .block_task()
            .await
            .map_err(|error| failure("session/set_mode", &error, &methods))?;
    }
    *shared
        .session
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(session_id.to_string());
    let prompt = PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::Text(TextContent::new(
            shared.turn.prompt.clone(),
        ))],
    );
    let answer = cx.send_request(prompt).block_task();
    let mut answer = std::pin::pin!(answer);
    let answered = tokio::select! {
        answered = &mut answer => answered,
        () = stop.cancelled() => {
            // The agent ends the prompt with `cancelled`; the caller kills it if it does not.
            drop(cx.send_notification(CancelNotification::new(session_id)));
            answer.await
        }
    };
    let answered = answered.map_err(|error| failure("session/prompt", &error, &methods))?;
    let stop_reason = serde_json::to_value(answered.stop_reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    Ok(Ended {
        stop_reason,
        usage: answered
            .usage
            .map(|usage| (usage.input_tokens, usage.output_tokens)),
        cost_usd: *shared
            .cost_usd
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    })
}

/// The turn's failure for an error `method` got: the transport closed, the agent not logged
/// in (`methods`: what it offered), or its answer.
fn failure(method: &'static str, error: &RpcError, methods: &str) -> AcpError {
    if agent_client_protocol::is_incoming_transport_closed(error)
        || agent_client_protocol::is_connection_terminated(error)
    {
        return AcpError::Closed;
    }
    let mut message = error.message.clone();
    if let Some(data) = &error.data {
        message = format!("{message} ({data})");
    }
    if error.code == ErrorCode::AUTH_REQUIRED {
        return AcpError::NotLoggedIn {
            method,
            message,
            methods: if methods.is_empty() {
                "none named".to_owned()
            } else {
                methods.to_owned()
            },
        };
    }
    AcpError::Answered {
        method,
        code: error.code.value(),
        message,
    }
}

/// One `session/update`, told as a [`Note`].
fn update(shared: &Shared, notification: SessionNotification) {
    let note = match notification.update {
        SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
            ContentBlock::Text(text) => Note::Chunk(text.text),
            _ => Note::Alive,
        },
        SessionUpdate::ToolCall(call) => {
            let tool = call.name.clone().unwrap_or_else(|| kind_name(&call.kind));
            shared.call(
                &call.tool_call_id.to_string(),
                true,
                (Some(tool), Some(&call.title), call.raw_input.as_ref()),
            );
            return;
        }
        SessionUpdate::UsageUpdate(usage) => {
            if let Some(cost) = usage.cost.filter(|cost| cost.currency == "USD") {
                *shared
                    .cost_usd
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(cost.amount);
            }
            Note::Alive
        }
        _ => Note::Alive,
    };
    shared.note(note);
}

/// A tool kind's name as the protocol spells it (`edit`, `execute`, …).
fn kind_name(kind: &impl serde::Serialize) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".to_owned())
}

/// epic's answer to a permission request: the policy's decision, as the option of its kind
/// (`allow_once`, `reject_once`; never an `_always` one). A rejection's reason goes in the
/// answer's `_meta` (`{"epic": {"reason": …}}`) and to the notes; a request with no option of
/// the kind needed is answered `cancelled`.
fn permission(shared: &Shared, request: &RequestPermissionRequest) -> RequestPermissionResponse {
    let fields = &request.tool_call.fields;
    let kind = fields.kind.as_ref().map(kind_name);
    let locations = fields
        .locations
        .iter()
        .flatten()
        .map(|location: &ToolCallLocation| location.path.clone());
    let ask = Ask::new(
        kind.as_deref(),
        fields.title.as_deref(),
        locations,
        fields.raw_input.as_ref(),
    );
    shared.call(
        &request.tool_call.tool_call_id.to_string(),
        false,
        (
            kind.clone(),
            fields.title.as_deref(),
            fields.raw_input.as_ref(),
        ),
    );
    let turn = &shared.turn;
    let decision = decide(turn.access, &turn.story, &turn.worktree, &ask);
    let wanted = match &decision {
        Decision::Allow => PermissionOptionKind::AllowOnce,
        Decision::Reject(reason) => {
            shared.reject(ask.subject(&turn.worktree), reason);
            PermissionOptionKind::RejectOnce
        }
    };
    let chosen = request
        .options
        .iter()
        .find(|option| option.kind == wanted)
        .map(|option| option.option_id.clone());
    let outcome = match chosen {
        Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
        None => {
            if decision.allows() {
                shared.reject(
                    ask.subject(&turn.worktree),
                    "the agent offered no `allow_once` answer, and epic never allows always",
                );
            }
            RequestPermissionOutcome::Cancelled
        }
    };
    let mut response = RequestPermissionResponse::new(outcome);
    if let Decision::Reject(reason) = decision {
        let mut meta = serde_json::Map::new();
        meta.insert("epic".to_owned(), serde_json::json!({ "reason": reason }));
        response = response.meta(meta);
    }
    response
}

/// The error an agent gets for a file request epic refuses.
fn refused(reason: &str) -> RpcError {
    RpcError::new(REFUSED, reason.to_owned())
}

/// Whether `session` is the turn's session.
fn ours(shared: &Shared, session: &str) -> bool {
    shared
        .session
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_deref()
        == Some(session)
}

/// `fs/write_text_file`: written when the policy allows it, never through a link
/// ([`disk::write`]); else refused with the reason.
async fn write(shared: &Shared, request: &WriteTextFileRequest) -> Result<(), RpcError> {
    let turn = &shared.turn;
    let subject = shown(&turn.worktree, &request.path);
    let checked = if ours(shared, &request.session_id.to_string()) {
        decide_write(turn.access, &turn.story, &turn.worktree, &request.path)
    } else {
        Err("no such session".to_owned())
    };
    let written = match checked.and_then(|target| inside(&turn.worktree, &target)) {
        Ok(relative) => {
            let (root, content) = (turn.worktree.clone(), request.content.clone());
            tokio::task::spawn_blocking(move || disk::write(&root, &relative, content.as_bytes()))
                .await
                .map_err(|error| error.to_string())
                .and_then(|written| {
                    written.map_err(|error| {
                        format!("`{subject}` could not be written (a link on the way?): {error}")
                    })
                })
        }
        Err(reason) => Err(reason),
    };
    written.map_err(|reason| {
        shared.reject(subject.clone(), &reason);
        refused(&reason)
    })
}

/// `fs/read_text_file`: read inside the worktree (no `..`, no link), the lines asked for, at
/// most [`READ_CAP`] bytes; else refused with the reason.
async fn read(shared: &Shared, request: &ReadTextFileRequest) -> Result<String, RpcError> {
    let turn = &shared.turn;
    let subject = shown(&turn.worktree, &request.path);
    let target = if ours(shared, &request.session_id.to_string()) {
        readable(&turn.worktree, &request.path)
    } else {
        Err("no such session".to_owned())
    };
    let text = match target.and_then(|target| inside(&turn.worktree, &target)) {
        Ok(relative) => {
            let root = turn.worktree.clone();
            let read = tokio::task::spawn_blocking(move || disk::read(&root, &relative, READ_CAP))
                .await
                .unwrap_or_else(|error| Err(std::io::Error::other(error.to_string())));
            match read {
                // A file not made yet is no refusal: the protocol's own answer, which an agent
                // about to make it expects.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    return Err(
                        agent_client_protocol::v1::schema::Error::resource_not_found(Some(subject))
                            .into(),
                    );
                }
                read => read.map_err(|error| format!("`{subject}`: {error}")),
            }
        }
        Err(reason) => Err(reason),
    };
    let text = text.map_err(|reason| {
        shared.reject(subject.clone(), &reason);
        refused(&reason)
    })?;
    let first = request
        .line
        .map_or(0, |line| line.saturating_sub(1) as usize);
    Ok(match request.limit {
        None if first == 0 => text,
        limit => text
            .split_inclusive('\n')
            .skip(first)
            .take(limit.map_or(usize::MAX, |limit| limit as usize))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
    use tokio::sync::mpsc;

    use super::*;

    /// The agent's end of the pipes: lines in, lines out.
    struct FakeAgent {
        lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
        out: tokio::io::WriteHalf<DuplexStream>,
        next: u64,
    }

    impl FakeAgent {
        async fn send(&mut self, message: Value) {
            let mut line = message.to_string();
            line.push('\n');
            self.out.write_all(line.as_bytes()).await.expect("writes");
        }

        async fn read(&mut self) -> Value {
            let line = self
                .lines
                .next_line()
                .await
                .expect("reads")
                .expect("a line");
            serde_json::from_str(&line).expect("epic sends JSON")
        }

        /// Answers epic's next request, which must be `method`, with `result`.
        async fn answer(&mut self, method: &str, result: Value) -> Value {
            let request = self.read().await;
            assert_eq!(request["method"], method, "{request}");
            self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                .await;
            request
        }

        /// Asks epic `method` and waits for its answer.
        async fn ask(&mut self, method: &str, params: Value) -> Value {
            self.next += 1;
            let id = self.next;
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await;
            loop {
                let message = self.read().await;
                if message["id"] == id && message.get("method").is_none() {
                    return message;
                }
            }
        }

        async fn update(&mut self, update: Value) {
            self.send(json!({"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": "s", "update": update}}))
                .await;
        }
    }

    /// A turn on `cart`'s story in a fresh worktree, with the agent's end of the pipes.
    fn start(
        access: Access,
    ) -> (
        tempfile::TempDir,
        FakeAgent,
        impl Future<Output = Result<Ended, AcpError>>,
        mpsc::UnboundedReceiver<Note>,
        CancellationToken,
    ) {
        let worktree = tempfile::tempdir().expect("a worktree");
        let (epic_side, agent_side) = tokio::io::duplex(64 * 1024);
        let (epic_read, epic_write) = tokio::io::split(epic_side);
        let (agent_read, agent_write) = tokio::io::split(agent_side);
        let (notes, inbox) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let turn = Turn {
            worktree: worktree.path().canonicalize().expect("a path"),
            story: Arc::new(Story::new("cart", "Cart", ["src/cart"])),
            access,
            prompt: "Build the cart.".into(),
            offer_reads: true,
            mode: None,
        };
        let client = run_turn(epic_read, epic_write, turn, notes, stop.clone());
        let agent = FakeAgent {
            lines: BufReader::new(agent_read).lines(),
            out: agent_write,
            next: 0,
        };
        (worktree, agent, client, inbox, stop)
    }

    /// `initialize` and `session/new` answered; the prompt's request returned.
    async fn open(agent: &mut FakeAgent) -> Value {
        let init = agent
            .answer(
                "initialize",
                json!({"protocolVersion": 1, "authMethods": []}),
            )
            .await;
        assert_eq!(
            init["params"]["clientCapabilities"]["fs"]["writeTextFile"],
            true
        );
        agent.answer("session/new", json!({"sessionId": "s"})).await;
        agent.read().await
    }

    fn drain(mut inbox: mpsc::UnboundedReceiver<Note>) -> Vec<Note> {
        std::iter::from_fn(|| inbox.try_recv().ok()).collect()
    }

    #[tokio::test]
    #[expect(clippy::disallowed_methods, reason = "the test reads what epic wrote")]
    #[expect(
        clippy::too_many_lines,
        reason = "one agent's whole turn, request by request"
    )]
    async fn a_turn_answers_permissions_and_writes_from_the_perimeter() {
        let (worktree, mut agent, client, inbox, _stop) = start(Access::Edit);
        let root = worktree.path().canonicalize().expect("a path");
        let agent_side = async move {
            let prompt = open(&mut agent).await;
            assert_eq!(prompt["method"], "session/prompt");
            assert_eq!(prompt["params"]["prompt"][0]["text"], "Build the cart.");
            let options = json!([
                {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
                {"optionId": "ever", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ]);
            let outside = agent
                .ask(
                    "session/request_permission",
                    json!({"sessionId": "s",
                    "toolCall": {"toolCallId": "1", "kind": "edit", "title": "Edit",
                        "locations": [{"path": root.join("src/other.rs")}]},
                    "options": options}),
                )
                .await;
            assert_eq!(outside["result"]["outcome"]["optionId"], "no", "{outside}");
            let reason = outside["result"]["_meta"]["epic"]["reason"]
                .as_str()
                .unwrap_or("");
            assert!(
                reason.contains("`src/other.rs` is outside story `cart`"),
                "{reason}"
            );
            let inside = agent
                .ask(
                    "session/request_permission",
                    json!({"sessionId": "s",
                    "toolCall": {"toolCallId": "2", "kind": "edit",
                        "locations": [{"path": "src/cart/mod.rs"}]},
                    "options": options}),
                )
                .await;
            assert_eq!(inside["result"]["outcome"]["optionId"], "ok", "{inside}");
            let refused = agent
                .ask(
                    "fs/write_text_file",
                    json!({"sessionId": "s",
                    "path": root.join(".git/config"), "content": "x"}),
                )
                .await;
            assert_eq!(refused["error"]["code"], REFUSED, "{refused}");
            let written = agent
                .ask(
                    "fs/write_text_file",
                    json!({"sessionId": "s",
                    "path": root.join("src/cart/mod.rs"), "content": "pub struct Cart;\n"}),
                )
                .await;
            assert!(written.get("error").is_none(), "{written}");
            let read = agent
                .ask(
                    "fs/read_text_file",
                    json!({"sessionId": "s",
                    "path": root.join("src/cart/mod.rs")}),
                )
                .await;
            assert_eq!(read["result"]["content"], "pub struct Cart;\n");
            let missing = agent
                .ask(
                    "fs/read_text_file",
                    json!({"sessionId": "s", "path": root.join("src/cart/new.rs")}),
                )
                .await;
            assert_eq!(missing["error"]["code"], -32002, "{missing}");
            agent
                .update(json!({"sessionUpdate": "tool_call", "toolCallId": "3",
                    "title": "Run tests", "kind": "execute", "rawInput": {"command": "cargo test"}}))
                .await;
            agent
                .update(json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "Done."}}))
                .await;
            agent
                .update(
                    json!({"sessionUpdate": "usage_update", "used": 15, "size": 1000,
                    "cost": {"amount": 0.25, "currency": "USD"}}),
                )
                .await;
            agent
                .send(json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {
                    "stopReason": "end_turn",
                    "usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5}}}))
                .await;
            agent
        };
        let (ended, _agent) = tokio::join!(client, agent_side);
        let ended = ended.expect("the turn ends");
        assert_eq!(ended.stop_reason, "end_turn");
        assert_eq!(ended.usage, Some((10, 5)));
        assert_eq!(ended.cost_usd, Some(0.25));
        assert_eq!(
            std::fs::read_to_string(worktree.path().join("src/cart/mod.rs")).expect("written"),
            "pub struct Cart;\n"
        );
        assert!(!worktree.path().join(".git/config").exists());
        let notes = drain(inbox);
        let rejected: Vec<&str> = notes
            .iter()
            .filter_map(|note| match note {
                Note::Rejected { subject, .. } => Some(subject.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(rejected, ["src/other.rs", ".git/config"]);
        assert!(notes.contains(&Note::Tool {
            tool: "execute".into(),
            input: r#"{"command":"cargo test"}"#.into(),
            doing: "Run tests".into(),
        }));
        assert!(notes.contains(&Note::Chunk("Done.".into())));
        // A call asked about and never announced is the turn's activity too.
        assert!(
            notes
                .iter()
                .any(|note| matches!(note, Note::Tool { tool, doing, .. } if tool == "edit" && doing == "Edit")),
            "{notes:?}"
        );
    }

    #[tokio::test]
    async fn a_turn_sets_the_mode_it_is_given_and_offers_reads_only_when_told() {
        let (epic_side, agent_side) = tokio::io::duplex(64 * 1024);
        let (epic_read, epic_write) = tokio::io::split(epic_side);
        let (agent_read, agent_write) = tokio::io::split(agent_side);
        let (notes, _inbox) = mpsc::unbounded_channel();
        let worktree = tempfile::tempdir().expect("a worktree");
        let turn = Turn {
            worktree: worktree.path().canonicalize().expect("a path"),
            story: Arc::new(Story::new("cart", "Cart", ["src/cart"])),
            access: Access::Edit,
            prompt: "Build the cart.".into(),
            offer_reads: false,
            mode: Some("auto".into()),
        };
        let client = run_turn(epic_read, epic_write, turn, notes, CancellationToken::new());
        let mut agent = FakeAgent {
            lines: BufReader::new(agent_read).lines(),
            out: agent_write,
            next: 0,
        };
        let agent_side = async move {
            let init = agent
                .answer(
                    "initialize",
                    json!({"protocolVersion": 1, "authMethods": []}),
                )
                .await;
            let fs = &init["params"]["clientCapabilities"]["fs"];
            assert_eq!(fs["readTextFile"], false, "{init}");
            assert_eq!(fs["writeTextFile"], true, "{init}");
            agent.answer("session/new", json!({"sessionId": "s"})).await;
            let mode = agent.answer("session/set_mode", json!({})).await;
            assert_eq!(mode["params"]["modeId"], "auto", "{mode}");
            let prompt = agent.read().await;
            assert_eq!(prompt["method"], "session/prompt", "{prompt}");
            agent
                .send(json!({"jsonrpc": "2.0", "id": prompt["id"],
                    "result": {"stopReason": "end_turn"}}))
                .await;
        };
        let (ended, ()) = tokio::join!(client, agent_side);
        assert_eq!(ended.expect("the turn ends").stop_reason, "end_turn");
    }

    #[tokio::test]
    async fn told_to_stop_it_sends_session_cancel() {
        let (_worktree, mut agent, client, _noted, stop) = start(Access::ReadOnly);
        let agent_side = async move {
            let prompt = open(&mut agent).await;
            stop.cancel();
            let cancel = agent.read().await;
            assert_eq!(cancel["method"], "session/cancel", "{cancel}");
            assert_eq!(cancel["params"]["sessionId"], "s");
            agent
                .send(json!({"jsonrpc": "2.0", "id": prompt["id"],
                    "result": {"stopReason": "cancelled"}}))
                .await;
            agent
        };
        let (ended, _agent) = tokio::join!(client, agent_side);
        assert_eq!(ended.expect("ends").stop_reason, "cancelled");
    }

    #[tokio::test]
    async fn a_line_that_is_not_json_or_an_error_answer_fails_the_turn() {
        let (_worktree, mut agent, client, _noted, _stop) = start(Access::Edit);
        let agent_side = async move {
            agent.read().await;
            agent.out.write_all(b"{oops\n").await.expect("writes");
            agent
        };
        let (ended, _agent) = tokio::join!(client, agent_side);
        let error = ended.expect_err("broken");
        assert!(
            matches!(&error, AcpError::Broken(line) if line.contains("`{oops`")),
            "{error}"
        );

        let (_worktree, mut agent, client, _noted, _stop) = start(Access::Edit);
        let agent_side = async move {
            agent
                .answer(
                    "initialize",
                    json!({"protocolVersion": 1,
                "authMethods": [{"id": "login", "name": "Log in"}]}),
                )
                .await;
            let new = agent.read().await;
            agent
                .send(json!({"jsonrpc": "2.0", "id": new["id"],
                    "error": {"code": -32000, "message": "Authentication required"}}))
                .await;
            agent
        };
        let (ended, _agent) = tokio::join!(client, agent_side);
        let error = ended.expect_err("not logged in");
        assert!(
            matches!(&error, AcpError::NotLoggedIn { methods, .. } if methods == "login"),
            "{error}"
        );
        assert!(error.to_string().contains("not logged in"), "{error}");
    }
}
