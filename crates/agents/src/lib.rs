//! One agent turn through any CLI: the [`Seat`] trait every agent implements, the presets for
//! the agent CLIs ([`Preset`]: Claude Code, Codex, Gemini CLI, aider, opencode) and any shell
//! command ([`CommandSeat`]), their structured output read (`agent_output`) and watched as it
//! streams for what the agent is doing and a call it repeats (`stream`: [`ToolCall`]), a failed turn
//! classified once ([`classify`]: a usage limit, an outage, a login, a transient error, the
//! story's own failure), the seat check before a run ([`check_seats`], [`check_preset`], [`NotReady`]), and the
//! offline [`ScriptSeat`] the demo and the tests use.
//!
//! A seat process runs in the story's worktree, reads its prompt on stdin and replies on stdout;
//! its whole process group dies with the turn (`epic-process`).
//!
//! ```
//! use epic_agents::{CommandSeat, Preset, Role};
//!
//! let preset: Preset = "codex".parse()?;
//! assert!(preset.role_command_line(Role::Judge).contains("--sandbox read-only"));
//! let shell = CommandSeat::shell("my-agent --fast");
//! assert_eq!(shell.command_line(), "sh -c 'my-agent --fast' < prompt");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod acp;
mod agent_output;
pub mod classify;
mod command;
mod preflight;
mod preset;
mod readiness;
mod role;
mod roster;
mod script;
mod seat;
mod shell;
mod stream;
mod tail;

pub use acp::AcpPreset;
pub use command::{CommandSeat, ReplyLimits, RetryPolicy};
pub use preflight::{SeatsNotReady, check_seats};
pub use preset::{Preset, UnknownPreset};
pub use readiness::{NotReady, check_preset};
pub use role::Role;
pub use roster::Roster;
pub use script::{FileBlock, ScriptSeat, file_blocks};
pub use seat::{
    BoxFuture, Exchange, Leftovers, NOOP_TOKEN, Progress, ProgressFn, Reply, Seat, SeatError,
    TurnContext, TurnRequest,
};
pub use shell::shell_quote;
pub use stream::{LOOP_REPEATS, ToolCall};
