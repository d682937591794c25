//! Fences: a write naming a stale attempt is `Superseded` and changes nothing.

use flexiq_core::store::{Ack, AckKind, AckRequest};
use flexiq_core::{AckOutcome, Backoff, ClaimedJob, EnqueueOptions, Fence, JobId, JobStatus};

use crate::fixtures::{
    ack, at, complete, get, job, job_after, job_with, now, open, put, put_all, start, take,
};
use crate::Harness;

/// A fence with the wrong start time is `Superseded` and nothing is written.
pub async fn fence_wrong_started_at_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut c = start(&*s, job("t", ""), now()).await;
    c.fence.started_at += 1;
    let out = ack(&*s, &c, AckKind::Complete { result: Some(b"zombie".to_vec()) }, at(1)).await;
    assert_eq!(out, AckOutcome::Superseded);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.result, None);
    assert_eq!(j.finished_at, None);
}

/// A fence with the wrong claim sequence is `Superseded`, even with attempt and start right.
pub async fn fence_wrong_claim_seq_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut c = start(&*s, job("t", ""), now()).await;
    c.fence.claim_seq += 1;
    let out = ack(&*s, &c, AckKind::Complete { result: Some(b"zombie".to_vec()) }, at(1)).await;
    assert_eq!(out, AckOutcome::Superseded);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.result, None);
}

/// A fence with the wrong attempt is `Superseded`.
pub async fn fence_wrong_attempt_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut c = start(&*s, job("t", ""), now()).await;
    c.fence.attempt += 1;
    let out = ack(&*s, &c, AckKind::Fail { error: "x".into(), retryable: true }, at(1)).await;
    assert_eq!(out, AckOutcome::Superseded);
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Running);
    assert!(s.job_errors(&c.job.id).await.unwrap().is_empty());
}

/// The previous attempt's fence cannot touch the attempt that replaced it.
pub async fn fence_previous_attempt_cannot_overwrite(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { backoff: Some(Backoff::NONE), ..Default::default() };
    let old = start(&*s, job_with("t", "", opts), now()).await;
    crate::fixtures::fail(&*s, &old, "lost", true, at(1)).await;
    let new = take(&*s, 1, at(2)).await.remove(0);
    let out = ack(&*s, &old, AckKind::Complete { result: Some(b"zombie".to_vec()) }, at(3)).await;
    assert_eq!(out, AckOutcome::Superseded);
    let j = get(&*s, &new.job.id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.fence(), Some(new.fence));
    complete(&*s, &new, Some(b"real"), at(4)).await;
    assert_eq!(s.get_result(&new.job.id).await.unwrap().as_deref(), Some(&b"real"[..]));
}

/// A second ack of a finished attempt is `Superseded` and leaves the first result alone.
pub async fn fence_double_complete_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, Some(b"first"), at(1)).await;
    let out = ack(&*s, &c, AckKind::Complete { result: Some(b"second".to_vec()) }, at(2)).await;
    assert_eq!(out, AckOutcome::Superseded);
    let again = ack(&*s, &c, AckKind::Fail { error: "late".into(), retryable: false }, at(3)).await;
    assert_eq!(again, AckOutcome::Superseded);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Completed);
    assert_eq!(j.result.as_deref(), Some(&b"first"[..]));
    assert_eq!(j.finished_at, Some(at(1)));
}

/// An ack naming an unknown job is `Superseded`, not an error.
pub async fn fence_unknown_job_is_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = Ack {
        job_id: JobId::new(),
        fence: Fence { attempt: 1, started_at: now(), claim_seq: 1 },
        kind: AckKind::Complete { result: None },
    };
    assert_eq!(s.ack(AckRequest { acks: vec![a], now: now() }).await.unwrap(), vec![AckOutcome::Superseded]);
}

/// A batch of mixed acks gets one outcome per ack, in order.
pub async fn fence_mixed_batch_outcomes_in_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..4).map(|_| job("t", "")).collect(), now()).await;
    let c = take(&*s, 4, now()).await;
    let mut stale = c[2].fence;
    stale.started_at -= 1;
    let acks = vec![
        Ack { job_id: c[0].job.id.clone(), fence: c[0].fence, kind: AckKind::Complete { result: None } },
        Ack { job_id: JobId::new(), fence: c[1].fence, kind: AckKind::Complete { result: None } },
        Ack { job_id: c[2].job.id.clone(), fence: stale, kind: AckKind::Complete { result: None } },
        Ack {
            job_id: c[3].job.id.clone(),
            fence: c[3].fence,
            kind: AckKind::Fail { error: "no".into(), retryable: false },
        },
        Ack { job_id: c[1].job.id.clone(), fence: c[1].fence, kind: AckKind::Suspend { until: at(50) } },
    ];
    let out = s.ack(AckRequest { acks, now: at(1) }).await.unwrap();
    use AckOutcome::{Acknowledged as A, Superseded as S};
    assert_eq!(out, vec![A, S, S, A, A]);
    assert_eq!(get(&*s, &c[0].job.id).await.status, JobStatus::Completed);
    assert_eq!(get(&*s, &c[1].job.id).await.status, JobStatus::Suspended);
    assert_eq!(get(&*s, &c[2].job.id).await.status, JobStatus::Running);
    assert_eq!(get(&*s, &c[3].job.id).await.status, JobStatus::Failed);
}

/// The same job acked twice in one batch: the first applies, the second is `Superseded`.
pub async fn fence_same_job_twice_in_one_batch(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let acks = vec![
        Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: Some(b"a".to_vec()) },
        },
        Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: Some(b"b".to_vec()) },
        },
    ];
    assert_eq!(
        s.ack(AckRequest { acks, now: at(1) }).await.unwrap(),
        vec![AckOutcome::Acknowledged, AckOutcome::Superseded]
    );
    assert_eq!(s.get_result(&c.job.id).await.unwrap().as_deref(), Some(&b"a"[..]));
}

/// A batch of completions answers each ack in order whatever else the batch holds: a stale
/// fence, a job of another namespace and an unknown id are `Superseded` and change nothing,
/// while the others complete with their results and a job's dependents are released.
pub async fn fence_completion_batch_answers_each_ack(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other = open(h, "other").await;
    let parent = start(&*s, job("parent", ""), now()).await;
    let child = put(&*s, job_after("child", &[&parent.job.id]), now()).await;
    let plain = start(&*s, job("plain", ""), now()).await;
    let stale = start(&*s, job("stale", ""), now()).await;
    let foreign = start(&*other, job("foreign", ""), now()).await;
    let done = |c: &ClaimedJob, r: &[u8]| Ack {
        job_id: c.job.id.clone(),
        fence: c.fence,
        kind: AckKind::Complete { result: Some(r.to_vec()) },
    };
    let mut gone = done(&plain, b"x");
    gone.job_id = JobId::from_trusted("00000000-0000-7000-8000-000000000000");
    let acks = vec![
        Ack { fence: Fence { claim_seq: stale.fence.claim_seq + 1, ..stale.fence }, ..done(&stale, b"s") },
        done(&parent, b"p"),
        done(&foreign, b"f"),
        gone,
        done(&plain, b"q"),
    ];
    use AckOutcome::{Acknowledged as A, Superseded as S};
    assert_eq!(s.ack(AckRequest { acks, now: at(1) }).await.unwrap(), vec![S, A, S, S, A]);
    for (c, r) in [(&parent, &b"p"[..]), (&plain, &b"q"[..])] {
        let j = get(&*s, &c.job.id).await;
        assert_eq!(
            (j.status, j.result.as_deref(), j.worker_id),
            (JobStatus::Completed, Some(r), None),
            "job {}",
            c.job.id
        );
    }
    assert_eq!(
        get(&*s, &child).await.status,
        JobStatus::Pending,
        "child {child} of job {} is released",
        parent.job.id
    );
    let st = get(&*s, &stale.job.id).await;
    assert_eq!((st.status, st.result), (JobStatus::Running, None), "job {} keeps running", stale.job.id);
    assert_eq!(
        get(&*other, &foreign.job.id).await.status,
        JobStatus::Running,
        "job {} is another namespace's",
        foreign.job.id
    );
}

/// A job that was never claimed cannot be acked: any fence is `Superseded`.
pub async fn fence_pending_job_cannot_be_acked(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = crate::fixtures::put(&*s, job("t", ""), now()).await;
    let a = Ack {
        job_id: id.clone(),
        fence: Fence { attempt: 0, started_at: now(), claim_seq: 0 },
        kind: AckKind::Complete { result: None },
    };
    assert_eq!(s.ack(AckRequest { acks: vec![a], now: at(1) }).await.unwrap(), vec![AckOutcome::Superseded]);
    assert_eq!(get(&*s, &id).await.status, JobStatus::Pending);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_fence {
    ($callback:path, $make:path) => {
        $callback!($make;
            fence::fence_wrong_started_at_is_superseded,
            fence::fence_wrong_attempt_is_superseded,
            fence::fence_wrong_claim_seq_is_superseded,
            fence::fence_previous_attempt_cannot_overwrite,
            fence::fence_double_complete_is_superseded,
            fence::fence_unknown_job_is_superseded,
            fence::fence_mixed_batch_outcomes_in_order,
            fence::fence_same_job_twice_in_one_batch,
            fence::fence_completion_batch_answers_each_ack,
            fence::fence_pending_job_cannot_be_acked,
        );
    };
}
