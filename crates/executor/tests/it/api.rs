//! Compile-time guarantees the scheduler relies on: the loop's futures are `Send` (so they can
//! be spawned on a multi-threaded runtime) and its parts are `Send + Sync`. (The same of the
//! crate-private gates and chats is checked by their modules' unit tests.)

use std::sync::Arc;

use epic_agents::ScriptSeat;
use epic_events::discard_events;
use epic_executor::{LoopConfig, Seats, StoryJob, TaskLoop};
use epic_gates::Gates;
use tokio_util::sync::CancellationToken;

use crate::support::{Fixture, plan};

fn is_send<T: Send>(_: &T) {}
fn is_send_sync<T: Send + Sync>() {}

#[test]
fn the_loop_and_its_futures_are_send() {
    is_send_sync::<TaskLoop>();
    is_send_sync::<Gates>();
    is_send_sync::<epic_agents::CommandSeat>();

    let fixture = Fixture::new();
    let plan = Arc::new(plan(""));
    let story = Arc::new(plan.stories[0].clone());
    let job = StoryJob::new(
        &fixture.epic_dir(),
        plan,
        story,
        fixture.worktree.clone(),
        "epic/e",
        0,
    )
    .expect("job");
    let tasks = TaskLoop::new(
        Arc::new(fixture.git()),
        Gates::none(),
        Seats {
            coder: Arc::new(ScriptSeat).into(),
            reviewers: Vec::new(),
            verifier: None,
        },
        LoopConfig::default(),
        discard_events(),
    );
    let cancel = CancellationToken::new();
    let future = tasks.run(&job, &cancel);
    is_send(&future);
    drop(future);
}
