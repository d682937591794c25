//! Delay and priority control on Redis, read off the server: a LIFO job's ready-set member
//! sorts ahead of every FIFO member of its priority (newest first) in a claim across queues,
//! in a drain and in a fair claim; a batch promotion moves jobs from the delayed set to the
//! ready set; and a promotion or an earlier delay wakes an idle worker of another connection.

use std::time::{Duration, Instant};

use flexiq_core::store::{
    Admin, ChangeDelayRequest, ChangePriorityRequest, ClaimRequest, DrainRequest, EnqueueRequest, JobStore,
    PromoteJobsRequest, Reschedule, WaitForWorkRequest,
};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;
use crate::workflow::{fair, raw, stage, upsert};

const NOW: i64 = 1_700_000_000_000;

fn job(queue: &str, lifo: bool, delay_ms: Option<u64>, now: i64) -> NewJob {
    let opts = EnqueueOptions { queue: Some(queue.into()), lifo, delay_ms, ..Default::default() };
    NewJob::build("t", b"p".to_vec(), opts, now).unwrap()
}

async fn put(s: &RedisStore, j: NewJob, now: i64) -> JobId {
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now }).await.unwrap().remove(0).id
}

async fn claim(s: &RedisStore, queues: &[&str], limit: u32, now: i64) -> Vec<JobId> {
    let queues = queues.iter().map(|q| q.to_string()).collect();
    let got = s.claim(ClaimRequest { queues, limit, worker_id: "w".into(), now }).await.unwrap();
    got.into_iter().map(|c| c.job.id).collect()
}

fn wall() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[tokio::test]
async fn lifo_members_sort_first_in_a_claim_across_queues() {
    let h = RedisHarness::new();
    let s = h.store("lifo").await.unwrap();
    let c = raw(&h).await;
    let a = put(&s, job("q1", false, None, NOW), NOW).await;
    let b = put(&s, job("q2", false, None, NOW), NOW + 1).await;
    let lc = put(&s, job("q1", true, None, NOW), NOW + 2).await;
    let ld = put(&s, job("q2", true, None, NOW), NOW + 3).await;
    let members: Vec<String> =
        c.zrange(format!("{{{}:lifo}}:rd:q1", h.prefix), 0, -1, None, false, None, false).await.unwrap();
    assert_eq!(
        members,
        vec![format!("-{:015}|{lc}", 1_000_000_000_000_000 - (NOW + 2)), format!("{NOW:016}|{a}")]
    );
    assert_eq!(claim(&s, &["q1", "q2"], 10, NOW + 4).await, vec![ld, lc, a, b]);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_drain_takes_due_lifo_jobs_and_a_fair_claim_takes_a_lifo_stage_first() {
    let h = RedisHarness::new();
    let s = h.store("drain").await.unwrap();
    let due = put(&s, job("q", true, None, NOW), NOW).await;
    let later = put(&s, job("q", false, Some(60_000), NOW), NOW).await;
    let drained =
        s.drain(DrainRequest { queue: "q".into(), include_delayed: false, now: NOW + 1 }).await.unwrap();
    assert_eq!(drained, 1);
    assert!(s.get(&due).await.unwrap().is_none(), "the LIFO job is due and drained");
    assert_eq!(s.get(&later).await.unwrap().unwrap().status, JobStatus::Pending, "the delayed one stays");

    let first = stage("run-l", "a", "wf", EnqueueOptions::default());
    let second = stage("run-l", "b", "wf", EnqueueOptions::default());
    upsert(&s, vec![first.clone(), second.clone()], NOW).await;
    let req = ChangePriorityRequest { job_id: second.id.clone(), priority: 0, lifo: true, now: NOW + 1 };
    s.change_priority(req).await.unwrap();
    assert_eq!(fair(&s, None, NOW + 2).await.expect("a stage").job.id, second.id);
    assert_eq!(fair(&s, None, NOW + 2).await.expect("a stage").job.id, first.id);
    h.cleanup_now().await;
}

#[tokio::test]
async fn promote_jobs_moves_jobs_from_the_delayed_set_to_the_ready_set() {
    let h = RedisHarness::new();
    let s = h.store("promote").await.unwrap();
    let c = raw(&h).await;
    let (rd, dy) = (format!("{{{}:promote}}:rd:q", h.prefix), format!("{{{}:promote}}:dy:q", h.prefix));
    for i in 0..5 {
        put(&s, job("q", false, Some(60_000 + i), NOW), NOW).await;
    }
    let req = |count| PromoteJobsRequest { queue: "q".into(), count, now: NOW + 10 };
    assert_eq!(s.promote_jobs(req(3)).await.unwrap(), 3);
    let (ready, delayed): (i64, i64) = (c.zcard(&rd).await.unwrap(), c.zcard(&dy).await.unwrap());
    assert_eq!((ready, delayed), (3, 2));
    assert_eq!(s.promote_jobs(req(3)).await.unwrap(), 2);
    let (ready, delayed): (i64, i64) = (c.zcard(&rd).await.unwrap(), c.zcard(&dy).await.unwrap());
    assert_eq!((ready, delayed), (5, 0));
    assert_eq!(claim(&s, &["q"], 10, NOW + 10).await.len(), 5);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

/// Waits for work on `consumer` while `act` runs on another connection; how long it waited.
async fn woken_by<F, Fut>(consumer: &RedisStore, act: F) -> Duration
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    consumer.wait_for_work(WaitForWorkRequest { queues: vec![], timeout_ms: 1 }).await.unwrap();
    let waiter = tokio::spawn({
        let consumer = consumer.clone();
        async move {
            let start = Instant::now();
            let req = WaitForWorkRequest { queues: vec!["q".into()], timeout_ms: 20_000 };
            consumer.wait_for_work(req).await.unwrap();
            start.elapsed()
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    act().await;
    waiter.await.unwrap()
}

#[tokio::test]
async fn a_promotion_or_an_earlier_delay_wakes_an_idle_worker_elsewhere() {
    let h = RedisHarness::new();
    let producer = h.store("wake").await.unwrap();
    let consumer = h.store("wake").await.unwrap();
    let now = wall();
    let id = put(&producer, job("q", false, Some(600_000), now), now).await;
    let waited = woken_by(&consumer, || async {
        let req = ChangeDelayRequest { job_id: id.clone(), delay_ms: 300_000, now: wall() };
        producer.change_delay(req).await.unwrap();
    })
    .await;
    assert!(waited < Duration::from_secs(10), "an earlier delay woke it after {waited:?}");
    let waited = woken_by(&consumer, || async {
        let req = PromoteJobsRequest { queue: "q".into(), count: 10, now: wall() };
        assert_eq!(producer.promote_jobs(req).await.unwrap(), 1);
    })
    .await;
    assert!(waited < Duration::from_secs(10), "a promotion woke it after {waited:?}");
    let waited = woken_by(&consumer, || async {
        let req = ChangePriorityRequest { job_id: id.clone(), priority: 2, lifo: true, now: wall() };
        producer.change_priority(req).await.unwrap();
    })
    .await;
    assert!(waited < Duration::from_secs(10), "a LIFO placement woke it after {waited:?}");
    assert_eq!(claim(&consumer, &["q"], 1, wall()).await, vec![id]);
    h.cleanup_now().await;
}
