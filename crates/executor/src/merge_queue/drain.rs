//! A batch taken out of the line of stories waiting ([`MergeQueue`]) under the merge lock, and
//! integrated.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::batch::Batch;
#[cfg(doc)]
use crate::queue::MergeQueue;
use crate::shared::{EpicHead, Shared};

/// Integrates the first `merge_batch` requests waiting in the run's queue as one batch, numbered in the run,
/// under the merge lock `head`, which the caller (whichever waiting story took it) holds;
/// `cancel` is that story's token.
pub(crate) async fn drain(shared: &Arc<Shared>, cancel: &CancellationToken, head: &mut EpicHead) {
    let requests = shared.queue.take(shared.config.merge_batch);
    if !requests.is_empty() {
        let number = shared.queue.next_batch();
        Batch::new(shared, cancel, head, number)
            .integrate(requests)
            .await;
    }
}
