//! Acks followed by a fair claim in one store call (`ack_and_claim_fair`): a process running
//! many hosts sends the acks and the dequeues waiting at the same moment together, so the call
//! must answer exactly as the two calls one after the other would: one outcome per ack, a
//! superseded ack changing nothing, and a claim that counts the running jobs the acks ended.

use flexiq_core::events::EventKind;
use flexiq_core::store::{
    Ack, AckClaimFairRequest, AckKind, AckRequest, ClaimFairRequest, GetMetricsRequest, ReadEventsRequest,
};
use flexiq_core::{AckOutcome, ClaimedJob, ErrorKind, Fence, JobStatus, Store};

use super::workflow_kit::{claim_fair_batch, fair, grouped, take_fair, totals, upsert};
use crate::fixtures::{at, get, job, job_after, now, open, put, take};
use crate::Harness;

fn completes(c: &ClaimedJob) -> Ack {
    Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } }
}

/// A fence of `c`'s job that is not the running attempt's.
fn stale(c: &ClaimedJob) -> Fence {
    Fence { claim_seq: c.fence.claim_seq + 7, ..c.fence }
}

fn workers(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("host-{i}")).collect()
}

/// Runs the joint call, failing the case on error, on a failed claim, on a wrong number of
/// outcomes or on a job stamped with another worker than its place says.
async fn ack_and_claim(
    s: &dyn Store,
    acks: Vec<Ack>,
    claim: ClaimFairRequest,
) -> (Vec<AckOutcome>, Vec<ClaimedJob>) {
    let (n, workers) = (acks.len(), claim.workers.clone());
    let what = format!("{} acks before {claim:?}", acks.len());
    let reply = s
        .ack_and_claim_fair(AckClaimFairRequest { acks, claim })
        .await
        .unwrap_or_else(|e| panic!("ack_and_claim_fair, {what}: {e}"));
    let claimed = reply.claimed.unwrap_or_else(|e| panic!("the claim after the acks, {what}: {e}"));
    assert_eq!(reply.outcomes.len(), n, "one outcome per ack in {what}");
    assert!(claimed.len() <= workers.len(), "{} jobs for {} workers in {what}", claimed.len(), workers.len());
    for (c, w) in claimed.iter().zip(&workers) {
        assert_eq!(c.job.worker_id.as_deref(), Some(w.as_str()), "job {} stamped for its place", c.job.id);
    }
    (reply.outcomes, claimed)
}

fn stages(got: &[ClaimedJob]) -> Vec<String> {
    got.iter().map(|c| c.job.workflow_stage_id.clone().expect("a workflow job has a stage")).collect()
}

/// Each ack gets its own outcome in order: the running attempt's fence is acknowledged, a
/// stale one is superseded and leaves its job exactly as it was; the claim then takes a job.
pub async fn workflow_ack_claim_answers_each_ack_and_a_stale_one_changes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    upsert(&*s, vec![grouped("r", "a", "g"), grouped("r", "b", "g"), grouped("r", "c", "g")], now()).await;
    let first = claim_fair_batch(&*s, ClaimFairRequest { workers: workers(2), ..fair(None, now()) }).await;
    assert_eq!(first.len(), 2);
    let untouched = get(&*s, &first[1].job.id).await;
    let acks = vec![completes(&first[0]), Ack { fence: stale(&first[1]), ..completes(&first[1]) }];
    let (outcomes, claimed) = ack_and_claim(&*s, acks, fair(None, at(10))).await;
    assert_eq!(outcomes, vec![AckOutcome::Acknowledged, AckOutcome::Superseded]);
    assert_eq!(stages(&claimed), vec!["c".to_string()], "the claim takes the one job left");
    assert_eq!(get(&*s, &first[0].job.id).await.status, JobStatus::Completed);
    assert_eq!(get(&*s, &first[1].job.id).await, untouched, "a superseded ack changes nothing");
    let t = totals(&*s).await;
    assert_eq!((t.running, t.completed), (2, 1), "job {} and the new claim run", first[1].job.id);
}

/// Under a cap, the claim counts the running jobs the acks of the same call ended: a group at
/// its cap gives a job again once its running job is acked, and not when the ack is superseded.
pub async fn workflow_ack_claim_sees_the_capacity_the_acks_freed(h: &dyn Harness) {
    let s = open(h, "default").await;
    upsert(&*s, vec![grouped("r", "a0", "a"), grouped("r", "a1", "a"), grouped("r", "a2", "a")], now()).await;
    let running = take_fair(&*s, Some(1), now()).await.expect("group a has work");
    assert!(take_fair(&*s, Some(1), now()).await.is_none(), "group a is at its cap of 1");
    let superseded = Ack { fence: stale(&running), ..completes(&running) };
    let (outcomes, claimed) = ack_and_claim(&*s, vec![superseded], fair(Some(1), at(5))).await;
    assert_eq!(outcomes, vec![AckOutcome::Superseded]);
    assert!(claimed.is_empty(), "a superseded ack frees nothing: group a stays at its cap");
    let claim = ClaimFairRequest { workers: workers(2), ..fair(Some(1), at(10)) };
    let (outcomes, claimed) = ack_and_claim(&*s, vec![completes(&running)], claim).await;
    assert_eq!(outcomes, vec![AckOutcome::Acknowledged]);
    assert_eq!(claimed.len(), 1, "the ack freed one place of group a, and only one");
    assert_eq!(claimed[0].job.group_key.as_deref(), Some("a"));
    assert_eq!(totals(&*s).await.running, 1, "group a runs exactly its cap");
}

/// The joint call takes the same jobs, gives the same outcomes and leaves the same rotation
/// and counts as an ack followed by a fair claim, for every kind of ack.
pub async fn workflow_ack_claim_matches_ack_then_claim(h: &dyn Harness) {
    let joint = open(h, "joint").await;
    let apart = open(h, "apart").await;
    // Built once per namespace: job ids are unique across namespaces.
    let backlog = || {
        let mut jobs = Vec::new();
        for g in ["g0", "g1", "g2", "g3"] {
            jobs.extend((0..4).map(|i| grouped("r", &format!("{g}-{i}"), g)));
        }
        jobs
    };
    upsert(&*joint, backlog(), now()).await;
    upsert(&*apart, backlog(), now()).await;
    let first = ClaimFairRequest { workers: workers(6), ..fair(Some(2), now()) };
    let j0 = claim_fair_batch(&*joint, first.clone()).await;
    let a0 = claim_fair_batch(&*apart, first).await;
    assert_eq!(stages(&j0), stages(&a0), "both namespaces start alike");
    let kinds = [
        AckKind::Complete { result: Some(b"done".to_vec()) },
        AckKind::Fail { error: "boom".into(), retryable: false },
        AckKind::Defer { until: at(1_000), reason: "not yet".into() },
        AckKind::Suspend { until: at(2_000) },
    ];
    let acks_of = |got: &[ClaimedJob]| -> Vec<Ack> {
        let mut acks: Vec<Ack> = got
            .iter()
            .zip(kinds.iter().cloned())
            .map(|(c, kind)| Ack { job_id: c.job.id.clone(), fence: c.fence, kind })
            .collect();
        acks.push(Ack { fence: stale(&got[4]), ..completes(&got[4]) });
        acks
    };
    let claim = ClaimFairRequest { workers: workers(4), ..fair(Some(2), at(10)) };
    let (joint_out, joint_got) = ack_and_claim(&*joint, acks_of(&j0), claim.clone()).await;
    let apart_out = apart
        .ack(AckRequest { acks: acks_of(&a0), now: at(10) })
        .await
        .unwrap_or_else(|e| panic!("ack in namespace apart: {e}"));
    let apart_got = claim_fair_batch(&*apart, claim).await;
    assert_eq!(joint_out, apart_out, "the same outcomes");
    assert_eq!(joint_out[4], AckOutcome::Superseded);
    assert_eq!(stages(&joint_got), stages(&apart_got), "the same jobs in the same places");
    assert_eq!(totals(&*joint).await, totals(&*apart).await, "the same counts");
    for (j, a) in j0.iter().zip(&a0) {
        let (j, a) = (get(&*joint, &j.job.id).await, get(&*apart, &a.job.id).await);
        assert_eq!(
            (j.status, j.attempt, j.last_error),
            (a.status, a.attempt, a.last_error),
            "stage {:?}",
            j.workflow_stage_id
        );
    }
    let next = ClaimFairRequest { workers: workers(8), ..fair(Some(2), at(20)) };
    let (jn, an) = (claim_fair_batch(&*joint, next.clone()).await, claim_fair_batch(&*apart, next).await);
    assert_eq!(stages(&jn), stages(&an), "the rotation moved alike");
}

/// A call whose acks are all completions writes what the same completions acked alone write:
/// the result, a success metric and a `completed` event per job, the dependents of a job
/// released; an ack of a job of another namespace is superseded and leaves that job running.
pub async fn workflow_ack_claim_completions_write_what_acks_write(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other = open(h, "other").await;
    let parent = put(&*s, job("parent", ""), now()).await;
    let child = put(&*s, job_after("child", &[&parent]), now()).await;
    let p = take(&*s, 1, now()).await.pop().expect("the parent is the one pending job");
    assert_eq!(p.job.id, parent);
    upsert(&*s, vec![grouped("r", "a", "g"), grouped("r", "b", "g")], now()).await;
    let a = claim_fair_batch(&*s, fair(None, now())).await.pop().expect("stage a is ready");
    upsert(&*other, vec![grouped("r", "x", "g")], now()).await;
    let x = claim_fair_batch(&*other, fair(None, now())).await.pop().expect("stage x is ready");
    let acks = vec![
        Ack {
            job_id: p.job.id.clone(),
            fence: p.fence,
            kind: AckKind::Complete { result: Some(b"r".to_vec()) },
        },
        completes(&a),
        completes(&x),
    ];
    let (outcomes, claimed) = ack_and_claim(&*s, acks, fair(None, at(10))).await;
    assert_eq!(outcomes, vec![AckOutcome::Acknowledged, AckOutcome::Acknowledged, AckOutcome::Superseded]);
    assert_eq!(stages(&claimed), vec!["b".to_string()]);
    let pj = get(&*s, &parent).await;
    assert_eq!(
        (pj.status, pj.result.as_deref(), pj.worker_id),
        (JobStatus::Completed, Some(&b"r"[..]), None)
    );
    assert_eq!(get(&*s, &child).await.status, JobStatus::Pending, "child {child} is released");
    let aj = get(&*s, &a.job.id).await;
    assert_eq!((aj.status, aj.finished_at, aj.worker_id), (JobStatus::Completed, Some(at(10)), None));
    assert_eq!(
        get(&*other, &x.job.id).await.status,
        JobStatus::Running,
        "job {} is another namespace's",
        x.job.id
    );
    let metrics = s.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap();
    for id in [&parent, &a.job.id] {
        let rows: Vec<_> = metrics.iter().filter(|m| m.job_id == id.as_str()).collect();
        assert_eq!(rows.len(), 1, "one metric row for job {id}: {metrics:?}");
        assert!(rows[0].success && rows[0].attempt == 1, "job {id}: {:?}", rows[0]);
    }
    let events = s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 1_000 }).await.unwrap();
    for id in [&parent, &a.job.id] {
        let done = events
            .iter()
            .filter(|e| e.job_id.as_deref() == Some(id.as_str()) && e.kind == EventKind::Completed)
            .count();
        assert_eq!(done, 1, "one completed event for job {id}: {events:#?}");
    }
    assert!(
        !events.iter().any(|e| e.job_id.as_deref() == Some(x.job.id.as_str())),
        "no event for job {}",
        x.job.id
    );
}

/// Without acks the joint call is a fair claim; a job acked twice in one call, or a claim the
/// fair claim refuses, is `InvalidArgument` and nothing is written.
pub async fn workflow_ack_claim_checks_its_request(h: &dyn Harness) {
    let s = open(h, "default").await;
    upsert(&*s, vec![grouped("r", "a", "g"), grouped("r", "b", "g")], now()).await;
    let (outcomes, claimed) = ack_and_claim(&*s, Vec::new(), fair(None, now())).await;
    assert_eq!((outcomes.len(), stages(&claimed)), (0, vec!["a".to_string()]));
    let c = &claimed[0];
    let twice = AckClaimFairRequest { acks: vec![completes(c), completes(c)], claim: fair(None, at(5)) };
    let e = s.ack_and_claim_fair(twice).await.expect_err("a job acked twice is refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains(c.job.id.as_str()), "the error names job {}: {e}", c.job.id);
    let no_cap = AckClaimFairRequest { acks: vec![completes(c)], claim: fair(Some(0), at(5)) };
    let e = s.ack_and_claim_fair(no_cap).await.expect_err("a cap of 0 is refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Running, "nothing was written");
    assert_eq!(totals(&*s).await.running, 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow_ack_claim {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow_ack_claim::workflow_ack_claim_answers_each_ack_and_a_stale_one_changes_nothing,
            workflow_ack_claim::workflow_ack_claim_sees_the_capacity_the_acks_freed,
            workflow_ack_claim::workflow_ack_claim_matches_ack_then_claim,
            workflow_ack_claim::workflow_ack_claim_completions_write_what_acks_write,
            workflow_ack_claim::workflow_ack_claim_checks_its_request,
        );
    };
}
