//! Replays: a copy of a job as a new job, with an audit trail newest first.

use flexiq_core::store::ReplayRequest;
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus};

use crate::fixtures::{assert_kind, at, fail, finish, get, job_with, kill, now, open, start};
use crate::Harness;

/// A replay is a new pending job with the same task, queue, payload and options.
pub async fn replay_creates_copy_with_new_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions {
        queue: Some("q".into()),
        priority: Some(4),
        max_retries: Some(7),
        metadata: Some(r#"{"a":1}"#.into()),
        ..Default::default()
    };
    let original = finish(&*s, job_with("t", "payload", opts), now()).await;
    let copy = s.replay(ReplayRequest { id: original.clone(), now: at(10) }).await.unwrap();
    assert_ne!(copy, original);
    let j = get(&*s, &copy).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!((j.task.as_str(), j.queue.as_str(), j.payload.as_slice()), ("t", "q", &b"payload"[..]));
    assert_eq!((j.priority, j.max_retries, j.attempt), (4, 7, 0));
    assert_eq!(j.metadata.as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(j.created_at, at(10));
}

/// The original job is untouched by its replay.
pub async fn replay_leaves_original_untouched(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job_with("t", "p", EnqueueOptions::default()), now()).await;
    fail(&*s, &c, "bad", false, at(1)).await;
    let before = get(&*s, &c.job.id).await;
    s.replay(ReplayRequest { id: c.job.id.clone(), now: at(2) }).await.unwrap();
    assert_eq!(get(&*s, &c.job.id).await, before);
}

/// The replay history lists replays newest first with the original's error at the time.
pub async fn replay_history_newest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let original = kill(&*s, "t", "it broke", now()).await;
    let first = s.replay(ReplayRequest { id: original.clone(), now: at(10) }).await.unwrap();
    let second = s.replay(ReplayRequest { id: original.clone(), now: at(20) }).await.unwrap();
    let hist = s.replay_history(&original).await.unwrap();
    assert_eq!(hist.len(), 2);
    assert_eq!(hist[0].replay_job_id, second.as_str());
    assert_eq!(hist[0].replayed_at, at(20));
    assert_eq!(hist[1].replay_job_id, first.as_str());
    assert_eq!(hist[1].replayed_at, at(10));
    assert!(hist.iter().all(|e| e.original_job_id == original.as_str()));
    assert_eq!(hist[0].original_error.as_deref(), Some("it broke"));
    assert_ne!(hist[0].id, hist[1].id);
}

/// A job never replayed has an empty history.
pub async fn replay_history_empty_when_never_replayed(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = finish(&*s, job_with("t", "", EnqueueOptions::default()), now()).await;
    assert!(s.replay_history(&id).await.unwrap().is_empty());
}

/// Replaying an unknown job is `NotFound` and enqueues nothing.
pub async fn replay_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.replay(ReplayRequest { id: JobId::new(), now: now() }).await, ErrorKind::NotFound);
    assert_eq!(s.stats(None).await.unwrap().total(), 0);
}

/// A replay runs with a fresh retry budget, independent of the original's attempts.
pub async fn replay_has_fresh_budget(h: &dyn Harness) {
    let s = open(h, "default").await;
    let original = kill(&*s, "t", "boom", now()).await;
    let copy = s.replay(ReplayRequest { id: original.clone(), now: at(1) }).await.unwrap();
    let c = crate::fixtures::claim_id(&*s, &copy, at(1)).await;
    assert_eq!(c.fence.attempt, 1);
    fail(&*s, &c, "again", true, at(2)).await;
    assert_eq!(get(&*s, &copy).await.status, JobStatus::Dead, "max_retries 0 is copied too");
    assert_eq!(get(&*s, &original).await.attempt, 1);
}

/// Replaying a job of a revoked task is `TaskRevoked` and records no replay.
pub async fn replay_of_revoked_task_is_task_revoked(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = finish(&*s, job_with("t", "", EnqueueOptions::default()), now()).await;
    s.revoke_task("t").await.unwrap();
    assert_kind(s.replay(ReplayRequest { id: id.clone(), now: at(1) }).await, ErrorKind::TaskRevoked);
    assert!(s.replay_history(&id).await.unwrap().is_empty());
    assert_eq!(s.stats(None).await.unwrap().total(), 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_replay {
    ($callback:path, $make:path) => {
        $callback!($make;
            replay::replay_creates_copy_with_new_id,
            replay::replay_leaves_original_untouched,
            replay::replay_history_newest_first,
            replay::replay_history_empty_when_never_replayed,
            replay::replay_unknown_is_not_found,
            replay::replay_has_fresh_budget,
            replay::replay_of_revoked_task_is_task_revoked,
        );
    };
}
