//! A workflow job's life after the claim and the run-wide operations: zombie attempts, the two
//! lease tiers, defer without spending the budget, `cancel_run`, `delete_stages`, and bad input
//! to every workflow request rejected whole.
//!
//! A workflow host may stall, lose its heartbeat, or wedge while still heartbeating; whatever
//! happens, an attempt the store has moved past can never write again, and every refusal of
//! bad input leaves the store exactly as it was.

use flexiq_core::store::{
    AckKind, AppendLogRequest, CancelRunRequest, ClaimFairRequest, DeleteStagesRequest, ExpireRunawayRequest,
    HeartbeatRequest, ReleaseStaleRequest, UpsertStagesRequest, WorkflowServes,
};
use flexiq_core::transition::{LEASE_ABSOLUTE_CAP, LEASE_HEARTBEAT_LOST};
use flexiq_core::{AckOutcome, Backoff, EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob, Store};

use super::workflow_kit::{
    assert_invalid_naming, claim_stage, fair, grouped, run_ids, run_jobs, stage, stage_with, take_fair,
    totals, try_upsert, upsert, upsert_one, QUEUE,
};
use crate::fixtures::{ack, assert_kind, at, complete, dead, get, job, job_after, now, open, put, status};
use crate::Harness;

async fn cancel_run(s: &dyn Store, run: &str, at: i64) -> u64 {
    s.cancel_run(CancelRunRequest { run_id: run.into(), now: at })
        .await
        .unwrap_or_else(|e| panic!("cancel run {run}: {e}"))
}

async fn delete_stages(s: &dyn Store, run: &str, stages: &[&str]) -> u64 {
    let req = DeleteStagesRequest {
        run_id: run.into(),
        stage_ids: stages.iter().map(|st| st.to_string()).collect(),
    };
    s.delete_stages(req).await.unwrap_or_else(|e| panic!("delete stages {stages:?} of run {run}: {e}"))
}

/// After `release_stale` and a re-claim, the zombie attempt's late complete, fail, suspend and
/// defer are all `Superseded` and change nothing; the live attempt then completes.
pub async fn workflow_zombie_late_acks_are_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let zombie = claim_stage(&*s, &id, now()).await;
    let released =
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(5_000) }).await.unwrap();
    assert_eq!(released, vec![id.clone()]);
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert!(
        j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_HEARTBEAT_LOST),
        "{:?}",
        j.last_error
    );
    let live = claim_stage(&*s, &id, at(5_001)).await;
    assert_eq!((live.fence.attempt, live.fence.claim_seq), (1, 2), "a stall gives the attempt back");
    assert_ne!(live.fence, zombie.fence);
    let before = get(&*s, &id).await;
    let errors_before = s.job_errors(&id).await.unwrap().len();
    let late = [
        AckKind::Complete { result: Some(b"zombie".to_vec()) },
        AckKind::Fail { error: "zombie".into(), retryable: true },
        AckKind::Fail { error: "zombie".into(), retryable: false },
        AckKind::Suspend { until: at(9_000) },
        AckKind::Defer { until: at(9_000), reason: "zombie".into() },
    ];
    for (i, kind) in late.into_iter().enumerate() {
        let what = format!("{kind:?}");
        assert_eq!(ack(&*s, &zombie, kind, at(5_010 + i as i64)).await, AckOutcome::Superseded, "{what}");
        assert_eq!(get(&*s, &id).await, before, "the zombie's {what} changed the job");
    }
    assert_eq!(s.job_errors(&id).await.unwrap().len(), errors_before, "no error recorded for the zombie");
    let st = totals(&*s).await;
    assert_eq!((st.running, st.pending, st.completed, st.suspended), (1, 0, 0, 0));
    complete(&*s, &live, Some(b"live"), at(5_100)).await;
    assert_eq!(s.get_result(&id).await.unwrap().as_deref(), Some(&b"live"[..]));
}

/// An attempt that keeps heartbeating but never finishes is not released by `release_stale`;
/// `expire_runaway` fails it with `LEASE_ABSOLUTE_CAP`, and its fence is dead afterwards.
pub async fn workflow_wedged_heartbeating_attempt_expired_by_runaway(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let wedged = claim_stage(&*s, &id, now()).await;
    let mut t = 0;
    while t < 60_000 {
        t += 10_000;
        let hb = s
            .heartbeat(HeartbeatRequest { jobs: vec![(id.clone(), wedged.fence)], now: at(t) })
            .await
            .unwrap();
        assert_eq!(hb[0].outcome, AckOutcome::Acknowledged, "heartbeat at +{t} ms");
        let stale =
            s.release_stale(ReleaseStaleRequest { stale_after_ms: 30_000, now: at(t + 1) }).await.unwrap();
        assert!(stale.is_empty(), "a heartbeating attempt is not stale at +{t} ms: {stale:?}");
        if t < 60_000 {
            let cap = ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(t + 1) };
            assert!(s.expire_runaway(cap).await.unwrap().is_empty(), "within the cap at +{t} ms");
        }
    }
    assert_eq!(status(&*s, &id).await, JobStatus::Running);
    let expired =
        s.expire_runaway(ExpireRunawayRequest { absolute_cap_ms: 60_000, now: at(60_002) }).await.unwrap();
    assert_eq!(expired, vec![id.clone()]);
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending, "budget left: retried");
    assert!(
        j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_ABSOLUTE_CAP),
        "{:?}",
        j.last_error
    );
    let hb = s
        .heartbeat(HeartbeatRequest { jobs: vec![(id.clone(), wedged.fence)], now: at(60_003) })
        .await
        .unwrap();
    assert_eq!(hb[0].outcome, AckOutcome::Superseded);
    let late = ack(&*s, &wedged, AckKind::Complete { result: None }, at(60_004)).await;
    assert_eq!(late, AckOutcome::Superseded);
    let next = take_fair(&*s, None, j.run_at.max(at(60_005))).await.expect("the retry is claimable");
    assert_eq!((next.job.id, next.fence.attempt), (id, 2));
}

/// Deferring twenty times never spends the retry budget: after each defer the job is pending
/// with its attempt given back and claimable again, and the budget is whole afterwards.
pub async fn workflow_defer_twenty_times_keeps_attempt_budget(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { max_retries: Some(1), backoff: Some(Backoff::NONE), ..Default::default() };
    let id = upsert_one(&*s, stage_with("r", "a", opts), now()).await;
    let mut last_seq = 0;
    for i in 0..20 {
        let t = at(i * 100);
        let c = take_fair(&*s, Some(1), t).await.unwrap_or_else(|| panic!("claimable before defer {i}"));
        assert_eq!((c.job.id.clone(), c.fence.attempt), (id.clone(), 1), "claim {i}");
        assert!(c.fence.claim_seq > last_seq, "every claim gets a new claim sequence");
        last_seq = c.fence.claim_seq;
        let kind = AckKind::Defer { until: t + 50, reason: "not this host's version".into() };
        assert_eq!(ack(&*s, &c, kind, t + 1).await, AckOutcome::Acknowledged, "defer {i}");
        let j = get(&*s, &id).await;
        assert_eq!((j.status, j.attempt, j.run_at), (JobStatus::Pending, 0, t + 50), "after defer {i}");
        assert!(take_fair(&*s, Some(1), t + 49).await.is_none(), "deferred until its next poll");
    }
    assert!(dead(&*s).await.is_empty());
    // The budget is whole: one retryable failure retries, the second exhausts it.
    let c = take_fair(&*s, Some(1), at(5_000)).await.expect("claimable after twenty defers");
    crate::fixtures::fail(&*s, &c, "first", true, at(5_001)).await;
    assert_eq!(status(&*s, &id).await, JobStatus::Pending, "one retry was left");
    let c = take_fair(&*s, Some(1), at(5_002)).await.expect("the retry");
    assert_eq!(c.fence.attempt, 2);
    crate::fixtures::fail(&*s, &c, "second", true, at(5_003)).await;
    assert_eq!(status(&*s, &id).await, JobStatus::Dead);
}

/// `cancel_run` cancels the run's pending (due or not), waiting and suspended jobs, returns how
/// many, and leaves running, completed and failed jobs and other runs alone.
pub async fn workflow_cancel_run_cancels_unstarted_only(h: &dyn Harness) {
    let s = open(h, "default").await;
    let blocker = put(&*s, job("blocker", ""), now()).await;
    let later = EnqueueOptions { run_at: Some(at(1_000_000)), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![
            stage("r", "running"),
            stage("r", "completed"),
            stage("r", "failed"),
            stage("r", "suspended"),
            stage("r", "pending"),
            stage_with("r", "delayed", later),
            stage("other", "pending"),
        ],
        now(),
    )
    .await;
    let mut waiting = stage("r", "waiting");
    waiting.depends_on = vec![blocker.clone()];
    let waiting = put(&*s, waiting, now()).await;
    assert_eq!(status(&*s, &waiting).await, JobStatus::Waiting);
    let running = claim_stage(&*s, &ids[0], at(1)).await;
    let c = claim_stage(&*s, &ids[1], at(2)).await;
    complete(&*s, &c, Some(b"kept"), at(2)).await;
    let c = claim_stage(&*s, &ids[2], at(3)).await;
    ack(&*s, &c, AckKind::Fail { error: "bad".into(), retryable: false }, at(3)).await;
    let c = claim_stage(&*s, &ids[3], at(4)).await;
    ack(&*s, &c, AckKind::Suspend { until: at(500_000) }, at(4)).await;
    assert_eq!(cancel_run(&*s, "r", at(10)).await, 4, "pending, delayed, waiting and suspended");
    for id in [&ids[3], &ids[4], &ids[5], &waiting] {
        let j = get(&*s, id).await;
        assert_eq!(j.status, JobStatus::Cancelled, "job {id}");
        assert_eq!(j.finished_at, Some(at(10)), "job {id}");
    }
    assert_eq!(status(&*s, &ids[0]).await, JobStatus::Running);
    assert_eq!(status(&*s, &ids[1]).await, JobStatus::Completed);
    assert_eq!(s.get_result(&ids[1]).await.unwrap().as_deref(), Some(&b"kept"[..]));
    assert_eq!(status(&*s, &ids[2]).await, JobStatus::Failed);
    assert_eq!(status(&*s, &ids[6]).await, JobStatus::Pending, "another run is untouched");
    assert_eq!(status(&*s, &blocker).await, JobStatus::Pending);
    let st = totals(&*s).await;
    assert_eq!(
        (st.pending, st.running, st.completed, st.failed, st.cancelled, st.suspended, st.waiting),
        (2, 1, 1, 1, 4, 0, 0),
        "{st:?}"
    );
    assert_eq!(cancel_run(&*s, "r", at(11)).await, 0, "nothing left to cancel");
    assert_eq!(cancel_run(&*s, "no-such-run", at(11)).await, 0);
    assert_eq!(
        take_fair(&*s, None, at(2_000_000)).await.map(|c| c.job.id),
        Some(ids[6].clone()),
        "only the other run's stage is left to claim"
    );
    complete(&*s, &running, None, at(12)).await;
    assert_eq!(status(&*s, &ids[0]).await, JobStatus::Completed, "the running job finished normally");
}

/// Cancelling a run cancels jobs that depend on its cancelled jobs, as a cancel does.
pub async fn workflow_cancel_run_cancels_dependents(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let dependent = put(&*s, job_after("after", &[&id]), now()).await;
    assert_eq!(status(&*s, &dependent).await, JobStatus::Waiting);
    assert!(cancel_run(&*s, "r", at(1)).await >= 1);
    assert_eq!(status(&*s, &id).await, JobStatus::Cancelled);
    assert_eq!(status(&*s, &dependent).await, JobStatus::Cancelled);
    let st = totals(&*s).await;
    assert_eq!((st.cancelled, st.waiting, st.total()), (2, 0, 2));
}

/// `delete_stages` removes the listed stages' rows in any status, running included, with their
/// history, and returns how many went; others stay, and a deleted stage can be enqueued anew.
pub async fn workflow_delete_stages_removes_any_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    // Priority 1 so the stage that fails once is claimed again before the others.
    let opts = EnqueueOptions { priority: Some(1), backoff: Some(Backoff::NONE), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![
            stage_with("r", "running", opts),
            stage("r", "completed"),
            stage("r", "pending"),
            stage("r", "kept"),
            stage("other", "running"),
        ],
        now(),
    )
    .await;
    let first = claim_stage(&*s, &ids[0], at(1)).await;
    crate::fixtures::fail(&*s, &first, "once", true, at(1)).await;
    let running = claim_stage(&*s, &ids[0], at(2)).await;
    s.append_log(AppendLogRequest {
        id: ids[0].clone(),
        level: "info".into(),
        message: "m".into(),
        now: at(2),
    })
    .await
    .unwrap();
    let c = claim_stage(&*s, &ids[1], at(3)).await;
    complete(&*s, &c, Some(b"gone"), at(3)).await;
    let n = delete_stages(&*s, "r", &["running", "completed", "pending", "no-such-stage"]).await;
    assert_eq!(n, 3);
    for id in &ids[..3] {
        assert!(s.get(id).await.unwrap().is_none(), "job {id} was deleted");
    }
    assert_kind(s.job_errors(&ids[0]).await, ErrorKind::NotFound);
    match s.job_logs(&ids[0]).await {
        Ok(lines) => assert!(lines.is_empty(), "a deleted job's log lines are gone: {lines:?}"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::NotFound, "{e}"),
    }
    assert_eq!(run_ids(&*s, "r").await, vec![ids[3].clone()]);
    assert_eq!(run_ids(&*s, "other").await, vec![ids[4].clone()], "the same stage id in another run stays");
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.running, st.completed, st.total()), (2, 0, 0, 2), "{st:?}");
    assert_eq!(s.count_pending(QUEUE).await.unwrap(), 2);
    let late = ack(&*s, &running, AckKind::Complete { result: None }, at(4)).await;
    assert_eq!(late, AckOutcome::Superseded, "a deleted job's attempt cannot write");
    assert!(s.get(&ids[0]).await.unwrap().is_none());
    let fresh = stage("r", "running");
    let fresh_id = fresh.id.clone();
    assert_eq!(upsert(&*s, vec![fresh], at(5)).await, vec![fresh_id.clone()], "a new row, a new id");
    assert_ne!(fresh_id, ids[0]);
    assert_eq!(get(&*s, &fresh_id).await.attempt, 0);
}

/// Deleting a running stage frees the queue's concurrency slot and its group's fairness slot.
pub async fn workflow_delete_running_stage_frees_caps(h: &dyn Harness) {
    let s = open(h, "default").await;
    let cap = flexiq_core::store::SetConcurrencyRequest { queue: QUEUE.into(), max: Some(1) };
    s.set_concurrency(cap).await.unwrap();
    let ids = upsert(&*s, vec![grouped("r", "a", "g"), grouped("r", "b", "g")], now()).await;
    let a = take_fair(&*s, Some(1), now()).await.expect("group g");
    assert_eq!(a.job.id, ids[0]);
    assert!(take_fair(&*s, Some(1), at(1)).await.is_none(), "queue and group are both at their cap");
    assert_eq!(delete_stages(&*s, "r", &["a"]).await, 1);
    let b = take_fair(&*s, Some(1), at(2)).await.expect("the deleted running job no longer holds a slot");
    assert_eq!(b.job.id, ids[1]);
    assert_eq!(s.stats(Some(QUEUE)).await.unwrap().running, 1);
    let late = ack(&*s, &a, AckKind::Complete { result: None }, at(3)).await;
    assert_eq!(late, AckOutcome::Superseded);
}

/// An empty stage list deletes nothing and returns 0; so does an unknown run.
pub async fn workflow_delete_stages_empty_list_is_noop(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(&*s, vec![stage("r", "a"), stage("r", "b")], now()).await;
    let c = claim_stage(&*s, &ids[0], at(1)).await;
    assert_eq!(delete_stages(&*s, "r", &[]).await, 0);
    assert_eq!(delete_stages(&*s, "no-such-run", &["a", "b"]).await, 0);
    assert_eq!(run_ids(&*s, "r").await, ids);
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.running), (1, 1));
    complete(&*s, &c, None, at(2)).await;
}

fn valid_then(bad: NewJob) -> Vec<NewJob> {
    vec![stage("r", "ok"), bad]
}

/// Every malformed upsert is `InvalidArgument` naming the field, and the whole call writes
/// nothing.
pub async fn workflow_upsert_bad_input_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let with = |f: &dyn Fn(&mut NewJob)| {
        let mut j = stage("r", "bad");
        f(&mut j);
        valid_then(j)
    };
    let cases: Vec<(&str, Vec<NewJob>)> = vec![
        ("workflow_run_id", with(&|j| j.workflow_run_id = None)),
        ("workflow_run_id", with(&|j| j.workflow_run_id = Some(String::new()))),
        ("workflow_run_id", with(&|j| j.workflow_run_id = Some("x".repeat(256)))),
        ("stage_id", with(&|j| j.workflow_stage_id = None)),
        ("stage_id", with(&|j| j.workflow_stage_id = Some(String::new()))),
        ("stage_id", with(&|j| j.workflow_stage_id = Some("a\nb".into()))),
        ("definition_version", with(&|j| j.workflow_version = Some(String::new()))),
        ("appears twice", vec![stage("r", "ok"), stage("r", "dup"), stage("r", "dup")]),
        ("dependencies", with(&|j| j.depends_on = vec![JobId::at(now())])),
        ("unique key", with(&|j| j.unique_key = Some("k".into()))),
        ("queue name", with(&|j| j.queue = String::new())),
        ("task name", with(&|j| j.task = String::new())),
        ("run_at", with(&|j| j.run_at = -1)),
        ("max_retries", with(&|j| j.max_retries = u32::MAX)),
    ];
    for (field, jobs) in cases {
        let r = s.upsert_stages(UpsertStagesRequest { jobs, now: now() }).await;
        assert_invalid_naming(r, field);
        assert!(run_jobs(&*s, "r").await.is_empty(), "an upsert refused for {field} wrote a stage");
        assert_eq!(totals(&*s).await.total(), 0, "an upsert refused for {field} wrote a job");
    }
    // An empty call is valid and writes nothing.
    assert!(try_upsert(&*s, Vec::new(), now()).await.unwrap().is_empty());
    assert_eq!(totals(&*s).await.total(), 0);
}

/// Every malformed fair claim is `InvalidArgument` naming the field, and claims nothing.
pub async fn workflow_claim_fair_bad_input_claims_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let serve = |w: &str, v: Option<&str>| {
        vec![WorkflowServes { workflow_id: w.into(), definition_version: v.map(str::to_string) }]
    };
    let cases: Vec<(&str, ClaimFairRequest)> = vec![
        ("queue", ClaimFairRequest { queues: Vec::new(), ..fair(None, now()) }),
        ("queue name", ClaimFairRequest { queues: vec![QUEUE.into(), String::new()], ..fair(None, now()) }),
        ("worker id", ClaimFairRequest { workers: vec![String::new()], ..fair(Some(1), now()) }),
        ("worker id", ClaimFairRequest { workers: vec!["w1".into(), "w\u{0}".into()], ..fair(None, now()) }),
        ("workers", ClaimFairRequest { workers: Vec::new(), ..fair(None, now()) }),
        ("workers", ClaimFairRequest { workers: vec!["w".into(); 257], ..fair(Some(1), now()) }),
        ("workflow_id", ClaimFairRequest { serves: serve("", None), ..fair(None, now()) }),
        ("definition_version", ClaimFairRequest { serves: serve("wf", Some("")), ..fair(None, now()) }),
        ("fairness_cap", ClaimFairRequest { group_cap: Some(0), ..fair(None, now()) }),
    ];
    for (field, req) in cases {
        assert_invalid_naming(s.claim_fair(req).await, field);
        let j = get(&*s, &id).await;
        assert_eq!((j.status, j.attempt, j.claim_seq), (JobStatus::Pending, 0, 0), "after the bad {field}");
    }
    assert_eq!(totals(&*s).await.running, 0);
    assert!(take_fair(&*s, Some(1), now()).await.is_some(), "a good claim still works");
}

/// A malformed `cancel_run` or `delete_stages` is `InvalidArgument` naming the field and
/// changes nothing.
pub async fn workflow_run_requests_bad_input_change_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(&*s, vec![stage("r", "a"), stage("r", "b")], now()).await;
    for run in [String::new(), "x".repeat(256), "r\u{0}".to_string()] {
        let r = s.cancel_run(CancelRunRequest { run_id: run.clone(), now: at(1) }).await;
        assert_invalid_naming(r, "workflow_run_id");
        let r = s.delete_stages(DeleteStagesRequest { run_id: run, stage_ids: vec!["a".into()] }).await;
        assert_invalid_naming(r, "workflow_run_id");
    }
    let bad_stage = DeleteStagesRequest { run_id: "r".into(), stage_ids: vec!["a".into(), String::new()] };
    assert_invalid_naming(s.delete_stages(bad_stage).await, "stage_id");
    assert_eq!(run_ids(&*s, "r").await, ids, "nothing deleted");
    for j in run_jobs(&*s, "r").await {
        assert_eq!(j.status, JobStatus::Pending, "job {} untouched", j.id);
    }
    assert_eq!(totals(&*s).await.pending, 2);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow_run {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow_run::workflow_zombie_late_acks_are_superseded,
            workflow_run::workflow_wedged_heartbeating_attempt_expired_by_runaway,
            workflow_run::workflow_defer_twenty_times_keeps_attempt_budget,
            workflow_run::workflow_cancel_run_cancels_unstarted_only,
            workflow_run::workflow_cancel_run_cancels_dependents,
            workflow_run::workflow_delete_stages_removes_any_status,
            workflow_run::workflow_delete_running_stage_frees_caps,
            workflow_run::workflow_delete_stages_empty_list_is_noop,
            workflow_run::workflow_upsert_bad_input_writes_nothing,
            workflow_run::workflow_claim_fair_bad_input_claims_nothing,
            workflow_run::workflow_run_requests_bad_input_change_nothing,
        );
    };
}
