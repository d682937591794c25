//! Job logs and fenced progress.

use flexiq_core::store::{AppendLogRequest, SetProgressRequest};
use flexiq_core::{AckOutcome, ErrorKind, Fence, JobId};

use crate::fixtures::{assert_kind, at, complete, get, job, now, open, put, start};
use crate::Harness;

/// Log lines come back oldest first with their level, text and time.
pub async fn logs_append_and_read_oldest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    s.append_log(AppendLogRequest {
        id: c.job.id.clone(),
        level: "info".into(),
        message: "starting".into(),
        now: at(1),
    })
    .await
    .unwrap();
    s.append_log(AppendLogRequest {
        id: c.job.id.clone(),
        level: "warn".into(),
        message: "slow upstream".into(),
        now: at(2),
    })
    .await
    .unwrap();
    s.append_log(AppendLogRequest {
        id: c.job.id.clone(),
        level: "error".into(),
        message: "giving up".into(),
        now: at(3),
    })
    .await
    .unwrap();
    let logs = s.job_logs(&c.job.id).await.unwrap();
    let got: Vec<_> = logs.iter().map(|l| (l.level.as_str(), l.message.as_str(), l.logged_at)).collect();
    assert_eq!(
        got,
        vec![("info", "starting", at(1)), ("warn", "slow upstream", at(2)), ("error", "giving up", at(3))]
    );
    assert!(logs.iter().all(|l| l.job_id == c.job.id.as_str()));
}

/// Logs are per job, and a job with none has an empty log.
pub async fn logs_are_per_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("t", ""), now()).await;
    let b = put(&*s, job("t", ""), now()).await;
    s.append_log(AppendLogRequest {
        id: a.clone(),
        level: "info".into(),
        message: "only a".into(),
        now: now(),
    })
    .await
    .unwrap();
    assert_eq!(s.job_logs(&a).await.unwrap().len(), 1);
    assert!(s.job_logs(&b).await.unwrap().is_empty());
}

/// Appending to an unknown job is `NotFound`.
pub async fn logs_unknown_job_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.append_log(AppendLogRequest {
            id: JobId::new(),
            level: "info".into(),
            message: "x".into(),
            now: now(),
        })
        .await,
        ErrorKind::NotFound,
    );
}

/// Progress with the current fence is recorded on the job.
pub async fn logs_progress_with_fence_recorded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert_eq!(
        s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 42.5 })
            .await
            .unwrap(),
        AckOutcome::Acknowledged
    );
    assert_eq!(get(&*s, &c.job.id).await.progress, Some(42.5));
    assert_eq!(
        s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 100.0 })
            .await
            .unwrap(),
        AckOutcome::Acknowledged
    );
    assert_eq!(get(&*s, &c.job.id).await.progress, Some(100.0));
}

/// Progress with a stale fence is `Superseded` and not recorded.
pub async fn logs_progress_stale_fence_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 10.0 })
        .await
        .unwrap();
    let stale = Fence { started_at: c.fence.started_at + 5, ..c.fence };
    assert_eq!(
        s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: stale, progress: 90.0 })
            .await
            .unwrap(),
        AckOutcome::Superseded
    );
    assert_eq!(get(&*s, &c.job.id).await.progress, Some(10.0));
}

/// Progress after the attempt finished, or for an unknown job, is `Superseded`.
pub async fn logs_progress_after_finish_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, None, at(1)).await;
    assert_eq!(
        s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 50.0 })
            .await
            .unwrap(),
        AckOutcome::Superseded
    );
    assert_eq!(
        s.set_progress(SetProgressRequest { id: JobId::new(), fence: c.fence, progress: 50.0 })
            .await
            .unwrap(),
        AckOutcome::Superseded
    );
}

/// Progress outside 0-100 (or not a number) is `InvalidArgument` and not recorded.
pub async fn logs_progress_out_of_range_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    for bad in [-1.0, 100.5, f64::NAN] {
        assert_kind(
            s.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: bad }).await,
            ErrorKind::InvalidArgument,
        );
    }
    assert_eq!(get(&*s, &c.job.id).await.progress, None);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_logs {
    ($callback:path, $make:path) => {
        $callback!($make;
            logs::logs_append_and_read_oldest_first,
            logs::logs_are_per_job,
            logs::logs_unknown_job_is_not_found,
            logs::logs_progress_with_fence_recorded,
            logs::logs_progress_stale_fence_superseded,
            logs::logs_progress_after_finish_superseded,
            logs::logs_progress_out_of_range_is_invalid,
        );
    };
}
