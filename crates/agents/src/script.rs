//! The script seat: deterministic and offline, it applies the file blocks of a story's
//! description. The demo and the tests use it.

use epic_story_plan::path::is_safe;
use serde_json::json;

use crate::role::Role;
use crate::seat::{
    BoxFuture, NOOP_TOKEN, Progress, ProgressFn, Reply, Seat, SeatError, TurnRequest,
};

/// A fenced block of a story's description whose info string is `file <path>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlock {
    /// The path after `file`, as written.
    pub path: String,
    /// The block's lines, each ending with a newline.
    pub content: String,
}

/// The `file <path>` blocks of `markdown`, in order.
///
/// A block is fenced with three or more backticks or tildes (indented at most three spaces) and
/// ends at a fence of the same character at least as long, or at the end of the text. Other
/// fenced blocks are skipped whole, so a `file` fence inside them is not read.
///
/// ````
/// let blocks = epic_agents::file_blocks("Add a greeting.\n\n```file src/hello.txt\nhello\n```\n");
/// assert_eq!(blocks[0].path, "src/hello.txt");
/// assert_eq!(blocks[0].content, "hello\n");
/// ````
pub fn file_blocks(markdown: &str) -> Vec<FileBlock> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some((fence_char, fence_len, info)) = opening_fence(line) else {
            continue;
        };
        let mut content = String::new();
        for line in lines.by_ref() {
            if closes(line, fence_char, fence_len) {
                break;
            }
            content.push_str(line);
            content.push('\n');
        }
        let mut words = info.splitn(2, char::is_whitespace);
        if words.next() == Some("file")
            && let Some(path) = words.next().map(str::trim).filter(|path| !path.is_empty())
        {
            blocks.push(FileBlock {
                path: path.to_owned(),
                content,
            });
        }
    }
    blocks
}

/// The fence character, its length and the info string, if `line` opens a fenced block.
fn opening_fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == fence_char).count();
    if len < 3 {
        return None;
    }
    let info = trimmed[len..].trim();
    if fence_char == '`' && info.contains('`') {
        return None;
    }
    Some((fence_char, len, info))
}

/// Whether `line` closes a block opened by `len` × `fence_char`.
fn closes(line: &str, fence_char: char, len: usize) -> bool {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return false;
    }
    let run = trimmed.chars().take_while(|c| *c == fence_char).count();
    run >= len && trimmed[run..].trim().is_empty()
}

/// The title of the task that writes `path`.
fn task_title(path: &str) -> String {
    format!("write {path}")
}

/// A seat that needs no model: it plans one task per `file <path>` block of the story's
/// description (titled `write <path>`), writes that block's content into the worktree on the
/// coder turn of that task, and finds every change clean as judge or reviewer.
///
/// A task it has nothing to write for (no such block, or the file already holds the content) is
/// answered with `TASK_ALREADY_SATISFIED`. A story without file blocks plans one task, which is
/// then already satisfied.
///
/// ```
/// use epic_agents::{ScriptSeat, Seat};
/// assert_eq!(ScriptSeat.name(), "script");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptSeat;

impl ScriptSeat {
    async fn run_turn(&self, request: &TurnRequest) -> Result<Reply, SeatError> {
        let context = &request.context;
        if context.cancel.is_cancelled() {
            return Err(SeatError::Cancelled);
        }
        let blocks = file_blocks(&context.story.description);
        let text = match request.role {
            Role::Planner => {
                let tasks: Vec<_> = if blocks.is_empty() {
                    vec![json!({
                        "title": context.story.title,
                        "description": "The story has no file blocks: nothing to write.",
                    })]
                } else {
                    blocks
                        .iter()
                        .map(|block| {
                            json!({
                                "title": task_title(&block.path),
                                "description": format!(
                                    "Write `{}` with the content given in the story.",
                                    block.path
                                ),
                            })
                        })
                        .collect()
                };
                json!({ "tasks": tasks }).to_string()
            }
            Role::Judge | Role::Reviewer => json!({"clean": true, "issues": []}).to_string(),
            // It reads nothing, so it cannot refute a claim: the claim stands.
            Role::Verifier => json!({
                "blocked": true,
                "reason": "the script seat runs no model and cannot check the claim",
            })
            .to_string(),
            // It runs no model: it cannot resolve a conflict or fix a gate, and says so.
            Role::Lander => "The script seat runs no model and resolves nothing.".to_owned(),
            Role::Architect => {
                return Err(SeatError::Other(
                    "the script seat runs no model and cannot split an epic into a plan: name \
                     an agent with --architect"
                        .to_owned(),
                ));
            }
            Role::Coder => {
                // A task of one block writes it; the story taken whole as one task (no
                // planner turn) writes them all.
                let block = context
                    .task
                    .as_deref()
                    .and_then(|task| blocks.iter().find(|block| task_title(&block.path) == task));
                let chosen: Vec<&FileBlock> = match block {
                    Some(block) => vec![block],
                    None => blocks.iter().collect(),
                };
                let mut wrote = Vec::new();
                for block in chosen {
                    if !is_safe(&block.path) {
                        return Err(SeatError::Other(format!(
                            "the script seat refuses to write `{}`: not a safe repository path",
                            block.path
                        )));
                    }
                    let path = context.worktree.join(&block.path);
                    if write_block(&path, &block.content).await? {
                        wrote.push(block.path.as_str());
                    }
                }
                if wrote.is_empty() {
                    NOOP_TOKEN.to_owned()
                } else {
                    format!("Wrote {}.", wrote.join(", "))
                }
            }
        };
        Ok(Reply::new(text))
    }
}

impl Seat for ScriptSeat {
    fn name(&self) -> &'static str {
        "script"
    }

    fn turn<'a>(
        &'a self,
        request: &'a TurnRequest,
        progress: ProgressFn<'a>,
    ) -> BoxFuture<'a, Result<Reply, SeatError>> {
        Box::pin(async move {
            let reply = self.run_turn(request).await?;
            progress(Progress::Chunk(&reply.text));
            Ok(reply)
        })
    }
}

/// Writes a file block's `content` to `path` in the story's worktree, creating its directory:
/// the agent's own work, as a coder's would be. Whether anything changed (`false`: the file was
/// already so).
#[expect(
    clippy::disallowed_methods,
    reason = "the script seat is the agent: its writes in the story's worktree are the story's \
              work, not the executor's state"
)]
async fn write_block(path: &std::path::Path, content: &str) -> Result<bool, SeatError> {
    let current = tokio::fs::read(path).await.ok();
    if current.as_deref() == Some(content.as_bytes()) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|error| {
            SeatError::Other(format!(
                "the script seat failed to create `{}`: {error}",
                parent.display()
            ))
        })?;
    }
    tokio::fs::write(path, content).await.map_err(|error| {
        SeatError::Other(format!(
            "the script seat failed to write `{}`: {error}",
            path.display()
        ))
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_file_blocks() {
        let text = "intro\n~~~~ file a/b.txt\nx\n```\nstill inside\n~~~~\n```rust\n```file nope\n```\n````file c.md\n```inner```\n````\n";
        let blocks = file_blocks(text);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(blocks[0].path, "a/b.txt");
        assert_eq!(blocks[0].content, "x\n```\nstill inside\n");
        assert_eq!(blocks[1].path, "c.md");
        assert_eq!(blocks[1].content, "```inner```\n");
    }

    #[test]
    fn an_unclosed_block_runs_to_the_end() {
        let blocks = file_blocks("```file x\nlast");
        assert_eq!(blocks[0].content, "last\n");
    }
}
