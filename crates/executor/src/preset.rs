//! The preset agent CLIs: each one's documented non-interactive mode with edits auto-approved.

use std::fmt;
use std::str::FromStr;

use crate::command::shell_quote;

/// A known agent CLI, run by [`CommandSeat::preset`](crate::CommandSeat::preset).
///
/// | preset | command line | why these flags |
/// | --- | --- | --- |
/// | `claude` | `claude -p --permission-mode acceptEdits < prompt` | `-p` (print) is Claude Code's headless mode; with no prompt argument it takes the prompt from standard input; `acceptEdits` approves file edits without a person |
/// | `codex` | `codex exec --sandbox workspace-write - < prompt` | `exec` is Codex's non-interactive mode and never asks for approvals; `-` reads the prompt from standard input; the `workspace-write` sandbox lets it edit the worktree (`--full-auto` is the older, now deprecated spelling) |
/// | `gemini` | `gemini --yolo --prompt 'Carry out the request above.' < prompt` | `--prompt` is Gemini CLI's headless mode and is appended to standard input, which carries the prompt; `--yolo` approves every action |
/// | `aider` | `aider --yes-always --no-auto-commits --no-gitignore --chat-history-file /dev/null --input-history-file /dev/null --message-file PROMPT_FILE` | `--message-file` sends one message and exits; the file lives outside the worktree; `--yes-always` confirms everything; epic owns git, so no auto-commits and no `.gitignore` edit; history files off so aider leaves no files in the worktree |
/// | `opencode` | `opencode run < prompt` | `run` is opencode's non-interactive mode; it reads a piped standard input as the message and approves edits by default |
///
/// The prompt goes on standard input wherever the CLI takes it there: an argument is limited in
/// size by the OS (128 KiB on Linux), a chat's rendered history is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Claude Code (`claude`).
    Claude,
    /// The Codex CLI (`codex`).
    Codex,
    /// The Gemini CLI (`gemini`).
    Gemini,
    /// Aider.
    Aider,
    /// opencode.
    Opencode,
}

/// How a preset takes its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptVia {
    /// On standard input.
    Stdin,
    /// In a file whose path follows `flag`.
    File {
        /// The flag before the file's path.
        flag: &'static str,
    },
}

impl Preset {
    /// Every preset, in the order the README lists them.
    pub const ALL: [Self; 5] = [
        Self::Claude,
        Self::Codex,
        Self::Gemini,
        Self::Aider,
        Self::Opencode,
    ];

    /// The preset's name, as `--coder NAME` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Aider => "aider",
            Self::Opencode => "opencode",
        }
    }

    /// The program, looked up on `PATH`.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The arguments before the prompt (a file-taking preset's flag and path come after them).
    pub(crate) fn args(self) -> &'static [&'static str] {
        match self {
            Self::Claude => &["-p", "--permission-mode", "acceptEdits"],
            Self::Codex => &["exec", "--sandbox", "workspace-write", "-"],
            Self::Gemini => &["--yolo", "--prompt", "Carry out the request above."],
            Self::Aider => &[
                "--yes-always",
                "--no-auto-commits",
                "--no-gitignore",
                "--chat-history-file",
                "/dev/null",
                "--input-history-file",
                "/dev/null",
            ],
            Self::Opencode => &["run"],
        }
    }

    /// The arguments of an architect's turn (`epic plan`): the CLI's own read-only mode where it
    /// has one, since the architect only reads the repository and replies with a plan. Claude
    /// Code in print mode without `acceptEdits` refuses edits and commands; Codex runs in its
    /// `read-only` sandbox; Gemini CLI without `--yolo` approves no tool that writes; aider in
    /// `ask` mode never edits; opencode's `plan` agent denies edits.
    pub(crate) fn architect_args(self) -> &'static [&'static str] {
        match self {
            Self::Claude => &["-p"],
            Self::Codex => &["exec", "--sandbox", "read-only", "-"],
            Self::Gemini => &["--prompt", "Carry out the request above."],
            Self::Aider => &[
                "--chat-mode",
                "ask",
                "--yes-always",
                "--no-auto-commits",
                "--no-gitignore",
                "--chat-history-file",
                "/dev/null",
                "--input-history-file",
                "/dev/null",
            ],
            Self::Opencode => &["run", "--agent", "plan"],
        }
    }

    /// How it takes the prompt.
    pub(crate) fn prompt_via(self) -> PromptVia {
        match self {
            Self::Aider => PromptVia::File {
                flag: "--message-file",
            },
            _ => PromptVia::Stdin,
        }
    }

    /// The exact command line, as the README lists it: `< prompt` for standard input,
    /// `PROMPT_FILE` for the prompt's file.
    ///
    /// ```
    /// use epic_executor::Preset;
    ///
    /// assert_eq!(Preset::Claude.command_line(), "claude -p --permission-mode acceptEdits < prompt");
    /// assert_eq!(Preset::Opencode.command_line(), "opencode run < prompt");
    /// assert!(Preset::Aider.command_line().ends_with("--message-file PROMPT_FILE"));
    /// ```
    pub fn command_line(self) -> String {
        let mut words = vec![self.program().to_owned()];
        words.extend(self.args().iter().map(|arg| shell_quote(arg)));
        match self.prompt_via() {
            PromptVia::Stdin => words.push("< prompt".to_owned()),
            PromptVia::File { flag } => {
                words.push(flag.to_owned());
                words.push("PROMPT_FILE".to_owned());
            }
        }
        words.join(" ")
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Preset`] from a name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a preset (claude, codex, gemini, aider, opencode)")]
pub struct UnknownPreset {
    /// The name given.
    pub name: String,
}

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|preset| preset.name() == name)
            .ok_or_else(|| UnknownPreset { name: name.into() })
    }
}
