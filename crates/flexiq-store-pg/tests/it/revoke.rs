//! Revoked tasks on the enqueue paths that the conformance suite's small batches do not reach:
//! the transactional path (unique keys, dependencies, an admission cap) refuses the whole
//! batch with `TaskRevoked` and writes nothing, not even the queue's registration.

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore, QueueControl};
use flexiq_core::{EnqueueOptions, Error, NewJob};

use crate::common::{admin, drop_schema, fresh_schema, job_on, now_ms, open};

fn keyed(task: &str, key: &str, now: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("fresh".into()),
        unique_key: Some(key.to_string()),
        ..Default::default()
    };
    NewJob::build(task, b"{}".to_vec(), opts, now).unwrap()
}

async fn rows(schema: &str, table: &str) -> i64 {
    admin().await.query_one(&format!("SELECT count(*) FROM \"{schema}\".{table}"), &[]).await.unwrap().get(0)
}

#[tokio::test]
async fn the_transactional_enqueue_of_a_revoked_task_writes_nothing() {
    let schema = fresh_schema("revtx");
    let s = open(&schema, 2).await;
    let now = now_ms();
    let dep = job_on("base", now);
    let dep_id = dep.id.clone();
    s.enqueue(EnqueueRequest { jobs: vec![dep], max_pending: None, now }).await.unwrap();
    s.revoke_task("bad").await.unwrap();
    let (jobs_before, queues_before) = (rows(&schema, "jobs").await, rows(&schema, "queues").await);

    let mut after_dep = keyed("bad", "k2", now);
    after_dep.depends_on = vec![dep_id.clone()];
    let batches = [
        (vec![keyed("good", "k1", now), keyed("bad", "k2", now)], None),
        (vec![job_on("fresh", now), after_dep], None),
        (vec![NewJob { task: "bad".into(), ..job_on("fresh", now) }], Some(10)),
    ];
    for (jobs, max_pending) in batches {
        let err = s.enqueue(EnqueueRequest { jobs, max_pending, now }).await.unwrap_err();
        assert!(matches!(&err, Error::TaskRevoked { task } if task == "bad"), "{err}");
    }
    assert_eq!(rows(&schema, "jobs").await, jobs_before, "no job row was written");
    assert_eq!(rows(&schema, "queues").await, queues_before, "no queue was registered");
    assert_eq!(rows(&schema, "job_deps").await, 0);
    let dep = s.get(&dep_id).await.unwrap().unwrap();
    assert_eq!(s.job_dag(&dep.id).await.unwrap().edges.len(), 0, "the dependency gained no edge");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
