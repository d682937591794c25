//! A batch fair claim against single claims in a row on a mixed backlog: several queues (one
//! rate limited, one with a concurrency cap, one paused), many groups with the default group
//! among them, priorities, rows not yet due and rows of a workflow nobody serves. Two files get
//! the same backlog; one claims in batches, the other one worker at a time; after each round
//! both finish the same jobs. The batch must pick the same jobs in the same order every round,
//! with and without a group cap, and leave the same rotation behind.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimFairRequest, Inspect, QueueControl, SetConcurrencyRequest,
    SetRateLimitRequest, UpsertStagesRequest, WorkflowServes, Workflows,
};
use flexiq_core::{ClaimedJob, EnqueueOptions, NewJob, RateLimit, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::T0;

const QUEUES: [&str; 4] = ["wf-a", "wf-b", "wf-c", "wf-paused"];

/// A fixed backlog: job `i` lands in a queue, group, priority and due time picked by small
/// primes, so the queues and groups interleave without a pattern lining up with the cap.
fn backlog() -> Vec<NewJob> {
    (0..240)
        .map(|i: i64| {
            let group = match i % 7 {
                0 => None,
                g => Some(format!("g{g}")),
            };
            let opts = EnqueueOptions {
                queue: Some(QUEUES[(i % 4) as usize].to_string()),
                priority: Some((i % 3) as i32),
                run_at: Some(if i % 11 == 0 { T0 + 1_000_000 } else { T0 + i % 5 }),
                group_key: group,
                workflow_run_id: Some(format!("run-{}", i % 13)),
                workflow_stage_id: Some(format!("s{i}")),
                ..Default::default()
            };
            let task = if i % 17 == 0 { "unserved" } else { "wf" };
            NewJob::build(task, b"{}".to_vec(), opts, T0).unwrap()
        })
        .collect()
}

async fn open(path: &std::path::Path) -> SqliteStore {
    let s = SqliteStore::open(path, SqliteOptions::default()).unwrap();
    s.upsert_stages(UpsertStagesRequest { jobs: backlog(), now: T0 }).await.unwrap();
    let rate = RateLimit { count: 4, per_ms: 1_000 };
    s.set_rate_limit(SetRateLimitRequest { queue: "wf-a".into(), limit: Some(rate) }).await.unwrap();
    s.set_concurrency(SetConcurrencyRequest { queue: "wf-b".into(), max: Some(3) }).await.unwrap();
    s.pause("wf-paused").await.unwrap();
    s
}

fn request(workers: Vec<String>, cap: Option<u32>, now: i64) -> ClaimFairRequest {
    ClaimFairRequest {
        queues: QUEUES.iter().map(|q| q.to_string()).collect(),
        serves: vec![WorkflowServes { workflow_id: "wf".into(), definition_version: None }],
        workers,
        group_cap: cap,
        now,
    }
}

fn stages(got: &[ClaimedJob]) -> Vec<String> {
    got.iter().map(|c| c.job.workflow_stage_id.clone().unwrap()).collect()
}

/// Completes every other job of `got` (by place), the same ones on either file.
async fn finish_half(s: &dyn Store, got: &[ClaimedJob], now: i64) {
    let acks = got
        .iter()
        .step_by(2)
        .map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } })
        .collect();
    s.ack(AckRequest { acks, now }).await.unwrap();
}

async fn rounds(cap: Option<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let batched = open(&dir.path().join("batched.db")).await;
    let single = open(&dir.path().join("single.db")).await;
    let mut taken = 0;
    for round in 0..12_i64 {
        let now = T0 + 10 + round * 400;
        let n = [1, 5, 16, 3, 40, 8][round as usize % 6];
        let workers: Vec<String> = (0..n).map(|i| format!("host-{i}")).collect();
        let together = batched.claim_fair(request(workers.clone(), cap, now)).await.unwrap();
        let mut one_by_one = Vec::new();
        for w in &workers {
            one_by_one.extend(single.claim_fair(request(vec![w.clone()], cap, now)).await.unwrap());
        }
        assert_eq!(stages(&together), stages(&one_by_one), "round {round} with cap {cap:?}");
        for (c, w) in together.iter().zip(&workers) {
            assert_eq!(c.job.worker_id.as_deref(), Some(w.as_str()), "round {round}: job {} place", c.job.id);
        }
        taken += together.len();
        finish_half(&batched, &together, now + 1).await;
        finish_half(&single, &one_by_one, now + 1).await;
    }
    assert!(taken > 24, "the rounds claimed enough to compare ({taken} jobs)");
    let (a, b) = (batched.stats(None).await.unwrap(), single.stats(None).await.unwrap());
    assert_eq!((a.pending, a.running, a.completed), (b.pending, b.running, b.completed));
    batched.close().await.unwrap();
    single.close().await.unwrap();
}

#[tokio::test]
async fn a_capped_batch_claims_as_single_claims_in_a_row_do() {
    rounds(Some(3)).await;
}

#[tokio::test]
async fn an_uncapped_batch_claims_as_single_claims_in_a_row_do() {
    rounds(None).await;
}
