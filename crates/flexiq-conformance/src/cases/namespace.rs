//! Namespaces sharing one store never see each other's jobs, keys, controls or counts.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, CancelRequest, DeadLettersAfterRequest,
    ExpireRunawayRequest, HeartbeatRequest, ListArchivedRequest, ListJobsAfterRequest, PurgeCompletedRequest,
    PurgeDeadRequest, PurgeQueueRequest, ReleaseLeaseRequest, ReleaseStaleRequest, RequestCancelRequest,
    RequeueRequest, RetryDeadRequest, SetConcurrencyRequest, SetRateLimitRequest,
};
use flexiq_core::{AckOutcome, ErrorKind, JobFilter, JobStatus, RateLimit};

use crate::fixtures::{
    acquire, assert_kind, at, current_lease, dead, enqueue, finish, job, job_in, kill, listed_ids, now, open,
    put, start, status, take, take_from, unique,
};
use crate::Harness;

/// Jobs of one namespace are invisible to another: get, list, claim, counts.
pub async fn namespace_jobs_invisible(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let id = put(&*a, job_in("q", "t"), now()).await;
    assert_eq!(crate::fixtures::get(&*a, &id).await.namespace, "ns-a");
    assert!(b.get(&id).await.unwrap().is_none());
    assert!(listed_ids(&*b).await.is_empty());
    assert!(take(&*b, 10, now()).await.is_empty());
    assert_eq!(b.stats(None).await.unwrap().total(), 0);
    assert_eq!(b.count_pending("q").await.unwrap(), 0);
    assert_eq!(a.count_pending("q").await.unwrap(), 1);
}

/// The same unique key in two namespaces makes two jobs.
pub async fn namespace_unique_keys_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let ea = enqueue(&*a, vec![unique("t", "k")], None, now()).await.unwrap().remove(0);
    let eb = enqueue(&*b, vec![unique("t", "k")], None, now()).await.unwrap().remove(0);
    assert!(ea.created && eb.created);
    assert_ne!(ea.id, eb.id);
}

/// Another namespace cannot cancel, ack, requeue or read the result of a job.
pub async fn namespace_cannot_touch_foreign_jobs(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let c = start(&*a, job("t", ""), now()).await;
    let pending = put(&*a, job("t", ""), now()).await;
    assert_kind(b.cancel(CancelRequest { id: pending.clone(), now: at(1) }).await, ErrorKind::NotFound);
    assert_kind(
        b.request_cancel(RequestCancelRequest { id: c.job.id.clone(), now: at(1) }).await,
        ErrorKind::NotFound,
    );
    assert_kind(b.get_result(&c.job.id).await, ErrorKind::NotFound);
    assert!(!b.requeue(RequeueRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    let acks =
        vec![Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } }];
    assert_eq!(b.ack(AckRequest { acks, now: at(1) }).await.unwrap(), vec![AckOutcome::Superseded]);
    let hb =
        b.heartbeat(HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at(1) }).await.unwrap();
    assert_eq!(hb[0].outcome, AckOutcome::Superseded);
    assert_eq!(status(&*a, &c.job.id).await, JobStatus::Running);
    assert_eq!(status(&*a, &pending).await, JobStatus::Pending);
    assert!(!a.is_cancel_requested(&c.job.id).await.unwrap());
}

/// A rate limit and a concurrency cap belong to their namespace.
pub async fn namespace_queue_limits_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    a.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("1/h").unwrap()),
    })
    .await
    .unwrap();
    a.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(1) }).await.unwrap();
    assert_eq!(b.queue_config("q").await.unwrap(), flexiq_core::store::QueueConfig::default());
    for s in [&a, &b] {
        for _ in 0..3 {
            put(&**s, job_in("q", "t"), now()).await;
        }
    }
    assert_eq!(take_from(&*a, &["q"], 10, now()).await.len(), 1);
    assert_eq!(take_from(&*b, &["q"], 10, now()).await.len(), 3);
}

/// Stats by queue, all-queue stats and keyset listings are per namespace.
pub async fn namespace_listings_and_stats_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    put(&*a, job_in("only-a", "t"), now()).await;
    a.pause("paused-a").await.unwrap();
    put(&*b, job_in("only-b", "t"), now()).await;
    let by_b = b.stats_by_queue().await.unwrap();
    assert_eq!(by_b.keys().cloned().collect::<Vec<_>>(), vec!["only-b"]);
    let all_b = b.stats_all_queues().await.unwrap();
    assert!(!all_b.contains_key("only-a") && !all_b.contains_key("paused-a"), "{all_b:?}");
    let page = b
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 100, after: None })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].namespace, "ns-b");
}

/// Dead letters of one namespace cannot be seen, retried or deleted from another.
pub async fn namespace_dead_letters_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    kill(&*a, "t", "boom", now()).await;
    let entry = dead(&*a).await.remove(0);
    assert!(dead(&*b).await.is_empty());
    assert!(b
        .dead_letters_after(DeadLettersAfterRequest { limit: 10, after: None })
        .await
        .unwrap()
        .items
        .is_empty());
    assert_kind(
        b.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(1) }).await,
        ErrorKind::NotFound,
    );
    assert!(!b.delete_dead(&entry.id).await.unwrap());
    assert_eq!(b.purge_dead_by_task("t").await.unwrap(), 0);
    assert_eq!(b.purge_dead(PurgeDeadRequest { cutoff_ms: at(1_000_000) }).await.unwrap(), 0);
    assert_eq!(dead(&*a).await.len(), 1);
}

/// Leases of the same name in two namespaces are two leases.
pub async fn namespace_leases_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    assert!(acquire(&*a, "cleaner", "x", 10_000, now()).await);
    assert!(current_lease(&*b, "cleaner", at(1)).await.is_none());
    assert!(acquire(&*b, "cleaner", "y", 10_000, now()).await);
    assert_eq!(current_lease(&*a, "cleaner", at(1)).await.unwrap().holder, "x");
    assert!(!b
        .release_lease(ReleaseLeaseRequest { name: "cleaner".into(), holder: "x".into() })
        .await
        .unwrap());
}

/// Lease sweeps and purges of one namespace leave the other's jobs alone.
pub async fn namespace_sweeps_scoped(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let done = finish(&*a, job_in("q", "t"), now()).await;
    let running = start(&*a, job_in("q", "t"), now()).await;
    let pending = put(&*a, job_in("q", "t"), now()).await;
    assert!(b
        .release_stale(ReleaseStaleRequest { stale_after_ms: 1, now: at(100_000) })
        .await
        .unwrap()
        .is_empty());
    assert!(b
        .expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 1, now: at(100_000) })
        .await
        .unwrap()
        .is_empty());
    assert_eq!(b.purge_queue(PurgeQueueRequest { queue: "q".into(), now: at(1) }).await.unwrap(), 0);
    assert_eq!(b.purge_completed(PurgeCompletedRequest { cutoff_ms: at(100_000) }).await.unwrap(), 0);
    assert_eq!(
        b.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100_000), limit: 100, now: at(100_000) })
            .await
            .unwrap(),
        0
    );
    assert!(b.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap().is_empty());
    assert_eq!(status(&*a, &running.job.id).await, JobStatus::Running);
    assert_eq!(status(&*a, &pending).await, JobStatus::Pending);
    assert_eq!(status(&*a, &done).await, JobStatus::Completed);
}

/// An empty namespace name is `InvalidArgument`.
pub async fn namespace_empty_name_is_invalid(h: &dyn Harness) {
    match h.open("").await {
        Ok(_) => panic!("opened a namespace with an empty name"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}"),
    }
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_namespace {
    ($callback:path, $make:path) => {
        $callback!($make;
            namespace::namespace_jobs_invisible,
            namespace::namespace_unique_keys_independent,
            namespace::namespace_cannot_touch_foreign_jobs,
            namespace::namespace_queue_limits_independent,
            namespace::namespace_listings_and_stats_independent,
            namespace::namespace_dead_letters_independent,
            namespace::namespace_leases_independent,
            namespace::namespace_sweeps_scoped,
            namespace::namespace_empty_name_is_invalid,
        );
    };
}
