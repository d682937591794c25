//! Readiness: when a started worker is actually taking jobs.
//!
//! Callers that start a worker and then enqueue (tests, SDK `worker.start()`, a process that
//! reports itself healthy) need to know the claim loop is live, not merely spawned: the worker
//! has registered itself and one claim has reached the store. The dispatch loop flips a watch
//! to `Ready` after its first successful claim; a worker that stops first flips it to
//! `Stopped`, so waiting never hangs on a worker that failed to start.

use tokio::sync::watch;

use crate::error::{Error, Result};

/// Where a worker is in its start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readiness {
    /// Spawned; not yet claiming.
    Starting,
    /// Registered, and a claim has reached the store.
    Ready,
    /// Stopped (shut down or failed), whether or not it was ever ready.
    Stopped,
}

/// The sending side, held by the running worker.
pub(crate) type ReadySender = watch::Sender<Readiness>;

/// A new channel in the `Starting` state.
pub(crate) fn channel() -> (ReadySender, watch::Receiver<Readiness>) {
    watch::channel(Readiness::Starting)
}

/// Marks the worker ready (once; later calls change nothing).
pub(crate) fn mark_ready(tx: &ReadySender) {
    tx.send_if_modified(|s| {
        if *s == Readiness::Starting {
            *s = Readiness::Ready;
            true
        } else {
            false
        }
    });
}

/// Marks the worker stopped.
pub(crate) fn mark_stopped(tx: &ReadySender) {
    tx.send_replace(Readiness::Stopped);
}

/// Waits until the worker is ready; `Closed` naming the worker when it stopped first.
pub(crate) async fn wait_ready(mut rx: watch::Receiver<Readiness>, worker_id: &str) -> Result<()> {
    let stopped =
        || Error::Core(flexiq_core::Error::Closed(format!("worker {worker_id} stopped before it was ready")));
    loop {
        match *rx.borrow_and_update() {
            Readiness::Ready => return Ok(()),
            Readiness::Stopped => return Err(stopped()),
            Readiness::Starting => {}
        }
        if rx.changed().await.is_err() {
            return if *rx.borrow() == Readiness::Ready { Ok(()) } else { Err(stopped()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ready_then_stopped_stays_ready_for_waiters_that_saw_it() {
        let (tx, rx) = channel();
        mark_ready(&tx);
        assert!(wait_ready(rx.clone(), "w").await.is_ok());
        mark_stopped(&tx);
        assert!(wait_ready(rx, "w").await.is_err());
    }

    #[tokio::test]
    async fn a_worker_that_stops_first_is_an_error_naming_it() {
        let (tx, rx) = channel();
        let waiter = tokio::spawn(async move { wait_ready(rx, "w-7").await });
        mark_stopped(&tx);
        let err = waiter.await.unwrap().unwrap_err();
        assert!(err.to_string().contains("w-7"), "{err}");
    }

    #[tokio::test]
    async fn dropping_the_sender_unblocks_waiters() {
        let (tx, rx) = channel();
        drop(tx);
        assert!(wait_ready(rx, "w").await.is_err());
    }
}
