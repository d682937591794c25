//! Heartbeats: renew the lease of the running attempt and report cancel requests.

use flexiq_core::store::{HeartbeatRequest, ReleaseStaleRequest, RequestCancelRequest, RequeueRequest};
use flexiq_core::{AckOutcome, Fence, JobId, JobStatus};

use crate::fixtures::{at, get, job, now, open, put_all, start, take};
use crate::Harness;

/// A heartbeat with the current fence renews the lease and stamps `heartbeat_at`.
pub async fn heartbeat_renews_lease(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let r = s
        .heartbeat(HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at(50_000) })
        .await
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].outcome, AckOutcome::Acknowledged);
    assert!(!r[0].cancel_requested);
    assert_eq!(get(&*s, &c.job.id).await.heartbeat_at, Some(at(50_000)));
    assert!(s
        .release_stale(ReleaseStaleRequest { stale_after_ms: 60_000, now: at(100_000) })
        .await
        .unwrap()
        .is_empty());
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Running);
}

/// A heartbeat for a lost lease (the job was requeued) is `Superseded`.
pub async fn heartbeat_lost_lease_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s.requeue(RequeueRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    let r =
        s.heartbeat(HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at(2) }).await.unwrap();
    assert_eq!(r[0].outcome, AckOutcome::Superseded);
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Pending);
}

/// A heartbeat with a wrong fence or an unknown job is `Superseded`.
pub async fn heartbeat_stale_fence_or_unknown_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let stale = Fence { started_at: c.fence.started_at - 1, ..c.fence };
    let r = s
        .heartbeat(HeartbeatRequest {
            jobs: vec![(c.job.id.clone(), stale), (JobId::new(), c.fence)],
            now: at(5),
        })
        .await
        .unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].outcome, AckOutcome::Superseded);
    assert_eq!(r[1].outcome, AckOutcome::Superseded);
    assert_ne!(get(&*s, &c.job.id).await.heartbeat_at, Some(at(5)));
}

/// A heartbeat reports a cooperative cancel request.
pub async fn heartbeat_reports_cancel_requested(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s.request_cancel(RequestCancelRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    let r =
        s.heartbeat(HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at(2) }).await.unwrap();
    assert_eq!(r[0].outcome, AckOutcome::Acknowledged);
    assert!(r[0].cancel_requested);
}

/// One reply per job, in the order asked, for a batch of heartbeats.
pub async fn heartbeat_batch_replies_in_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..3).map(|_| job("t", "")).collect(), now()).await;
    let c = take(&*s, 3, now()).await;
    assert!(s.request_cancel(RequestCancelRequest { id: c[1].job.id.clone(), now: at(1) }).await.unwrap());
    let batch = vec![
        (c[2].job.id.clone(), c[2].fence),
        (JobId::new(), c[0].fence),
        (c[1].job.id.clone(), c[1].fence),
        (c[0].job.id.clone(), c[0].fence),
    ];
    let r = s.heartbeat(HeartbeatRequest { jobs: batch, now: at(2) }).await.unwrap();
    let outcomes: Vec<_> = r.iter().map(|x| (x.outcome, x.cancel_requested)).collect();
    use AckOutcome::{Acknowledged as A, Superseded as S};
    assert_eq!(outcomes, vec![(A, false), (S, false), (A, true), (A, false)]);
}

/// An empty heartbeat batch returns no replies.
pub async fn heartbeat_empty_batch_returns_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.heartbeat(HeartbeatRequest { jobs: vec![], now: now() }).await.unwrap().is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_heartbeat {
    ($callback:path, $make:path) => {
        $callback!($make;
            heartbeat::heartbeat_renews_lease,
            heartbeat::heartbeat_lost_lease_is_superseded,
            heartbeat::heartbeat_stale_fence_or_unknown_is_superseded,
            heartbeat::heartbeat_reports_cancel_requested,
            heartbeat::heartbeat_batch_replies_in_order,
            heartbeat::heartbeat_empty_batch_returns_nothing,
        );
    };
}
