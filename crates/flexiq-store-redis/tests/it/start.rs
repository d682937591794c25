//! Where an enqueued job with dependencies starts, as `enqueue.lua` applies the verdict Rust
//! gives it per dependency status: a job whose dependency already failed is cancelled in the
//! enqueue itself with what `Event::DependencyFailed` writes (finished now, the dependency named),
//! holds no unique key, is counted and listed as cancelled, and fails later jobs of its batch
//! that depend on it; a job with an open dependency waits.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore, ListJobsRequest,
};
use flexiq_core::{EnqueueOptions, JobFilter, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;

use crate::harness::RedisHarness;

const NOW: i64 = 1_700_000_000_000;

fn job(task: &str, deps: &[&JobId], unique_key: Option<&str>) -> NewJob {
    let opts = EnqueueOptions {
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        unique_key: unique_key.map(str::to_string),
        ..Default::default()
    };
    NewJob::build(task, b"x".to_vec(), opts, NOW).unwrap()
}

async fn enqueue(s: &RedisStore, jobs: Vec<NewJob>, now: i64) -> Vec<JobId> {
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await.unwrap();
    out.into_iter().map(|e| e.id).collect()
}

/// A job failed for good (not retryable).
async fn failed_job(s: &RedisStore) -> JobId {
    let id = enqueue(s, vec![job("first", &[], None)], NOW).await.remove(0);
    let claim = ClaimRequest { queues: vec![], limit: 1, worker_id: "w".into(), now: NOW };
    let c = s.claim(claim).await.unwrap().remove(0);
    let kind = AckKind::Fail { error: "bad input".into(), retryable: false };
    s.ack(AckRequest { acks: vec![Ack { job_id: c.job.id, fence: c.fence, kind }], now: NOW + 1 })
        .await
        .unwrap();
    assert_eq!(s.get(&id).await.unwrap().unwrap().status, JobStatus::Failed);
    id
}

#[tokio::test]
async fn a_job_whose_dependency_failed_starts_cancelled_and_fails_its_batch_dependents() {
    let h = RedisHarness::new();
    let s = h.store("start").await.unwrap();
    let failed = failed_job(&s).await;
    let open = enqueue(&s, vec![job("open", &[], None)], NOW).await.remove(0);

    let at = NOW + 10;
    let x = job("x", &[&failed], Some("u1"));
    // `y` lists the open job first: the failed one, wherever it stands, decides.
    let y = job("y", &[&open, &x.id], None);
    let z = job("z", &[&open], None);
    let ids = enqueue(&s, vec![x, y, z], at).await;
    let get = |i: usize| {
        let (s, id) = (s.clone(), ids[i].clone());
        async move { s.get(&id).await.unwrap().unwrap() }
    };

    let (jx, jy, jz) = (get(0).await, get(1).await, get(2).await);
    assert_eq!((jx.status, jx.finished_at), (JobStatus::Cancelled, Some(at)));
    assert_eq!(jx.last_error, Some(format!("dependency {failed} did not complete")));
    assert_eq!((jy.status, jy.finished_at), (JobStatus::Cancelled, Some(at)));
    assert_eq!(jy.last_error, Some(format!("dependency {} did not complete", ids[0])));
    assert_eq!((jz.status, jz.finished_at, jz.last_error), (JobStatus::Waiting, None, None));

    let stats = s.stats(None).await.unwrap();
    assert_eq!((stats.pending, stats.waiting, stats.cancelled, stats.failed), (1, 1, 2, 1), "{stats:?}");
    assert_eq!(s.count_pending("default").await.unwrap(), 1);
    let filter = JobFilter { status: Some(JobStatus::Cancelled), ..Default::default() };
    let mut cancelled: Vec<JobId> = s
        .list_jobs(ListJobsRequest { filter, limit: 10, offset: 0 })
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    cancelled.sort();
    let mut expected = vec![ids[0].clone(), ids[1].clone()];
    expected.sort();
    assert_eq!(cancelled, expected);

    // The cancelled job never held its unique key: the next job with that key is created.
    let again = s
        .enqueue(EnqueueRequest { jobs: vec![job("x", &[], Some("u1"))], max_pending: None, now: at })
        .await
        .unwrap();
    assert!(again[0].created);
    assert_ne!(again[0].id, ids[0]);
    h.cleanup_now().await;
}
