//! Claims that never started: a worker claims jobs into a prefetch buffer and reports their
//! starts on its heartbeats (`heartbeat`), renewing the rest without a start (`renew_buffered`).
//! When the worker dies, the release of a claim whose start was never reported gives the
//! attempt back and counts no stall (the job never ran); a reported one stalls as always. Either
//! way the old claim's fence is superseded by the next claim.

use flexiq_core::store::{AckKind, HeartbeatRequest, ReleaseStaleRequest};
use flexiq_core::transition::{LEASE_HEARTBEAT_LOST, UNSTARTED_RELEASE_LIMIT};
use flexiq_core::{AckOutcome, ClaimedJob, JobId, JobStatus, Store};

use crate::fixtures::{ack, at, get, job, open, put, report_started, take};
use crate::Harness;

async fn release(s: &dyn Store, at_ms: i64) -> Vec<JobId> {
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at_ms }).await.unwrap()
}

async fn renew_buffered(s: &dyn Store, c: &ClaimedJob, at_ms: i64) -> AckOutcome {
    let req = HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at_ms };
    s.renew_buffered(req).await.unwrap()[0].outcome
}

/// A claim released before any heartbeat reported its start keeps the attempt and counts no
/// stall, however often that happens within the limit; the job still records why it came back.
pub async fn unstarted_release_of_a_buffered_claim_keeps_the_attempt(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let mut t = 0;
    for _ in 0..3 {
        let c = take(&*s, 1, at(t)).await.remove(0);
        assert_eq!(c.job.id, id);
        assert_eq!(release(&*s, at(t + 2_000)).await, vec![id.clone()]);
        let j = get(&*s, &id).await;
        assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 0), "{j:?}");
        assert!(j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_HEARTBEAT_LOST), "{j:?}");
        t += 3_000;
    }
    let c = take(&*s, 1, at(t)).await.remove(0);
    assert_eq!(c.fence.attempt, 1, "the first attempt that runs is attempt 1");
}

/// Renewing a buffered claim keeps its lease without reporting a start: the release after it
/// lapses still gives the attempt back; a stale fence's renewal is superseded.
pub async fn unstarted_renewed_buffered_claim_is_still_unstarted(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let c = take(&*s, 1, at(0)).await.remove(0);
    assert_eq!(renew_buffered(&*s, &c, at(900)).await, AckOutcome::Acknowledged);
    assert!(release(&*s, at(1_500)).await.is_empty(), "the renewal kept the lease");
    assert_eq!(release(&*s, at(2_500)).await, vec![id.clone()]);
    let j = get(&*s, &id).await;
    assert_eq!((j.attempt, j.stall_count), (0, 0), "{j:?}");
    assert_eq!(renew_buffered(&*s, &c, at(2_600)).await, AckOutcome::Superseded);
}

/// A claim whose start a heartbeat reported stalls when its lease lapses: the stall counts.
pub async fn unstarted_release_of_a_started_claim_is_a_stall(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let c = take(&*s, 1, at(0)).await.remove(0);
    assert_eq!(renew_buffered(&*s, &c, at(100)).await, AckOutcome::Acknowledged);
    report_started(&*s, &c, at(200)).await;
    assert_eq!(release(&*s, at(2_000)).await, vec![id.clone()]);
    let j = get(&*s, &id).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 1), "{j:?}");
}

/// A start reported for one claim does not carry over to the next claim of the same job.
pub async fn unstarted_start_report_belongs_to_its_claim(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let first = take(&*s, 1, at(0)).await.remove(0);
    report_started(&*s, &first, at(0)).await;
    assert_eq!(
        ack(&*s, &first, AckKind::Defer { until: at(10), reason: "later".into() }, at(5)).await,
        AckOutcome::Acknowledged
    );
    let second = take(&*s, 1, at(10)).await.remove(0);
    assert_eq!(second.job.id, id);
    assert_eq!(release(&*s, at(2_000)).await, vec![id.clone()]);
    assert_eq!(get(&*s, &id).await.stall_count, 0, "the second claim never reported a start");
}

/// The old claim's late acks, heartbeats and renewals are superseded once an unstarted release
/// handed the job to a new claim, and the new claim's ack lands.
pub async fn unstarted_release_still_fences_the_old_claim(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let old = take(&*s, 1, at(0)).await.remove(0);
    assert_eq!(release(&*s, at(2_000)).await, vec![id.clone()]);
    let new = take(&*s, 1, at(2_001)).await.remove(0);
    assert_eq!(new.job.id, id);
    assert_eq!((new.fence.attempt, new.fence.claim_seq), (1, 2));
    let late = ack(&*s, &old, AckKind::Complete { result: None }, at(2_002)).await;
    assert_eq!(late, AckOutcome::Superseded);
    let beat = HeartbeatRequest { jobs: vec![(id.clone(), old.fence)], now: at(2_003) };
    assert_eq!(s.heartbeat(beat).await.unwrap()[0].outcome, AckOutcome::Superseded);
    assert_eq!(renew_buffered(&*s, &old, at(2_004)).await, AckOutcome::Superseded);
    assert_eq!(ack(&*s, &new, AckKind::Complete { result: None }, at(2_005)).await, AckOutcome::Acknowledged);
    assert_eq!(get(&*s, &id).await.status, JobStatus::Completed);
}

/// A job that keeps coming back unstarted (one that kills its worker before the start is
/// reported looks the same) stops being spared once it has given back
/// `UNSTARTED_RELEASE_LIMIT` claims: the next release is a stall.
pub async fn unstarted_releases_are_bounded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), at(0)).await;
    let mut t = 0;
    for _ in 0..UNSTARTED_RELEASE_LIMIT {
        take(&*s, 1, at(t)).await;
        assert_eq!(release(&*s, at(t + 2_000)).await, vec![id.clone()]);
        t += 3_000;
    }
    assert_eq!(get(&*s, &id).await.stall_count, 0);
    take(&*s, 1, at(t)).await;
    release(&*s, at(t + 2_000)).await;
    let j = get(&*s, &id).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 1), "{j:?}");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_unstarted {
    ($callback:path, $make:path) => {
        $callback!($make;
            unstarted::unstarted_release_of_a_buffered_claim_keeps_the_attempt,
            unstarted::unstarted_renewed_buffered_claim_is_still_unstarted,
            unstarted::unstarted_release_of_a_started_claim_is_a_stall,
            unstarted::unstarted_start_report_belongs_to_its_claim,
            unstarted::unstarted_release_still_fences_the_old_claim,
            unstarted::unstarted_releases_are_bounded,
        );
    };
}
