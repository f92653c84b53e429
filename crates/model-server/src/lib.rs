//! A scripted model server on loopback, for the tests that run the real agent CLIs: it speaks
//! Anthropic Messages (`POST /v1/messages`), OpenAI Responses (`POST /v1/responses`) and Gemini
//! (`POST /v1beta/models/M:streamGenerateContent?alt=sse` and `:generateContent`) far enough
//! for Claude Code, Codex, Gemini CLI, opencode and aider, streaming server-sent events as each
//! API does.
//!
//! What it answers is scripted per case by a few [`Step`]s (a steps file of JSON lines, see
//! [`Script::parse`]), each for a kind of request it recognises from the words of epic's
//! prompts ([`Kind`]: a planner's, a judge's, a reviewer's, a coder's, `epic plan`'s
//! architect's, `epic land`'s lander's, a verifier's): one task planned, a plan of two stories,
//! a `BLOCKED_ON:` claim rejected, these files written with the CLI's own tool (chosen from the tools the request offers: Claude
//! Code's `Write` or `Bash`, Codex's `exec_command` or `shell`, Gemini CLI's `write_file` or
//! `run_shell_command`, opencode's `write` or `bash`; for aider, which offers none, whole files
//! in its "file listing" edit format), a clean verdict, a 429 with the API's own limit body and
//! headers, 529, 500, 401 (a key refused), a 429 in the API's usage-limit form with a reset hours away, a stream cut
//! half way, a stream gone silent, the same tool call again and again; a step may answer one API
//! only (one CLI of a roster failed, another served), one API key (one account of a CLI), or
//! the requests whose prompt holds some words (the turn a person's answer reached).
//! Every request is logged (method, path, size, the tools offered, the kind recognised, the key,
//! the answer, epic's note to a request asked again, a person's answer to a `BLOCKED_ON:`
//! question) as a JSON line, so a test can assert what the CLI sent.
//!
//! The binary `epic-model-server` serves one case: `epic-model-server --steps FILE --log FILE
//! [--port-file FILE]` prints `127.0.0.1:PORT` on its first line and serves until killed.
//!
//! ```
//! use epic_model_server::{Config, Script, Server};
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let script = Script::parse(r#"{"when": "code", "do": "status", "status": 429}"#)?;
//! let server = Server::start(Config { script, log: None }).await?;
//! assert!(server.addr().ip().is_loopback());
//! assert!(server.requests().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod reply;
mod request;
mod script;
mod server;

pub use reply::{REPEATED, file_blocks};
pub use request::Api;
pub use script::{Action, EPIC_PLAN, Kind, NOT_BLOCKED, Script, ScriptError, Step, When};
pub use server::{Config, Server};
