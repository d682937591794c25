//! The fair claim for several workers at once: hosts waiting together share one claim, so a
//! batch must take exactly the jobs the same number of single claims in a row would take (the
//! same order, the same caps counting the batch's own jobs, the same rotation afterwards) and
//! stamp each job with the worker whose place it fills.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use flexiq_core::store::{ClaimFairRequest, SetConcurrencyRequest};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, Store};

use super::workflow_kit::{claim_fair_batch, fair, grouped, stage_with, take_fair, totals, upsert, QUEUE};
use crate::fixtures::{complete, get, now, open};
use crate::Harness;

fn workers(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("host-{i}")).collect()
}

fn batch(n: usize, cap: Option<u32>) -> ClaimFairRequest {
    ClaimFairRequest { workers: workers(n), ..fair(cap, now()) }
}

fn stage_ids(got: &[flexiq_core::ClaimedJob]) -> Vec<String> {
    got.iter().map(|c| c.job.workflow_stage_id.clone().expect("a workflow job has a stage")).collect()
}

/// Without a cap a batch takes the best jobs by priority, then run_at, then id, one per worker
/// in order; a batch larger than the work takes what there is.
pub async fn workflow_fair_batch_without_cap_takes_best_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let p = |n: i32| EnqueueOptions { priority: Some(n), ..Default::default() };
    let ids = upsert(
        &*s,
        vec![stage_with("r", "p1", p(1)), stage_with("r", "p9", p(9)), stage_with("r", "p5", p(5))],
        now(),
    )
    .await;
    let first = claim_fair_batch(&*s, batch(2, None)).await;
    let got: Vec<JobId> = first.iter().map(|c| c.job.id.clone()).collect();
    assert_eq!(got, vec![ids[1].clone(), ids[2].clone()], "the two best, best first");
    for c in &first {
        let j = get(&*s, &c.job.id).await;
        assert_eq!(j.status, JobStatus::Running);
        assert_eq!(j.worker_id, c.job.worker_id, "job {} stored with its worker", c.job.id);
        assert_eq!(j.fence(), Some(c.fence));
    }
    let rest = claim_fair_batch(&*s, batch(5, None)).await;
    assert_eq!(rest.iter().map(|c| c.job.id.clone()).collect::<Vec<_>>(), vec![ids[0].clone()]);
    assert!(claim_fair_batch(&*s, batch(3, None)).await.is_empty(), "nothing left");
    assert_eq!(totals(&*s).await.running, 3);
}

fn backlog() -> Vec<flexiq_core::NewJob> {
    let mut jobs = Vec::new();
    for (g, n) in [("a", 6), ("b", 3), ("c", 1), ("d", 4)] {
        jobs.extend((0..n).map(|i| grouped("r", &format!("{g}{i}"), g)));
    }
    jobs
}

/// A capped batch takes the same jobs, in the same order, as single claims one after another,
/// counting its own jobs against each group's cap, and leaves the rotation where they would.
pub async fn workflow_fair_batch_matches_single_claims_in_a_row(h: &dyn Harness) {
    let single = open(h, "single").await;
    let batched = open(h, "batched").await;
    upsert(&*single, backlog(), now()).await;
    upsert(&*batched, backlog(), now()).await;
    let mut one_by_one = Vec::new();
    for _ in 0..12 {
        if let Some(c) = take_fair(&*single, Some(2), now()).await {
            one_by_one.push(c);
        }
    }
    let together = claim_fair_batch(&*batched, batch(12, Some(2))).await;
    assert_eq!(stage_ids(&together), stage_ids(&one_by_one), "a batch is single claims in a row");
    let mut per_group: BTreeMap<String, usize> = BTreeMap::new();
    for c in &together {
        *per_group.entry(c.job.group_key.clone().unwrap_or_default()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> =
        [("a", 2), ("b", 2), ("c", 1), ("d", 2)].iter().map(|(g, n)| (g.to_string(), *n)).collect();
    assert_eq!(per_group, want, "no group past its cap of 2, counting the batch itself");
    // Finishing the same job in each namespace, the next claims agree too: the rotation moved
    // as far as the single claims moved it.
    let done_single = one_by_one.iter().find(|c| c.job.workflow_stage_id.as_deref() == Some("d0")).unwrap();
    let done_batched = together.iter().find(|c| c.job.workflow_stage_id.as_deref() == Some("d0")).unwrap();
    complete(&*single, done_single, None, now()).await;
    complete(&*batched, done_batched, None, now()).await;
    let a = take_fair(&*single, Some(2), now()).await.expect("group d has a free slot");
    let b = claim_fair_batch(&*batched, batch(3, Some(2))).await;
    assert_eq!(b.len(), 1, "only group d has a free slot");
    assert_eq!(a.job.workflow_stage_id, b[0].job.workflow_stage_id);
}

/// Three tenants with backlogs of 1,000, 10 and 1 under a cap of 1: one batch of five starts
/// each tenant once and no more.
pub async fn workflow_fair_batch_three_tenants_in_one_claim(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut jobs = Vec::new();
    for (tenant, n) in [("tenant-a", 1_000), ("tenant-b", 10), ("tenant-c", 1)] {
        jobs.extend((0..n).map(|i| grouped(&format!("{tenant}-run"), &format!("s{i}"), tenant)));
    }
    upsert(&*s, jobs, now()).await;
    let got = claim_fair_batch(&*s, batch(5, Some(1))).await;
    let groups: BTreeSet<String> = got.iter().map(|c| c.job.group_key.clone().unwrap_or_default()).collect();
    let want: BTreeSet<String> = ["tenant-a", "tenant-b", "tenant-c"].iter().map(|t| t.to_string()).collect();
    assert_eq!((got.len(), groups), (3, want), "one job per tenant, every tenant served");
    assert!(claim_fair_batch(&*s, batch(5, Some(1))).await.is_empty(), "every tenant is at its cap");
}

/// A batch honours the queue's concurrency cap: it takes no more than the free slots.
pub async fn workflow_fair_batch_honours_concurrency_cap(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: QUEUE.into(), max: Some(2) }).await.unwrap();
    upsert(&*s, (0..6).map(|i| grouped("r", &format!("s{i}"), &format!("g{i}"))).collect(), now()).await;
    assert_eq!(claim_fair_batch(&*s, batch(5, Some(3))).await.len(), 2, "fairness on: two free slots");
    assert!(claim_fair_batch(&*s, batch(5, None)).await.is_empty(), "fairness off: the cap is reached");
    assert_eq!(totals(&*s).await.running, 2);
}

/// Batches racing on two handles never take a group past its cap and never hand one job out
/// twice.
pub async fn workflow_fair_parallel_batches_never_exceed_cap(h: &dyn Harness) {
    let s1 = open(h, "default").await;
    let s2 = open(h, "default").await;
    let mut jobs = Vec::new();
    for g in ["g0", "g1", "g2", "g3", "g4"] {
        jobs.extend((0..8).map(|i| grouped("r", &format!("{g}-{i}"), g)));
    }
    upsert(&*s1, jobs, now()).await;
    let tasks: Vec<_> = (0..6)
        .map(|w| {
            let s: Arc<dyn Store> = if w % 2 == 0 { s1.clone() } else { s2.clone() };
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let req = ClaimFairRequest { workers: vec![format!("w{w}"); 3], ..fair(Some(2), now()) };
                    let b = s.claim_fair(req).await.unwrap_or_else(|e| panic!("claim_fair by w{w}: {e}"));
                    if b.is_empty() {
                        return got;
                    }
                    got.extend(
                        b.into_iter().map(|c| (c.job.id.clone(), c.job.group_key.unwrap_or_default())),
                    );
                }
            })
        })
        .collect();
    let mut per_group: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for t in tasks {
        for (id, g) in t.await.expect("a claimer panicked") {
            assert!(seen.insert(id.clone()), "job {id} was claimed twice");
            *per_group.entry(g).or_default() += 1;
        }
    }
    let want: BTreeMap<String, usize> =
        ["g0", "g1", "g2", "g3", "g4"].iter().map(|g| (g.to_string(), 2)).collect();
    assert_eq!(per_group, want, "each group runs exactly its cap");
    assert_eq!(s1.stats(Some(QUEUE)).await.unwrap().running, 10);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow_batch {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow_batch::workflow_fair_batch_without_cap_takes_best_jobs,
            workflow_batch::workflow_fair_batch_matches_single_claims_in_a_row,
            workflow_batch::workflow_fair_batch_three_tenants_in_one_claim,
            workflow_batch::workflow_fair_batch_honours_concurrency_cap,
            workflow_batch::workflow_fair_parallel_batches_never_exceed_cap,
        );
    };
}
