//! The fair claim: one workflow job at a time, filtered by the (workflow, version) pairs a
//! host serves, honouring pause, rate limits and concurrency caps like `claim`, and with a
//! group cap, never more than that many running jobs per fairness group while groups with
//! ready work are served round-robin.
//!
//! The point of fairness is that one tenant's backlog cannot starve another, so the headline
//! case is three tenants with backlogs of 1,000, 10 and 1 that must all start within the first
//! five claims; the racing cases check the cap holds across claimers on one store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimFairRequest, HeartbeatRequest, SetConcurrencyRequest, SetRateLimitRequest,
};
use flexiq_core::{AckOutcome, EnqueueOptions, JobId, JobStatus, RateLimit, Store};

use super::workflow_kit::{
    claim_fair, fair, grouped, serving, stage, stage_built, stage_with, take_fair, totals, upsert, versioned,
    QUEUE,
};
use crate::fixtures::{ack, at, complete, get, now, open, take_from};
use crate::Harness;

fn group_of(c: &flexiq_core::ClaimedJob) -> String {
    c.job.group_key.clone().unwrap_or_default()
}

/// Without a cap the claim takes the best job by priority, then run_at, then id, whatever its
/// group, and returns `None` when nothing is claimable.
pub async fn workflow_fair_claim_without_cap_takes_best_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(take_fair(&*s, None, now()).await.is_none(), "an empty queue has nothing to claim");
    let low = EnqueueOptions { priority: Some(-5), group_key: Some("a".into()), ..Default::default() };
    let high = EnqueueOptions { priority: Some(5), group_key: Some("b".into()), ..Default::default() };
    let early = EnqueueOptions { run_at: Some(at(-10)), group_key: Some("b".into()), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![
            stage_with("r", "low", low),
            stage("r", "plain-1"),
            stage_with("r", "high", high),
            stage("r", "plain-2"),
            stage_with("r", "early", early),
        ],
        now(),
    )
    .await;
    let mut order = Vec::new();
    while let Some(c) = take_fair(&*s, None, now()).await {
        order.push(c.job.id);
    }
    assert_eq!(order, vec![ids[2].clone(), ids[4].clone(), ids[1].clone(), ids[3].clone(), ids[0].clone()]);
}

/// A fair claim goes through the ordinary claim transition: running, attempt and claim
/// sequence 1, started and heartbeat now, the worker stamped; the fence acks and heartbeats.
pub async fn workflow_fair_claim_stamps_fence_like_claim(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert(&*s, vec![stage("r", "a")], now()).await.remove(0);
    let req = ClaimFairRequest { workers: vec!["host-7".into()], ..fair(Some(1), at(5)) };
    let c = claim_fair(&*s, req).await.expect("a pending stage is claimable");
    assert_eq!(c.job.id, id);
    assert_eq!((c.fence.attempt, c.fence.claim_seq, c.fence.started_at), (1, 1, at(5)));
    assert_eq!(c.job.status, JobStatus::Running);
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.worker_id.as_deref(), Some("host-7"));
    assert_eq!((j.started_at, j.attempt), (Some(at(5)), 1));
    assert_eq!(j.fence(), Some(c.fence));
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.running), (0, 1));
    let hb = s.heartbeat(HeartbeatRequest { jobs: vec![(id.clone(), c.fence)], now: at(6) }).await.unwrap();
    assert_eq!(hb[0].outcome, AckOutcome::Acknowledged);
    assert!(take_fair(&*s, Some(1), at(7)).await.is_none(), "a running job is not claimed again");
    complete(&*s, &c, None, at(8)).await;
    assert_eq!(totals(&*s).await.completed, 1);
}

/// `serves` restricts the claim to the listed (workflow, version) pairs; a pair without a
/// version serves every version of its workflow; an empty list serves everything.
pub async fn workflow_fair_serves_filters_by_workflow_and_version(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(
        &*s,
        vec![
            versioned("r", "a1", "wf-a", Some("v1")),
            versioned("r", "a2", "wf-a", Some("v2")),
            versioned("r", "a0", "wf-a", None),
            versioned("r", "b1", "wf-b", Some("v1")),
        ],
        now(),
    )
    .await;
    let with =
        |pairs: &[(&str, Option<&str>)]| ClaimFairRequest { serves: serving(pairs), ..fair(None, now()) };
    assert!(claim_fair(&*s, with(&[("wf-c", None)])).await.is_none(), "no job of wf-c");
    assert!(claim_fair(&*s, with(&[("wf-b", Some("v2"))])).await.is_none(), "no wf-b at v2");
    let c = claim_fair(&*s, with(&[("wf-a", Some("v2")), ("wf-b", Some("v9"))])).await.expect("wf-a v2");
    assert_eq!(c.job.id, ids[1]);
    assert_eq!(c.job.workflow_version.as_deref(), Some("v2"));
    assert!(claim_fair(&*s, with(&[("wf-a", Some("v2"))])).await.is_none(), "the only v2 is running");
    let mut any_version = Vec::new();
    while let Some(c) = claim_fair(&*s, with(&[("wf-a", None)])).await {
        any_version.push(c.job.id);
    }
    assert_eq!(any_version, vec![ids[0].clone(), ids[2].clone()], "None serves v1 and unversioned jobs");
    let c = claim_fair(&*s, with(&[])).await.expect("an empty serves list serves wf-b too");
    assert_eq!(c.job.id, ids[3]);
}

/// Only the listed queues are claimed from.
pub async fn workflow_fair_claims_only_listed_queues(h: &dyn Harness) {
    let s = open(h, "default").await;
    let in_q = |q: &str| EnqueueOptions { queue: Some(q.into()), ..Default::default() };
    let ids =
        upsert(&*s, vec![stage_with("r", "x", in_q("wf-x")), stage_with("r", "y", in_q("wf-y"))], now())
            .await;
    assert!(take_fair(&*s, None, now()).await.is_none(), "nothing on the default workflow queue");
    let req = |queues: &[&str]| ClaimFairRequest {
        queues: queues.iter().map(|q| q.to_string()).collect(),
        ..fair(None, now())
    };
    let c = claim_fair(&*s, req(&["wf-y"])).await.expect("wf-y has a stage");
    assert_eq!(c.job.id, ids[1]);
    assert_eq!(c.job.queue, "wf-y");
    let c = claim_fair(&*s, req(&["wf-x", "wf-y"])).await.expect("wf-x has a stage");
    assert_eq!(c.job.id, ids[0]);
}

/// A paused queue is not served; resuming it serves it again.
pub async fn workflow_fair_skips_paused_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = upsert(&*s, vec![grouped("r", "a", "g")], now()).await.remove(0);
    s.pause(QUEUE).await.unwrap();
    assert!(take_fair(&*s, None, now()).await.is_none(), "paused, no cap");
    assert!(take_fair(&*s, Some(1), now()).await.is_none(), "paused, with a cap");
    assert_eq!(get(&*s, &id).await.status, JobStatus::Pending);
    s.resume(QUEUE).await.unwrap();
    assert_eq!(take_fair(&*s, Some(1), at(1)).await.map(|c| c.job.id), Some(id));
}

/// The queue's concurrency cap and rate limit hold for fair claims as for plain ones.
pub async fn workflow_fair_honours_concurrency_cap_and_rate_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: QUEUE.into(), max: Some(2) }).await.unwrap();
    upsert(&*s, (0..6).map(|i| grouped("r", &format!("s{i}"), &format!("g{i}"))).collect(), now()).await;
    let a = take_fair(&*s, Some(5), now()).await.expect("first under the queue cap");
    assert!(take_fair(&*s, None, now()).await.is_some(), "second under the queue cap");
    assert!(take_fair(&*s, Some(5), now()).await.is_none(), "the queue's cap of 2 is reached");
    complete(&*s, &a, None, at(1)).await;
    assert!(take_fair(&*s, Some(5), at(2)).await.is_some(), "a finished job frees a slot");
    s.set_concurrency(SetConcurrencyRequest { queue: QUEUE.into(), max: None }).await.unwrap();
    let limit = Some(RateLimit::parse("1/s").unwrap());
    s.set_rate_limit(SetRateLimitRequest { queue: QUEUE.into(), limit }).await.unwrap();
    assert!(take_fair(&*s, Some(5), at(3)).await.is_some(), "the bucket holds one claim");
    assert!(take_fair(&*s, Some(5), at(4)).await.is_none(), "the bucket is empty");
    assert!(take_fair(&*s, Some(5), at(1_100)).await.is_some(), "a second later it refilled");
}

/// Delayed stages are not claimed before their run_at; a suspended stage comes back at its
/// next poll time.
pub async fn workflow_fair_skips_delayed_and_suspended_until_due(h: &dyn Harness) {
    let s = open(h, "default").await;
    let later = EnqueueOptions { run_at: Some(at(1_000)), ..Default::default() };
    let id = upsert(&*s, vec![stage_with("r", "a", later)], now()).await.remove(0);
    assert!(take_fair(&*s, Some(1), at(999)).await.is_none());
    let c = take_fair(&*s, Some(1), at(1_000)).await.expect("due at run_at");
    assert_eq!(c.job.id, id);
    assert_eq!(
        ack(&*s, &c, AckKind::Suspend { until: at(5_000) }, at(1_001)).await,
        AckOutcome::Acknowledged
    );
    assert_eq!(get(&*s, &id).await.status, JobStatus::Suspended);
    assert!(take_fair(&*s, Some(1), at(4_999)).await.is_none(), "suspended until its next poll");
    let again = take_fair(&*s, Some(1), at(5_000)).await.expect("claimable at the next poll");
    assert_eq!(again.job.id, id);
}

/// Three tenants with backlogs of 1,000, 10 and 1 all start within the first five claims under
/// a cap of 1, whether or not the claimed jobs finish in between.
pub async fn workflow_fair_three_tenants_start_within_five_claims(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut jobs = Vec::new();
    for (tenant, n) in [("tenant-a", 1_000), ("tenant-b", 10), ("tenant-c", 1)] {
        jobs.extend((0..n).map(|i| grouped(&format!("{tenant}-run"), &format!("s{i}"), tenant)));
    }
    upsert(&*s, jobs, now()).await;
    // Nothing finishes: each tenant runs one job, then every group is at its cap.
    let mut started = BTreeSet::new();
    let mut claimed = Vec::new();
    for i in 0..5 {
        if let Some(c) = take_fair(&*s, Some(1), at(i)).await {
            started.insert(group_of(&c));
            claimed.push(c);
        }
    }
    let want: BTreeSet<String> = ["tenant-a", "tenant-b", "tenant-c"].iter().map(|t| t.to_string()).collect();
    assert_eq!(started, want, "every tenant starts within five claims");
    assert_eq!(claimed.len(), 3, "a cap of 1 over three tenants runs three jobs");
    // A host loop: each job finishes before the next claim.
    for (i, c) in claimed.iter().enumerate() {
        complete(&*s, c, None, at(10 + i as i64)).await;
    }
    let mut started = BTreeSet::new();
    for i in 0..5 {
        let c = take_fair(&*s, Some(1), at(20 + i)).await.expect("work is left for a tenant under its cap");
        started.insert(group_of(&c));
        complete(&*s, &c, None, at(20 + i)).await;
    }
    let want: BTreeSet<String> = ["tenant-a", "tenant-b"].iter().map(|t| t.to_string()).collect();
    assert_eq!(started, want, "tenant-c is done; a and b both keep getting served");
}

/// A group at its cap is skipped: the claim serves another group, or returns `None` when every
/// group with work is capped; a finished job frees its group.
pub async fn workflow_fair_capped_group_is_skipped(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut jobs: Vec<_> = (0..5).map(|i| grouped("r", &format!("a{i}"), "a")).collect();
    jobs.push(grouped("r", "b0", "b"));
    upsert(&*s, jobs, now()).await;
    let a1 = take_fair(&*s, Some(2), now()).await.expect("group a");
    let b = take_fair(&*s, Some(2), now()).await.expect("group b, round-robin");
    let a2 = take_fair(&*s, Some(2), now()).await.expect("group a under its cap");
    assert_eq!((group_of(&a1), group_of(&b), group_of(&a2)), ("a".into(), "b".into(), "a".into()));
    assert!(take_fair(&*s, Some(2), now()).await.is_none(), "a is at its cap and b has no more work");
    assert_eq!(s.stats(Some(QUEUE)).await.unwrap().running, 3);
    complete(&*s, &a1, None, at(1)).await;
    let a3 = take_fair(&*s, Some(2), at(2)).await.expect("a finished job frees a slot in a");
    assert_eq!(group_of(&a3), "a");
    assert!(take_fair(&*s, Some(2), at(3)).await.is_none());
    // Without a cap the same claim ignores the groups.
    assert!(take_fair(&*s, None, at(4)).await.is_some());
}

/// Running jobs count against their group however they were claimed, and only in the queues
/// the claim names.
pub async fn workflow_fair_cap_counts_running_jobs_in_requested_queues(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other =
        EnqueueOptions { queue: Some("wf-other".into()), group_key: Some("a".into()), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![grouped("r", "a0", "a"), grouped("r", "a1", "a"), stage_with("r", "elsewhere", other)],
        now(),
    )
    .await;
    let plain = take_from(&*s, &[QUEUE], 1, now()).await.pop().expect("a plain claim of a stage");
    assert_eq!(plain.job.id, ids[0]);
    assert!(take_fair(&*s, Some(1), now()).await.is_none(), "group a has a running job (plain claim)");
    complete(&*s, &plain, None, at(1)).await;
    let elsewhere = ClaimFairRequest { queues: vec!["wf-other".into()], ..fair(Some(1), at(2)) };
    let e = claim_fair(&*s, elsewhere).await.expect("group a is free in wf-other");
    assert_eq!(e.job.id, ids[2]);
    let c = take_fair(&*s, Some(1), at(3)).await.expect("a job of a running in another queue does not count");
    assert_eq!(c.job.id, ids[1]);
    let both = ClaimFairRequest { queues: vec![QUEUE.into(), "wf-other".into()], ..fair(Some(2), at(4)) };
    assert!(claim_fair(&*s, both).await.is_none(), "nothing left to claim");
}

/// Jobs with no group key form one default group with its own cap.
pub async fn workflow_fair_default_group_is_one_group(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = upsert(&*s, vec![stage("r", "x"), stage("r", "y"), grouped("r", "g", "g")], now()).await;
    let mut got = Vec::new();
    while let Some(c) = take_fair(&*s, Some(1), now()).await {
        got.push(c);
    }
    assert_eq!(got.len(), 2, "one job of the default group and one of g");
    let mut groups: Vec<_> = got.iter().map(|c| c.job.group_key.clone()).collect();
    groups.sort();
    assert_eq!(groups, vec![None, Some("g".to_string())]);
    let default = got.iter().find(|c| c.job.group_key.is_none()).expect("the default group ran");
    assert_eq!(default.job.id, ids[0], "within a group, by priority, run_at, then id");
    complete(&*s, default, None, at(1)).await;
    let next = take_fair(&*s, Some(1), at(2)).await.expect("the default group is free again");
    assert_eq!(next.job.id, ids[1]);
}

/// Groups with ready work are served in key order after the previous fair claim's group,
/// wrapping around; an exhausted group drops out of the rotation.
pub async fn workflow_fair_round_robin_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut jobs = Vec::new();
    for (group, n) in [("c", 3), ("a", 3), ("b", 1)] {
        jobs.extend((0..n).map(|i| grouped("r", &format!("{group}{i}"), group)));
    }
    upsert(&*s, jobs, now()).await;
    let mut order = Vec::new();
    while let Some(c) = take_fair(&*s, Some(100), now()).await {
        order.push(group_of(&c));
    }
    assert_eq!(order, vec!["a", "b", "c", "a", "c", "a", "c"]);
    // The rotation continues from the last group served, wherever new work arrives.
    let more = vec![grouped("r2", "a", "a"), grouped("r2", "b", "b"), grouped("r2", "c", "c")];
    upsert(&*s, more, at(1)).await;
    let next = take_fair(&*s, Some(100), at(2)).await.expect("new work");
    assert_eq!(group_of(&next), "a", "after c the rotation wraps to a");
    let next = take_fair(&*s, Some(100), at(2)).await.expect("new work");
    assert_eq!(group_of(&next), "b");
}

/// A group's high priority does not let it starve another group: priority orders jobs within
/// a group, the rotation orders groups.
pub async fn workflow_fair_priority_does_not_cross_groups(h: &dyn Harness) {
    let s = open(h, "default").await;
    let urgent = EnqueueOptions { priority: Some(100), group_key: Some("a".into()), ..Default::default() };
    let mut jobs: Vec<_> = (0..50).map(|i| stage_with("r", &format!("a{i}"), urgent.clone())).collect();
    let low = EnqueueOptions { priority: Some(-100), group_key: Some("b".into()), ..Default::default() };
    jobs.push(stage_with("r", "b", low));
    upsert(&*s, jobs, now()).await;
    let first = take_fair(&*s, Some(10), now()).await.expect("group a");
    let second = take_fair(&*s, Some(10), now()).await.expect("group b");
    assert_eq!((group_of(&first), group_of(&second)), ("a".to_string(), "b".to_string()));
}

/// The rotation is per namespace: fair claims in one namespace do not move another's.
pub async fn workflow_fair_rotation_is_per_namespace(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other = open(h, "other").await;
    let jobs = || vec![grouped("r", "a0", "a"), grouped("r", "a1", "a"), grouped("r", "b0", "b")];
    upsert(&*s, jobs(), now()).await;
    upsert(&*other, jobs(), now()).await;
    assert_eq!(take_fair(&*s, Some(5), now()).await.map(|c| group_of(&c)).as_deref(), Some("a"));
    assert_eq!(take_fair(&*other, Some(5), now()).await.map(|c| group_of(&c)).as_deref(), Some("a"));
    assert_eq!(take_fair(&*other, Some(5), now()).await.map(|c| group_of(&c)).as_deref(), Some("b"));
    assert_eq!(take_fair(&*s, Some(5), now()).await.map(|c| group_of(&c)).as_deref(), Some("b"));
    assert_eq!(take_fair(&*s, Some(5), now()).await.map(|c| group_of(&c)).as_deref(), Some("a"));
}

/// Within a group the best job goes first: priority, then run_at, then id.
pub async fn workflow_fair_within_group_by_priority(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts =
        |p: i32| EnqueueOptions { priority: Some(p), group_key: Some("g".into()), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![
            stage_built("r", "low", "{}", opts(-1), now()),
            stage_built("r", "mid", "{}", opts(0), now()),
            stage_built("r", "top", "{}", opts(9), now()),
        ],
        now(),
    )
    .await;
    let mut order = Vec::new();
    while let Some(c) = take_fair(&*s, Some(10), now()).await {
        order.push(c.job.id);
    }
    assert_eq!(order, vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]);
}

async fn claim_until_none(s: Arc<dyn Store>, worker: String, cap: u32) -> Vec<(JobId, String)> {
    let mut got = Vec::new();
    loop {
        let req = ClaimFairRequest { workers: vec![worker.clone()], ..fair(Some(cap), now()) };
        match s.claim_fair(req).await.unwrap_or_else(|e| panic!("claim_fair by {worker}: {e}")).pop() {
            Some(c) => got.push((c.job.id.clone(), group_of(&c))),
            None => return got,
        }
    }
}

/// Claimers racing on one store and on two handles never take a group past its cap: with
/// nothing finishing, exactly `cap` jobs of each group run.
pub async fn workflow_fair_parallel_claimers_never_exceed_cap(h: &dyn Harness) {
    let s1 = open(h, "default").await;
    let s2 = open(h, "default").await;
    let mut jobs = Vec::new();
    for g in ["g0", "g1", "g2", "g3"] {
        jobs.extend((0..10).map(|i| grouped("r", &format!("{g}-{i}"), g)));
    }
    upsert(&*s1, jobs, now()).await;
    let tasks: Vec<_> = (0..6)
        .map(|w| {
            let s = if w % 2 == 0 { s1.clone() } else { s2.clone() };
            tokio::spawn(claim_until_none(s, format!("w{w}"), 2))
        })
        .collect();
    let (a, b) = tokio::join!(
        claim_until_none(s1.clone(), "a".into(), 2),
        claim_until_none(s2.clone(), "b".into(), 2)
    );
    let mut all: Vec<(JobId, String)> = a.into_iter().chain(b).collect();
    for t in tasks {
        all.extend(t.await.expect("a claimer panicked"));
    }
    let mut per_group: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (id, g) in &all {
        assert!(seen.insert(id.clone()), "job {id} was claimed twice");
        *per_group.entry(g.clone()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = ["g0", "g1", "g2", "g3"].iter().map(|g| (g.to_string(), 2)).collect();
    assert_eq!(per_group, want, "each group runs exactly its cap");
    assert_eq!(s1.stats(Some(QUEUE)).await.unwrap().running, 8);
}

/// Claimers racing in a host loop (claim, finish, claim again) never have more than the cap
/// of one group running at once, and drain every job.
pub async fn workflow_fair_parallel_host_loops_never_exceed_cap(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut jobs = Vec::new();
    for g in ["g0", "g1", "g2"] {
        jobs.extend((0..10).map(|i| grouped("r", &format!("{g}-{i}"), g)));
    }
    upsert(&*s, jobs, now()).await;
    let running: Arc<Mutex<HashMap<String, u32>>> = Arc::new(Mutex::new(HashMap::new()));
    let tasks: Vec<_> = (0..4)
        .map(|w| {
            let s = s.clone();
            let running = running.clone();
            tokio::spawn(async move {
                let mut done = 0;
                let mut idle = 0;
                while idle < 2_000 {
                    let req = ClaimFairRequest { workers: vec![format!("w{w}")], ..fair(Some(1), now()) };
                    let Some(c) =
                        s.claim_fair(req).await.unwrap_or_else(|e| panic!("claim_fair by w{w}: {e}")).pop()
                    else {
                        if s.count_pending(QUEUE).await.unwrap() == 0 {
                            break;
                        }
                        idle += 1;
                        tokio::task::yield_now().await;
                        continue;
                    };
                    idle = 0;
                    let g = group_of(&c);
                    {
                        let mut r = running.lock().unwrap();
                        let n = r.entry(g.clone()).or_default();
                        *n += 1;
                        assert!(*n <= 1, "{n} jobs of group {g} running under a cap of 1");
                    }
                    tokio::task::yield_now().await;
                    *running.lock().unwrap().get_mut(&g).expect("counted above") -= 1;
                    let acks = vec![Ack {
                        job_id: c.job.id.clone(),
                        fence: c.fence,
                        kind: AckKind::Complete { result: None },
                    }];
                    s.ack(AckRequest { acks, now: now() }).await.unwrap();
                    done += 1;
                }
                done
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("a host loop panicked");
    }
    assert_eq!(total, 30);
    assert_eq!(s.stats(Some(QUEUE)).await.unwrap().completed, 30);
}

/// A fair claim takes workflow jobs only: a plain job on the same queue is left to plain
/// claims, with fairness on or off.
pub async fn workflow_fair_leaves_plain_jobs_to_plain_claims(h: &dyn Harness) {
    let s = open(h, "default").await;
    let plain = crate::fixtures::put(&*s, crate::fixtures::job_in(QUEUE, "plain"), now()).await;
    let ids = upsert(&*s, vec![stage("r", "a")], now()).await;
    for cap in [None, Some(5)] {
        if let Some(c) = take_fair(&*s, cap, now()).await {
            assert_eq!(c.job.id, ids[0], "a fair claim (cap {cap:?}) took a workflow job");
        }
        assert!(
            take_fair(&*s, cap, now()).await.is_none(),
            "the plain job {plain} was fair-claimed (cap {cap:?})"
        );
    }
    let plain_claims = take_from(&*s, &[QUEUE], 10, now()).await;
    assert_eq!(plain_claims.iter().map(|c| c.job.id.clone()).collect::<Vec<_>>(), vec![plain]);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow_fair {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow_fair::workflow_fair_claim_without_cap_takes_best_job,
            workflow_fair::workflow_fair_claim_stamps_fence_like_claim,
            workflow_fair::workflow_fair_serves_filters_by_workflow_and_version,
            workflow_fair::workflow_fair_claims_only_listed_queues,
            workflow_fair::workflow_fair_skips_paused_queue,
            workflow_fair::workflow_fair_leaves_plain_jobs_to_plain_claims,
            workflow_fair::workflow_fair_honours_concurrency_cap_and_rate_limit,
            workflow_fair::workflow_fair_skips_delayed_and_suspended_until_due,
            workflow_fair::workflow_fair_three_tenants_start_within_five_claims,
            workflow_fair::workflow_fair_capped_group_is_skipped,
            workflow_fair::workflow_fair_cap_counts_running_jobs_in_requested_queues,
            workflow_fair::workflow_fair_default_group_is_one_group,
            workflow_fair::workflow_fair_round_robin_order,
            workflow_fair::workflow_fair_priority_does_not_cross_groups,
            workflow_fair::workflow_fair_rotation_is_per_namespace,
            workflow_fair::workflow_fair_within_group_by_priority,
            workflow_fair::workflow_fair_parallel_claimers_never_exceed_cap,
            workflow_fair::workflow_fair_parallel_host_loops_never_exceed_cap,
        );
    };
}
