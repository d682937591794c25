//! Helpers the workflow cases share: stages as jobs, upserts, fair claims and run listings.
//!
//! A stage here is a job of task [`WF`] on queue [`QUEUE`] naming a run and a stage, built at
//! the injected clock like every other fixture, so the workflow cases read as the contract
//! they check rather than as request plumbing. Each helper panics naming what it was doing.

use std::fmt::Debug;

use flexiq_core::store::{ClaimFairRequest, UpsertStagesRequest, WorkflowServes};
use flexiq_core::{ClaimedJob, EnqueueOptions, ErrorKind, Job, JobId, NewJob, Result, Stats, Store};

use crate::fixtures::T0;

/// The queue workflow stages go to.
pub const QUEUE: &str = "workflow";

/// The workflow id (the task) of the stages built here.
pub const WF: &str = "wf";

/// A stage of `run` built with `opts` at `at`: task `WF`, queue `QUEUE` unless `opts` names one,
/// payload `{}` unless given.
pub fn stage_built(run: &str, stage: &str, payload: &str, opts: EnqueueOptions, at: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: opts.queue.or_else(|| Some(QUEUE.to_string())),
        workflow_run_id: Some(run.to_string()),
        workflow_stage_id: Some(stage.to_string()),
        ..opts
    };
    NewJob::build(WF, payload.as_bytes().to_vec(), opts, at)
        .unwrap_or_else(|e| panic!("build stage {stage} of run {run}: {e}"))
}

/// A stage of `run` with default options, built at `T0`.
pub fn stage(run: &str, stage: &str) -> NewJob {
    stage_built(run, stage, "{}", EnqueueOptions::default(), T0)
}

/// A stage of `run` with options, built at `T0`.
pub fn stage_with(run: &str, stage: &str, opts: EnqueueOptions) -> NewJob {
    stage_built(run, stage, "{}", opts, T0)
}

/// A stage of `run` in fairness group `group`, built at `T0`.
pub fn grouped(run: &str, stage: &str, group: &str) -> NewJob {
    stage_with(run, stage, EnqueueOptions { group_key: Some(group.to_string()), ..Default::default() })
}

/// A stage of `run` of workflow `workflow` at definition `version`, built at `T0`.
pub fn versioned(run: &str, stage: &str, workflow: &str, version: Option<&str>) -> NewJob {
    let mut j = stage_with(
        run,
        stage,
        EnqueueOptions { workflow_version: version.map(str::to_string), ..Default::default() },
    );
    j.task = workflow.to_string();
    j
}

/// Upserts `jobs` at `at`, returning the store's answer.
pub async fn try_upsert(s: &dyn Store, jobs: Vec<NewJob>, at: i64) -> Result<Vec<JobId>> {
    s.upsert_stages(UpsertStagesRequest { jobs, now: at }).await
}

/// Upserts `jobs` at `at` and returns their ids, failing the case on error.
pub async fn upsert(s: &dyn Store, jobs: Vec<NewJob>, at: i64) -> Vec<JobId> {
    let n = jobs.len();
    let ids = try_upsert(s, jobs, at).await.unwrap_or_else(|e| panic!("upsert {n} stages: {e}"));
    assert_eq!(ids.len(), n, "one id per upserted stage");
    ids
}

/// Upserts one stage at `at` and returns its id.
pub async fn upsert_one(s: &dyn Store, job: NewJob, at: i64) -> JobId {
    upsert(s, vec![job], at).await.remove(0)
}

/// A fair claim on `QUEUE` as worker `w1`, serving everything, with `cap`, at `at`.
pub fn fair(cap: Option<u32>, at: i64) -> ClaimFairRequest {
    ClaimFairRequest {
        queues: vec![QUEUE.to_string()],
        serves: Vec::new(),
        workers: vec!["w1".to_string()],
        group_cap: cap,
        now: at,
    }
}

/// What the host serves: `(workflow, version)` pairs.
pub fn serving(pairs: &[(&str, Option<&str>)]) -> Vec<WorkflowServes> {
    pairs
        .iter()
        .map(|(w, v)| WorkflowServes {
            workflow_id: w.to_string(),
            definition_version: v.map(str::to_string),
        })
        .collect()
}

/// Runs a fair claim for one worker, failing the case on error or on more than one job.
pub async fn claim_fair(s: &dyn Store, req: ClaimFairRequest) -> Option<ClaimedJob> {
    assert_eq!(req.workers.len(), 1, "claim_fair here is a single worker's claim");
    let mut got = claim_fair_batch(s, req).await;
    got.pop()
}

/// Runs a fair claim for every worker of `req`, failing the case on error, on more jobs than
/// workers, or on a job stamped with another worker than its place says.
pub async fn claim_fair_batch(s: &dyn Store, req: ClaimFairRequest) -> Vec<ClaimedJob> {
    let what = format!("{req:?}");
    let workers = req.workers.clone();
    let got = s.claim_fair(req).await.unwrap_or_else(|e| panic!("claim_fair {what}: {e}"));
    assert!(got.len() <= workers.len(), "{} jobs for {} workers in {what}", got.len(), workers.len());
    for (c, w) in got.iter().zip(&workers) {
        assert_eq!(c.job.worker_id.as_deref(), Some(w.as_str()), "job {} stamped for its place", c.job.id);
    }
    got
}

/// A fair claim on `QUEUE` with `cap` at `at`.
pub async fn take_fair(s: &dyn Store, cap: Option<u32>, at: i64) -> Option<ClaimedJob> {
    claim_fair(s, fair(cap, at)).await
}

/// A fair claim (no cap) at `at` that must return `id`.
pub async fn claim_stage(s: &dyn Store, id: &JobId, at: i64) -> ClaimedJob {
    match take_fair(s, None, at).await {
        Some(c) if &c.job.id == id => c,
        other => panic!("expected a fair claim of {id}, got {:?}", other.map(|c| c.job.id)),
    }
}

/// Every job of `run`, as the store lists them.
pub async fn run_jobs(s: &dyn Store, run: &str) -> Vec<Job> {
    s.jobs_of_run(run).await.unwrap_or_else(|e| panic!("jobs of run {run}: {e}"))
}

/// The ids of every job of `run`, in the store's order.
pub async fn run_ids(s: &dyn Store, run: &str) -> Vec<JobId> {
    run_jobs(s, run).await.into_iter().map(|j| j.id).collect()
}

/// The namespace's status counts over every queue.
pub async fn totals(s: &dyn Store) -> Stats {
    s.stats(None).await.unwrap_or_else(|e| panic!("stats: {e}"))
}

/// Asserts a call failed with `InvalidArgument` whose message names `field`.
#[track_caller]
pub fn assert_invalid_naming<T: Debug>(r: Result<T>, field: &str) {
    match r {
        Ok(v) => panic!("expected InvalidArgument naming {field}, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "expected InvalidArgument naming {field}: {e}");
            assert!(e.to_string().contains(field), "the error should name {field}: {e}");
        }
    }
}
