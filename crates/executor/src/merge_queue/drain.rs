//! A batch taken out of the line of stories waiting ([`MergeQueue`]) under the merge lock, and
//! integrated.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::batch::Batch;
#[cfg(doc)]
use crate::queue::MergeQueue;
use crate::shared::{EpicHead, Shared};

/// Integrates the first `merge_batch` requests waiting in the run's queue as one batch, numbered in the run,
/// under the merge lock `head`, which the caller (whichever waiting story took it, `story`)
/// holds; `(own, run)` are that story's token and the run's, under which it is. A batch of the
/// story's own request alone is the story's to cancel (`epic stop` undoes its merge); one that
/// holds other stories' requests is the run's: a stop of the story that drives it must not undo
/// their merges (its own merges with them, and the stop comes too late).
pub(crate) async fn drain(
    shared: &Arc<Shared>,
    (own, run): (&CancellationToken, &CancellationToken),
    story: &str,
    head: &mut EpicHead,
) {
    let requests = shared.queue.take(shared.config.merge_batch);
    if !requests.is_empty() {
        let alone = requests.len() == 1 && requests[0].story.id == story;
        let cancel = if alone { own } else { run };
        let number = shared.queue.next_batch();
        Batch::new(shared, cancel, head, number)
            .integrate(requests)
            .await;
    }
}
