//! The presets, run against stand-in executables of the same name placed first on `PATH`, which
//! check they were called the way the real CLI must be (flags, where the prompt arrives) and
//! edit a file like an agent.

use std::sync::Arc;
use std::time::Duration;

use epic_agents::{CommandSeat, Preset, Role, Seat, TurnContext, TurnRequest};
use epic_process::sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::support::{Fixture, plan};

/// Each preset's expected arguments (the prompt file's path stands for `$file`), and whether
/// the prompt comes on standard input.
const EXPECTED: &[(Preset, &str, bool)] = &[
    (
        Preset::Claude,
        "-p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash",
        true,
    ),
    (
        Preset::Codex,
        "exec --json --sandbox workspace-write -",
        true,
    ),
    (
        Preset::Gemini,
        "--skip-trust --approval-mode yolo --output-format stream-json --prompt Carry out the request above.",
        true,
    ),
    (
        Preset::Aider,
        "--yes-always --no-auto-commits --no-gitignore --no-detect-urls --no-check-update --no-pretty --chat-history-file /dev/null --input-history-file /dev/null --message-file $file --llm-history-file $replies",
        false,
    ),
    (Preset::Opencode, "run", true),
];

/// A stand-in for `preset` that checks its call and writes `src/<name>.txt`.
fn stand_in(fixture: &Fixture, preset: Preset, args: &str, stdin: bool) {
    let prompt = if stdin {
        "prompt=$(cat)".to_owned()
    } else {
        // The prompt is in the file after --message-file, outside the worktree; stdin is empty.
        // The model's replies are logged beside it, as aider logs them.
        r#"file=""; last=""
for a in "$@"; do [ "$last" = "--message-file" ] && file="$a"; last="$a"; done
[ -f "$file" ] || { echo "no prompt file" >&2; exit 3; }
case "$file" in "$EPIC_WORKTREE"*) echo "prompt file inside the worktree" >&2; exit 4;; esac
[ -z "$(cat)" ] || { echo "unexpected stdin" >&2; exit 5; }
replies="$(dirname "$file")/replies.log"
prompt=$(cat "$file")"#
            .to_owned()
    };
    // What the stand-in replies: on stdout, or (aider) in its log of the model's replies, with
    // its banner and token line around the reply on stdout.
    let reply = if stdin {
        format!("echo \"edited by {}\"", preset.name())
    } else {
        format!(
            "echo 'Aider v0.86.2'; echo 'Model: m'; echo 'edited by {name}'; \
             echo 'Tokens: 9 sent, 3 received.'\n\
             printf 'TO LLM t\\nUSER x\\nLLM RESPONSE t\\nASSISTANT edited by {name}\\n' >> \"$replies\"",
            name = preset.name()
        )
    };
    fixture.script(
        preset.program(),
        &format!(
            r#"{prompt}
expected="{args}"
[ "$*" = "$expected" ] || {{ echo "bad arguments: $*" >&2; exit 2; }}
case "$prompt" in *PRESET-MARKER*) ;; *) echo "the prompt did not arrive" >&2; exit 6;; esac
mkdir -p src && echo "$EPIC_ROLE" > "src/{name}.txt"
{reply}
"#,
            name = preset.name()
        ),
    );
}

/// The reply a stand-in's turn gives: what it printed, or aider's model's reply alone, read
/// from its log without the banner and token line it printed around it.
fn replied(preset: Preset) -> String {
    if preset == Preset::Aider {
        "edited by aider".to_owned()
    } else {
        format!("edited by {preset}\n")
    }
}

#[tokio::test]
async fn every_preset_is_called_as_its_cli_must_be() {
    let fixture = Fixture::new();
    for &(preset, args, stdin) in EXPECTED {
        stand_in(&fixture, preset, args, stdin);
    }
    let path = format!(
        "{}:{}",
        fixture.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for &(preset, _, _) in EXPECTED {
        let seat = CommandSeat::preset(preset).with_env("PATH", &path);
        assert_eq!(seat.name(), preset.name());
        let request = TurnRequest {
            role: Role::Coder,
            system: "rules".into(),
            history: Vec::new(),
            prompt: "Do it. PRESET-MARKER".into(),
            leftovers_note: None,
            context: TurnContext {
                epic: "e".into(),
                story: Arc::new(plan("").stories[0].clone()),
                task: Some("one".into()),
                worktree: fixture.worktree.clone(),
                slot: 0,
                deadline: tokio::time::Instant::now() + Duration::from_secs(20),
                cancel: CancellationToken::new(),
                sandbox: Sandbox::off(),
                watchdog: None,
                clock: epic_process::Clock::system(),
                leftovers: None,
            },
        };
        let reply = seat
            .turn(&request, &|_| {})
            .await
            .unwrap_or_else(|error| panic!("{preset}: {error}"));
        assert_eq!(reply.text, replied(preset));
        let written = std::fs::read_to_string(fixture.worktree.join(format!("src/{preset}.txt")))
            .expect("the stand-in edited a file");
        assert_eq!(written, "coder\n");
    }
}

/// Each preset's arguments for every role but the coder's (the planner, the judge, reviewers,
/// `epic plan`'s architect): its read-only mode.
const EXPECTED_ARCHITECT: &[(Preset, &str, bool)] = &[
    (
        Preset::Claude,
        "-p --output-format stream-json --verbose --permission-mode plan",
        true,
    ),
    (Preset::Codex, "exec --json --sandbox read-only -", true),
    (
        Preset::Gemini,
        "--skip-trust --approval-mode plan --output-format stream-json --prompt Carry out the request above.",
        true,
    ),
    (
        Preset::Aider,
        "--chat-mode ask --yes-always --no-auto-commits --no-gitignore --no-detect-urls --no-check-update --no-pretty --chat-history-file /dev/null --input-history-file /dev/null --message-file $file --llm-history-file $replies",
        false,
    ),
    (Preset::Opencode, "run --agent plan", true),
];

#[tokio::test]
async fn every_role_but_the_coder_runs_each_preset_in_its_read_only_mode() {
    let fixture = Fixture::new();
    for &(preset, args, stdin) in EXPECTED_ARCHITECT {
        stand_in(&fixture, preset, args, stdin);
    }
    let path = format!(
        "{}:{}",
        fixture.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for role in [Role::Architect, Role::Planner, Role::Judge, Role::Reviewer] {
        for &(preset, _, _) in EXPECTED_ARCHITECT {
            let seat = CommandSeat::preset(preset).with_env("PATH", &path);
            let request = TurnRequest {
                role,
                system: "the brief".into(),
                history: Vec::new(),
                prompt: "Write the plan. PRESET-MARKER".into(),
                leftovers_note: None,
                context: TurnContext {
                    epic: String::new(),
                    story: Arc::new(epic_story_plan::Story::new("", "", Vec::<String>::new())),
                    task: None,
                    worktree: fixture.worktree.clone(),
                    slot: 0,
                    deadline: tokio::time::Instant::now() + Duration::from_secs(20),
                    cancel: CancellationToken::new(),
                    sandbox: Sandbox::off(),
                    watchdog: None,
                    clock: epic_process::Clock::system(),
                    leftovers: None,
                },
            };
            let reply = seat
                .turn(&request, &|_| {})
                .await
                .unwrap_or_else(|error| panic!("{preset}: {error}"));
            assert_eq!(reply.text, replied(preset));
            let written =
                std::fs::read_to_string(fixture.worktree.join(format!("src/{preset}.txt")))
                    .expect("the stand-in ran");
            assert_eq!(written, format!("{role}\n"));
        }
    }
}

#[test]
fn command_lines_are_data() {
    let lines: Vec<String> = Preset::ALL
        .iter()
        .map(|preset| preset.command_line())
        .collect();
    assert_eq!(
        lines,
        [
            "claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash < prompt",
            "codex exec --json --sandbox workspace-write - < prompt",
            "gemini --skip-trust --approval-mode yolo --output-format stream-json --prompt 'Carry out the request above.' < prompt",
            "aider --yes-always --no-auto-commits --no-gitignore --no-detect-urls --no-check-update --no-pretty --chat-history-file /dev/null --input-history-file /dev/null --message-file PROMPT_FILE --llm-history-file REPLY_LOG",
            "opencode run < prompt",
        ]
    );
    assert_eq!("codex".parse::<Preset>(), Ok(Preset::Codex));
    assert!("cursor".parse::<Preset>().is_err());
}

/// A request of `role` in the fixture's worktree.
fn request(fixture: &Fixture, role: Role) -> TurnRequest {
    TurnRequest {
        role,
        system: String::new(),
        history: Vec::new(),
        prompt: "Do it.".into(),
        leftovers_note: None,
        context: TurnContext {
            epic: "e".into(),
            story: Arc::new(plan("").stories[0].clone()),
            task: None,
            worktree: fixture.worktree.clone(),
            slot: 0,
            deadline: tokio::time::Instant::now() + Duration::from_secs(20),
            cancel: CancellationToken::new(),
            sandbox: Sandbox::off(),
            watchdog: None,
            clock: epic_process::Clock::system(),
            leftovers: None,
        },
    }
}

#[tokio::test]
async fn structured_output_gives_the_reply_the_usage_and_the_errors() {
    let fixture = Fixture::new();
    let path = format!(
        "{}:{}",
        fixture.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cases: &[(Preset, &str)] = &[
        (
            Preset::Claude,
            r#"cat >/dev/null; echo '{"type":"result","subtype":"success","is_error":false,"result":"the reply","total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":20}}'"#,
        ),
        (
            Preset::Codex,
            r#"cat >/dev/null; echo '{"type":"thread.started","thread_id":"t"}'; echo '{"type":"item.completed","item":{"id":"1","type":"agent_message","text":"the reply"}}'; echo '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":20}}'"#,
        ),
        (
            Preset::Gemini,
            r#"cat >/dev/null; echo '{"response":"the reply","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":100,"candidates":20}}}}}'"#,
        ),
    ];
    for &(preset, script) in cases {
        fixture.script(preset.program(), script);
        let seat = CommandSeat::preset(preset).with_env("PATH", &path);
        let reply = seat
            .turn(&request(&fixture, Role::Coder), &|_| {})
            .await
            .unwrap_or_else(|error| panic!("{preset}: {error}"));
        assert_eq!(reply.text, "the reply", "{preset}");
        let usage = reply.usage.expect("reported usage");
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (100, 20),
            "{preset}"
        );
        assert_eq!(usage.cost_usd, (preset == Preset::Claude).then_some(0.5));
    }

    // Errors the agents report fail the turn whatever the exit status, their own words first.
    let errors: &[(Preset, &str, &str)] = &[
        (
            Preset::Claude,
            r#"cat >/dev/null; echo '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","total_cost_usd":0}'"#,
            "Not logged in · Please run /login",
        ),
        (
            Preset::Codex,
            r#"cat >/dev/null; echo '{"type":"turn.started"}'; echo '{"type":"turn.failed","error":{"message":"You have hit your usage limit"}}'"#,
            "You have hit your usage limit",
        ),
        (
            Preset::Gemini,
            r#"cat >/dev/null; echo '{"session_id":"s","error":{"type":"Error","message":"Please set an Auth method","code":41}}' >&2; exit 41"#,
            "Please set an Auth method",
        ),
        // aider gives up on a rate limit with exit 0, its errors on stdout, nothing in its log
        // of the model's replies: no reply, whatever its status.
        (
            Preset::Aider,
            "echo 'litellm.RateLimitError: AnthropicException - rate_limit_error'; \
             echo 'The API provider has rate limited you. Try again later or check your quotas.'",
            "it got no reply from its model",
        ),
    ];
    for &(preset, script, message) in errors {
        fixture.script(preset.program(), script);
        let seat = CommandSeat::preset(preset)
            .with_env("PATH", &path)
            .with_retry(epic_agents::RetryPolicy::never());
        let error = seat
            .turn(&request(&fixture, Role::Judge), &|_| {})
            .await
            .expect_err("the reported error fails the turn");
        match error {
            epic_agents::SeatError::Failed { tail, .. } => {
                assert!(tail.starts_with(message), "{preset}: {tail}");
                if preset == Preset::Aider {
                    assert!(tail.contains("rate limited you"), "{tail}");
                }
            }
            other => panic!("{preset}: {other}"),
        }
    }
}
