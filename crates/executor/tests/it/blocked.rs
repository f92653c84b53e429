//! `BLOCKED_ON:` is checked against the plan (and by a verifier): a claim the plan settles gets
//! one pushback turn; one that stands ends the story as a missing dependency.

use epic_events::{Event, RejectedBy};
use epic_executor::StoryError;
use epic_story_plan::{Story, StoryPlan};

use crate::epic_support::{EpicFixture, plan, reason, statuses};
use crate::support::{Events, Fixture, Run, task_list};

#[tokio::test]
async fn a_reply_ending_blocked_on_fails_the_story_naming_the_need() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) printf 'I need the API.\\n\\n`BLOCKED_ON: lib/api.rs from story other`\\n' ;;\nesac\n",
            task_list(&["one", "two"])
        ),
    );
    let events = Events::default();
    let error = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked");
    let StoryError::Blocked { need, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(need, "lib/api.rs from story other");
    assert!(
        error
            .to_string()
            .contains("blocked on unplanned work: lib/api.rs from story other")
    );
    assert!(events.steps().iter().any(
        |event| matches!(event, Event::Blocked { need, .. } if need.starts_with("lib/api.rs"))
    ));
    assert!(fixture.story_commits().is_empty());
    // The story stopped at once: task two never started.
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TaskStarted { task, .. } if task == "two"))
    );
}

#[tokio::test]
async fn a_mention_that_is_not_last_does_not_block() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) mkdir -p src; echo x > src/one.txt; printf 'BLOCKED_ON: a tool\\nCarried on without it.\\n' ;;\nesac\n",
            task_list(&["one"])
        ),
    );
    let done = Run::new(coder)
        .on(&fixture, &Events::default())
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["one"]);
}

/// A plan of story `s` (owning `src`, first: the one the fixture runs) after `base` (owning
/// `lib`, providing `lib::Api`) and before `later` (owning `app`), beside `other` (owning `ext`).
fn chain() -> StoryPlan {
    let mut base = Story::new("base", "The base", ["lib"]);
    base.provides = vec!["lib::Api".to_owned(), "lib::Client".to_owned()];
    StoryPlan {
        epic_id: "e".into(),
        epic: String::new(),
        stories: vec![
            Story::new("s", "The story", ["src"]).depending_on(["base"]),
            base,
            Story::new("later", "Later", ["app"]).depending_on(["s"]),
            Story::new("other", "Other", ["ext"]),
        ],
    }
}

/// A coder that plans `one`; as coder, it keeps every prompt in `$ROOT/prompts`, and claims
/// `BLOCKED_ON: <need>` until a prompt holds `until`, then writes `src/one.txt`.
fn claiming(need: &str, until: &str) -> String {
    format!(
        r#"prompt=$(cat)
case "$EPIC_ROLE" in
planner) echo '{}' ;;
*) printf '%s\n=====\n' "$prompt" >> "$ROOT/prompts"
   if printf '%s' "$prompt" | grep -qF '{until}'; then mkdir -p src; echo x > src/one.txt; echo 'Done.'
   else printf 'I cannot go on.\n\nBLOCKED_ON: {need}\n'; fi ;;
esac
"#,
        task_list(&["one"])
    )
}

fn rejections(events: &Events) -> Vec<(RejectedBy, String)> {
    events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::BlockedRejected { by, reason, .. } => Some((by, reason)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_claim_on_its_own_path_gets_one_pushback_and_the_story_goes_on() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &claiming(
            "src/one.txt from another story",
            "That claim was checked against",
        ),
    );
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done after the pushback");
    assert_eq!(done.committed, ["one"]);
    assert!(done.pushed_back);
    let rejections = rejections(&events);
    assert_eq!(rejections.len(), 1, "{rejections:?}");
    assert_eq!(rejections[0].0, RejectedBy::Plan);
    assert!(
        rejections[0]
            .1
            .starts_with("`src/one.txt` is under your own owned paths (src)"),
        "{}",
        rejections[0].1
    );
    let prompts = std::fs::read_to_string(fixture.root.join("prompts")).expect("prompts");
    assert!(prompts.contains(
        "You stopped with \"BLOCKED_ON: src/one.txt from another story\".\nThat claim was \
         checked against the epic's plan and rejected:\n`src/one.txt` is under your own owned \
         paths"
    ));
    assert_eq!(fixture.story_commits(), ["s: one"]);
}

#[tokio::test]
async fn a_second_claim_after_the_pushback_fails_the_story() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &claiming("src/one.txt", "never in a prompt"));
    let events = Events::default();
    let error = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked twice");
    assert!(
        matches!(&error, StoryError::Blocked { need, verifier: None, .. } if need == "src/one.txt"),
        "{error:?}"
    );
    assert_eq!(rejections(&events).len(), 1);
    assert!(fixture.story_commits().is_empty());
}

#[tokio::test]
async fn a_claim_on_a_merged_dependency_is_told_what_it_provides() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &claiming(
            "the client in lib/client.rs",
            "That claim was checked against",
        ),
    );
    let events = Events::default();
    let done = Run::new(coder)
        .plan(chain())
        .on(&fixture, &events)
        .await
        .result
        .expect("done after the pushback");
    assert_eq!(done.committed, ["one"]);
    let rejections = rejections(&events);
    assert!(
        rejections[0].1.starts_with(
            "`lib/client.rs` belongs to story 'base' (\"The base\"), a dependency of this story: \
             it was merged into the epic branch before you started"
        ) && rejections[0]
            .1
            .ends_with("That story provides: lib::Api; lib::Client."),
        "{rejections:?}"
    );
}

#[tokio::test]
async fn a_claim_on_a_dependent_or_naming_it_is_pushed_back() {
    for need in ["app/main.rs", "the screen of story later"] {
        let fixture = Fixture::new();
        let coder = fixture.agent("coder", &claiming(need, "That claim was checked against"));
        let events = Events::default();
        let done = Run::new(coder)
            .plan(chain())
            .on(&fixture, &events)
            .await
            .result
            .expect("done after the pushback");
        assert_eq!(done.committed, ["one"], "{need}");
        let rejections = rejections(&events);
        assert!(
            rejections[0].1.contains("'later' (\"Later\")")
                && rejections[0].1.contains("runs AFTER it"),
            "{rejections:?}"
        );
    }
}

#[tokio::test]
async fn a_claim_on_a_story_alongside_stands_without_a_verifier() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &claiming("ext/sdk.rs", "never in a prompt"));
    let events = Events::default();
    let error = Run::new(coder)
        .plan(chain())
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked");
    assert!(matches!(error, StoryError::Blocked { .. }), "{error:?}");
    assert!(rejections(&events).is_empty());
}

/// A verifier that keeps its prompt and role in `$ROOT/verifier` and answers `answer`.
fn verifier(fixture: &Fixture, answer: &str) -> std::sync::Arc<dyn epic_agents::Seat> {
    fixture.agent(
        "verifier",
        &format!(
            "prompt=$(cat)\nprintf 'role=%s\\n%s\\n' \"$EPIC_ROLE\" \"$prompt\" >> \"$ROOT/verifier\"\ncat <<'ANSWER'\n{answer}\nANSWER\n"
        ),
    )
}

#[tokio::test]
async fn an_unsettled_claim_the_verifier_rejects_gets_a_pushback_with_its_reason() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &claiming(
            "the payments SDK",
            "checked by a verifier, who found that what you need is not missing:\nThe SDK is vendored",
        ),
    );
    let verifier = verifier(
        &fixture,
        r#"{"blocked": false, "reason": "The SDK is vendored in ext/sdk.rs; use it."}"#,
    );
    let events = Events::default();
    let done = Run::new(coder)
        .plan(chain())
        .verifier(verifier)
        .on(&fixture, &events)
        .await
        .result
        .expect("done after the verifier's pushback");
    assert_eq!(done.committed, ["one"]);
    assert_eq!(
        rejections(&events),
        [(
            RejectedBy::Verifier,
            "The SDK is vendored in ext/sdk.rs; use it.".to_owned()
        )]
    );
    let asked = std::fs::read_to_string(fixture.root.join("verifier")).expect("verifier ran");
    assert!(asked.starts_with("role=verifier\n"), "{asked}");
    assert!(asked.contains("BLOCKED_ON: the payments SDK"));
    assert!(asked.contains("- 'base' (\"The base\"): owns lib; provides lib::Api; lib::Client"));
}

#[tokio::test]
async fn a_claim_the_verifier_confirms_fails_with_its_reason() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &claiming("the payments SDK", "never in a prompt"));
    let verifier = verifier(
        &fixture,
        "Checked.\n```json\n{\"blocked\": true, \"reason\": \"No story provides an SDK.\"}\n```",
    );
    let events = Events::default();
    let error = Run::new(coder)
        .plan(chain())
        .verifier(verifier)
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked");
    assert!(
        matches!(&error, StoryError::Blocked { verifier: Some(reason), .. } if reason == "No story provides an SDK."),
        "{error:?}"
    );
    assert!(
        error
            .reason()
            .contains("The verifier confirmed it: No story provides an SDK. The coder stopped")
    );
    assert!(rejections(&events).is_empty());
}

#[tokio::test]
async fn a_verifier_answer_that_cannot_be_read_lets_the_claim_stand() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &claiming("the payments SDK", "never in a prompt"));
    let verifier = verifier(&fixture, "I think it is not blocked, {\"blocked\": false}.");
    let events = Events::default();
    let error = Run::new(coder)
        .plan(chain())
        .verifier(verifier)
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked");
    assert!(
        matches!(&error, StoryError::Blocked { verifier: None, .. }),
        "{error:?}"
    );
    assert!(rejections(&events).is_empty());
}

#[tokio::test]
async fn a_claim_in_the_judge_feedback_turn_gets_the_pushback_too() {
    let ep = EpicFixture::new();
    // The first judge round finds a gap; the coder's feedback turn claims its own path until
    // it is pushed back, then works.
    ep.hook(
        "a",
        "if [ \"$EPIC_TASK\" = 'address judge feedback' ] && ! printf '%s' \"$prompt\" | grep -q 'That claim was checked'; then\n\
           printf 'Blocked.\\nBLOCKED_ON: src/a/extra.txt\\n'; exit 0\nfi\n",
    );
    ep.hook(
        "a.judge",
        "if [ ! -f \"$ROOT/judged\" ]; then touch \"$ROOT/judged\"; echo '{\"clean\":false,\"issues\":[{\"severity\":\"major\",\"title\":\"more\",\"description\":\"write more\"}]}'; exit 0; fi\n",
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    let rejections = rejections(&events);
    assert_eq!(rejections.len(), 1, "{rejections:?}");
    assert!(
        rejections[0]
            .1
            .starts_with("`src/a/extra.txt` is under your own owned paths")
    );
}

#[tokio::test]
async fn a_run_with_a_verifier_hands_it_the_claims_the_plan_cannot_settle() {
    let ep = EpicFixture::new();
    ep.hook(
        "b",
        "if ! printf '%s' \"$prompt\" | grep -q 'That claim was checked'; then\n\
           printf 'BLOCKED_ON: a message queue\\n'; exit 0\nfi\n",
    );
    let mut config = ep.config();
    config.verifier = Some(ep.fx.agent(
        "verifier",
        "cat >/dev/null\n[ \"$EPIC_ROLE\" = verifier ] || exit 1\necho '{\"blocked\":false,\"reason\":\"Use a plain list.\"}'\n",
    ).into());
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &["a"])]), config, &events)
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:done"],
        "{}",
        reason(&outcome, 1)
    );
    assert_eq!(
        rejections(&events),
        [(RejectedBy::Verifier, "Use a plain list.".to_owned())]
    );
}
