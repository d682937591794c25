//! The job counts behind `stats` (kept by triggers, see `counts.rs`) against a fresh count of
//! the jobs table, after a workload that takes job rows through every kind of statement that
//! inserts, deletes or changes their status, from two stores (two sets of backends) and two
//! namespaces, with a fold of a closed store's counter rows in between.

use std::collections::BTreeMap;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, CancelRequest, DeadLetters, DeadLettersRequest,
    EnqueueRequest, ExpireRunawayRequest, History, Inspect, JobStore, Maintenance, PurgeCompletedRequest,
    PurgeQueueRequest, QueueControl, ReleaseStaleRequest, ReplayRequest, RequeueRequest, RetentionRequest,
    RetryDeadRequest, SetConcurrencyRequest,
};
use flexiq_core::{
    ClaimedJob, EnqueueOptions, JobId, JobStatus, NewJob, RetentionTable, RetentionWindows, Store,
};
use flexiq_store_pg::PgStore;

use crate::common::{admin, claim, drop_schema, fresh_schema, open};

type Counts = BTreeMap<(String, String, i16), i64>;

/// `(namespace, queue, status) -> jobs`, counted afresh, and as the counter rows sum up.
async fn both(schema: &str) -> (Counts, Counts) {
    let a = admin().await;
    let read = |sql: String| {
        let a = &a;
        async move {
            a.query(&sql, &[])
                .await
                .unwrap()
                .iter()
                .map(|r| ((r.get(0), r.get(1), r.get(2)), r.get::<_, i64>(3)))
                .collect::<Counts>()
        }
    };
    let fresh =
        read(format!("SELECT namespace, queue, status, count(*) FROM \"{schema}\".jobs GROUP BY 1, 2, 3"))
            .await;
    let kept = read(format!(
        "SELECT namespace, queue, status, sum(n)::int8 FROM \"{schema}\".job_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0"
    ))
    .await;
    (fresh, kept)
}

/// Fails unless the counter rows of `schema` sum to a fresh count of its jobs.
pub(crate) async fn check(schema: &str, step: &str) {
    let (fresh, kept) = both(schema).await;
    assert_eq!(kept, fresh, "counts after {step}");
}

fn job(queue: &str, task: &str, retries: u32, now: i64) -> NewJob {
    let opts = EnqueueOptions { queue: Some(queue.into()), max_retries: Some(retries), ..Default::default() };
    NewJob::build(task, b"{}".to_vec(), opts, now).unwrap()
}

async fn put(s: &PgStore, jobs: Vec<NewJob>, now: i64) -> Vec<JobId> {
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now })
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect()
}

async fn ack(s: &PgStore, c: &[ClaimedJob], kind: impl Fn() -> AckKind, now: i64) {
    let acks = c.iter().map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: kind() }).collect();
    s.ack(AckRequest { acks, now }).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_match_a_fresh_count_after_a_mixed_workload() {
    let schema = fresh_schema("counts");
    let s = open(&schema, 3).await;
    let other = open(&schema, 2).await.with_namespace("other").unwrap();
    let t = 1_700_000_000_000;

    // Enqueue: the plain statement, COPY, the transactional path (unique key, dependencies).
    put(&s, (0..20).map(|i| job(["a", "b"][i % 2], "t", 0, t)).collect(), t).await;
    put(&s, (0..300).map(|i| job(["a", "c"][i % 2], "t", 3, t)).collect(), t).await;
    put(&other, (0..10).map(|_| job("a", "t", 0, t)).collect(), t).await;
    let parent = job("dep", "t", 0, t);
    let failing = job("dep", "t", 0, t);
    let mut child = job("dep", "t", 0, t);
    child.depends_on = vec![parent.id.clone()];
    let mut doomed = job("dep", "t", 0, t);
    doomed.depends_on = vec![failing.id.clone()];
    let mut keyed = job("dep", "t", 0, t);
    keyed.unique_key = Some("k".into());
    let (failing_id, child_id, doomed_id) = (failing.id.clone(), child.id.clone(), doomed.id.clone());
    put(&s, vec![parent, failing, child, doomed, keyed], t).await;
    check(&schema, "enqueue").await;

    // Claims: the one-statement path, and the locked path of a capped queue.
    let a = claim(&s, "a", 40, "w1", t).await.unwrap();
    s.set_concurrency(SetConcurrencyRequest { queue: "c".into(), max: Some(25) }).await.unwrap();
    let c = claim(&s, "c", 50, "w2", t).await.unwrap();
    assert_eq!(c.len(), 25);
    let o = claim(&other, "a", 5, "w3", t).await.unwrap();
    check(&schema, "claims").await;

    // Acks: complete, fail to dead (no retries left), retryable fail, suspend, defer, cancel.
    ack(&s, &a[..10], || AckKind::Complete { result: None }, t).await;
    ack(&s, &a[10..20], || AckKind::Fail { error: "boom".into(), retryable: true }, t).await;
    ack(&s, &c[..5], || AckKind::Fail { error: "again".into(), retryable: true }, t).await;
    ack(&s, &c[5..10], || AckKind::Suspend { until: t }, t).await;
    ack(&s, &c[10..15], || AckKind::Defer { until: t, reason: "later".into() }, t).await;
    ack(&s, &c[15..18], || AckKind::Cancel { reason: "stop".into() }, t).await;
    ack(&other, &o, || AckKind::Fail { error: "no".into(), retryable: false }, t).await;
    check(&schema, "acks").await;

    // Dependencies: a completed parent releases its child, a failed one cancels its dependent.
    let deps = claim(&s, "dep", 3, "w4", t).await.unwrap();
    assert_eq!(deps.len(), 3, "the two parents and the keyed job are claimable");
    let (failed, rest): (Vec<ClaimedJob>, Vec<ClaimedJob>) =
        deps.into_iter().partition(|d| d.job.id == failing_id);
    ack(&s, &rest, || AckKind::Complete { result: None }, t).await;
    ack(&s, &failed, || AckKind::Fail { error: "dep failed".into(), retryable: false }, t).await;
    assert_eq!(s.get(&child_id).await.unwrap().unwrap().status, JobStatus::Pending);
    assert_eq!(s.get(&doomed_id).await.unwrap().unwrap().status, JobStatus::Cancelled);
    check(&schema, "dependency cascades").await;

    // Dead letters retried, a replay, requeue, cancel, purge of a queue.
    let dead = s.dead_letters(DeadLettersRequest { task: None, limit: 100, offset: 0 }).await.unwrap();
    for d in dead.iter().take(4) {
        s.retry_dead(RetryDeadRequest { dead_id: d.id.clone(), now: t }).await.unwrap();
    }
    s.replay(ReplayRequest { id: a[0].job.id.clone(), now: t }).await.unwrap();
    assert!(s.requeue(RequeueRequest { id: c[20].job.id.clone(), now: t }).await.unwrap());
    assert!(
        s.cancel(CancelRequest { id: c[0].job.id.clone(), now: t }).await.unwrap(),
        "a job back to pending after a retryable failure"
    );
    assert!(s.purge_queue(PurgeQueueRequest { queue: "b".into(), now: t }).await.unwrap() > 0);
    check(&schema, "retries, replay, requeue, cancel, purge").await;

    // Sweeps: stale leases given back, runaways expired (ten minutes on).
    let later = t + 600_000;
    assert!(!s
        .release_stale(ReleaseStaleRequest { stale_after_ms: 60_000, now: later })
        .await
        .unwrap()
        .is_empty());
    let runaway = claim(&s, "a", 5, "w6", later).await.unwrap();
    assert!(!runaway.is_empty());
    let sweep = ExpireRunawayRequest { absolute_cap_ms: 60_000, now: later + 120_000 };
    assert!(!s.expire_runaway(sweep).await.unwrap().is_empty());
    check(&schema, "stale and runaway sweeps").await;

    // The other store's backends go away; a fold moves their rows into slot 0.
    other.close().await.unwrap();
    let a2 = admin().await;
    let slots_sql = format!("SELECT count(DISTINCT slot) FROM \"{schema}\".job_counts WHERE slot <> 0");
    let before: i64 = a2.query_one(&slots_sql, &[]).await.unwrap().get(0);
    // Closing drops the connections; wait until their backends have exited.
    let gone_sql = format!(
        "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity a JOIN \"{schema}\".job_counts c \
           ON c.slot = a.pid WHERE c.namespace = 'other')"
    );
    let mut gone = false;
    for _ in 0..1_000 {
        gone = a2.query_one(&gone_sql, &[]).await.unwrap().get(0);
        if gone {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone, "the closed store's backends exited");
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 60_000, now: t }).await.unwrap();
    let after: i64 = a2.query_one(&slots_sql, &[]).await.unwrap().get(0);
    assert!(after < before, "the closed store's counter rows were folded ({before} slots, then {after})");
    check(&schema, "fold").await;

    // Archival, purge of completed jobs, retention purge of the archive.
    let end = later + 3_600_000;
    let done = claim(&s, "a", 100, "w7", end).await.unwrap();
    assert!(!done.is_empty());
    ack(&s, &done, || AckKind::Complete { result: None }, end).await;
    assert!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: t + 1, limit: 50, now: end }).await.unwrap()
            > 0
    );
    check(&schema, "archival").await;
    assert!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: end + 1 }).await.unwrap() > 0);
    let windows = RetentionWindows(RetentionTable::ALL.into_iter().map(|w| (w, Some(1))).collect());
    s.retention_purge(RetentionRequest { windows, now: end + 1_000 }).await.unwrap();
    check(&schema, "purges").await;

    // The store's own readers agree with the fresh count.
    let (fresh, _) = both(&schema).await;
    let by_queue = s.stats_by_queue().await.unwrap();
    for ((ns, queue, status), n) in &fresh {
        if ns != "default" {
            continue;
        }
        let st = status_of(*status);
        assert_eq!(by_queue[queue].get(st), *n as u64, "{queue} {st:?}");
    }
    let total: i64 = fresh.iter().filter(|(k, _)| k.0 == "default").map(|(_, n)| n).sum();
    assert_eq!(s.stats(None).await.unwrap().total(), total as u64);
    let pending: i64 = fresh.get(&("default".into(), "c".into(), 0)).copied().unwrap_or(0);
    assert_eq!(s.count_pending("c").await.unwrap(), pending as u64);

    // TRUNCATE empties the counts with the table.
    admin().await.batch_execute(&format!("TRUNCATE \"{schema}\".jobs")).await.unwrap();
    check(&schema, "truncate").await;
    assert_eq!(s.stats(None).await.unwrap().total(), 0);
    s.close().await.unwrap();
    drop_schema(&schema).await;
}

fn status_of(code: i16) -> JobStatus {
    JobStatus::from_code(code as u8).unwrap()
}
