//! What the executor reports as it works: typed [`Event`]s, sent to an [`EventSink`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use epic_agents::Role;

/// One step of a story's work, as the live view shows it and `events.jsonl` records it.
///
/// Serialised with a `snake_case` `kind` tag: `{"kind":"task_committed","story":"a",…}`. The
/// writer of `events.jsonl` adds the `"at"` timestamp (RFC 3339, to the millisecond). The
/// scheduler adds its own kinds, hence `#[non_exhaustive]`.
///
/// ```
/// use epic_events::Event;
///
/// let event = Event::TaskCommitted {
///     story: "cart-api".into(),
///     task: "Add the model".into(),
///     commit: Some("e69de29b".into()),
/// };
/// let json = serde_json::to_string(&event)?;
/// assert!(json.starts_with(r#"{"kind":"task_committed","story":"cart-api""#));
/// assert_eq!(serde_json::from_str::<Event>(&json)?, event);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// An agent turn began.
    TurnStarted {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The seat's name.
        seat: String,
        /// The turn's number within the story (its transcript file's number).
        turn: u32,
        /// The task, for coder turns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    /// A piece of a turn's output, as it streams (high volume: a log may skip these).
    TurnOutput {
        /// The story.
        story: String,
        /// The turn's number.
        turn: u32,
        /// The text.
        text: String,
    },
    /// A turn's attempt failed with a transient error and is tried again.
    TurnRetried {
        /// The story.
        story: String,
        /// The turn's number.
        turn: u32,
        /// The attempt that failed, from 1.
        attempt: u32,
        /// Milliseconds until the next attempt.
        delay_ms: u64,
        /// The end of the failed attempt's output.
        reason: String,
    },
    /// A turn's agent reported a tool call in its stream (a preset that streams: Claude Code,
    /// Codex, Gemini CLI): what it is doing now, for the live view and `epic status`.
    TurnActivity {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The turn's number.
        turn: u32,
        /// The tool, as the agent names it (`Bash`, `command_execution`, `run_shell_command`).
        tool: String,
        /// What it does, in a few words: ``running `cargo test` ``, `editing src/lib.rs`.
        doing: String,
    },
    /// A turn printed nothing, on standard output or standard error, for `--stall-timeout`:
    /// its process group was killed (as at a deadline). The first stall of a request runs it
    /// again (`again`); a second fails the story.
    TurnStalled {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The seat's name.
        seat: String,
        /// The turn's number.
        turn: u32,
        /// How long it printed nothing, in seconds.
        silent_secs: u64,
        /// Whether the request runs again (the first stall) or fails the story (the second).
        again: bool,
    },
    /// A turn's stream showed the same tool call (same tool, same input) five times in a row:
    /// its process group was killed. The first loop of a request runs it again with a note that
    /// names the repeated call (`again`); a second fails the story.
    TurnLooping {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The seat's name.
        seat: String,
        /// The turn's number.
        turn: u32,
        /// The tool it repeated.
        tool: String,
        /// The input it repeated, as JSON (cut at 2000 characters).
        input: String,
        /// How many times in a row.
        times: u32,
        /// Whether the request runs again (the first loop) or fails the story (the second).
        again: bool,
    },
    /// epic rejected what an ACP agent asked during a turn (`acp:` seats): an edit outside the
    /// story's owned paths, of `.git`, any edit or writing command in a read-only turn
    /// (planner, judge, reviewer, architect, verifier), a file write or read outside what the
    /// turn may touch. Nothing was done; the agent was told `reason`. The perimeter check after
    /// the turn still proves what the turn changed.
    PermissionRejected {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The seat's name.
        seat: String,
        /// The turn's number.
        turn: u32,
        /// What was asked: the path, the command, the call's title.
        subject: String,
        /// Why it was rejected, as the agent was told.
        reason: String,
    },
    /// An agent turn ended.
    TurnEnded {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The turn's number.
        turn: u32,
        /// Whether it ended normally.
        ok: bool,
        /// Tokens of the turn (prompt and reply): the agent's own figure when `reported`, else
        /// an estimate from characters (the name stays for readers of older logs).
        estimated_tokens: u64,
        /// Whether the agent reported the turn's usage itself (a preset's structured output).
        #[serde(default)]
        reported: bool,
        /// Why it failed, when it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A seat hit a usage limit or an outage: no turn starts on it until `until`, then the
    /// turn that met it runs again (the story does not fail). A later limit on the same seat
    /// may extend the pause (a new event).
    SeatPaused {
        /// The seat's name.
        seat: String,
        /// The story whose turn met it.
        story: String,
        /// When turns on the seat start again (RFC 3339, UTC): the limit's reset, or an outage's
        /// next probe.
        until: String,
        /// When the pause began (RFC 3339, UTC): for an outage, since when the service is
        /// unreachable.
        #[serde(default)]
        since: String,
        /// `usage limit` or `outage`.
        reason: String,
        /// What the agent said (its first line).
        message: String,
    },
    /// A turn on a paused seat succeeded after its pause: the seat is no longer paused.
    SeatResumed {
        /// The seat's name.
        seat: String,
    },
    /// The story's tasks are known: planned now, or read from the checkpoint.
    TasksPlanned {
        /// The story.
        story: String,
        /// The task titles, in order.
        tasks: Vec<String>,
        /// How many of them were already done (resumed from the checkpoint).
        done: usize,
        /// Whether they came from an existing checkpoint rather than the planner.
        resumed: bool,
        /// Whether a planner turn planned them; `false` on a resume, and for a small story
        /// taken whole as one task (`--planner auto`).
        #[serde(default)]
        planner: bool,
    },
    /// A task began.
    TaskStarted {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// Its position, from 1.
        index: usize,
        /// How many tasks the plan has.
        of: usize,
    },
    /// A task's work was committed on the story branch and ticked in the checkpoint.
    TaskCommitted {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// The commit, or `None` when the agent had committed the work itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
    },
    /// A task changed nothing and the coder confirmed it was already satisfied; ticked without
    /// a commit.
    TaskNoop {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
    },
    /// A warning: a task whose coder changed nothing, even when asked, and did not confirm it
    /// was already satisfied, was ticked without a commit because its gates are green and the
    /// no-op policy is `complete` (`--noop`).
    TaskNoopUnconfirmed {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
    },
    /// One review round of a task: gates and perimeter, then reviewers if those were green.
    ReviewRound {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// The round, from 1.
        round: u32,
        /// Whether the round was clean.
        clean: bool,
        /// How many issues it found.
        issues: usize,
        /// The round's summary (`gate failed: cargo test`, `perimeter: violated`, …).
        summary: String,
    },
    /// A gate command passed.
    GatePassed {
        /// The story.
        story: String,
        /// The command.
        command: String,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// A gate command failed (non-zero exit, deadline, or could not start).
    GateFailed {
        /// The story.
        story: String,
        /// The command.
        command: String,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// What happened, in words (`exit code 1`, `timed out after 30s`).
        status: String,
    },
    /// A gate command was red, then green when run again on the same tree (`--gate-reruns`): it
    /// counts as passed (the story is not charged), and this keeps its first red run. Emitted
    /// beside its `gate_passed` or `epic_gate`, in a story's worktree, on the epic head after a
    /// merge, at the baseline and in landing.
    GateFlaky {
        /// The story in whose worktree, or after whose merge, it ran; absent at the baseline and
        /// in landing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        /// The command.
        command: String,
        /// How many runs it took to pass, the first included.
        runs: u32,
        /// How its first run ended, in words (`exit code 1`, `timed out after 30s`).
        status: String,
        /// The end of its first run's output (at most 4000 bytes).
        output: String,
    },
    /// A red gate command named its failing tests (in its output, or in the JUnit file
    /// `gate_junit` names for it): those the story turned red (`charged`) and those already
    /// red on the epic head before it, or on the baseline (`inherited`: never a reason to fail
    /// or undo a story). With none charged, the command counted as passed. Emitted beside its
    /// `gate_passed`, `gate_failed` or `epic_gate`, in a story's worktree, on the epic head
    /// after a merge and at the baseline.
    GateTests {
        /// The story in whose worktree, or after whose merge, it ran; absent at the baseline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        /// The command.
        command: String,
        /// The failing tests that were not red before, sorted.
        charged: Vec<String>,
        /// The failing tests already red before, sorted.
        inherited: Vec<String>,
    },
    /// A gate or setup command left files behind (untracked, not ignored, not there before it
    /// ran), and epic removed them: they are not the story's work. Adding them to
    /// `.gitignore` keeps them.
    GateLeftovers {
        /// The story in whose worktree it ran; absent on the epic worktree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        /// The command.
        command: String,
        /// The files removed, sorted.
        paths: Vec<String>,
    },
    /// The coder ended a reply with `BLOCKED_ON: <need>`: the story stops.
    Blocked {
        /// The story.
        story: String,
        /// What it needs.
        need: String,
    },
    /// A `BLOCKED_ON:` claim was checked and rejected, by the plan or by the verifier: the coder
    /// gets one pushback turn with `reason` (a second claim fails the story).
    BlockedRejected {
        /// The story.
        story: String,
        /// What the coder said it needs.
        need: String,
        /// Who rejected it.
        by: RejectedBy,
        /// What the coder is told.
        reason: String,
    },
    /// Something worth telling that is not one of the steps above (a re-plan, a fallback, a
    /// transcript that could not be written).
    Note {
        /// The story.
        story: String,
        /// The message.
        message: String,
    },

    // --- the run and its stories (the scheduler and the story lifecycle) -------------------
    /// A run began: the lock is held, the epic worktree is ready and clean.
    RunStarted {
        /// The epic.
        epic: String,
        /// The epic branch.
        epic_branch: String,
        /// The epic branch's worktree (`<repo>.worktrees/<epic>/_epic`).
        epic_worktree: String,
        /// How many stories the plan has.
        stories: usize,
        /// How many run at once.
        concurrency: usize,
        /// Every seat of every role's roster, each once, in role order (coder, judge,
        /// reviewers, verifier): what `epic status` shows the state of.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        seats: Vec<String>,
    },
    /// The gates' verdict on the epic head before any story (the baseline).
    BaselineChecked {
        /// The epic head they ran on.
        commit: String,
        /// The commands that passed.
        passed: Vec<String>,
        /// The commands that failed.
        failed: Vec<String>,
        /// Whether the verdict came from the cache (`gates/baseline.json`) without running them.
        cached: bool,
    },
    /// A gate command ran on the epic worktree: for the baseline (`story` absent) or after
    /// merging `story`.
    EpicGate {
        /// The story just merged, absent for the baseline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        /// The command.
        command: String,
        /// Whether it passed.
        passed: bool,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// What happened, in words.
        status: String,
    },
    /// A story was merged by an earlier run and its plan entry is unchanged: nothing to do.
    StoryAlreadyMerged {
        /// The story.
        story: String,
        /// Its branch.
        branch: String,
    },
    /// A story was launched in a concurrency slot.
    StoryStarted {
        /// The story.
        story: String,
        /// The slot (`EPIC_SLOT`), 0 to concurrency - 1.
        slot: usize,
    },
    /// A story's worktree and branch are ready.
    StoryPrepared {
        /// The story.
        story: String,
        /// The story branch.
        branch: String,
        /// The story's worktree.
        worktree: String,
        /// How: `fresh` (new branch), `resumed` (its branch from an earlier run), `restarted`
        /// (its plan entry changed: the old branch was deleted and a new one cut).
        how: String,
    },
    /// A story's slot worktree (`--worktrees warm`) was switched to its branch and proven clean:
    /// no tracked change, no untracked file that is not ignored, no merge or rebase in progress,
    /// the head on the branch at `commit`.
    SlotSwitched {
        /// The story.
        story: String,
        /// The slot (`EPIC_SLOT`).
        slot: usize,
        /// The slot's worktree.
        worktree: String,
        /// The commit the story starts from.
        commit: String,
    },
    /// A story's slot worktree was taken out of the rotation, moved to the story's own place
    /// (it failed, was interrupted, or merged with `--keep-worktrees`); a new slot worktree takes
    /// its place.
    SlotRetired {
        /// The story.
        story: String,
        /// The slot worktree it was.
        slot: String,
        /// Where it is now.
        worktree: String,
    },
    /// Ignored files `.worktreeinclude` names were copied from the main checkout into a story's
    /// new or switched worktree.
    WorktreeSeeded {
        /// The story.
        story: String,
        /// The files copied, repository-relative.
        paths: Vec<String>,
    },
    /// The epic branch was merged into a story branch (the epic side winning conflicting hunks).
    StoryCaughtUp {
        /// The story.
        story: String,
        /// The story branch's new head.
        commit: String,
    },
    /// A setup command ran in a story's worktree.
    SetupRan {
        /// The story.
        story: String,
        /// The command.
        command: String,
        /// Whether it passed.
        passed: bool,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// What happened, in words.
        status: String,
    },
    /// Paths a story changed outside its owned paths were put back as the epic branch has them.
    PerimeterRestored {
        /// The story.
        story: String,
        /// The paths restored (or deleted, where the epic branch has none).
        paths: Vec<String>,
    },
    /// The judge gave its verdict on a story.
    StoryJudged {
        /// The story.
        story: String,
        /// The round, from 1.
        round: u32,
        /// Whether it cleared the story.
        cleared: bool,
        /// The issue titles, when not cleared.
        issues: Vec<String>,
    },
    /// A story's branch is being merged into the epic branch (the merge lock is held).
    MergeStarted {
        /// The story.
        story: String,
        /// The epic head before the merge, which a rollback returns to.
        checkpoint: String,
    },
    /// The merge of a story conflicted; the epic worktree is as it was.
    MergeConflicted {
        /// The story.
        story: String,
        /// The conflicting paths.
        paths: Vec<String>,
    },
    /// A merge was undone: the epic branch is back at `to`.
    StoryRolledBack {
        /// The story.
        story: String,
        /// The commit the epic branch was reset to.
        to: String,
        /// Why (the gates that turned red, or an interruption).
        reason: String,
    },
    /// A story merged into the epic branch with green gates, or (`in_place`) was found with its
    /// work already there.
    StoryMerged {
        /// The story.
        story: String,
        /// The merge commit (absent when the epic branch already held the story's work).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
        /// The judge's note, when there is a judge.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge: Option<String>,
        /// Set when the story merged nothing because its work was already on the epic branch:
        /// the judge's evidence, as epic checked it on the proven epic head.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        in_place: Option<epic_report::InPlace>,
    },
    /// A story whose checks passed joined the merge queue: it waits for a batch to prove it.
    MergeQueued {
        /// The story.
        story: String,
    },
    /// The merge queue took several stories ready to integrate as one batch: each is merged in
    /// turn (in the order they became ready) onto the proven epic head, and the candidate is
    /// gated once. A batch of one story says nothing more than its `merge_started`.
    MergeBatch {
        /// The batch's number within the run, from 1.
        batch: u64,
        /// Its stories, in merge order.
        stories: Vec<String>,
        /// The proven epic head it builds on.
        checkpoint: String,
    },
    /// The gates ran on a candidate of a batch: the whole batch first, then each bisection
    /// step of a red one (the stories on top of the epic head proven so far).
    BatchGated {
        /// The batch.
        batch: u64,
        /// The bisection step: 0 for the whole batch, then 1, 2, … as a red one is bisected.
        step: u32,
        /// The stories the candidate adds to the proven epic head, in merge order.
        stories: Vec<String>,
        /// The candidate's head.
        commit: String,
        /// Whether every gate passed.
        passed: bool,
    },
    /// Stories of a batch were proven together by one green gate run: the epic branch moved
    /// over all of them (each keeps its own merge commit).
    BatchProven {
        /// The batch.
        batch: u64,
        /// The stories proven together, in merge order.
        stories: Vec<String>,
        /// The new proven epic head.
        commit: String,
    },
    /// Bisection pinned a red gate run of a batch on one story: gated on the epic head proven
    /// so far, that story alone turned the gates red. Its merge is undone and it fails.
    CulpritPinned {
        /// The batch.
        batch: u64,
        /// The story.
        story: String,
        /// The smallest red candidate that isolated it (the story, on the proven epic head).
        commit: String,
    },
    /// A story's merge was red on the proven epic head (alone, or the culprit a bisection
    /// pinned), its merge undone, and it goes back to its coder (`--merge-revisions`): revision
    /// `revision` of at most `of`, a task appended to its checkpoint that carries the gates'
    /// output on the combined tree, the stories whose work it now meets and its perimeter. Its
    /// own checks (gates, perimeter, judge) run again, then it rejoins the merge queue.
    MergeRevision {
        /// The story.
        story: String,
        /// The revision's number, from 1 (counted across reruns).
        revision: u32,
        /// The most revisions the story may have (`--merge-revisions`).
        of: u32,
        /// The proven epic head the story catches up with.
        head: String,
        /// The stories merged since the story last caught up, whose work it now meets.
        met: Vec<String>,
        /// The red gates, as the failure would have said them.
        reason: String,
    },
    /// A merged story's worktree was removed (its branch stays): after the story ended (its
    /// dependents may have started already), before the run finishes.
    WorktreeRemoved {
        /// The story.
        story: String,
        /// The worktree.
        worktree: String,
    },
    /// A story failed.
    StoryFailed {
        /// The story.
        story: String,
        /// Why, as the report says it.
        reason: String,
    },
    /// A story did not run (or was stopped): a dependency failed, fail-fast, an interrupt.
    StorySkipped {
        /// The story.
        story: String,
        /// Why.
        reason: String,
    },
    /// A story's coder asked what only a person can answer (`--on-blocked ask`): the story
    /// waits for `epic answer`, its slot given to others, until `--max-wait` passes.
    StoryWaiting {
        /// The story.
        story: String,
        /// The question, in the coder's words.
        question: String,
    },
    /// A person stopped the story (`epic stop`): it ended, its dependents are skipped, and it
    /// runs again only after `epic retry`.
    StoryStopped {
        /// The story.
        story: String,
    },
    /// The run took `epic answer`'s command: the story runs again, its coder's next turn
    /// reading the answer.
    Answered {
        /// The story.
        story: String,
        /// The command's id (its file in `inbox/`).
        command: String,
        /// The user id of who gave it.
        uid: u32,
        /// When it was given (RFC 3339).
        given_at: String,
    },
    /// The run took `epic tell`'s command: the story's next coder turn reads the note.
    Told {
        /// The story.
        story: String,
        /// The command's id.
        command: String,
        /// The user id of who gave it.
        uid: u32,
        /// When it was given (RFC 3339).
        given_at: String,
    },
    /// The run took `epic stop`'s command: the story (none: the whole run, `--all`) stops.
    Stopped {
        /// The story; none for `epic stop --all`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        /// The command's id.
        command: String,
        /// The user id of who gave it.
        uid: u32,
        /// When it was given (RFC 3339).
        given_at: String,
    },
    /// The run took `epic retry`'s command: the story runs again in this run.
    Retried {
        /// The story.
        story: String,
        /// Whether it starts over from the epic head (`--fresh`) rather than its checkpoint.
        fresh: bool,
        /// The command's id.
        command: String,
        /// The user id of who gave it.
        uid: u32,
        /// When it was given (RFC 3339).
        given_at: String,
    },
    /// A coder turn read the notes and answers people gave the story (`epic tell`, `epic
    /// answer`), each once.
    NotesRead {
        /// The story.
        story: String,
        /// The commands' ids, in the order given.
        commands: Vec<String>,
    },
    /// A command the run could not apply: an unknown story, a story in another state than the
    /// command needs, an unreadable file. Nothing changed.
    CommandRefused {
        /// The command's id, or its file's name when unreadable.
        command: String,
        /// Why, and what to do.
        reason: String,
    },
    /// The `--notify` command failed or ran past its deadline; the story is not affected.
    NotifyFailed {
        /// The story it was about.
        story: String,
        /// What called for a person: `waiting`, `failed`, `stopped` or `paused`.
        attention: String,
        /// What happened, in words.
        status: String,
    },
    /// The board hook command failed on a transition; the story is not affected.
    HookFailed {
        /// The story of the transition.
        story: String,
        /// What happened, in words.
        status: String,
    },
    /// Something about the run as a whole worth telling (a halt, a recovered merge, a
    /// report that could not be written).
    RunNote {
        /// The message.
        message: String,
    },
    /// The epic's spend reached `--budget-usd`: no new agent turn starts; running turns finish,
    /// and the unfinished stories end not started.
    BudgetReached {
        /// The epic's spend so far, across runs, in US dollars.
        spent_usd: f64,
        /// The budget, in US dollars.
        budget_usd: f64,
        /// `budget reached: $10.02 of $10.00`.
        message: String,
    },
    /// The run ended; the report is written.
    RunFinished {
        /// Stories done (merged, now or before).
        done: usize,
        /// Stories failed.
        failed: usize,
        /// Stories skipped or not finished.
        skipped: usize,
        /// Whether the run was interrupted.
        interrupted: bool,
    },
}

/// One line of `events.jsonl`: an [`Event`] with the time it was appended, `{"at":…,"kind":…,…}`
/// (docs/contract.md, "The events of `events.jsonl`"). The log's writer builds each line from
/// this type, so [`events_schema`] describes exactly what is written.
///
/// ```
/// use epic_events::{Event, LoggedEvent};
///
/// let line = r#"{"at":"2026-12-01T10:00:00.000Z","kind":"seat_resumed","seat":"claude"}"#;
/// let logged: LoggedEvent = serde_json::from_str(line)?;
/// assert_eq!(logged.event, Event::SeatResumed { seat: "claude".into() });
/// assert_eq!(serde_json::to_string(&serde_json::to_value(&logged)?)?, line);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoggedEvent {
    /// When the event was appended: RFC 3339 in UTC, to the millisecond
    /// (`2026-12-01T10:00:00.000Z`).
    pub at: String,
    /// The event, its `kind` and fields beside `at`.
    #[serde(flatten)]
    pub event: Event,
}

/// The JSON Schema of one line of `events.jsonl` (`epic schema events`): a [`LoggedEvent`], one
/// variant per `kind`.
///
/// ```
/// let schema = epic_events::events_schema();
/// assert_eq!(schema["title"], "events.jsonl line");
/// assert!(schema.to_string().contains(r#""const":"run_finished""#));
/// ```
pub fn events_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(LoggedEvent);
    schema.insert("title".to_owned(), "events.jsonl line".into());
    schema.insert(
        "description".to_owned(),
        "One line of `<git-common-dir>/epic/<epic>/events.jsonl`: an event of a run or a \
         landing, its `kind` naming its fields, with `at`, the time it was appended. Events \
         are added in later versions (a reader skips kinds it does not know); a field is never \
         removed or changed in meaning."
            .into(),
    );
    schema.to_value()
}

/// Where events go: a callback shared by every story (it must be cheap and must not block; a
/// channel sender or a log append).
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// A sink that drops every event.
pub fn discard_events() -> EventSink {
    Arc::new(|_| {})
}

/// Who rejected a `BLOCKED_ON:` claim ([`Event::BlockedRejected`]); here, with the event, so the
/// events need nothing of the chats that emit them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectedBy {
    /// The plan: the need names the story's own path, a merged dependency's or a dependent's.
    Plan,
    /// The verifier seat (`--verifier`), which found the need is not missing.
    Verifier,
}

impl RejectedBy {
    /// The lowercase name, as in the event.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Verifier => "verifier",
        }
    }
}
