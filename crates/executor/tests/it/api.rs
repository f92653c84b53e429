//! Compile-time guarantees the scheduler relies on: the loop's futures are `Send` (so they can
//! be spawned on a multi-threaded runtime) and its parts are `Send + Sync`.

use std::sync::Arc;
use std::time::Duration;

use epic_executor::{
    Chat, ChatContext, Gates, LoopConfig, Recorder, Role, ScriptSeat, Seats, StoryJob, TaskLoop,
    discard_events,
};
use tokio_util::sync::CancellationToken;

use crate::support::{Fixture, plan};

fn is_send<T: Send>(_: &T) {}
fn is_send_sync<T: Send + Sync>() {}

#[test]
fn the_loop_and_its_futures_are_send() {
    is_send_sync::<TaskLoop>();
    is_send_sync::<Gates>();
    is_send_sync::<Recorder>();
    is_send_sync::<epic_executor::CommandSeat>();

    let fixture = Fixture::new();
    let plan = Arc::new(plan(""));
    let story = Arc::new(plan.stories[0].clone());
    let job = StoryJob::new(
        &fixture.epic_dir(),
        Arc::clone(&plan),
        Arc::clone(&story),
        fixture.worktree.clone(),
        "epic/e",
        0,
    )
    .expect("job");
    let tasks = TaskLoop::new(
        Arc::new(fixture.git()),
        Gates::none(),
        Seats {
            coder: Arc::new(ScriptSeat),
            reviewers: Vec::new(),
        },
        LoopConfig::default(),
        discard_events(),
    );
    let cancel = CancellationToken::new();
    let future = tasks.run(&job, &cancel);
    is_send(&future);
    drop(future);

    let gates = Gates::none();
    let future = gates.run(&fixture.worktree, &[], &cancel, &|_| {});
    is_send(&future);
    drop(future);

    let recorder = Arc::new(Recorder::new(
        "s",
        fixture.root.join("t"),
        epic_report::PriceTable::default(),
        discard_events(),
    ));
    let mut chat = Chat::new(
        Arc::new(ScriptSeat),
        Role::Coder,
        "",
        ChatContext {
            epic: "e".into(),
            story,
            task: None,
            worktree: fixture.worktree.clone(),
            slot: 0,
            turn_timeout: Duration::from_secs(1),
            cancel,
        },
        recorder,
    );
    let future = chat.ask("hi");
    is_send(&future);
    drop(future);
}
