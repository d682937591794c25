//! Concurrency caps: the most running jobs a queue may have across every worker.

use flexiq_core::store::SetConcurrencyRequest;
use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, complete, job_in, now, open, put_all, take, take_from};
use crate::Harness;

/// Claims stop at the cap and resume as running jobs finish.
pub async fn caps_claims_stop_at_cap(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(2) }).await.unwrap();
    put_all(&*s, (0..5).map(|_| job_in("q", "t")).collect(), now()).await;
    let first = take_from(&*s, &["q"], 10, now()).await;
    assert_eq!(first.len(), 2);
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
    complete(&*s, &first[0], None, now()).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 1);
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
}

/// The cap of one queue does not limit other queues in the same claim.
pub async fn caps_other_queues_unaffected(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "capped".into(), max: Some(1) }).await.unwrap();
    let mut jobs: Vec<_> = (0..3).map(|_| job_in("capped", "t")).collect();
    jobs.extend((0..3).map(|_| job_in("free", "t")));
    put_all(&*s, jobs, now()).await;
    let got = take(&*s, 10, now()).await;
    assert_eq!(got.iter().filter(|c| c.job.queue == "capped").count(), 1);
    assert_eq!(got.iter().filter(|c| c.job.queue == "free").count(), 3);
}

/// Clearing the cap lets every pending job be claimed; `queue_config` reports the cap.
pub async fn caps_clearing_lifts_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(1) }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap().concurrency, Some(1));
    put_all(&*s, (0..4).map(|_| job_in("q", "t")).collect(), now()).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 1);
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: None }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap().concurrency, None);
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 3);
}

/// A cap of zero is `InvalidArgument` and leaves the queue's cap as it was.
pub async fn caps_zero_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(4) }).await.unwrap();
    assert_kind(
        s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(0) }).await,
        ErrorKind::InvalidArgument,
    );
    assert_eq!(s.queue_config("q").await.unwrap().concurrency, Some(4));
}

/// Running jobs claimed before a cap was set still count against it.
pub async fn caps_counts_jobs_already_running(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..5).map(|_| job_in("q", "t")).collect(), now()).await;
    assert_eq!(take_from(&*s, &["q"], 3, now()).await.len(), 3);
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(3) }).await.unwrap();
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_caps {
    ($callback:path, $make:path) => {
        $callback!($make;
            caps::caps_claims_stop_at_cap,
            caps::caps_other_queues_unaffected,
            caps::caps_clearing_lifts_limit,
            caps::caps_zero_is_invalid,
            caps::caps_counts_jobs_already_running,
        );
    };
}
