//! The store's connections that are checked out, so that closing the store can cancel what
//! they still run on the server.
//!
//! A future dropped mid-query (a caller that gave up, a task aborted at shutdown) gives its
//! connection back, but the server goes on with the query until it next writes to the client.
//! A query waiting for a lock can wait indefinitely that way, holding the locks it already has,
//! and deadlock with whatever comes next (a migration, a `DROP SCHEMA`). Closing the store
//! therefore gives the connections still checked out a moment to come back (an ack in flight
//! finishes and is kept), then sends the server a cancel request for each one that has not,
//! and returns once each was delivered (or could not be). A cancelled statement rolls its
//! transaction back whole, so nothing is half-written; a commit the server already made stays.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_postgres::{CancelToken, NoTls};

/// How long closing waits for the server to take one cancel request.
const CANCEL_WAIT: Duration = Duration::from_secs(2);
/// How long closing lets checked-out connections come back before cancelling them.
pub(crate) const GRACE: Duration = Duration::from_millis(200);

/// The cancel tokens of the connections checked out, by checkout.
#[derive(Default)]
pub(crate) struct Busy {
    next: AtomicU64,
    tokens: Mutex<HashMap<u64, CancelToken>>,
    /// Told whenever a connection comes back.
    back: Notify,
}

/// A checkout's entry, removed when the connection goes back.
pub(crate) struct Entry {
    busy: Arc<Busy>,
    id: u64,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.busy.tokens().remove(&self.id);
        self.busy.back.notify_waiters();
    }
}

impl Busy {
    fn tokens(&self) -> MutexGuard<'_, HashMap<u64, CancelToken>> {
        // The map stays whole whatever a panicking holder did: each change is one call.
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a checked-out connection's cancel token until the entry is dropped.
    pub(crate) fn enter(self: &Arc<Self>, token: CancelToken) -> Entry {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.tokens().insert(id, token);
        Entry { busy: self.clone(), id }
    }

    /// How many connections are checked out.
    pub(crate) fn len(&self) -> usize {
        self.tokens().len()
    }

    /// Waits until no connection is checked out, at most `grace`.
    pub(crate) async fn settle(&self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async {
            loop {
                let back = self.back.notified();
                if self.len() == 0 {
                    return;
                }
                back.await;
            }
        })
        .await;
    }

    /// Asks the server to cancel whatever each checked-out connection is running. Returns how
    /// many requests the server took.
    pub(crate) async fn cancel_all(&self) -> usize {
        let tokens: Vec<CancelToken> = self.tokens().values().cloned().collect();
        let sent = futures::future::join_all(
            tokens.iter().map(|t| tokio::time::timeout(CANCEL_WAIT, t.cancel_query(NoTls))),
        )
        .await;
        let taken = sent.iter().filter(|r| matches!(r, Ok(Ok(())))).count();
        if taken < tokens.len() {
            let missed = tokens.len() - taken;
            tracing::debug!(
                "flexiq postgres close: {missed} of {} cancel requests not delivered",
                tokens.len()
            );
        }
        taken
    }
}
