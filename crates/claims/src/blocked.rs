//! A coder's `BLOCKED_ON:` claim, checked before it ends a story: first against the plan
//! ([`rebuttal`]: the story's own paths, a merged dependency's, a dependent's), then, when the
//! plan cannot settle it and a verifier seat is set (`--verifier`), by that seat in a read-only
//! turn ([`Role::Verifier`]). A rejected claim earns the coder one pushback turn
//! ([`pushback`]); a claim that stands fails the story as a missing dependency.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use epic_perimeter::{owner_of, paths_named_in};
use epic_story_plan::{Story, StoryPlan};

use epic_agents::Roster;
use epic_agents::{Reply, Role, SeatError};
use epic_chat::{Chat, ChatContext, Recorder};
use epic_events::{Event, RejectedBy};
use epic_protocol::prompts;
use epic_protocol::replies::{blocked_on, parse_blocked_answer};

/// How a claim was settled ([`settle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Settled {
    /// The claim is wrong: the coder is told why and carries on.
    Rejected {
        /// Who said so.
        by: RejectedBy,
        /// What the coder is told.
        rebuttal: String,
    },
    /// The claim stands: the story fails as a missing dependency.
    Stands {
        /// The verifier's reason, when a verifier confirmed the claim.
        verifier: Option<String>,
    },
}

/// What the plan says against the claim that story `story` is blocked on `need`, or `None`
/// when it cannot settle it.
///
/// Each path the need names ([`paths_named_in`], matched against the owned paths as the
/// perimeter matches them), in order, then each story id it names (see [`ids_named_in`]), is
/// looked up: the first that is the story's own, a dependency's (transitively: every one merged
/// before the story started) or a dependent's (transitively: those run after it) gives the
/// answer. A path of a story running alongside, or of none, settles nothing.
fn rebuttal(plan: &StoryPlan, story: &Story, need: &str) -> Option<String> {
    let dependencies = prompts::reachable(plan, &story.id, true);
    let dependents = prompts::reachable(plan, &story.id, false);
    let paths_of = |story: &Story| {
        if story.owned.is_empty() {
            "none".to_owned()
        } else {
            story.owned.join(", ")
        }
    };
    // What the plan says about `owner`'s work, named by `path` (else by its id).
    let about = |owner: &Story, path: Option<&str>| -> Option<String> {
        let theirs = |relation: &str| match path {
            Some(path) => format!(
                "`{path}` belongs to story '{}' (\"{}\"), {relation}",
                owner.id, owner.title
            ),
            None => format!("Story '{}' (\"{}\") is {relation}", owner.id, owner.title),
        };
        if owner.id == story.id {
            Some(match path {
                Some(path) => format!(
                    "`{path}` is under your own owned paths ({}): building it is your job, not \
                     another story's.",
                    paths_of(story)
                ),
                None => format!(
                    "'{}' is this story itself: building what it needs is your job, inside your \
                     owned paths ({}), not another story's.",
                    story.id,
                    paths_of(story)
                ),
            })
        } else if dependencies.contains(&owner.id) {
            let provides = if owner.provides.is_empty() {
                "(nothing listed)".to_owned()
            } else {
                owner.provides.join("; ")
            };
            Some(format!(
                "{} it was merged into the epic branch before you started, so its work is \
                 already in your working tree: read it there (its paths: {}). That story \
                 provides: {provides}.",
                theirs("a dependency of this story:"),
                paths_of(owner)
            ))
        } else if dependents.contains(&owner.id) {
            Some(format!(
                "{} building on your work: it is theirs to build on top of this one. Leave it \
                 alone: it is neither missing nor a blocker for this story.",
                theirs("a story that depends on this one and runs AFTER it,")
            ))
        } else {
            None
        }
    };
    let by_path = paths_named_in(plan, need).into_iter().find_map(|path| {
        let owner = owner_of(plan, &path)?;
        about(owner, Some(&path))
    });
    by_path.or_else(|| {
        ids_named_in(plan, need)
            .into_iter()
            .find_map(|id| about(plan.story(&id)?, None))
    })
}

/// The ids of the plan's stories that `text` names, in first-seen order: a word (letters,
/// digits, `-`, `_`) equal to an id counts when the id has a `-` (kebab-case names are no
/// common words), the word before it is `story` or `stories`, or it is quoted (`'id'`, `"id"`,
/// `` `id` ``). So "from story api" and "`cart-api`" name stories, "a database" does not name a
/// story `a`.
fn ids_named_in(plan: &StoryPlan, text: &str) -> Vec<String> {
    let ids: BTreeSet<&str> = plan.stories.iter().map(|story| story.id.as_str()).collect();
    let mut named: Vec<String> = Vec::new();
    let mut previous = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_alphanumeric() || c == '-' || c == '_')
            .unwrap_or(rest.len());
        let before = rest[..start].chars().last();
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(tail.len());
        let word = &tail[..end];
        let after = tail[end..].chars().next();
        rest = &tail[end..];
        if word.is_empty() {
            break;
        }
        // A word inside a path (`src/cart-api/x`) is a path's, not an id.
        let in_path = matches!(before, Some('/' | '.')) || matches!(after, Some('/'));
        let quoted = matches!(before, Some('\'' | '"' | '`')) && before == after;
        let after_story = previous == "story" || previous == "stories";
        if !in_path
            && ids.contains(word)
            && (word.contains('-') || quoted || after_story)
            && !named.iter().any(|id| id == word)
        {
            named.push(word.to_owned());
        }
        previous = word.to_lowercase();
    }
    named
}

/// Settles the claim that story `story` of `plan` is blocked on `need`: the plan first
/// ([`rebuttal`]); then `verifier`, if any, in a read-only turn in `context` (recorded by
/// `recorder`). A verifier that fails, or whose reply cannot be read, lets the claim stand (a
/// note says so). Fails only when the verifier turn was cancelled or changed files epic guards.
async fn settle(
    plan: &StoryPlan,
    story: &Arc<Story>,
    need: &str,
    verifier: Option<&Roster>,
    context: ChatContext,
    recorder: &Arc<Recorder>,
) -> Result<Settled, SeatError> {
    if let Some(rebuttal) = rebuttal(plan, story, need) {
        return Ok(Settled::Rejected {
            by: RejectedBy::Plan,
            rebuttal,
        });
    }
    let Some(verifier) = verifier else {
        return Ok(Settled::Stands { verifier: None });
    };
    let mut chat = Chat::new(
        verifier.clone(),
        Role::Verifier,
        verifier_rules(),
        context,
        Arc::clone(recorder),
    );
    let reply = match chat.ask(verifier_request(plan, story, need)).await {
        Ok(reply) => reply,
        Err(error @ (SeatError::Cancelled | SeatError::GuardedFiles(_))) => return Err(error),
        Err(error) => {
            recorder.note(format!(
                "the verifier failed ({error}); the BLOCKED_ON claim stands"
            ));
            return Ok(Settled::Stands { verifier: None });
        }
    };
    Ok(match parse_blocked_answer(&reply.text) {
        Some(answer) if !answer.blocked => {
            let reason = answer.reason.trim();
            Settled::Rejected {
                by: RejectedBy::Verifier,
                rebuttal: if reason.is_empty() {
                    "The verifier found that what you need is not missing.".to_owned()
                } else {
                    reason.to_owned()
                },
            }
        }
        Some(answer) => {
            let reason = answer.reason.trim();
            Settled::Stands {
                verifier: Some(if reason.is_empty() {
                    "the verifier confirmed the need is missing".to_owned()
                } else {
                    reason.to_owned()
                }),
            }
        }
        None => {
            recorder.note(
                "the verifier's reply could not be read as {\"blocked\":bool,\"reason\":\"…\"}; \
                 the BLOCKED_ON claim stands",
            );
            Settled::Stands { verifier: None }
        }
    })
}

/// What checking a coder's reply for a claim needs ([`checked`]).
#[expect(
    missing_debug_implementations,
    reason = "borrows the story's chat context and recorder for one check"
)]
pub struct Claim<'a> {
    /// The plan.
    pub plan: &'a StoryPlan,
    /// The coder's story.
    pub story: &'a Arc<Story>,
    /// The coder's task, for the error of a failed turn.
    pub task: Option<&'a str>,
    /// The verifier seat, if any.
    pub verifier: Option<&'a Roster>,
    /// Where the verifier's turn runs: the story's worktree.
    pub context: ChatContext,
    /// The story's recorder: the verifier's turn, the events and notes.
    pub recorder: &'a Arc<Recorder>,
    /// Whether the story's one pushback turn was used; set when it is.
    pub pushed_back: &'a AtomicBool,
}

/// Why a claim ended a story's turn: it stands, or a turn that settled it failed.
#[derive(Debug)]
pub enum ClaimError {
    /// The claim stands: the story needs what the coder named.
    Blocked {
        /// The story.
        story: String,
        /// What it needs, in the coder's words.
        need: String,
        /// The verifier's reason, when a verifier (`--verifier`) confirmed the claim.
        verifier: Option<String>,
    },
    /// The turn was cancelled.
    Cancelled,
    /// A turn that settled the claim (the verifier's, the coder's pushback) failed.
    Agent {
        /// Whose turn.
        role: Role,
        /// The task, for the coder's.
        task: Option<String>,
        /// Why.
        source: SeatError,
    },
}

/// The coder's `reply` in `chat`, checked for a `BLOCKED_ON:` claim: without one, the reply. A
/// claim is recorded ([`Event::Blocked`]) and settled (`settle`): rejected, with the story's one
/// pushback unused, the coder is told why in `chat` ([`Event::BlockedRejected`],
/// `pushback`) and its answer is the reply; a claim that stands, a claim after the pushback,
/// or a second claim in answer to it, is [`ClaimError::Blocked`].
pub async fn checked(claim: Claim<'_>, chat: &mut Chat, reply: Reply) -> Result<Reply, ClaimError> {
    let Some(need) = blocked_on(&reply.text) else {
        return Ok(reply);
    };
    let story = &claim.story.id;
    let record = |need: &str| {
        claim.recorder.emit(Event::Blocked {
            story: story.clone(),
            need: need.to_owned(),
        });
    };
    let blocked = |need: String, verifier: Option<String>| ClaimError::Blocked {
        story: story.clone(),
        need,
        verifier,
    };
    let failed = |role: Role, task: Option<&str>, source: SeatError| match source {
        SeatError::Cancelled => ClaimError::Cancelled,
        source => ClaimError::Agent {
            role,
            task: task.map(str::to_owned),
            source,
        },
    };
    record(&need);
    if claim.pushed_back.load(Ordering::Relaxed) {
        return Err(blocked(need, None));
    }
    let settled = settle(
        claim.plan,
        claim.story,
        &need,
        claim.verifier,
        claim.context,
        claim.recorder,
    )
    .await
    .map_err(|source| failed(Role::Verifier, None, source))?;
    let (by, rebuttal) = match settled {
        Settled::Rejected { by, rebuttal } => (by, rebuttal),
        Settled::Stands { verifier } => return Err(blocked(need, verifier)),
    };
    claim.pushed_back.store(true, Ordering::Relaxed);
    claim.recorder.emit(Event::BlockedRejected {
        story: story.clone(),
        need: need.clone(),
        by,
        reason: rebuttal.clone(),
    });
    let reply = chat
        .ask(pushback(&need, by, &rebuttal))
        .await
        .map_err(|source| failed(Role::Coder, claim.task, source))?;
    match blocked_on(&reply.text) {
        Some(again) => {
            record(&again);
            Err(blocked(again, None))
        }
        None => Ok(reply),
    }
}

/// The coder's one pushback turn after its claim `need` was rejected by `by` with `rebuttal`.
fn pushback(need: &str, by: RejectedBy, rebuttal: &str) -> String {
    let checked = match by {
        RejectedBy::Plan => "That claim was checked against the epic's plan and rejected:",
        RejectedBy::Verifier => {
            "That claim was checked by a verifier, who found that what you need is not missing:"
        }
    };
    format!(
        "You stopped with \"BLOCKED_ON: {need}\".\n{checked}\n{rebuttal}\n\n\
         It is not a missing dependency. Carry on with the work inside your owned paths until it \
         is complete, then stop. Use BLOCKED_ON: only for work another story owns that is absent \
         from your working tree: a second BLOCKED_ON fails the story.\n"
    )
}

/// The verifier's standing instructions.
fn verifier_rules() -> String {
    "You check a claim made by a coding agent working on one story of a larger epic. Your \
     working directory is that story's worktree: read any file in it, but do not change any \
     file and do not commit."
        .to_owned()
}

/// The verifier's request: the claim, the story, and what the plan says around it.
fn verifier_request(plan: &StoryPlan, story: &Story, need: &str) -> String {
    let dependencies = prompts::reachable(plan, &story.id, true);
    let dependents = prompts::reachable(plan, &story.id, false);
    let mut out = format!(
        "The coder of story '{}' (\"{}\") stopped with:\n\nBLOCKED_ON: {need}\n\nIt claims the \
         story needs something that is not in its working tree and is not its own to build. \
         Decide whether that is true: look for what it needs in the working directory, and read \
         what the plan says below.\n\n# The story\n\n{}\nPaths it owns (its own to build): {}\n",
        story.id,
        story.title,
        prompts::story_prompt(story),
        list(&story.owned)
    );
    if !story.shared_read_only.is_empty() {
        let _ = writeln!(
            out,
            "Paths it reads but never changes: {}",
            list(&story.shared_read_only)
        );
    }
    let mut section = |title: &str, ids: &BTreeSet<String>| {
        let stories: Vec<&Story> = plan
            .stories
            .iter()
            .filter(|other| ids.contains(&other.id))
            .collect();
        if stories.is_empty() {
            return;
        }
        let _ = write!(out, "\n# {title}\n\n");
        for other in stories {
            let _ = write!(
                out,
                "- '{}' (\"{}\"): owns {}",
                other.id,
                other.title,
                list(&other.owned)
            );
            if !other.provides.is_empty() {
                let _ = write!(out, "; provides {}", other.provides.join("; "));
            }
            out.push('\n');
        }
    };
    section(
        "Its dependencies (merged into the epic branch before it started: their work is in the \
         working directory)",
        &dependencies,
    );
    section(
        "Stories that depend on it (they run after it and build on it)",
        &dependents,
    );
    let others: BTreeSet<String> = plan
        .stories
        .iter()
        .map(|other| other.id.clone())
        .filter(|id| *id != story.id && !dependencies.contains(id) && !dependents.contains(id))
        .collect();
    section(
        "Other stories (running alongside it: their work may not be there yet)",
        &others,
    );
    let named = paths_named_in(plan, need);
    if !named.is_empty() {
        out.push_str("\n# Paths the claim names\n\n");
        for path in named {
            match owner_of(plan, &path) {
                Some(owner) => {
                    let _ = writeln!(out, "- {path}: owned by story '{}'", owner.id);
                }
                None => {
                    let _ = writeln!(out, "- {path}: owned by no story");
                }
            }
        }
    }
    out.push_str(
        "\nAnswer \"blocked\": true only when the need is truly missing: nothing in the working \
         directory provides it, it is not the story's own to build, and no dependency provides \
         it. Otherwise answer false and say in \"reason\" what the coder should use or do \
         instead; the coder is told that reason.\n\nReply with only this JSON, bare or in one \
         fenced block:\n{\"blocked\":true|false,\"reason\":\"…\"}\n",
    );
    out
}

/// Paths joined with `, `, or `none`.
fn list(paths: &[String]) -> String {
    if paths.is_empty() {
        "none".to_owned()
    } else {
        paths.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's diamond, with paths: a, b; c after a; d after b and c.
    fn diamond() -> StoryPlan {
        let story = |id: &str, deps: &[&str]| {
            let mut story = Story::new(id, format!("Story {id}"), [format!("src/features/{id}")])
                .depending_on(deps.iter().copied());
            story.provides = vec![format!("{id}::Api")];
            story
        };
        StoryPlan {
            epic_id: "diamond".into(),
            epic: String::new(),
            stories: vec![
                story("a", &[]),
                story("b", &[]),
                story("c", &["a"]),
                story("d", &["b", "c"]),
                story("cart-api", &[]),
            ],
        }
    }

    #[test]
    fn the_plan_settles_own_dependency_and_dependent_paths_only() {
        let plan = diamond();
        let c = plan.story("c").unwrap().clone();
        let own = rebuttal(&plan, &c, "src/features/c/x.ts").unwrap();
        assert!(
            own.starts_with("`src/features/c/x.ts` is under your own owned paths"),
            "{own}"
        );
        let dependency = rebuttal(&plan, &c, "the export in src/features/a/index.ts").unwrap();
        assert!(
            dependency.contains("merged into the epic branch before you started")
                && dependency.contains("belongs to story 'a' (\"Story a\")")
                && dependency.contains("That story provides: a::Api."),
            "{dependency}"
        );
        let dependent = rebuttal(&plan, &c, "wiring in src/features/d").unwrap();
        assert!(dependent.contains("runs AFTER"), "{dependent}");
        // A story running alongside, and a path of no story, settle nothing.
        assert_eq!(rebuttal(&plan, &c, "src/features/b/x.ts"), None);
        assert_eq!(
            rebuttal(&plan, &c, "src/features/conta/ContoScreen.tsx"),
            None
        );
        // The first path that settles it wins, after those that do not.
        let mixed = rebuttal(&plan, &c, "src/features/b/x.ts and src/features/a/y.ts").unwrap();
        assert!(mixed.contains("story 'a'"), "{mixed}");
    }

    #[test]
    fn the_plan_settles_a_named_story_id() {
        let plan = diamond();
        let d = plan.story("d").unwrap().clone();
        let named = rebuttal(&plan, &d, "the API from story a").unwrap();
        assert!(
            named.starts_with("Story 'a' (\"Story a\") is a dependency"),
            "{named}"
        );
        assert!(named.contains("merged into the epic branch"), "{named}");
        assert_eq!(ids_named_in(&plan, "a database"), Vec::<String>::new());
        assert_eq!(
            ids_named_in(&plan, "`c` and 'b' and cart-api"),
            ["c", "b", "cart-api"]
        );
        assert_eq!(
            ids_named_in(&plan, "src/cart-api/x.ts"),
            Vec::<String>::new()
        );
        // `cart-api` runs alongside `d`: nothing to settle.
        assert_eq!(rebuttal(&plan, &d, "cart-api's client"), None);
    }

    #[test]
    fn the_pushback_quotes_the_claim_and_the_rebuttal() {
        let text = pushback("src/a.rs", RejectedBy::Verifier, "It is in src/b.rs.");
        assert!(text.starts_with(
            "You stopped with \"BLOCKED_ON: src/a.rs\".\nThat claim was checked by a verifier"
        ));
        assert!(text.contains("It is in src/b.rs.\n\nIt is not a missing dependency."));
    }

    #[test]
    fn the_verifier_sees_the_claim_the_story_and_the_plan_around_it() {
        let plan = diamond();
        let c = plan.story("c").unwrap().clone();
        let request = verifier_request(&plan, &c, "src/features/zz/q.ts");
        for part in [
            "BLOCKED_ON: src/features/zz/q.ts",
            "Story: Story c",
            "Paths it owns (its own to build): src/features/c",
            "- 'a' (\"Story a\"): owns src/features/a; provides a::Api",
            "- 'd' (\"Story d\"): owns src/features/d",
            "- src/features/zz/q.ts: owned by no story",
            "{\"blocked\":true|false,\"reason\":\"…\"}",
        ] {
            assert!(request.contains(part), "{part} in {request}");
        }
    }
}
