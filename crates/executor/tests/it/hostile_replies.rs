//! Whole runs with agents whose replies try to slip through: a judge that says "not clean" in
//! prose around a quoted example verdict, a judge whose fenced verdicts disagree, and planners
//! that plan far more tasks than a story may have.

use std::sync::Arc;

use epic_agents::Seat;

use crate::epic_support::{EpicFixture, merges, plan, reason, statuses};
use crate::support::Events;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_saying_not_clean_around_an_example_verdict_does_not_clear_the_story() {
    let ep = EpicFixture::new();
    // a's judge says no in prose and quotes the verdict format, clean, inline; b's judge clears
    // in one fenced block with prose around it.
    ep.hook(
        "a.judge",
        r#"echo 'Not clean: src/a/done.txt holds a timestamp, not the feature. Once it is done,'
echo 'reply {"clean":true,"issues":[]} is what I would send.'
exit 0
"#,
    );
    ep.hook(
        "b.judge",
        r#"printf 'Looks complete.\n```json\n{"clean":true,"issues":[]}\n```\nGood work.\n'
exit 0
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    let why = reason(&outcome, 0);
    assert!(
        why.contains("judge not cleared") && why.contains("unreadable verdict"),
        "{why}"
    );
    assert_eq!(merges(&ep), ["e: merge story b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_whose_fenced_verdicts_disagree_does_not_clear_the_story() {
    let ep = EpicFixture::new();
    ep.hook(
        "a.judge",
        r#"printf 'A clean verdict would be:\n```json\n{"clean":true,"issues":[]}\n```\n'
printf 'Mine:\n```\n{"clean":false,"issues":[{"severity":"major","title":"no feature","description":"only a timestamp"}]}\n```\n'
exit 0
"#,
    );
    // b's judge repeats one clean verdict: blocks that agree are that verdict.
    ep.hook(
        "b.judge",
        r#"printf '```json\n{"clean":true,"issues":[]}\n```\nAgain:\n```json\n{"clean":true}\n```\n'
exit 0
"#,
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    let why = reason(&outcome, 0);
    assert!(
        why.contains("judge not cleared") && why.contains("conflicting verdicts"),
        "{why}"
    );
    assert_eq!(merges(&ep), ["e: merge story b"]);
}

/// A planner reply of `n` tasks `t1`…`tn`, none naming a path.
fn tasks(n: usize) -> String {
    let tasks: Vec<String> = (1..=n)
        .map(|i| format!(r#"{{"title":"t{i}","description":"step {i}"}}"#))
        .collect();
    format!(r#"{{"tasks":[{}]}}"#, tasks.join(","))
}

/// A coder whose planner replies are `replies` in turn (the last one repeats), each prompt kept
/// as `planner-prompt-<n>`; whose coder turns write `src/<story>/<task>.txt` for tasks `t1` to
/// `t5` and fail on any other (so a plan run far past its cap fails fast, naming no cap).
fn planner(ep: &EpicFixture, replies: &[String]) -> Arc<dyn Seat> {
    for (n, reply) in replies.iter().enumerate() {
        std::fs::write(ep.fx.root.join(format!("plan-{n}")), reply).expect("reply");
    }
    ep.fx.agent(
        "planner",
        &format!(
            r#"prompt=$(cat)
case "$EPIC_ROLE" in
planner)
  n=$(cat "$ROOT/planner-count" 2>/dev/null || echo 0)
  printf '%s' "$prompt" > "$ROOT/planner-prompt-$n"
  echo $((n + 1)) > "$ROOT/planner-count"
  [ -f "$ROOT/plan-$n" ] || n={last}
  cat "$ROOT/plan-$n" ;;
coder)
  case "$EPIC_TASK" in
  t1|t2|t3|t4|t5) mkdir -p "src/$EPIC_STORY"; echo "$EPIC_TASK" > "src/$EPIC_STORY/$EPIC_TASK.txt"; echo done ;;
  *) echo "task $EPIC_TASK: this coder does only five" >&2; exit 1 ;;
  esac ;;
*) echo '{{"clean":true,"issues":[]}}' ;;
esac
"#,
            last = replies.len() - 1
        ),
    )
}

fn planner_turns(ep: &EpicFixture) -> usize {
    std::fs::read_to_string(ep.fx.root.join("planner-count"))
        .expect("count")
        .trim()
        .parse()
        .expect("number")
}

fn planner_prompt(ep: &EpicFixture, n: usize) -> String {
    std::fs::read_to_string(ep.fx.root.join(format!("planner-prompt-{n}"))).expect("prompt")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planner_of_ten_thousand_tasks_is_asked_once_to_cut_then_fails_the_story() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.coder = planner(&ep, &[tasks(10_000)]).into();
    let outcome = ep
        .run(
            &plan(&[("a", &[]), ("b", &["a"])]),
            config,
            &Events::default(),
        )
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:skipped"],
        "{:?}",
        outcome.report
    );
    let why = reason(&outcome, 0);
    assert!(
        why.contains("10000 tasks")
            && why.contains("at most 30")
            && why.contains("max_tasks")
            && why.contains("--max-tasks"),
        "{why}"
    );
    assert_eq!(planner_turns(&ep), 2, "one re-plan, no more");
    let replan = planner_prompt(&ep, 1);
    assert!(
        replan.contains("10000 tasks") && replan.contains("at most 30"),
        "{replan}"
    );
    assert!(
        !ep.fx.root.join("repo.worktrees/e/a/src/a/t1.txt").exists(),
        "no task ran"
    );
    assert!(merges(&ep).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planner_of_forty_tasks_re_plans_within_the_cap_and_the_story_merges() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.coder = planner(&ep, &[tasks(40), tasks(5)]).into();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    assert_eq!(planner_turns(&ep), 2);
    let replan = planner_prompt(&ep, 1);
    assert!(
        replan.contains("40 tasks") && replan.contains("at most 30"),
        "{replan}"
    );
    let files = ep.fx.git_in(
        &ep.fx.repo,
        &["ls-tree", "-r", "--name-only", "epic/e", "src/a"],
    );
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        [
            "src/a/t1.txt",
            "src/a/t2.txt",
            "src/a/t3.txt",
            "src/a/t4.txt",
            "src/a/t5.txt"
        ]
    );
}
