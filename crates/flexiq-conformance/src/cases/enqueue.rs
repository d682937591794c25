//! Enqueue: ids, order, defaults, unique keys, admission caps and bad input.

use crate::fixtures::{job, now, open};
use crate::Harness;
use flexiq_core::store::EnqueueRequest;
use flexiq_core::JobStatus;

/// A batch comes back with one id per job, in order, every job pending.
pub async fn enqueue_returns_ids_in_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<_> = (0..5).map(|i| job("t", &format!("{i}"))).collect();
    let expected: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now: now() }).await.unwrap();
    assert_eq!(out.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), expected);
    for id in &expected {
        assert_eq!(s.get(id).await.unwrap().unwrap().status, JobStatus::Pending);
    }
}
