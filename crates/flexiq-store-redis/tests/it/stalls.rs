//! Stall counts on Redis, read off the server: the count is the job hash's `sc` field, absent
//! until a stall and read as 0 when absent (so hashes written before the field existed count
//! from 0); every way a finished job is started over (dead-letter retry of a stage in place,
//! `retry_jobs`, a workflow upsert replacing a stage, replay) leaves no count behind; and the
//! queue's budget is a field of its control hash next to its concurrency cap.

use flexiq_conformance::fixtures::{at, start};
use flexiq_core::store::{
    Admin, ClaimRequest, DeadLetters, DeadLettersRequest, History, JobStore, ObliterateRequest, QueueControl,
    ReleaseStaleRequest, ReplayRequest, RetryDeadRequest, RetryJobsRequest, SetConcurrencyRequest,
    SetMaxStalledRequest,
};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;
use crate::workflow::{fair, raw, stage, upsert};

const Q: &str = "stalls";

fn job() -> NewJob {
    NewJob::build("t", b"p".to_vec(), EnqueueOptions { queue: Some(Q.into()), ..Default::default() }, at(0))
        .unwrap()
}

fn job_key(h: &RedisHarness, ns: &str, id: &JobId) -> String {
    format!("{{{}:{ns}}}:j:{id}", h.prefix)
}

async fn stall(s: &RedisStore, now: i64) -> Vec<JobId> {
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now }).await.unwrap()
}

async fn budget(s: &RedisStore, queue: &str, max: Option<u32>) {
    s.set_max_stalled(SetMaxStalledRequest { queue: queue.into(), max }).await.unwrap();
}

async fn stall_field(c: &Client, key: &str) -> Option<String> {
    c.hget(key, "sc").await.unwrap()
}

#[tokio::test]
async fn a_hash_without_a_stall_count_reads_zero_and_counts_from_there() {
    let h = RedisHarness::new();
    let s = h.store("legacy").await.unwrap();
    let c = raw(&h).await;
    let claimed = start(&s, job(), at(0)).await;
    let key = job_key(&h, "legacy", &claimed.job.id);
    assert_eq!(stall_field(&c, &key).await, None, "enqueue and claim write no stall count");
    assert_eq!(claimed.job.stall_count, 0);
    assert_eq!(stall(&s, at(2_000)).await, vec![claimed.job.id.clone()]);
    assert_eq!(stall_field(&c, &key).await.as_deref(), Some("1"));
    // A hash an older build wrote has no field: it reads 0 and the next stall counts 1 again.
    let _: i64 = c.hdel(&key, "sc").await.unwrap();
    assert_eq!(s.get(&claimed.job.id).await.unwrap().unwrap().stall_count, 0);
    let again = s
        .claim(ClaimRequest { queues: vec![Q.into()], limit: 1, worker_id: "w".into(), now: at(2_001) })
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].job.stall_count, 0, "a claim reads the field too");
    flexiq_conformance::fixtures::report_started(&s, &again[0], at(2_001)).await;
    stall(&s, at(4_000)).await;
    let j = s.get(&claimed.job.id).await.unwrap().unwrap();
    assert_eq!((j.status, j.stall_count), (JobStatus::Pending, 1), "within the default budget of 1");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn retry_jobs_and_replay_start_a_stalled_out_job_over() {
    let h = RedisHarness::new();
    let s = h.store("over").await.unwrap();
    let c = raw(&h).await;
    budget(&s, Q, Some(0)).await;
    let first = start(&s, job(), at(0)).await;
    stall(&s, at(2_000)).await;
    let key = job_key(&h, "over", &first.job.id);
    let dead = s.get(&first.job.id).await.unwrap().unwrap();
    assert_eq!((dead.status, dead.stall_count), (JobStatus::Dead, 1));

    let replayed = s.replay(ReplayRequest { id: first.job.id.clone(), now: at(2_500) }).await.unwrap();
    assert_eq!(s.get(&replayed).await.unwrap().unwrap().stall_count, 0, "a replay is a new job");

    let retried = RetryJobsRequest { queue: Q.into(), status: JobStatus::Dead, count: 10, now: at(3_000) };
    assert_eq!(s.retry_jobs(retried).await.unwrap(), 1);
    let j = s.get(&first.job.id).await.unwrap().unwrap();
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 0));
    assert_eq!(stall_field(&c, &key).await, None, "the retried hash keeps no count");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_stage_replaced_or_revived_in_place_starts_its_stall_count_over() {
    let h = RedisHarness::new();
    let s = h.store("stage").await.unwrap();
    let c = raw(&h).await;
    let job = stage("run-s", "stage-s", "wf", EnqueueOptions::default());
    let key = job_key(&h, "stage", &job.id);
    let now = job.run_at;

    // Replaced by an upsert after one stall (within the default budget).
    upsert(&s, vec![job.clone()], now).await;
    fair(&s, None, now).await.expect("the stage is claimable");
    stall(&s, now + 2_000).await;
    assert_eq!(stall_field(&c, &key).await.as_deref(), Some("1"));
    upsert(&s, vec![NewJob { run_at: now + 2_500, ..job.clone() }], now + 2_500).await;
    assert_eq!(stall_field(&c, &key).await, None, "an upsert replacing the row clears the count");

    // Stalled out, then revived in place by a dead-letter retry.
    budget(&s, "workflow", Some(0)).await;
    fair(&s, None, now + 3_000).await.expect("the replaced stage is claimable");
    stall(&s, now + 5_000).await;
    let dead = s.get(&job.id).await.unwrap().unwrap();
    assert_eq!((dead.status, dead.stall_count), (JobStatus::Dead, 1));
    let letters = s.dead_letters(DeadLettersRequest { task: None, limit: 10, offset: 0 }).await.unwrap();
    let revived =
        s.retry_dead(RetryDeadRequest { dead_id: letters[0].id.clone(), now: now + 6_000 }).await.unwrap();
    assert_eq!(revived, job.id, "a stage is revived in place");
    assert_eq!(s.get(&job.id).await.unwrap().unwrap().stall_count, 0);
    assert_eq!(stall_field(&c, &key).await, None);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn the_stall_budget_is_kept_with_the_queues_other_controls() {
    let h = RedisHarness::new();
    let s = h.store("controls").await.unwrap();
    let c = raw(&h).await;
    let controls = format!("{{{}:controls}}:qc:{Q}", h.prefix);
    s.set_concurrency(SetConcurrencyRequest { queue: Q.into(), max: Some(4) }).await.unwrap();
    budget(&s, Q, Some(7)).await;
    let fields: std::collections::HashMap<String, String> = c.hgetall(&controls).await.unwrap();
    assert_eq!(
        (fields.get("conc").map(String::as_str), fields.get("ms").map(String::as_str)),
        (Some("4"), Some("7"))
    );
    budget(&s, Q, None).await;
    let fields: std::collections::HashMap<String, String> = c.hgetall(&controls).await.unwrap();
    assert!(!fields.contains_key("ms") && fields.contains_key("conc"), "clearing drops only the budget");
    budget(&s, Q, Some(2)).await;
    while s
        .obliterate(ObliterateRequest { queue: Q.into(), force: true, count: 100, now: at(0) })
        .await
        .unwrap()
        > 0
    {}
    let exists: i64 = c.exists(&controls).await.unwrap();
    assert_eq!(exists, 0, "an obliterated queue leaves no controls behind");
    let _ = c.quit().await;
    h.cleanup_now().await;
}
