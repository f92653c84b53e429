//! What every role's prompt carries, on a real repository with a shell agent that keeps each
//! prompt it reads: the epic text, the checkouts off limits, the `read_first` files inlined as
//! the story's worktree holds them (a dependency's merged file among them), each dependency with
//! what it provides and the paths its merge changed, the task descriptions in the plan, the
//! house rules, and for reviewers and judges the diff itself.

use epic_story_plan::{Story, StoryPlan};

use crate::epic_support::{EpicFixture, statuses};
use crate::support::Events;

/// Keeps each prompt in `$ROOT/prompts/<story>-<role>.txt`; plans one task, writes
/// `src/<story>/done.txt` as coder, clears as judge or reviewer.
const RECORDING_AGENT: &str = r#"prompt=$(cat)
mkdir -p "$ROOT/prompts"
printf '%s\n' "$prompt" > "$ROOT/prompts/$EPIC_STORY-$EPIC_ROLE.txt"
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"build","description":"write the story file, then stop"}]}' ;;
coder)
  mkdir -p "src/$EPIC_STORY"
  echo "made by $EPIC_STORY" > "src/$EPIC_STORY/done.txt"
  echo done
  ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_role_reads_what_it_needs_in_its_prompt() {
    let ep = EpicFixture::new();
    let agent = ep.fx.agent("recording", RECORDING_AGENT);
    let mut a = Story::new("a", "Story a", ["src/a"]);
    a.provides = vec!["a::Thing".into()];
    let mut b = Story::new("b", "Story b", ["src/b"]).depending_on(["a"]);
    b.read_first = vec![
        "src/a/done.txt".into(),
        "README.md".into(),
        "missing.md".into(),
    ];
    let plan = StoryPlan {
        epic_id: "e".into(),
        epic: "Build two things, the second on the first.".into(),
        stories: vec![a, b],
    }
    .validate()
    .expect("valid plan");
    // Fresh worktrees: the prompts name each story's own worktree.
    let mut config = ep.fresh_config();
    config.coder = agent.clone().into();
    config.judge = Some(agent.clone().into());
    config.reviewers = vec![agent.into()];
    config.extra_rules = "## RULES.md\n\nTabs, never spaces.\n".into();
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:done"]);

    let prompt = |role: &str| {
        std::fs::read_to_string(ep.fx.root.join(format!("prompts/b-{role}.txt")))
            .unwrap_or_else(|error| panic!("b's {role} ran: {error}"))
    };
    let worktrees = ep.fx.root.join("repo.worktrees/e");
    for role in ["planner", "coder", "reviewer", "judge"] {
        let text = prompt(role);
        let expected = [
            "Build two things, the second on the first.".to_owned(),
            format!(
                "Your working directory is {}",
                worktrees.join("b").display()
            ),
            format!("- {} (the main checkout", ep.fx.repo.display()),
            format!("- {} (the epic's worktree", ep.epic_worktree().display()),
            format!("- {} (story a's worktree)", worktrees.join("a").display()),
            "- a (\"Story a\")\n  provides: a::Thing\n  its merge changed: src/a/done.txt\n"
                .to_owned(),
            "# House rules".to_owned(),
            "## RULES.md\n\nTabs, never spaces.".to_owned(),
            "- missing.md (not in your working tree yet)".to_owned(),
            // Inlined from b's worktree: a's file reached it through a's merge.
            "## src/a/done.txt\n\n```\nmade by a\n```".to_owned(),
            "## README.md\n\n```\nhello\n```".to_owned(),
        ];
        for needle in expected {
            assert!(
                text.contains(&needle),
                "b's {role} prompt lacks {needle:?}:\n{text}"
            );
        }
    }
    let coder = prompt("coder");
    assert!(
        coder.contains("1. [ ] build  ← this task\n   write the story file, then stop\n"),
        "the plan lists each task with its description:\n{coder}"
    );
    for role in ["reviewer", "judge"] {
        let text = prompt(role);
        assert!(
            text.contains("```diff\n") && text.contains("+made by b\n"),
            "b's {role} reads the diff itself:\n{text}"
        );
    }
}
