//! Lease expiry in two tiers: a lost heartbeat releases the job (`LEASE_HEARTBEAT_LOST`), an
//! attempt past the absolute cap fails (`LEASE_ABSOLUTE_CAP`).

use flexiq_core::store::{
    AckKind, ExpireRunawayRequest, GetMetricsRequest, HeartbeatRequest, ReleaseStaleRequest,
};
use flexiq_core::transition::{LEASE_ABSOLUTE_CAP, LEASE_HEARTBEAT_LOST};
use flexiq_core::{AckOutcome, EnqueueOptions, JobStatus};

use crate::fixtures::{
    ack, at, claim_id, dead, fragile, get, job, job_with, now, open, put, put_all, start, take,
};
use crate::Harness;

/// A running job with no heartbeat for longer than the window goes back to pending, stamped.
pub async fn lease_release_stale_stamps_heartbeat_lost(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert_eq!(
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 60_000, now: at(60_001) }).await.unwrap(),
        vec![c.job.id.clone()]
    );
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert!(
        j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_HEARTBEAT_LOST),
        "{:?}",
        j.last_error
    );
    assert_eq!(j.run_at, at(60_001));
    let errs = s.job_errors(&c.job.id).await.unwrap();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].error.starts_with(LEASE_HEARTBEAT_LOST));
    assert_eq!(errs[0].attempt, 1);
}

/// A job that started within the window is left alone.
pub async fn lease_release_stale_spares_fresh_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s
        .release_stale(ReleaseStaleRequest { stale_after_ms: 60_000, now: at(30_000) })
        .await
        .unwrap()
        .is_empty());
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Running);
}

/// A released job's old fence is `Superseded`; the next claim runs a new attempt.
pub async fn lease_released_job_old_fence_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = start(&*s, job("t", ""), now()).await;
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(5_000) }).await.unwrap();
    let new = take(&*s, 1, at(5_001)).await.remove(0);
    assert_eq!(new.job.id, old.job.id);
    assert_eq!((new.fence.attempt, new.fence.claim_seq), (1, 2), "a stall gives the attempt back");
    let out = ack(&*s, &old, AckKind::Complete { result: None }, at(5_002)).await;
    assert_eq!(out, AckOutcome::Superseded);
    assert_eq!(get(&*s, &old.job.id).await.status, JobStatus::Running);
}

/// A stale job with no retries left is still recovered: stalls spend the stall budget, not
/// the retry budget (see `stalled.rs` for what happens when that is spent).
pub async fn lease_release_stale_exhausted_goes_dead(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, fragile("t", ""), now()).await;
    assert_eq!(
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(2_000) }).await.unwrap().len(),
        1
    );
    let j = get(&*s, &c.job.id).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 1));
    assert!(dead(&*s).await.is_empty());
}

/// Only running jobs are released: pending and finished jobs are not touched.
pub async fn lease_release_stale_only_touches_running(h: &dyn Harness) {
    let s = open(h, "default").await;
    let done = crate::fixtures::finish(&*s, job("t", ""), now()).await;
    let running = start(&*s, job("t", ""), now()).await;
    let pending = crate::fixtures::put(&*s, job("t", ""), now()).await;
    let released =
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(10_000) }).await.unwrap();
    assert_eq!(released, vec![running.job.id.clone()]);
    assert_eq!(get(&*s, &pending).await.status, JobStatus::Pending);
    assert!(get(&*s, &pending).await.last_error.is_none());
    assert_eq!(get(&*s, &done).await.status, JobStatus::Completed);
}

/// An attempt past the absolute cap fails with `LEASE_ABSOLUTE_CAP`, even while heartbeating.
pub async fn lease_expire_runaway_stamps_absolute_cap(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    s.heartbeat(HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at(59_000) }).await.unwrap();
    assert_eq!(
        s.expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(60_001) }).await.unwrap(),
        vec![c.job.id.clone()]
    );
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Pending, "budget left: retried");
    assert!(
        j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_ABSOLUTE_CAP),
        "{:?}",
        j.last_error
    );
    let errs = s.job_errors(&c.job.id).await.unwrap();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].error.starts_with(LEASE_ABSOLUTE_CAP));
    let metrics = s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap();
    assert_eq!(metrics.len(), 1);
    assert!(!metrics[0].success);
}

/// An attempt within the cap is not expired.
pub async fn lease_expire_runaway_spares_young_attempts(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s
        .expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(30_000) })
        .await
        .unwrap()
        .is_empty());
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Running);
}

/// The cap runs from an attempt's start, not from the job's creation: of 1,005 jobs created
/// together, the one that started early is expired, however far back in the running jobs it
/// sorts, and the 1,004 that waited before starting are spared.
pub async fn lease_expire_runaway_counts_from_start(h: &dyn Harness) {
    let s = open(h, "default").await;
    let waited = put_all(&*s, (0..1_004).map(|_| job("t", "")).collect(), now()).await;
    let urgent = EnqueueOptions { priority: Some(10), ..Default::default() };
    let early = put(&*s, job_with("t", "", urgent), at(1)).await;
    let c = claim_id(&*s, &early, at(2)).await;
    let started = take(&*s, 1_004, at(50_000)).await;
    assert_eq!(started.len(), waited.len());
    assert_eq!(
        s.expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(60_003) }).await.unwrap(),
        vec![c.job.id.clone()]
    );
    assert_eq!(get(&*s, &waited[0]).await.status, JobStatus::Running);
    assert_eq!(get(&*s, &waited[1_003]).await.status, JobStatus::Running);
    // A store may expire a bounded number per sweep; repeated sweeps reach every one.
    let mut expired = 0;
    for _ in 0..10 {
        let got = s
            .expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(110_001) })
            .await
            .unwrap()
            .len();
        if got == 0 {
            break;
        }
        expired += got;
    }
    assert_eq!(expired, 1_004);
}

/// A runaway attempt with no budget left is dead and dead-lettered.
pub async fn lease_expire_runaway_exhausted_goes_dead(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, fragile("t", ""), now()).await;
    s.expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 1_000, now: at(2_000) }).await.unwrap();
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Dead);
    assert_eq!(dead(&*s).await.len(), 1);
    let out = ack(&*s, &c, AckKind::Complete { result: None }, at(2_001)).await;
    assert_eq!(out, AckOutcome::Superseded);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_lease {
    ($callback:path, $make:path) => {
        $callback!($make;
            lease::lease_release_stale_stamps_heartbeat_lost,
            lease::lease_release_stale_spares_fresh_jobs,
            lease::lease_released_job_old_fence_superseded,
            lease::lease_release_stale_exhausted_goes_dead,
            lease::lease_release_stale_only_touches_running,
            lease::lease_expire_runaway_stamps_absolute_cap,
            lease::lease_expire_runaway_spares_young_attempts,
            lease::lease_expire_runaway_counts_from_start,
            lease::lease_expire_runaway_exhausted_goes_dead,
        );
    };
}
