//! `stray_tasks`: planned tasks that wander out of their story.

use epic_perimeter::{StrayTask, Task, stray_tasks};

use crate::support::{bank, story};

#[test]
fn only_the_task_naming_another_storys_file_strays() {
    let plan = bank();
    let tasks = [
        Task::new(
            "Build the overview page",
            "Create src/features/conto/overview/page.tsx and its test.",
        ),
        Task::new("Register contoOverviewFeature in App.tsx", ""),
        Task::new(
            "Use src/kit/components.tsx inside src/features/conto",
            "Read the kit's table.",
        ),
        Task::new("Rewrite src/features/bonifico/form.tsx", "").done(),
    ];
    assert_eq!(
        stray_tasks(&plan, story(&plan, "conto-overview"), &tasks),
        [StrayTask {
            title: "Register contoOverviewFeature in App.tsx".into(),
            paths: vec!["src/App.tsx".into()],
            foreign: true,
        }]
    );
}

#[test]
fn a_file_of_another_story_is_foreign() {
    let plan = bank();
    let tasks = [Task::new(
        "Add the route",
        "Create src/features/bonifico/route.tsx exporting the page.",
    )];
    let stray = stray_tasks(&plan, story(&plan, "conto-overview"), &tasks);
    assert_eq!(stray.len(), 1);
    assert_eq!(stray[0].paths, ["src/features/bonifico/route.tsx"]);
    assert!(stray[0].foreign, "bonifico-form owns it");
}

#[test]
fn a_new_file_nobody_owns_strays_but_is_not_foreign() {
    // The reference's second stray case: the transfer story owns only its form, and a task
    // creates a route beside it, which no story owns.
    let mut plan = bank();
    plan.stories[1].owned = vec!["src/features/bonifico/form".into()];
    let tasks = [Task::new(
        "Expose the form",
        "Create src/features/bonifico/route.tsx exporting the page.",
    )];
    assert_eq!(
        stray_tasks(&plan, story(&plan, "bonifico-form"), &tasks),
        [StrayTask {
            title: "Expose the form".into(),
            paths: vec!["src/features/bonifico/route.tsx".into()],
            foreign: false,
        }]
    );
}

#[test]
fn a_story_may_name_its_own_files_shared_ones_and_its_ancestors() {
    let plan = bank();
    let tasks = [
        Task::new("Add the route", "Create src/features/bonifico/route.tsx"),
        Task::new(
            "Style it",
            "with src/kit/theme.css, inside src/features and src",
        ),
    ];
    assert!(stray_tasks(&plan, story(&plan, "bonifico-form"), &tasks).is_empty());
}

#[test]
fn a_file_above_an_owned_prefix_is_not_an_ancestor() {
    let plan = bank();
    // `src/features.ts` looks like a file, so it is not "the folder above" anything.
    let tasks = [Task::new(
        "Export it",
        "from src/features.ts and src/features/index.ts",
    )];
    let stray = stray_tasks(&plan, story(&plan, "bonifico-form"), &tasks);
    assert_eq!(stray.len(), 1);
    assert_eq!(stray[0].paths, ["src/features.ts", "src/features/index.ts"]);
    assert!(!stray[0].foreign);
}

#[test]
fn every_stray_task_is_reported_in_order_with_every_path() {
    let plan = bank();
    let tasks = [
        Task::new("Wire App.tsx", "and src/features/bonifico/x.ts"),
        Task::new("Fine", "src/features/conto/overview/a.ts"),
        Task::new("Docs", "update docs/readme.md and src/docs/x.md"),
    ];
    let stray = stray_tasks(&plan, story(&plan, "conto-overview"), &tasks);
    let titles: Vec<&str> = stray.iter().map(|task| task.title.as_str()).collect();
    assert_eq!(titles, ["Wire App.tsx", "Docs"]);
    assert_eq!(
        stray[0].paths,
        ["src/App.tsx", "src/features/bonifico/x.ts"]
    );
    assert!(stray[0].foreign);
    assert_eq!(stray[1].paths, ["src/docs/x.md"]);
    assert!(!stray[1].foreign);
}

#[test]
fn tasks_read_from_the_planner_json() {
    let tasks: Vec<Task> =
        serde_json::from_str(r#"[{"title":"a","description":"b"},{"title":"c"}]"#)
            .expect("planner tasks");
    assert_eq!(tasks, [Task::new("a", "b"), Task::new("c", "")]);
    assert!(!tasks[1].completed);
}
