//! Wake-ups: LISTEN reconnects after its backend is terminated, delayed jobs wake waiters when
//! they come due or are promoted, and job waits wake on another process's changes.

use std::time::{Duration, Instant};

use flexiq_core::store::{AckRequest, EnqueueRequest, JobStore, WaitForJobRequest, WaitForWorkRequest};
use flexiq_core::{EnqueueOptions, NewJob};

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, now_ms, open};

async fn listener_pids(schema: &str) -> Vec<i32> {
    let name = format!("flexiq-listen {schema}");
    let name: String = name.chars().take(63).collect();
    admin()
        .await
        .query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", &[&name])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

async fn wait_for_listeners(schema: &str, n: usize, not: &[i32]) -> Vec<i32> {
    for _ in 0..200 {
        let pids = listener_pids(schema).await;
        if pids.len() == n && pids.iter().all(|p| !not.contains(p)) {
            // LISTEN is issued right after connecting; give it a moment to land.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("listeners of {schema} did not come back");
}

/// Returns how long after `trigger` ran the waiter (blocked in `wait_for_work`) woke.
async fn woke_after(
    waiter: &flexiq_store_pg::PgStore,
    trigger: impl std::future::Future<Output = ()>,
) -> Duration {
    let w = waiter.clone();
    let handle = tokio::spawn(async move {
        w.wait_for_work(WaitForWorkRequest { queues: vec!["q".to_string()], timeout_ms: 10_000 })
            .await
            .unwrap();
        Instant::now()
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    trigger.await;
    handle.await.unwrap().saturating_duration_since(t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_reconnects_after_its_backend_is_terminated() {
    let schema = fresh_schema("listen");
    let waiter = open(&schema, 2).await;
    let producer = open(&schema, 2).await;
    let old = wait_for_listeners(&schema, 2, &[]).await;
    admin()
        .await
        .execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int4[]) AS pid", &[&old])
        .await
        .unwrap();
    wait_for_listeners(&schema, 2, &old).await;
    // Well inside the 1 s poll: only a NOTIFY heard on the new connection explains the wake.
    let d = woke_after(&waiter, async { enqueue_n(&producer, "q", 1, now_ms()).await }).await;
    assert!(d < Duration::from_millis(600), "woke {d:?} after the enqueue");
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_work_returns_when_a_delayed_job_comes_due() {
    let schema = fresh_schema("due");
    let s = open(&schema, 2).await;
    let opts = EnqueueOptions { queue: Some("q".into()), delay_ms: Some(600), ..Default::default() };
    let now = now_ms();
    let j = NewJob::build("t", vec![], opts, now).unwrap();
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now }).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    s.wait_for_work(WaitForWorkRequest { queues: vec!["q".to_string()], timeout_ms: 5_000 }).await.unwrap();
    let d = t.elapsed();
    // Due about 500 ms from here, well before the 1 s poll.
    assert!(d >= Duration::from_millis(400) && d < Duration::from_millis(950), "returned after {d:?}");
    assert_eq!(claim(&s, "q", 5, "w", now_ms()).await.unwrap().len(), 1);
    // Nothing claimable: the wait blocks until its own timeout.
    let t = Instant::now();
    s.wait_for_work(WaitForWorkRequest { queues: vec!["q".to_string()], timeout_ms: 150 }).await.unwrap();
    assert!(t.elapsed() >= Duration::from_millis(140));
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_job_wakes_on_another_stores_ack() {
    let schema = fresh_schema("jobwait");
    let a = open(&schema, 2).await;
    let b = open(&schema, 2).await;
    wait_for_listeners(&schema, 2, &[]).await;
    enqueue_n(&a, "q", 1, now_ms()).await;
    let got = claim(&b, "q", 1, "w", now_ms()).await.unwrap();
    let id = got[0].job.id.clone();
    let a2 = a.clone();
    let handle = tokio::spawn(async move {
        a2.wait_for_job(WaitForJobRequest { id, timeout_ms: 10_000 }).await.unwrap();
        Instant::now()
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    b.ack(AckRequest { acks: completes(&got), now: now_ms() }).await.unwrap();
    let d = handle.await.unwrap().saturating_duration_since(t);
    assert!(d < Duration::from_millis(600), "woke {d:?} after the ack");
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoting_a_delayed_job_wakes_another_stores_waiter() {
    use flexiq_core::store::{PromoteRequest, Reschedule};

    let schema = fresh_schema("promwake");
    let waiter = open(&schema, 2).await;
    let mover = open(&schema, 2).await;
    wait_for_listeners(&schema, 2, &[]).await;
    let opts = EnqueueOptions { queue: Some("q".into()), delay_ms: Some(60_000), ..Default::default() };
    let now = now_ms();
    let j = NewJob::build("t", vec![], opts, now).unwrap();
    let id = j.id.clone();
    mover.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now }).await.unwrap();
    // The waiter would sleep out its 1 s poll: only the promotion's NOTIFY explains an early wake.
    let d = woke_after(&waiter, async {
        mover.promote(PromoteRequest { job_id: id.clone(), now: now_ms() }).await.unwrap();
    })
    .await;
    assert!(d < Duration::from_millis(600), "woke {d:?} after the promotion");
    assert_eq!(claim(&waiter, "q", 5, "w", now_ms()).await.unwrap().len(), 1);
    drop_schema(&schema).await;
}
