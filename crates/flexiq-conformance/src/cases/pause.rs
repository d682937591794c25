//! Pause and resume: persisted, namespace-scoped gates on dispatch (not on execution).

use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, complete, ids, job_in, now, open, put, start, take, take_from};
use crate::Harness;

/// Claims skip a paused queue and take it again after resume.
pub async fn pause_claims_skip_paused_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    let p = put(&*s, job_in("p", "t"), now()).await;
    let o = put(&*s, job_in("o", "t"), now()).await;
    s.pause("p").await.unwrap();
    assert_eq!(ids(&take(&*s, 10, now()).await), vec![o]);
    assert!(take_from(&*s, &["p"], 10, now()).await.is_empty());
    s.resume("p").await.unwrap();
    assert_eq!(ids(&take(&*s, 10, now()).await), vec![p]);
}

/// `paused_queues` lists paused queues sorted, and resume removes them.
pub async fn pause_paused_queues_sorted(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.paused_queues().await.unwrap().is_empty());
    for q in ["zeta", "alpha", "mid"] {
        s.pause(q).await.unwrap();
    }
    assert_eq!(s.paused_queues().await.unwrap(), vec!["alpha", "mid", "zeta"]);
    s.resume("mid").await.unwrap();
    assert_eq!(s.paused_queues().await.unwrap(), vec!["alpha", "zeta"]);
}

/// Pausing twice lists the queue once; resuming a queue that is not paused is harmless.
pub async fn pause_is_idempotent(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.pause("q").await.unwrap();
    s.pause("q").await.unwrap();
    assert_eq!(s.paused_queues().await.unwrap(), vec!["q"]);
    s.resume("other").await.unwrap();
    s.resume("q").await.unwrap();
    s.resume("q").await.unwrap();
    assert!(s.paused_queues().await.unwrap().is_empty());
}

/// A pause is persisted: another handle on the namespace sees it and its claims skip the queue.
pub async fn pause_is_persisted_across_handles(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job_in("q", "t"), now()).await;
    s.pause("q").await.unwrap();
    let other = open(h, "default").await;
    assert_eq!(other.paused_queues().await.unwrap(), vec!["q"]);
    assert!(other.queue_config("q").await.unwrap().paused);
    assert!(take(&*other, 10, now()).await.is_empty());
}

/// A pause belongs to its namespace: the same queue name elsewhere keeps running.
pub async fn pause_is_per_namespace(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    put(&*a, job_in("q", "t"), now()).await;
    let in_b = put(&*b, job_in("q", "t"), now()).await;
    a.pause("q").await.unwrap();
    assert!(b.paused_queues().await.unwrap().is_empty());
    assert!(!b.queue_config("q").await.unwrap().paused);
    assert!(take(&*a, 10, now()).await.is_empty());
    assert_eq!(ids(&take(&*b, 10, now()).await), vec![in_b]);
}

/// Pausing gates dispatch, not execution: a running job can still be completed.
pub async fn pause_does_not_stop_running_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job_in("q", "t"), now()).await;
    s.pause("q").await.unwrap();
    complete(&*s, &c, Some(b"ok"), now()).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap().as_deref(), Some(&b"ok"[..]));
}

/// `queue_config` of an unknown queue is all defaults.
pub async fn pause_unknown_queue_config_is_default(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.queue_config("nobody").await.unwrap(), flexiq_core::store::QueueConfig::default());
}

/// An empty queue name is `InvalidArgument`.
pub async fn pause_empty_queue_name_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.pause("").await, ErrorKind::InvalidArgument);
    assert!(s.paused_queues().await.unwrap().is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_pause {
    ($callback:path, $make:path) => {
        $callback!($make;
            pause::pause_claims_skip_paused_queue,
            pause::pause_paused_queues_sorted,
            pause::pause_is_idempotent,
            pause::pause_is_persisted_across_handles,
            pause::pause_is_per_namespace,
            pause::pause_does_not_stop_running_jobs,
            pause::pause_unknown_queue_config_is_default,
            pause::pause_empty_queue_name_is_invalid,
        );
    };
}
