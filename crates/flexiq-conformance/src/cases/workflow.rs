//! Workflow stages as jobs: one row per (run, stage), replaced in place by `upsert_stages`,
//! refused by a plain enqueue, all-or-nothing per call, and listed per run like any job.
//!
//! A workflow engine re-enqueues a stage whenever it re-plans a run, so the replacement must
//! behave like a fresh job that kept its id: pending, attempt 0, no worker, lease or error,
//! and every counter and index moved with it. The attempt it replaced must not be able to
//! write anything afterwards.

use std::time::{Duration, Instant};

use flexiq_core::store::{
    AckKind, ExpireRunawayRequest, GetMetricsRequest, HeartbeatRequest, ReleaseStaleRequest,
    RequestCancelRequest, SetConcurrencyRequest, SetProgressRequest, WaitForWorkRequest,
};
use flexiq_core::{AckOutcome, EnqueueOptions, ErrorKind, JobFilter, JobStatus};

use super::workflow_kit::{
    claim_stage, grouped, run_ids, run_jobs, stage, stage_built, stage_with, take_fair, totals, try_upsert,
    upsert, upsert_one, QUEUE, WF,
};
use crate::fixtures::{
    ack, assert_kind, at, complete, dead, enqueue, get, job, list, now, open, put, status, T0,
};
use crate::Harness;

/// New stages are inserted as pending jobs of the workflow's task, ids in call order, with
/// their run, stage, version, group and options kept.
pub async fn workflow_upsert_inserts_stages_in_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions {
        priority: Some(7),
        run_at: Some(at(500)),
        max_retries: Some(4),
        group_key: Some("tenant-1".into()),
        workflow_version: Some("v3".into()),
        metadata: Some(r#"{"k":"v"}"#.into()),
        ..Default::default()
    };
    let jobs =
        vec![stage_built("r1", "fetch", r#"{"n":1}"#, opts, T0), stage("r1", "parse"), stage("r2", "fetch")];
    let want: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    let ids = upsert(&*s, jobs, now()).await;
    assert_eq!(ids, want, "new stages keep the ids they were built with, in order");
    let j = get(&*s, &ids[0]).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!((j.task.as_str(), j.queue.as_str()), (WF, QUEUE));
    assert_eq!(j.workflow_run_id.as_deref(), Some("r1"));
    assert_eq!(j.workflow_stage_id.as_deref(), Some("fetch"));
    assert_eq!(j.workflow_version.as_deref(), Some("v3"));
    assert_eq!(j.group_key.as_deref(), Some("tenant-1"));
    assert_eq!(j.payload, br#"{"n":1}"#.to_vec());
    assert_eq!((j.priority, j.run_at, j.max_retries, j.attempt), (7, at(500), 4, 0));
    assert_eq!(j.metadata.as_deref(), Some(r#"{"k":"v"}"#));
    let plain = get(&*s, &ids[1]).await;
    assert_eq!(plain.workflow_version, None);
    assert_eq!(plain.group_key, None);
    assert_eq!(totals(&*s).await.pending, 3);
}

/// Upserting a stage whose row completed replaces it in place: same id, pending, attempt 0,
/// the new payload and options, no result or finish time, and the counters move with it.
pub async fn workflow_upsert_replaces_completed_row(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let c = claim_stage(&*s, &id, at(1)).await;
    complete(&*s, &c, Some(b"done"), at(2)).await;
    assert_eq!(totals(&*s).await.completed, 1);
    let opts = EnqueueOptions {
        priority: Some(3),
        run_at: Some(at(1_000)),
        max_retries: Some(1),
        workflow_version: Some("v2".into()),
        group_key: Some("g2".into()),
        ..Default::default()
    };
    let again = upsert(&*s, vec![stage_built("r", "a", r#"{"second":true}"#, opts, at(10))], at(10)).await;
    assert_eq!(again, vec![id.clone()], "the replaced row keeps its id");
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.payload, br#"{"second":true}"#.to_vec());
    assert_eq!((j.priority, j.run_at, j.max_retries), (3, at(1_000), 1));
    assert_eq!(j.workflow_version.as_deref(), Some("v2"));
    assert_eq!(j.group_key.as_deref(), Some("g2"));
    assert_eq!(j.result, None);
    assert_eq!(j.finished_at, None);
    assert_eq!(s.get_result(&id).await.unwrap(), None);
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.completed, st.total()), (1, 0, 1));
    assert_eq!(run_ids(&*s, "r").await, vec![id.clone()], "still one row for the pair");
    assert!(take_fair(&*s, None, at(999)).await.is_none(), "the new run_at holds");
    let again = claim_stage(&*s, &id, at(1_000)).await;
    assert_eq!(again.fence.attempt, 1);
}

/// Upserting a stage that is running replaces the attempt: same id, pending, attempt 0, no
/// worker or lease; the old attempt's late complete is `Superseded` and changes nothing, and
/// the next claim gets a new fence.
pub async fn workflow_upsert_replaces_running_row(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let old = claim_stage(&*s, &id, at(1)).await;
    assert_eq!(totals(&*s).await.running, 1);
    let again =
        upsert(&*s, vec![stage_built("r", "a", r#"{"v":2}"#, EnqueueOptions::default(), at(5))], at(5)).await;
    assert_eq!(again, vec![id.clone()]);
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0);
    assert_eq!((j.worker_id, j.started_at, j.heartbeat_at), (None, None, None));
    assert!(j.claim_seq >= old.fence.claim_seq, "the claim sequence is never given back");
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.running, st.total()), (1, 0, 1));
    let late = ack(&*s, &old, AckKind::Complete { result: Some(b"zombie".to_vec()) }, at(6)).await;
    assert_eq!(late, AckOutcome::Superseded);
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!((j.result, j.finished_at), (None, None));
    assert_eq!(j.payload, br#"{"v":2}"#.to_vec());
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.completed), (1, 0));
    let new = claim_stage(&*s, &id, at(7)).await;
    assert_eq!(new.fence.attempt, 1);
    assert!(new.fence.claim_seq > old.fence.claim_seq, "{:?} after {:?}", new.fence, old.fence);
    assert_eq!(new.job.payload, br#"{"v":2}"#.to_vec());
    let late = ack(&*s, &old, AckKind::Complete { result: None }, at(8)).await;
    assert_eq!(late, AckOutcome::Superseded, "the replaced attempt cannot touch the new one");
    complete(&*s, &new, Some(b"real"), at(9)).await;
    assert_eq!(s.get_result(&id).await.unwrap().as_deref(), Some(&b"real"[..]));
}

/// A replaced running attempt leaves no lease behind: the sweeps do not touch the replacement,
/// and the fairness group it counted against is free again.
pub async fn workflow_upsert_replacing_running_row_clears_its_lease(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(&*s, vec![grouped("r", "a", "g"), grouped("r", "b", "g")], now()).await;
    let old = take_fair(&*s, Some(1), now()).await.expect("group g");
    assert_eq!(old.job.id, ids[0]);
    assert!(take_fair(&*s, Some(1), at(1)).await.is_none(), "g is at its cap of 1");
    let later =
        EnqueueOptions { run_at: Some(at(1_000_000)), group_key: Some("g".into()), ..Default::default() };
    assert_eq!(upsert(&*s, vec![stage_with("r", "a", later)], at(2)).await, vec![ids[0].clone()]);
    let b = take_fair(&*s, Some(1), at(3)).await.expect("the replaced attempt no longer counts against g");
    assert_eq!(b.job.id, ids[1]);
    let stale = ReleaseStaleRequest { stale_after_ms: 1_000, now: at(500_000) };
    let released = s.release_stale(stale).await.unwrap();
    assert_eq!(released, vec![ids[1].clone()], "only the live attempt had a lease to lose");
    let runaway = ExpireRunawayRequest { absolute_cap_ms: 1_000, now: at(500_001) };
    assert!(s.expire_runaway(runaway).await.unwrap().is_empty());
    let j = get(&*s, &ids[0]).await;
    assert_eq!((j.status, j.attempt, j.last_error), (JobStatus::Pending, 0, None));
    assert_eq!(j.run_at, at(1_000_000));
    assert!(s.job_errors(&ids[0]).await.unwrap().is_empty(), "the sweeps recorded nothing for it");
    let late = ack(&*s, &old, AckKind::Suspend { until: at(10) }, at(500_002)).await;
    assert_eq!(late, AckOutcome::Superseded);
    assert_eq!(status(&*s, &ids[0]).await, JobStatus::Pending);
}

/// A replacement clears everything the old attempt left: worker, heartbeat, progress, cancel
/// request, last error and a backoff's run_at; and frees the running slot it held.
pub async fn workflow_upsert_replacement_resets_worker_lease_and_error(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: QUEUE.into(), max: Some(1) }).await.unwrap();
    let low = EnqueueOptions { priority: Some(-1), ..Default::default() };
    let ids = upsert(&*s, vec![stage("r", "a"), stage_with("r", "b", low)], now()).await;
    // Stage a: failed once (last error, backoff run_at), then running again with a heartbeat,
    // progress and a cancel request.
    let first = claim_stage(&*s, &ids[0], at(1)).await;
    crate::fixtures::fail(&*s, &first, "boom", true, at(2)).await;
    let failed = get(&*s, &ids[0]).await;
    assert!(failed.last_error.is_some());
    let second = claim_stage(&*s, &ids[0], failed.run_at).await;
    let t = failed.run_at;
    s.heartbeat(HeartbeatRequest { jobs: vec![(ids[0].clone(), second.fence)], now: t + 10 }).await.unwrap();
    let p = SetProgressRequest { id: ids[0].clone(), fence: second.fence, progress: 40.0 };
    assert_eq!(s.set_progress(p).await.unwrap(), AckOutcome::Acknowledged);
    assert!(s.request_cancel(RequestCancelRequest { id: ids[0].clone(), now: t + 11 }).await.unwrap());
    assert!(take_fair(&*s, None, t + 12).await.is_none(), "the queue's cap of 1 is taken by stage a");
    let poll = t + 50;
    let replacement = stage_with("r", "a", EnqueueOptions { run_at: Some(poll), ..Default::default() });
    assert_eq!(upsert(&*s, vec![replacement], t + 20).await, vec![ids[0].clone()]);
    let j = get(&*s, &ids[0]).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.worker_id, None);
    assert_eq!((j.started_at, j.heartbeat_at, j.finished_at), (None, None, None));
    assert_eq!(j.progress, None);
    assert!(!j.cancel_requested);
    assert!(!s.is_cancel_requested(&ids[0]).await.unwrap());
    assert_eq!(j.last_error, None);
    assert_eq!(j.run_at, poll, "the next poll time is the replacement's");
    // The running slot stage a held is free again: stage b (due now) is claimable.
    let b = take_fair(&*s, None, t + 21).await.expect("the replaced attempt no longer holds the cap");
    assert_eq!(b.job.id, ids[1]);
    let late = ack(&*s, &second, AckKind::Fail { error: "late".into(), retryable: true }, t + 22).await;
    assert_eq!(late, AckOutcome::Superseded);
    assert_eq!(get(&*s, &ids[0]).await.last_error, None);
}

/// A row in any status is replaced: failed, cancelled, dead and suspended rows all come back
/// pending with attempt 0, and the status counters follow.
pub async fn workflow_upsert_replaces_rows_in_any_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let fragile = EnqueueOptions { max_retries: Some(0), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![
            stage("r", "failed"),
            stage("r", "cancelled"),
            stage_with("r", "dead", fragile),
            stage("r", "suspended"),
        ],
        now(),
    )
    .await;
    let c = claim_stage(&*s, &ids[0], at(1)).await;
    ack(&*s, &c, AckKind::Fail { error: "bad".into(), retryable: false }, at(1)).await;
    assert!(s.cancel(flexiq_core::store::CancelRequest { id: ids[1].clone(), now: at(2) }).await.unwrap());
    let c = claim_stage(&*s, &ids[2], at(3)).await;
    ack(&*s, &c, AckKind::Fail { error: "bad".into(), retryable: true }, at(3)).await;
    let c = claim_stage(&*s, &ids[3], at(4)).await;
    ack(&*s, &c, AckKind::Suspend { until: at(100_000) }, at(4)).await;
    let before = [JobStatus::Failed, JobStatus::Cancelled, JobStatus::Dead, JobStatus::Suspended];
    for (id, want) in ids.iter().zip(before) {
        assert_eq!(status(&*s, id).await, want, "job {id} before the replacement");
    }
    let letters = dead(&*s).await;
    assert_eq!(letters.len(), 1, "a dead stage is dead-lettered like any job");
    assert_eq!(letters[0].task_name, WF);
    let again = upsert(
        &*s,
        ["failed", "cancelled", "dead", "suspended"].iter().map(|st| stage("r", st)).collect(),
        at(10),
    )
    .await;
    assert_eq!(again, ids, "every replaced row keeps its id");
    for id in &ids {
        let j = get(&*s, id).await;
        assert_eq!((j.status, j.attempt, j.last_error.as_deref()), (JobStatus::Pending, 0, None), "job {id}");
        assert_eq!(j.finished_at, None, "job {id}");
    }
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.total()), (4, 4), "{st:?}");
    assert_eq!(s.count_pending(QUEUE).await.unwrap(), 4);
    // Every replaced row is claimable at its new run_at, the suspended one included.
    let mut claimed = Vec::new();
    while let Some(c) = take_fair(&*s, None, at(11)).await {
        claimed.push(c.job.id);
    }
    assert_eq!(claimed, ids, "all four replaced rows are claimable now, in id order");
}

/// A stage waiting on a dependency (a plain enqueue can give it one) is replaced by a pending
/// stage with no dependency: claimable at once, and the old dependency finishing later does not
/// touch the running replacement.
pub async fn workflow_upsert_replaces_waiting_row(h: &dyn Harness) {
    let s = open(h, "default").await;
    let blocker = put(&*s, job("blocker", ""), now()).await;
    let mut waiting = stage("r", "a");
    waiting.depends_on = vec![blocker.clone()];
    let id = put(&*s, waiting, now()).await;
    assert_eq!(status(&*s, &id).await, JobStatus::Waiting);
    assert_eq!(upsert(&*s, vec![stage("r", "a")], at(1)).await, vec![id.clone()]);
    assert_eq!(status(&*s, &id).await, JobStatus::Pending);
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.waiting), (2, 0), "{st:?}");
    let c = claim_stage(&*s, &id, at(2)).await;
    let b = crate::fixtures::take_from(&*s, &["default"], 1, at(3)).await.pop().expect("the blocker");
    assert_eq!(b.job.id, blocker);
    complete(&*s, &b, None, at(4)).await;
    let j = get(&*s, &id).await;
    assert_eq!(
        (j.status, j.fence()),
        (JobStatus::Running, Some(c.fence)),
        "the release of a dependency moved it"
    );
    complete(&*s, &c, None, at(5)).await;
}

/// One call can insert some stages and replace others: ids come back in call order, replaced
/// rows with their old ids, new ones with their own.
pub async fn workflow_upsert_mixed_insert_and_replace(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = upsert_one(&*s, stage("r", "a"), now()).await;
    let c = upsert_one(&*s, stage("r", "c"), now()).await;
    let b = stage("r", "b");
    let b_id = b.id.clone();
    let ids = upsert(&*s, vec![stage("r", "c"), b, stage("r", "a")], at(1)).await;
    assert_eq!(ids, vec![c, b_id, a]);
    assert_eq!(run_jobs(&*s, "r").await.len(), 3);
    assert_eq!(totals(&*s).await.pending, 3);
}

/// A bad job anywhere in the call rejects the whole call: the replacement before it does not
/// happen and the new stage is not inserted.
pub async fn workflow_upsert_bad_job_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let c = claim_stage(&*s, &id, at(1)).await;
    complete(&*s, &c, Some(b"kept"), at(2)).await;
    let mut bad = stage("r", "c");
    bad.queue = String::new();
    let r = try_upsert(&*s, vec![stage("r", "a"), stage("r", "b"), bad], at(3)).await;
    assert_kind(r, ErrorKind::InvalidArgument);
    let jobs = run_jobs(&*s, "r").await;
    assert_eq!(jobs.len(), 1, "nothing inserted: {:?}", jobs.iter().map(|j| &j.id).collect::<Vec<_>>());
    assert_eq!(jobs[0].status, JobStatus::Completed, "the replacement was rolled back");
    assert_eq!(s.get_result(&id).await.unwrap().as_deref(), Some(&b"kept"[..]));
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.completed, st.total()), (0, 1, 1));
}

/// A revoked workflow anywhere in the call is `TaskRevoked` and nothing is written.
pub async fn workflow_upsert_revoked_task_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("r", "a"), now()).await;
    let old = claim_stage(&*s, &id, at(1)).await;
    s.revoke_task("retired").await.unwrap();
    let mut revoked = stage("r", "b");
    revoked.task = "retired".into();
    let r = try_upsert(&*s, vec![stage("r", "a"), revoked, stage("r", "c")], at(2)).await;
    assert_kind(r, ErrorKind::TaskRevoked);
    let jobs = run_jobs(&*s, "r").await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].status, JobStatus::Running, "the running attempt was not replaced");
    assert_eq!(jobs[0].fence(), Some(old.fence));
    assert_eq!(ack(&*s, &old, AckKind::Complete { result: None }, at(3)).await, AckOutcome::Acknowledged);
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.completed, st.total()), (0, 1, 1));
    // Revoking the stage's own workflow refuses its replacement too.
    s.revoke_task(WF).await.unwrap();
    assert_kind(try_upsert(&*s, vec![stage("r", "a")], at(4)).await, ErrorKind::TaskRevoked);
    assert_eq!(status(&*s, &id).await, JobStatus::Completed);
}

/// A plain enqueue naming a (run, stage) pair that already has a row, in any status, is
/// `Conflict` naming the run, the stage and the existing job; its batch writes nothing.
pub async fn workflow_enqueue_of_existing_pair_is_conflict(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert_one(&*s, stage("run-7", "stage-x"), now()).await;
    let other = job("t", "");
    let other_id = other.id.clone();
    let r = enqueue(&*s, vec![other, stage("run-7", "stage-x")], None, at(1)).await;
    match r {
        Ok(v) => panic!("expected Conflict, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
            let msg = e.to_string();
            for part in ["run-7", "stage-x", id.as_str()] {
                assert!(msg.contains(part), "the conflict should name {part}: {msg}");
            }
        }
    }
    assert!(s.get(&other_id).await.unwrap().is_none(), "the whole batch is rejected");
    assert_eq!(run_ids(&*s, "run-7").await, vec![id.clone()]);
    let c = claim_stage(&*s, &id, at(2)).await;
    complete(&*s, &c, None, at(3)).await;
    let r = enqueue(&*s, vec![stage("run-7", "stage-x")], None, at(4)).await;
    assert_kind(r, ErrorKind::Conflict);
    assert_eq!(status(&*s, &id).await, JobStatus::Completed);
    assert_eq!(totals(&*s).await.total(), 1);
    // A plain enqueue of a pair with no row is an ordinary insert.
    let fresh = put(&*s, stage("run-7", "stage-y"), at(5)).await;
    assert_eq!(run_ids(&*s, "run-7").await.len(), 2);
    let r = try_upsert(&*s, vec![stage("run-7", "stage-y")], at(6)).await.unwrap();
    assert_eq!(r, vec![fresh], "an enqueued stage is replaced by an upsert like any other");
}

/// The same stage id in another run, and the same pair in another namespace, are different
/// rows.
pub async fn workflow_upsert_pairs_are_per_run_and_namespace(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other = open(h, "other").await;
    let a = upsert_one(&*s, stage("r1", "a"), now()).await;
    let b = upsert_one(&*s, stage("r2", "a"), now()).await;
    let c = upsert_one(&*other, stage("r1", "a"), now()).await;
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert_eq!(run_ids(&*s, "r1").await, vec![a.clone()]);
    assert_eq!(run_ids(&*s, "r2").await, vec![b]);
    assert_eq!(run_ids(&*other, "r1").await, vec![c.clone()]);
    assert_eq!(upsert_one(&*other, stage("r1", "a"), at(1)).await, c);
    assert_eq!(upsert_one(&*s, stage("r1", "a"), at(1)).await, a);
    assert_eq!(totals(&*s).await.total(), 2);
    assert_eq!(totals(&*other).await.total(), 1);
}

/// `jobs_of_run` lists every job of the run, any status, oldest first (created_at, then id),
/// and nothing of other runs or of plain jobs.
pub async fn workflow_jobs_of_run_oldest_first_any_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let late = stage_built("r", "late", "{}", EnqueueOptions::default(), at(30));
    let first = stage_built("r", "first", "{}", EnqueueOptions::default(), at(10));
    let tie_a = stage_built("r", "tie-a", "{}", EnqueueOptions::default(), at(20));
    let tie_b = stage_built("r", "tie-b", "{}", EnqueueOptions::default(), at(20));
    upsert(&*s, vec![late], at(30)).await;
    upsert(&*s, vec![first], at(10)).await;
    let ties = upsert(&*s, vec![tie_b, tie_a], at(20)).await;
    let elsewhere = EnqueueOptions { queue: Some("elsewhere".into()), ..Default::default() };
    upsert(&*s, vec![stage_with("other", "first", elsewhere)], now()).await;
    put(&*s, job("t", ""), now()).await;
    let running = claim_stage(&*s, &run_ids(&*s, "r").await[0], at(40)).await;
    assert_eq!(running.job.workflow_stage_id.as_deref(), Some("first"), "the oldest stage");
    let jobs = run_jobs(&*s, "r").await;
    let stages: Vec<_> = jobs.iter().map(|j| j.workflow_stage_id.clone().unwrap_or_default()).collect();
    let mut tied = ties.clone();
    tied.sort();
    let tie_order: Vec<_> = jobs[1..3].iter().map(|j| j.id.clone()).collect();
    assert_eq!(tie_order, tied, "a tie on created_at is broken by id");
    assert_eq!((stages[0].as_str(), stages[3].as_str()), ("first", "late"), "{stages:?}");
    assert!(jobs.iter().all(|j| j.workflow_run_id.as_deref() == Some("r")));
    let created: Vec<_> = jobs.iter().map(|j| j.created_at).collect();
    assert_eq!(created, vec![at(10), at(20), at(20), at(30)]);
    complete(&*s, &running, None, at(41)).await;
    let statuses: Vec<_> = run_jobs(&*s, "r").await.into_iter().map(|j| j.status).collect();
    assert_eq!(statuses[0], JobStatus::Completed, "finished jobs are still listed");
    assert_eq!(statuses.len(), 4);
}

/// A run with no jobs lists nothing.
pub async fn workflow_jobs_of_unknown_run_is_empty(h: &dyn Harness) {
    let s = open(h, "default").await;
    upsert(&*s, vec![stage("r", "a")], now()).await;
    assert!(run_jobs(&*s, "nope").await.is_empty());
    let other = open(h, "other").await;
    assert!(run_jobs(&*other, "r").await.is_empty(), "runs are per namespace");
}

/// Workflow stages are ordinary jobs: listed, filtered, counted and claimable by a plain claim
/// like any other.
pub async fn workflow_jobs_are_ordinary_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(&*s, vec![grouped("r", "a", "t1"), stage("r", "b")], now()).await;
    put(&*s, job("t", ""), now()).await;
    let by_queue = list(&*s, &JobFilter { queue: Some(QUEUE.into()), ..Default::default() }).await;
    let mut listed: Vec<_> = by_queue.iter().map(|j| j.id.clone()).collect();
    listed.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(listed, want);
    let by_task = list(&*s, &JobFilter { task: Some(WF.into()), ..Default::default() }).await;
    assert_eq!(by_task.len(), 2);
    assert!(by_task.iter().all(|j| j.workflow_run_id.as_deref() == Some("r")));
    assert_eq!(list(&*s, &JobFilter::default()).await.len(), 3);
    assert_eq!(s.stats(Some(QUEUE)).await.unwrap().pending, 2);
    assert_eq!(s.stats_by_queue().await.unwrap().get(QUEUE).map(|st| st.pending), Some(2));
    assert_eq!(s.count_pending(QUEUE).await.unwrap(), 2);
    let c = start_plain(&*s).await;
    assert!(ids.contains(&c.job.id));
    assert_eq!(s.stats(Some(QUEUE)).await.unwrap().running, 1);
    complete(&*s, &c, None, at(1)).await;
    let st = s.stats(Some(QUEUE)).await.unwrap();
    assert_eq!((st.pending, st.running, st.completed), (1, 0, 1));
    let done = list(&*s, &JobFilter { status: Some(JobStatus::Completed), ..Default::default() }).await;
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].workflow_run_id.as_deref(), Some("r"));
    let metrics = s.get_metrics(GetMetricsRequest { since_ms: now(), task: Some(WF.into()) }).await.unwrap();
    assert_eq!(metrics.len(), 1, "a finished stage records a metric row like any job");
    assert!(metrics[0].success);
}

async fn start_plain(s: &dyn flexiq_core::Store) -> flexiq_core::ClaimedJob {
    crate::fixtures::take_from(s, &[QUEUE], 1, now()).await.pop().expect("a plain claim takes a stage")
}

/// An upsert wakes a worker waiting for work on the workflow queue, as an enqueue does.
pub async fn workflow_upsert_wakes_idle_workers(h: &dyn Harness) {
    let s = open(h, "default").await;
    let producer = s.clone();
    let started = Instant::now();
    let (waited, _) = tokio::join!(
        s.wait_for_work(WaitForWorkRequest { queues: vec![QUEUE.into()], timeout_ms: 20_000 }),
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            upsert(&*producer, vec![stage("r", "a")], now()).await
        }
    );
    waited.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "woke after {:?}", started.elapsed());
    assert_eq!(run_jobs(&*s, "r").await.len(), 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow::workflow_upsert_inserts_stages_in_order,
            workflow::workflow_upsert_replaces_completed_row,
            workflow::workflow_upsert_replaces_running_row,
            workflow::workflow_upsert_replacing_running_row_clears_its_lease,
            workflow::workflow_upsert_replacement_resets_worker_lease_and_error,
            workflow::workflow_upsert_replaces_rows_in_any_status,
            workflow::workflow_upsert_replaces_waiting_row,
            workflow::workflow_upsert_mixed_insert_and_replace,
            workflow::workflow_upsert_bad_job_writes_nothing,
            workflow::workflow_upsert_revoked_task_writes_nothing,
            workflow::workflow_enqueue_of_existing_pair_is_conflict,
            workflow::workflow_upsert_pairs_are_per_run_and_namespace,
            workflow::workflow_jobs_of_run_oldest_first_any_status,
            workflow::workflow_jobs_of_unknown_run_is_empty,
            workflow::workflow_jobs_are_ordinary_jobs,
            workflow::workflow_upsert_wakes_idle_workers,
        );
    };
}
