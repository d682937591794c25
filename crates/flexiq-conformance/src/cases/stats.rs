//! Status counts: per status, per queue, every known queue, and the pending count.

use flexiq_core::store::{AckKind, CancelRequest, PurgeCompletedRequest, SetRateLimitRequest};
use flexiq_core::{EnqueueOptions, JobStatus, RateLimit, Stats};

use crate::fixtures::{
    ack, at, claim_id, fail, finish, fragile, job, job_after, job_in, job_with, kill, now, open, put, start,
};
use crate::Harness;

/// One job in each status is counted under exactly that status.
pub async fn stats_counts_every_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    finish(&*s, job("t", ""), now()).await;
    let f = start(&*s, job("t", ""), now()).await;
    fail(&*s, &f, "no", false, now()).await;
    kill(&*s, "t", "boom", now()).await;
    let sus = start(&*s, job("t", ""), now()).await;
    ack(&*s, &sus, AckKind::Suspend { until: at(1_000_000) }, now()).await;
    let running = start(&*s, job("t", ""), now()).await;
    let cancelled = put(&*s, job("t", ""), at(1)).await;
    s.cancel(CancelRequest { id: cancelled.clone(), now: at(1) }).await.unwrap();
    put(&*s, job_after("t", &[&running.job.id]), at(2)).await;
    put(&*s, job("t", ""), at(3)).await;
    put(&*s, job("t", ""), at(4)).await;
    let st = s.stats(None).await.unwrap();
    let want = Stats {
        pending: 2,
        running: 1,
        completed: 1,
        failed: 1,
        dead: 1,
        cancelled: 1,
        suspended: 1,
        waiting: 1,
    };
    assert_eq!(st, want);
}

/// Delayed jobs count as pending.
pub async fn stats_delayed_jobs_are_pending(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut j = job("t", "");
    j.run_at = at(3_600_000);
    put(&*s, j, now()).await;
    assert_eq!(s.stats(None).await.unwrap().pending, 1);
}

/// `stats(Some(queue))` counts only that queue.
pub async fn stats_for_one_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job_in("a", "t"), now()).await;
    put(&*s, job_in("a", "t"), now()).await;
    put(&*s, job_in("b", "t"), now()).await;
    assert_eq!(s.stats(Some("a")).await.unwrap().pending, 2);
    assert_eq!(s.stats(Some("b")).await.unwrap().pending, 1);
    assert_eq!(s.stats(Some("none")).await.unwrap(), Stats::default());
    assert_eq!(s.stats(None).await.unwrap().total(), 3);
}

/// `stats_by_queue` has one entry per queue that holds jobs, with its own counts.
pub async fn stats_by_queue_counts_each_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    start(&*s, job_in("b", "t"), now()).await;
    start(&*s, job_in("b", "t"), now()).await;
    put(&*s, job_in("a", "t"), now()).await;
    s.pause("only-paused").await.unwrap();
    let by = s.stats_by_queue().await.unwrap();
    assert_eq!(by.keys().cloned().collect::<Vec<_>>(), vec!["a", "b"]);
    assert_eq!(by["a"].pending, 1);
    assert_eq!(by["b"].running, 2);
}

/// `stats_all_queues` includes queues known only from pause or rate-limit config, with zeros.
pub async fn stats_all_queues_includes_configured_queues(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job_in("busy", "t"), now()).await;
    s.pause("paused-only").await.unwrap();
    s.set_rate_limit(SetRateLimitRequest {
        queue: "limited-only".into(),
        limit: Some(RateLimit::parse("5/s").unwrap()),
    })
    .await
    .unwrap();
    let all = s.stats_all_queues().await.unwrap();
    assert_eq!(all["busy"].pending, 1);
    assert_eq!(all["paused-only"], Stats::default());
    assert_eq!(all["limited-only"], Stats::default());
}

/// Every queue a job entered is known: first used by a delayed job, by a job waiting on a
/// dependency, or again after its pending count fell back to zero.
pub async fn stats_all_queues_knows_every_queue_a_job_entered(h: &dyn Harness) {
    let s = open(h, "default").await;
    finish(&*s, job_in("refilled", "t"), now()).await;
    put(&*s, job_in("refilled", "t"), now()).await;
    let in_queue = |queue: &str, opts: EnqueueOptions| {
        job_with("t", "", EnqueueOptions { queue: Some(queue.into()), ..opts })
    };
    put(&*s, in_queue("later", EnqueueOptions { delay_ms: Some(60_000), ..Default::default() }), now()).await;
    let dep = put(&*s, job("t", ""), now()).await;
    let waits = EnqueueOptions { depends_on: vec![dep.to_string()], ..Default::default() };
    put(&*s, in_queue("blocked", waits), now()).await;
    let all = s.stats_all_queues().await.unwrap();
    assert_eq!(all["later"].pending, 1);
    assert_eq!(all["blocked"].waiting, 1);
    assert_eq!((all["refilled"].completed, all["refilled"].pending), (1, 1));
}

/// A queue whose jobs were all purged stays known, with zero counts.
pub async fn stats_all_queues_keeps_purged_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    finish(&*s, job_in("gone", "t"), now()).await;
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: at(1) }).await.unwrap(), 1);
    let all = s.stats_all_queues().await.unwrap();
    assert_eq!(all.get("gone").copied(), Some(Stats::default()));
    assert!(!s.stats_by_queue().await.unwrap().contains_key("gone"));
}

/// `count_pending` counts pending jobs of one queue and drops as they are claimed.
pub async fn stats_count_pending_tracks_claims(h: &dyn Harness) {
    let s = open(h, "default").await;
    for _ in 0..4 {
        put(&*s, job_in("q", "t"), now()).await;
    }
    put(&*s, job_in("other", "t"), now()).await;
    assert_eq!(s.count_pending("q").await.unwrap(), 4);
    crate::fixtures::take_from(&*s, &["q"], 3, now()).await;
    assert_eq!(s.count_pending("q").await.unwrap(), 1);
    assert_eq!(s.count_pending("other").await.unwrap(), 1);
}

/// Counts follow a job through its life: pending, running, then completed.
pub async fn stats_follow_transitions(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, fragile("t", ""), now()).await;
    assert_eq!(s.stats(None).await.unwrap().get(JobStatus::Pending), 1);
    let c = claim_id(&*s, &id, now()).await;
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.pending, st.running), (0, 1));
    crate::fixtures::complete(&*s, &c, None, at(1)).await;
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.running, st.completed, st.total()), (0, 1, 1));
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_stats {
    ($callback:path, $make:path) => {
        $callback!($make;
            stats::stats_counts_every_status,
            stats::stats_delayed_jobs_are_pending,
            stats::stats_for_one_queue,
            stats::stats_by_queue_counts_each_queue,
            stats::stats_all_queues_includes_configured_queues,
            stats::stats_all_queues_keeps_purged_queue,
            stats::stats_all_queues_knows_every_queue_a_job_entered,
            stats::stats_count_pending_tracks_claims,
            stats::stats_follow_transitions,
        );
    };
}
