//! A story whose branch changed nothing is done only on evidence epic checks: the judge's
//! confirmation that its work is already on the epic branch names the files that hold it, and
//! each must be a file on the proven epic head, inside the story's owned paths, holding each of
//! the story's `provides`. A bare "clean" is an opinion, and fails the story.

use epic_events::{Event, ReportDocument};
use epic_executor::RunConfig;
use epic_report::{EpicReport, Evidence, InPlace};
use epic_story_plan::{Story, StoryPlan, ValidPlan};

use crate::epic_support::{
    EpicFixture, commit_on_main, epic_files, merges, plan, reason, statuses,
};
use crate::support::Events;

/// `report.json` as the run left it.
fn report_on_disk(ep: &EpicFixture) -> EpicReport {
    epic_state_store::load::<ReportDocument>(ep.dir().report_json())
        .expect("report.json loads")
        .expect("report.json written")
        .0
}

/// A coder for story `a` that commits its work and then throws the commit away
/// (`git reset --hard HEAD~1`): the story's branch ends where it started.
const UNDOES_ITS_WORK: &str = r#"mkdir -p src/a && echo "pub struct Cart;" > src/a/cart.rs
git add -A && git commit -q -m "a: the cart" && git reset -q --hard HEAD~1
echo 'Done: the cart is in src/a/cart.rs.'
exit 0
"#;

#[tokio::test]
async fn a_bare_confirmation_is_no_evidence_and_the_story_fails() {
    let ep = EpicFixture::new();
    ep.hook("a", UNDOES_ITS_WORK);
    let mut config = ep.config();
    // The standard agent, as judge, answers `{"clean":true,"issues":[]}` to everything.
    config.judge = Some(ep.agent().into());
    config.judge_rounds = 1;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &["a"])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let why = reason(&outcome, 0);
    assert!(
        why.starts_with(
            "the judge confirmed the story's work is already on the epic branch, but its \
             confirmation did not hold"
        ) && why.contains("- the confirmation names no evidence"),
        "{why}"
    );
    assert!(outcome.report.stories[0].in_place.is_none());
    // The work is not on the epic branch, and the story that needs it never started.
    assert!(!epic_files(&ep).iter().any(|path| path.starts_with("src/a")));
    assert!(merges(&ep).is_empty());
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::StoryStarted { story, .. } if story == "b"))
    );
}

/// A plan of `a` (owning `src/a`, providing `provides`) and `b` after it (owning `src/b`).
fn plan_providing(provides: &[&str]) -> ValidPlan {
    let mut a = Story::new("a", "Story a", ["src/a"]);
    a.provides = provides.iter().map(|name| (*name).to_owned()).collect();
    StoryPlan {
        epic_id: "e".into(),
        epic: String::new(),
        stories: vec![a, Story::new("b", "Story b", ["src/b"]).depending_on(["a"])],
    }
    .validate()
    .expect("valid plan")
}

/// A judge for story `a` that keeps each prompt in `judge-prompts` and answers `verdict`.
fn judge_answers(ep: &EpicFixture, verdict: &str) {
    ep.hook(
        "a.judge",
        &format!(
            "printf '%s\\n=====\\n' \"$prompt\" >> \"$ROOT/judge-prompts\"\necho '{verdict}'\nexit 0\n"
        ),
    );
}

fn judge_prompts(ep: &EpicFixture) -> String {
    std::fs::read_to_string(ep.fx.root.join("judge-prompts")).unwrap_or_default()
}

/// Story `a`'s coder changes nothing and says the work is there.
fn idle_a(ep: &EpicFixture) {
    ep.hook("a", "echo 'It is all there already.'\nexit 0\n");
}

/// A config whose judge is the standard agent, with `rounds` judge rounds.
fn judged(ep: &EpicFixture, rounds: u32) -> RunConfig {
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.judge_rounds = rounds;
    config
}

#[tokio::test]
async fn a_coder_that_only_answers_the_sentinel_is_not_done_on_bare_confirmations() {
    let ep = EpicFixture::new();
    ep.hook("a", "echo TASK_ALREADY_SATISFIED\nexit 0\n");
    judge_answers(&ep, r#"{"clean":true,"issues":[]}"#);
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &["a"])]), judged(&ep, 2), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("(judge round 2):\n- the confirmation names no evidence"),
        "{why}"
    );
    // The second round was told why the first did not hold, and asked for evidence.
    let prompts = judge_prompts(&ep);
    let rounds: Vec<&str> = prompts.split("=====\n").filter(|p| !p.is_empty()).collect();
    assert_eq!(rounds.len(), 2, "{prompts}");
    assert!(rounds[0].contains("To clear it, show where the work is: `evidence`"));
    assert!(!rounds[0].contains("did not hold"));
    assert!(
        rounds[1].contains(
            "Your confirmation in the last round did not hold:\n- the confirmation names no \
             evidence"
        ),
        "{}",
        rounds[1]
    );
    // Neither round cleared it, each saying why.
    let judged: Vec<(u32, bool, Vec<String>)> = events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::StoryJudged {
                round,
                cleared,
                issues,
                ..
            } => Some((round, cleared, issues)),
            _ => None,
        })
        .collect();
    assert_eq!(judged.len(), 2);
    assert!(judged.iter().all(|(_, cleared, issues)| !cleared
        && issues[0].starts_with("the confirmation names no evidence")));
    assert!(merges(&ep).is_empty());
}

#[tokio::test]
async fn evidence_outside_the_owned_paths_does_not_hold() {
    let ep = EpicFixture::new();
    idle_a(&ep);
    judge_answers(
        &ep,
        r#"{"clean":true,"issues":[],"evidence":[{"path":"README.md"}]}"#,
    );
    let outcome = ep
        .run(&plan(&[("a", &[])]), judged(&ep, 1), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("\n- `README.md` is outside the story's owned paths (src/a)\n"),
        "{why}"
    );
}

#[tokio::test]
async fn evidence_that_is_not_a_file_on_the_epic_head_does_not_hold() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/a/keep/x.txt", "kept\n")]);
    // The coder's work is gone from its branch; the judge writes the file into the worktree
    // before naming it: neither is on the epic head.
    ep.hook("a", UNDOES_ITS_WORK);
    ep.hook(
        "a.judge",
        r#"mkdir -p src/a && echo "pub struct Cart;" > src/a/cart.rs
echo '{"clean":true,"issues":[],"evidence":[{"path":"src/a/cart.rs"},{"path":"src/a/keep"}]}'
exit 0
"#,
    );
    let outcome = ep
        .run(&plan(&[("a", &[])]), judged(&ep, 1), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains(
            "\n- `src/a/cart.rs` is not a file on the epic head: no such path\n- `src/a/keep` is \
             not a file on the epic head: a directory\n"
        ),
        "{why}"
    );
    assert!(!epic_files(&ep).contains(&"src/a/cart.rs".to_owned()));
}

#[tokio::test]
async fn a_provided_name_missing_from_its_file_does_not_hold() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/a/cart.rs", "pub struct Carts;\n")]);
    idle_a(&ep);
    judge_answers(
        &ep,
        r#"{"clean":true,"issues":[],"evidence":[{"path":"src/a/cart.rs","provides":["cart::Cart"]}]}"#,
    );
    let outcome = ep
        .run(
            &plan_providing(&["cart::Cart", "cart::add"]),
            judged(&ep, 1),
            &Events::default(),
        )
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let why = reason(&outcome, 0);
    assert!(
        why.contains(
            "\n- `cart::Cart` does not appear in `src/a/cart.rs` (the word `Cart` is not in it as \
             a whole word)\n- `cart::add`, which the story provides, is named by no file of the \
             evidence\n"
        ),
        "{why}"
    );
    assert!(judge_prompts(&ep).contains("The story provides: cart::Cart, cart::add."));
}

/// What `a`'s judge names when the cart is on `main`.
const CART_EVIDENCE: &str = r#"{"clean":true,"issues":[],"evidence":[{"path":"src/a/cart.rs","provides":["cart::Cart","cart::Cart::add"]},{"path":"./src/a/mod.rs"}]}"#;

#[tokio::test]
async fn proper_evidence_is_done_already_in_place_and_stays_so_on_a_rerun() {
    let ep = EpicFixture::new();
    commit_on_main(
        &ep,
        &[
            (
                "src/a/cart.rs",
                "pub struct Cart;\nimpl Cart {\n    pub fn add(&mut self) {}\n}\n",
            ),
            ("src/a/mod.rs", "pub mod cart;\n"),
        ],
    );
    let main = ep.rev("main");
    idle_a(&ep);
    judge_answers(&ep, CART_EVIDENCE);
    // b needs a's work: it fails unless its worktree has the cart.
    ep.hook("b", "test -f src/a/cart.rs || exit 1\n");
    let plan = plan_providing(&["cart::Cart", "cart::Cart::add"]);
    let events = Events::default();
    let outcome = ep.run(&plan, judged(&ep, 1), &events).await.expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:done"],
        "{}",
        reason(&outcome, 1)
    );
    let expected = InPlace::new(
        main.clone(),
        vec![
            Evidence::new("src/a/cart.rs", ["cart::Cart", "cart::Cart::add"]),
            Evidence::new("src/a/mod.rs", Vec::<String>::new()),
        ],
    );
    let a = &outcome.report.stories[0];
    assert_eq!(a.in_place.as_ref(), Some(&expected));
    assert_eq!(
        a.judge.as_deref(),
        Some(
            "judge confirmed the work is already on the epic branch, with evidence epic checked \
             (round 1): nothing to merge"
        )
    );
    assert!(outcome.report.stories[1].in_place.is_none());
    // a merged nothing; b merged its work on top of the cart.
    assert_eq!(merges(&ep), ["e: merge story b"]);
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::StoryMerged { story, commit: None, in_place: Some(found), .. }
            if story == "a" && *found == expected
    )));
    let on_disk = report_on_disk(&ep);
    assert_eq!(on_disk.stories[0].in_place.as_ref(), Some(&expected));
    let markdown = std::fs::read_to_string(ep.dir().report_md()).expect("report.md");
    assert!(
        markdown.contains("already in place (evidence: src/a/cart.rs, src/a/mod.rs)"),
        "{markdown}"
    );
    assert!(markdown.contains("## Already in place"), "{markdown}");

    // A rerun keeps it in place, with its evidence.
    let rerun = ep
        .run(&plan, judged(&ep, 1), &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&rerun), ["a:done", "b:done"]);
    assert_eq!(rerun.report.stories[0].in_place.as_ref(), Some(&expected));
    assert_eq!(
        report_on_disk(&ep).stories[0].in_place.as_ref(),
        Some(&expected)
    );
}

#[tokio::test]
async fn a_confirmation_that_did_not_hold_may_hold_in_the_next_round() {
    let ep = EpicFixture::new();
    commit_on_main(
        &ep,
        &[
            ("src/a/cart.rs", "pub struct Cart;\nfn add() {}\n"),
            ("src/a/mod.rs", ""),
        ],
    );
    idle_a(&ep);
    ep.hook(
        "a.judge",
        &format!(
            "if printf '%s' \"$prompt\" | grep -q 'did not hold'; then echo '{CART_EVIDENCE}'; \
             else echo '{{\"clean\":true,\"issues\":[]}}'; fi\nexit 0\n"
        ),
    );
    let events = Events::default();
    let outcome = ep
        .run(&plan_providing(&["cart::Cart"]), judged(&ep, 2), &events)
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:done"],
        "{}",
        reason(&outcome, 0)
    );
    assert!(outcome.report.stories[0].in_place.is_some());
    assert!(
        outcome.report.stories[0]
            .judge
            .as_deref()
            .is_some_and(|note| note.contains("(round 2)"))
    );
    let cleared: Vec<(u32, bool)> = events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::StoryJudged {
                story,
                round,
                cleared,
                ..
            } if story == "a" => Some((round, cleared)),
            _ => None,
        })
        .collect();
    assert_eq!(cleared, [(1, false), (2, true)]);
}
