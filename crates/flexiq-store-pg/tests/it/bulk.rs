//! Large simple batches (the `COPY` path): every field stored as given, and a batch naming a
//! revoked task refused whole.

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore, QueueControl};
use flexiq_core::{Backoff, EnqueueOptions, ErrorKind, JobStatus, NewJob};

use crate::common::{drop_schema, fresh_schema, open};

fn varied(i: usize, now: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some(format!("q{}", i % 3)),
        priority: Some(i as i32 % 5 - 2),
        run_at: Some(now + (i as i64 % 7) * 1_000),
        max_retries: Some(i as u32 % 4),
        backoff: Some(Backoff { base_ms: 10 + i as u64, max_ms: 100_000 + i as u64 }),
        timeout_ms: (i % 2 == 0).then_some(5_000 + i as u64),
        metadata: (i % 3 == 0).then(|| format!("{{\"n\":{i}}}")),
        group_key: (i % 4 == 0).then(|| format!("g{i}")),
        workflow_run_id: (i % 5 == 0).then(|| format!("run{i}")),
        workflow_stage_id: (i % 5 == 0).then(|| format!("stage{i}")),
        ..Default::default()
    };
    NewJob::build(if i % 2 == 0 { "even" } else { "odd" }, vec![i as u8; i % 40], opts, now).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_batch_stores_every_field_as_given() {
    let schema = fresh_schema("bulk");
    let s = open(&schema, 2).await;
    let now = 1_700_000_000_000;
    let jobs: Vec<NewJob> = (0..600).map(|i| varied(i, now)).collect();
    let out = s.enqueue(EnqueueRequest { jobs: jobs.clone(), max_pending: None, now }).await.unwrap();
    assert_eq!(out.len(), jobs.len());
    for (e, j) in out.iter().zip(&jobs) {
        assert!(e.created);
        assert_eq!(e.id, j.id);
        let got = s.get(&j.id).await.unwrap().expect("stored");
        assert_eq!(got.queue, j.queue);
        assert_eq!(got.task, j.task);
        assert_eq!(got.payload, j.payload);
        assert_eq!(got.priority, j.priority);
        assert_eq!(got.status, JobStatus::Pending);
        assert_eq!(got.max_retries, j.max_retries);
        assert_eq!(got.backoff, j.backoff);
        assert_eq!(got.created_at, now);
        assert_eq!(got.run_at, j.run_at);
        assert_eq!(got.timeout_ms, j.timeout_ms);
        assert_eq!(got.metadata, j.metadata);
        assert_eq!(got.group_key, j.group_key);
        assert_eq!(got.workflow_run_id, j.workflow_run_id);
        assert_eq!(got.workflow_stage_id, j.workflow_stage_id);
    }
    assert_eq!(s.count_pending("q1").await.unwrap(), 200);
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_batch_with_a_revoked_task_inserts_nothing() {
    let schema = fresh_schema("bulkrev");
    let s = open(&schema, 2).await;
    let now = 1_700_000_000_000;
    s.revoke_task("odd").await.unwrap();
    let jobs: Vec<NewJob> = (0..600).map(|i| varied(i, now)).collect();
    let err = s.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await.unwrap_err();
    assert!(matches!(&err, flexiq_core::Error::TaskRevoked { task } if task == "odd"), "{err}");
    assert_eq!(err.kind(), ErrorKind::TaskRevoked);
    for q in ["q0", "q1", "q2"] {
        assert_eq!(s.count_pending(q).await.unwrap(), 0);
    }
    let evens: Vec<NewJob> = (0..600).step_by(2).map(|i| varied(i, now)).collect();
    s.enqueue(EnqueueRequest { jobs: evens, max_pending: None, now }).await.unwrap();
    assert_eq!(s.count_pending("q0").await.unwrap(), 100);
    drop_schema(&schema).await;
}
