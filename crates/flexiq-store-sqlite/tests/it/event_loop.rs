//! A write polled on an event loop's thread (`flexiq_core::event_loop`) commits there when the
//! write lock is free, and never waits for it when another process holds it: the poll returns
//! at once and the write is committed by the writer thread once the lock is released.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// Polls `fut` `n` times with a waker that does nothing, returning the last poll.
fn poll_n<F: Future>(fut: std::pin::Pin<&mut F>, n: usize) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut fut = fut;
    for _ in 1..n {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return Poll::Ready(v);
        }
    }
    fut.poll(&mut cx)
}

fn open(dir: &tempfile::TempDir) -> SqliteStore {
    // A long busy timeout: a write that waited for the lock would hold the poll for it.
    let opts = SqliteOptions { busy_timeout_ms: 60_000, ..Default::default() };
    SqliteStore::open(dir.path().join("q.db"), opts).unwrap()
}

#[test]
fn an_event_loop_thread_commits_a_small_write_within_its_own_poll() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _in_rt = rt.enter();
    std::thread::scope(|s| {
        s.spawn(|| {
            flexiq_core::event_loop::mark_this_thread();
            let _in_rt = rt.enter();
            let job = job_on("q");
            let id = job.id.clone();
            let fut = pin!(store.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now: T0 }));
            // The first poll yields once so other callers can join the commit; the second commits.
            let Poll::Ready(done) = poll_n(fut, 2) else {
                panic!("job {id}: not committed by the thread's own poll")
            };
            assert_eq!(done.unwrap()[0].id, id);
        });
    });
    assert_eq!(rt.block_on(store.count_pending("q")).unwrap(), 1);
}

#[test]
fn an_event_loop_thread_never_waits_for_a_write_lock_another_connection_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let job = job_on("q");
    let id = job.id.clone();
    let req = EnqueueRequest { jobs: vec![job], max_pending: None, now: T0 };
    std::thread::scope(|s| {
        s.spawn(|| {
            let other = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
            other.execute_batch("BEGIN IMMEDIATE").unwrap();
            flexiq_core::event_loop::mark_this_thread();
            let _in_rt = rt.enter();
            let mut fut = pin!(store.enqueue(req));
            // Were the lock waited for here, these polls would sit out the busy timeout and
            // then fail with a busy error.
            assert!(poll_n(fut.as_mut(), 4).is_pending(), "job {id}: the write did not wait elsewhere");
            other.execute_batch("COMMIT").unwrap();
            let done = rt.block_on(fut).unwrap();
            assert_eq!(done[0].id, id);
        });
    });
    assert_eq!(rt.block_on(store.count_pending("q")).unwrap(), 1);
}
