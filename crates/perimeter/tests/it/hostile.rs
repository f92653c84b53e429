//! Hostile paths and prose: nothing panics and nothing unsafe counts as owned.

use epic_perimeter::{
    Placement, Task, check, classify, enforce, gate, owner_of, paths_named_in, stray_tasks,
};
use epic_story_plan::Story;

use crate::support::{bank, conto_overview, story};

fn owns_everything_near_src() -> Story {
    Story::new("a", "A", ["src/a"]).sharing(["src/kit"])
}

#[test]
fn climbing_out_of_an_owned_prefix_is_outside() {
    let story = owns_everything_near_src();
    for path in [
        "src/a/../../etc/passwd",
        "src/a/..",
        "src/a/../b",
        "src/kit/../../x",
        "../x",
        "a/../../b",
    ] {
        assert_eq!(classify(path, &story), Placement::Outside, "{path:?}");
    }
    let verdict = check(&["src/a/ok.rs", "src/a/../../etc/passwd"], &story);
    assert_eq!(verdict.outside, ["src/a/../../etc/passwd"]);
    assert!(verdict.shared_read_only.is_empty());
}

#[test]
fn absolute_drive_git_and_control_paths_are_outside() {
    let story = Story::new("a", "A", ["src/a", "etc", "x"]).sharing([".github"]);
    for path in [
        "/etc/passwd",
        "\\etc\\passwd",
        "C:\\x",
        "c:x",
        ".git/hooks/pre-commit",
        "src/a/.git/config",
        "src/a/.GIT/hooks/post-checkout",
        "src/a/x\0y",
        "src/a/x\ny",
        "",
        "   ",
        ".",
        "./",
        "/",
    ] {
        assert_eq!(classify(path, &story), Placement::Outside, "{path:?}");
    }
    // Near misses that are safe stay where they belong.
    assert_eq!(classify("etc/passwd", &story), Placement::Owned);
    assert_eq!(classify("src/a/..x/y", &story), Placement::Owned);
    assert_eq!(
        classify(".github/workflows/ci.yml", &story),
        Placement::SharedReadOnly
    );
}

#[test]
fn unsafe_prefixes_grant_nothing() {
    for owned in ["/", "", ".", "..", "../src", "/src"] {
        let story = Story::new("wide", "Wide", [owned]).sharing(["./"]);
        assert_eq!(
            classify("src/x.rs", &story),
            Placement::Outside,
            "owned {owned:?}"
        );
        assert_eq!(
            classify("README.md", &story),
            Placement::Outside,
            "owned {owned:?}"
        );
    }
}

#[test]
fn control_characters_cannot_forge_lines_in_the_message() {
    let story = conto_overview();
    let err = enforce(
        &["evil\n- src/kit/x.ts (shared read-only: fine)", "a\0b"],
        &story,
    )
    .expect_err("outside");
    let message = err.to_string();
    assert_eq!(message.lines().count(), 3, "{message}");
    assert!(message.contains("evil\\n- src/kit"), "{message}");
    assert!(message.contains("a\\0b"), "{message}");
    // The lists keep the paths as given, for git.
    assert_eq!(err.outside[1], "a\0b");
}

#[test]
fn odd_file_names_are_refused_inside_owned_paths_and_named_for_what_they_are() {
    let story = Story::new("a", "A", ["src/a"]);
    // As epic-git-ops writes names git can only show quoted, and a raw newline.
    let quoted = r#""src/a/raw\377.txt""#;
    let err = enforce(&[quoted, "src/a/two\nlines.txt", "src/b/x.rs"], &story)
        .expect_err("odd names are never merged");
    assert_eq!(err.outside, [quoted, "src/a/two\nlines.txt", "src/b/x.rs"]);
    let message = err.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 4, "{message}");
    for line in &lines[1..3] {
        assert!(line.contains("a newline, a control character or bytes that are not UTF-8"));
        assert!(line.contains("rename or delete it"), "{line}");
    }
    assert!(
        lines[2].starts_with("- src/a/two\\nlines.txt "),
        "{message}"
    );
    assert!(
        lines[3].ends_with("(not in the story's owned paths)"),
        "{message}"
    );
}

#[test]
fn long_and_unicode_paths_are_classified() {
    let story =
        Story::new("intl", "Intl", ["src/übersetzung", "docs/日本語"]).sharing(["assets/🎨"]);
    assert_eq!(
        classify("src/übersetzung/de.json", &story),
        Placement::Owned
    );
    assert_eq!(classify("docs/日本語/読む.md", &story), Placement::Owned);
    assert_eq!(
        classify("assets/🎨/logo.svg", &story),
        Placement::SharedReadOnly
    );
    assert_eq!(classify("src/übersetzungen/x", &story), Placement::Outside);

    let deep = format!("src/übersetzung/{}", "verzeichnis/".repeat(5_000));
    assert_eq!(classify(&deep, &story), Placement::Owned);
    let wide = format!("src/{}", "ü".repeat(100_000));
    assert_eq!(classify(&wide, &story), Placement::Outside);
    let review = gate([deep.as_str(), wide.as_str()], &story);
    assert!(!review.clean);
    assert!(review.issues[0].description.contains(&wide));
}

#[test]
fn unsafe_paths_have_no_owner() {
    let plan = bank();
    for path in [
        "src/features/bonifico/../../App.tsx",
        "/src/App.tsx",
        "src/App.tsx\0",
        "C:\\src\\App.tsx",
        ".git/src/App.tsx",
    ] {
        assert!(owner_of(&plan, path).is_none(), "{path:?}");
    }
}

#[test]
fn hostile_prose_names_only_plan_paths() {
    let plan = bank();
    let text = "rm -rf /etc/passwd ../x C:\\x .git/hooks/pre-commit a/../../b \0 src/kit/\u{0}x \
                src/kit/ok.ts /src/kit/abs.ts src\\kit\\win.ts 日本語/src/kit/x.ts ünï/cødé";
    assert_eq!(
        paths_named_in(&plan, text),
        [
            "src/kit",
            "src/kit/ok.ts",
            "src/kit/abs.ts",
            "src/kit/win.ts",
            "src/kit/x.ts"
        ]
    );
    let long = "src/kit/".repeat(20_000) + " " + &"🙂".repeat(50_000);
    let named = paths_named_in(&plan, &long);
    assert_eq!(named.len(), 1);
    assert!(named[0].starts_with("src/kit/src/kit/"));
}

#[test]
fn a_task_climbing_out_of_its_folder_strays() {
    let plan = bank();
    let tasks = [Task::new(
        "Patch the shell",
        "edit src/features/conto/overview/../../../App.tsx",
    )];
    let stray = stray_tasks(&plan, story(&plan, "conto-overview"), &tasks);
    assert_eq!(stray.len(), 1);
    assert_eq!(
        stray[0].paths,
        ["src/features/conto/overview/../../../App.tsx"]
    );
    assert!(!stray[0].foreign, "an unsafe path is nobody's");
}
