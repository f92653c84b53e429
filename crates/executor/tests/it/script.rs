//! The script seat: the story's file blocks planned, written and committed, offline.

use std::sync::Arc;

use epic_agents::ScriptSeat;

use crate::support::{Events, Fixture, Run};

const DESCRIPTION: &str = "Add two files.

```file src/hello.txt
hello
```

Some prose between.

~~~file src/nested/world.md
# World
```rust
fn main() {}
```
~~~
";

#[tokio::test]
async fn the_script_seat_writes_each_file_block_as_a_task() {
    let fixture = Fixture::new();
    let mut run = Run::new(Arc::new(ScriptSeat));
    run.description = DESCRIPTION.to_owned();
    run.reviewers = vec![Arc::new(ScriptSeat)];
    let run = run.gates(&["test -f src/hello.txt"]);
    let done = run
        .on(&fixture, &Events::default())
        .await
        .result
        .expect("done");
    assert_eq!(
        done.committed,
        ["write src/hello.txt", "write src/nested/world.md"]
    );
    assert_eq!(
        fixture.story_commits(),
        ["s: write src/hello.txt", "s: write src/nested/world.md"]
    );
    assert_eq!(
        std::fs::read_to_string(fixture.worktree.join("src/hello.txt")).expect("file"),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.worktree.join("src/nested/world.md")).expect("file"),
        "# World\n```rust\nfn main() {}\n```\n"
    );
}

#[tokio::test]
async fn a_story_without_file_blocks_is_one_satisfied_task() {
    let fixture = Fixture::new();
    let mut run = Run::new(Arc::new(ScriptSeat));
    run.description = "Nothing to write here.".to_owned();
    let done = run
        .on(&fixture, &Events::default())
        .await
        .result
        .expect("done");
    assert_eq!(done.noop, ["The story"]);
    assert!(fixture.story_commits().is_empty());
}
