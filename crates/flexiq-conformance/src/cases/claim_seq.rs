//! Claim sequence: every claim's fence is unique, even when the clock does not move.
//!
//! Requeue, defer and suspend give the attempt back, so a job claimed, handed back and claimed
//! again inside one millisecond gets the same (attempt, started_at) as before. These cases run
//! that whole cycle at one instant and check that the first claim's fence can touch nothing:
//! the store must tell the two claims apart by the claim sequence alone.

use flexiq_core::store::{AckKind, HeartbeatRequest, RequeueRequest, SetProgressRequest};
use flexiq_core::{AckOutcome, ClaimedJob, JobStatus, Store};

use crate::fixtures::{ack, claim_id, complete, get, job, now, open, start};
use crate::Harness;

/// Every fenced write the first claim's worker could still make, each `Superseded`, and the
/// second claim untouched by all of them.
async fn first_fence_changes_nothing(s: &dyn Store, old: &ClaimedJob, new: &ClaimedJob) {
    let t = now();
    assert_eq!((old.fence.attempt, old.fence.started_at), (new.fence.attempt, new.fence.started_at));
    assert_ne!(old.fence.claim_seq, new.fence.claim_seq, "each claim's fence is unique");
    let before = get(s, &new.job.id).await;
    for kind in [
        AckKind::Complete { result: Some(b"zombie".to_vec()) },
        AckKind::Fail { error: "zombie".into(), retryable: true },
        AckKind::Fail { error: "zombie".into(), retryable: false },
        AckKind::Suspend { until: t + 60_000 },
        AckKind::Defer { until: t + 60_000, reason: "zombie".into() },
        AckKind::Cancel { reason: "zombie".into() },
    ] {
        let label = format!("{kind:?}");
        assert_eq!(ack(s, old, kind, t).await, AckOutcome::Superseded, "{label} with the first fence");
    }
    let hb =
        s.heartbeat(HeartbeatRequest { jobs: vec![(old.job.id.clone(), old.fence)], now: t }).await.unwrap();
    assert_eq!(hb[0].outcome, AckOutcome::Superseded, "heartbeat with the first fence");
    assert_eq!(
        s.set_progress(SetProgressRequest { id: old.job.id.clone(), fence: old.fence, progress: 99.0 })
            .await
            .unwrap(),
        AckOutcome::Superseded
    );
    let after = get(s, &new.job.id).await;
    assert_eq!(after.status, JobStatus::Running);
    assert_eq!(after.fence(), Some(new.fence));
    assert_eq!(after.result, None);
    assert_eq!(after.progress, before.progress);
    assert_eq!(after.last_error, before.last_error);
    assert!(s.job_errors(&new.job.id).await.unwrap().is_empty(), "no error row from the first fence");
    let hb =
        s.heartbeat(HeartbeatRequest { jobs: vec![(new.job.id.clone(), new.fence)], now: t }).await.unwrap();
    assert_eq!(hb[0].outcome, AckOutcome::Acknowledged, "the second fence still holds the lease");
    complete(s, new, Some(b"real"), t).await;
    assert_eq!(s.get_result(&new.job.id).await.unwrap().as_deref(), Some(&b"real"[..]));
}

/// Claim, requeue and re-claim in one millisecond: the first fence is `Superseded` everywhere.
pub async fn claim_seq_requeue_in_same_ms_supersedes_first_fence(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = start(&*s, job("t", ""), now()).await;
    assert_eq!(old.fence.claim_seq, 1);
    assert!(s.requeue(RequeueRequest { id: old.job.id.clone(), now: now() }).await.unwrap());
    let new = claim_id(&*s, &old.job.id, now()).await;
    assert_eq!(new.fence.claim_seq, 2);
    first_fence_changes_nothing(&*s, &old, &new).await;
}

/// Claim, defer until now and re-claim in one millisecond: the first fence is `Superseded`.
pub async fn claim_seq_defer_in_same_ms_supersedes_first_fence(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = start(&*s, job("t", ""), now()).await;
    let kind = AckKind::Defer { until: now(), reason: "busy".into() };
    assert_eq!(ack(&*s, &old, kind, now()).await, AckOutcome::Acknowledged);
    let new = claim_id(&*s, &old.job.id, now()).await;
    first_fence_changes_nothing(&*s, &old, &new).await;
}

/// Claim, suspend until now and re-claim in one millisecond: the first fence is `Superseded`.
pub async fn claim_seq_suspend_in_same_ms_supersedes_first_fence(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = start(&*s, job("t", ""), now()).await;
    assert_eq!(ack(&*s, &old, AckKind::Suspend { until: now() }, now()).await, AckOutcome::Acknowledged);
    assert_eq!(get(&*s, &old.job.id).await.status, JobStatus::Suspended);
    let new = claim_id(&*s, &old.job.id, now()).await;
    first_fence_changes_nothing(&*s, &old, &new).await;
}

/// The claim sequence counts every claim and is never given back, while `attempt` keeps
/// meaning what users see; a job read back carries the sequence of its current claim.
pub async fn claim_seq_counts_every_claim(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c1 = start(&*s, job("t", ""), now()).await;
    assert_eq!(get(&*s, &c1.job.id).await.claim_seq, 1);
    assert!(s.requeue(RequeueRequest { id: c1.job.id.clone(), now: now() }).await.unwrap());
    let j = get(&*s, &c1.job.id).await;
    assert_eq!((j.attempt, j.claim_seq), (0, 1), "requeue gives the attempt back, not the claim");
    let c2 = claim_id(&*s, &c1.job.id, now()).await;
    let kind = AckKind::Defer { until: now(), reason: "later".into() };
    assert_eq!(ack(&*s, &c2, kind, now()).await, AckOutcome::Acknowledged);
    let c3 = claim_id(&*s, &c1.job.id, now()).await;
    assert_eq!((c3.fence.attempt, c3.fence.claim_seq), (1, 3));
    assert_eq!(c3.job.claim_seq, 3);
    let j = get(&*s, &c1.job.id).await;
    assert_eq!((j.attempt, j.claim_seq), (1, 3));
    assert_eq!(j.fence(), Some(c3.fence));
}

/// A fresh job has claimed nothing yet.
pub async fn claim_seq_starts_at_zero(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = crate::fixtures::put(&*s, job("t", ""), now()).await;
    assert_eq!(get(&*s, &id).await.claim_seq, 0);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_claim_seq {
    ($callback:path, $make:path) => {
        $callback!($make;
            claim_seq::claim_seq_requeue_in_same_ms_supersedes_first_fence,
            claim_seq::claim_seq_defer_in_same_ms_supersedes_first_fence,
            claim_seq::claim_seq_suspend_in_same_ms_supersedes_first_fence,
            claim_seq::claim_seq_counts_every_claim,
            claim_seq::claim_seq_starts_at_zero,
        );
    };
}
