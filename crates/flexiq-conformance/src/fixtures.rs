//! Small helpers the cases share.

use std::sync::Arc;

use flexiq_core::store::{ClaimRequest, EnqueueRequest};
use flexiq_core::{ClaimedJob, EnqueueOptions, JobId, NewJob, Store};

use crate::Harness;

/// A fixed base clock (Unix ms) so cases control time explicitly.
pub const T0: i64 = 1_700_000_000_000;

/// The base clock.
pub fn now() -> i64 {
    T0
}

/// Opens a namespace, failing the case on error.
pub async fn open(h: &dyn Harness, ns: &str) -> Arc<dyn Store> {
    h.open(ns).await.unwrap_or_else(|e| panic!("open namespace {ns}: {e}"))
}

/// A valid job of `task` with `payload` text and default options.
pub fn job(task: &str, payload: &str) -> NewJob {
    NewJob::build(task, payload.as_bytes().to_vec(), EnqueueOptions::default(), T0).unwrap()
}

/// A valid job with options, built at `T0`.
pub fn job_with(task: &str, payload: &str, opts: EnqueueOptions) -> NewJob {
    NewJob::build(task, payload.as_bytes().to_vec(), opts, T0).unwrap()
}

/// Enqueues one job at `at` and returns its id.
pub async fn put(s: &dyn Store, j: NewJob, at: i64) -> JobId {
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: at }).await.unwrap().remove(0).id
}

/// Claims up to `limit` from any queue at `at`.
pub async fn take(s: &dyn Store, limit: u32, at: i64) -> Vec<ClaimedJob> {
    s.claim(ClaimRequest { queues: vec![], limit, worker_id: "w1".into(), now: at }).await.unwrap()
}
