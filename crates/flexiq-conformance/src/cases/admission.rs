//! Admission: the `max_pending` cap counts what `count_pending` returns and rejects whole batches.

use flexiq_core::{Error, ErrorKind};

use crate::fixtures::{assert_kind, enqueue, job_in, listed_ids, now, open, put_all, take_from};
use crate::Harness;

fn jobs(queue: &str, n: usize) -> Vec<flexiq_core::NewJob> {
    (0..n).map(|_| job_in(queue, "t")).collect()
}

/// A full queue refuses with `QueueFull` naming the queue, the pending count and the cap.
pub async fn admission_full_queue_reports_count_pending(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("q", 3), now()).await;
    let counted = s.count_pending("q").await.unwrap();
    assert_eq!(counted, 3);
    match enqueue(&*s, jobs("q", 1), Some(3), now()).await {
        Err(Error::QueueFull { queue, pending, max_pending }) => {
            assert_eq!(queue, "q");
            assert_eq!(pending, counted);
            assert_eq!(max_pending, 3);
        }
        other => panic!("expected QueueFull, got {other:?}"),
    }
    assert_eq!(s.count_pending("q").await.unwrap(), 3);
}

/// Filling a queue exactly up to the cap is allowed; one more is refused.
pub async fn admission_cap_is_inclusive(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("q", 2), now()).await;
    enqueue(&*s, jobs("q", 1), Some(3), now()).await.unwrap();
    assert_kind(enqueue(&*s, jobs("q", 1), Some(3), now()).await, ErrorKind::QueueFull);
}

/// Running jobs are not pending: claiming frees room under the cap.
pub async fn admission_running_jobs_do_not_count(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("q", 3), now()).await;
    assert_eq!(take_from(&*s, &["q"], 2, now()).await.len(), 2);
    assert_eq!(s.count_pending("q").await.unwrap(), 1);
    enqueue(&*s, jobs("q", 2), Some(3), now()).await.unwrap();
    assert_eq!(s.count_pending("q").await.unwrap(), 3);
}

/// A full queue does not affect other queues.
pub async fn admission_other_queues_unaffected(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("full", 2), now()).await;
    assert_kind(enqueue(&*s, jobs("full", 1), Some(2), now()).await, ErrorKind::QueueFull);
    enqueue(&*s, jobs("other", 2), Some(2), now()).await.unwrap();
    assert_eq!(s.count_pending("other").await.unwrap(), 2);
}

/// A batch that would overflow the cap by itself is rejected whole: nothing is written.
pub async fn admission_whole_batch_rejected(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(enqueue(&*s, jobs("q", 4), Some(3), now()).await, ErrorKind::QueueFull);
    assert_eq!(s.count_pending("q").await.unwrap(), 0);
    assert!(listed_ids(&*s).await.is_empty());
}

/// A batch spanning queues is rejected whole when any one queue would overflow.
pub async fn admission_mixed_queue_batch_rejected_whole(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("b", 2), now()).await;
    let mut batch = jobs("a", 2);
    batch.extend(jobs("b", 1));
    assert_kind(enqueue(&*s, batch, Some(2), now()).await, ErrorKind::QueueFull);
    assert_eq!(s.count_pending("a").await.unwrap(), 0);
    assert_eq!(s.count_pending("b").await.unwrap(), 2);
}

/// Without a cap any number of jobs is admitted.
pub async fn admission_no_cap_admits_everything(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, jobs("q", 50), now()).await;
    enqueue(&*s, jobs("q", 50), None, now()).await.unwrap();
    assert_eq!(s.count_pending("q").await.unwrap(), 100);
}

/// `count_pending` of a queue nobody used is zero.
pub async fn admission_count_pending_of_unknown_queue_is_zero(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.count_pending("never-used").await.unwrap(), 0);
}

/// Whatever `count_pending` counts (delayed, waiting, suspended jobs beside ready ones), the
/// cap compares against exactly that number.
pub async fn admission_cap_agrees_with_count_pending(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut delayed = job_in("q", "t");
    delayed.run_at = now() + 3_600_000;
    let suspended = crate::fixtures::start(&*s, job_in("q", "t"), now()).await;
    let until = flexiq_core::store::AckKind::Suspend { until: now() + 3_600_000 };
    crate::fixtures::ack(&*s, &suspended, until, now()).await;
    let running = crate::fixtures::start(&*s, job_in("q", "t"), now()).await;
    let mut waiting = job_in("q", "t");
    waiting.depends_on = vec![running.job.id.clone()];
    put_all(&*s, vec![job_in("q", "t"), delayed, waiting], now()).await;
    let counted = s.count_pending("q").await.unwrap();
    match enqueue(&*s, jobs("q", 1), Some(counted), now()).await {
        Err(Error::QueueFull { pending, max_pending, .. }) => {
            assert_eq!((pending, max_pending), (counted, counted))
        }
        other => panic!("expected QueueFull at cap {counted}, got {other:?}"),
    }
    enqueue(&*s, jobs("q", 1), Some(counted + 1), now()).await.unwrap();
    assert_eq!(s.count_pending("q").await.unwrap(), counted + 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_admission {
    ($callback:path, $make:path) => {
        $callback!($make;
            admission::admission_full_queue_reports_count_pending,
            admission::admission_cap_is_inclusive,
            admission::admission_running_jobs_do_not_count,
            admission::admission_other_queues_unaffected,
            admission::admission_whole_batch_rejected,
            admission::admission_mixed_queue_batch_rejected_whole,
            admission::admission_no_cap_admits_everything,
            admission::admission_count_pending_of_unknown_queue_is_zero,
            admission::admission_cap_agrees_with_count_pending,
        );
    };
}
