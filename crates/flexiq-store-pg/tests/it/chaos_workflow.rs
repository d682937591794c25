//! Connection loss under workflow hosts: backends are terminated repeatedly while 1,000
//! stages drain through joint calls (the completions of a host's jobs and the fair claim of
//! its next ones, one statement in one flight) that retry retryable errors. A call cut off
//! after its commit leaves its completions written (a retry finds them `Superseded`) and its
//! claims running with no holder (the stale-lease sweep gives them back); every stage still
//! ends completed exactly once, with one success metric row, and no group ran over its cap.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_core::store::{AckClaimFairRequest, ClaimFairRequest, UpsertStagesRequest, Workflows};
use flexiq_core::{AckOutcome, ClaimedJob, EnqueueOptions, NewJob};

use crate::chaos::{cut_until_completed, lift_stall_budget, retrying, statuses, stop, sweeper};
use crate::common::{admin, completes, drop_schema, fresh_schema, now_ms, open};

const STAGES: usize = 1_000;
const CAP: u32 = 2;

fn stage(i: usize, now: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("workflow".into()),
        workflow_run_id: Some("run".into()),
        workflow_stage_id: Some(format!("s{i}")),
        group_key: Some(format!("g{}", i % 10)),
        max_retries: Some(1_000),
        ..Default::default()
    };
    NewJob::build("wf", b"{}".to_vec(), opts, now).unwrap()
}

/// The most jobs of one group running at once, read by `admin` while the hosts run.
async fn busiest_group(schema: &str) -> i64 {
    admin()
        .await
        .query_one(
            &format!(
                "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM \"{schema}\".jobs \
                 WHERE status = 1 GROUP BY group_key) g"
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_backends_during_joint_calls_lose_no_stage_and_finish_none_twice() {
    let schema = fresh_schema("chaosw");
    let s = open(&schema, 8).await;
    lift_stall_budget(&s, "workflow").await;
    let jobs = (0..STAGES).map(|i| stage(i, now_ms())).collect();
    s.upsert_stages(UpsertStagesRequest { jobs, now: now_ms() }).await.expect("enqueue the stages");
    let done = Arc::new(AtomicBool::new(false));
    let retries = Arc::new(AtomicUsize::new(0));
    let superseded = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for h in 0..4 {
        let (s, done, retries, superseded) = (s.clone(), done.clone(), retries.clone(), superseded.clone());
        tasks.push(tokio::spawn(async move {
            let workers: Vec<String> = (0..2).map(|k| format!("host{h}-{k}")).collect();
            let mut held: Vec<ClaimedJob> = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let claim = ClaimFairRequest {
                    queues: vec!["workflow".into()],
                    serves: Vec::new(),
                    workers: workers.clone(),
                    group_cap: Some(CAP),
                    now: now_ms(),
                };
                let req = AckClaimFairRequest { acks: completes(&held), claim };
                let reply = retrying(&retries, || s.ack_and_claim_fair(req.clone())).await;
                superseded.fetch_add(
                    reply.outcomes.iter().filter(|o| **o == AckOutcome::Superseded).count(),
                    Ordering::Relaxed,
                );
                held = match reply.claimed {
                    Ok(jobs) => jobs,
                    Err(e) if e.is_retryable() => {
                        retries.fetch_add(1, Ordering::Relaxed);
                        Vec::new()
                    }
                    Err(e) => panic!("non-retryable claim error during connection loss: {e}"),
                };
                if held.is_empty() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }));
    }
    tasks.push(sweeper(s.clone(), done.clone(), retries.clone()));
    let mut busiest = 0;
    let kills = cut_until_completed(&schema, STAGES as i64, async || {
        busiest = busiest.max(busiest_group(&schema).await);
    })
    .await;
    let (completed, total, successes, duplicated) = stop(&done, tasks, &schema, kills, &retries).await;
    assert!(busiest <= i64::from(CAP), "a group ran {busiest} jobs at once, over its cap of {CAP}");
    let n = STAGES as i64;
    assert_eq!(
        (completed, total, successes, duplicated),
        (n, n, n, 0),
        "{} acks were superseded; jobs per status: {:?}",
        superseded.load(Ordering::Relaxed),
        statuses(&schema).await
    );
    crate::counts::check(&schema, "backends were terminated mid-transaction").await;
    drop_schema(&schema).await;
}
