//! Fair claims beside ordinary claims on other pools: a job the fair claim's search chose may
//! be taken by a plain claim before the fair claim locks it, and the fair claim then takes
//! another; no job is ever handed out twice.

use std::collections::BTreeSet;

use flexiq_core::store::{ClaimFairRequest, UpsertStagesRequest, Workflows};
use flexiq_core::{EnqueueOptions, JobId, NewJob};

use crate::common::{claim, drop_schema, fresh_schema, open};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_and_plain_claimers_take_every_job_exactly_once() {
    let schema = fresh_schema("fairmix");
    let (a, b) = (open(&schema, 4).await, open(&schema, 4).await);
    let now = 1_000_000;
    let stage = |i: usize| {
        let opts = EnqueueOptions {
            queue: Some("workflow".into()),
            group_key: Some(format!("g{}", i % 7)),
            workflow_run_id: Some(format!("run-{}", i % 13)),
            workflow_stage_id: Some(format!("s{i}")),
            ..Default::default()
        };
        NewJob::build("wf", b"{}".to_vec(), opts, now).unwrap()
    };
    let jobs = (0..600).map(stage).collect();
    a.upsert_stages(UpsertStagesRequest { jobs, now }).await.unwrap();
    let fair = |s: flexiq_store_pg::PgStore, w: usize, cap: Option<u32>| {
        tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let req = ClaimFairRequest {
                    queues: vec!["workflow".into()],
                    serves: Vec::new(),
                    workers: vec![format!("fair-{w}"); 1 + w % 4],
                    group_cap: cap,
                    now,
                };
                let batch = s.claim_fair(req).await.unwrap();
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|c| c.job.id));
            }
        })
    };
    let plain = |s: flexiq_store_pg::PgStore, w: usize| {
        tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = claim(&s, "workflow", 3, &format!("plain-{w}"), now).await.unwrap();
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|c| c.job.id));
            }
        })
    };
    let tasks = vec![
        fair(a.clone(), 0, Some(10_000)),
        fair(b.clone(), 1, Some(10_000)),
        fair(a.clone(), 2, None),
        fair(b.clone(), 3, None),
        plain(a.clone(), 0),
        plain(b.clone(), 1),
    ];
    let mut seen: BTreeSet<JobId> = BTreeSet::new();
    for t in tasks {
        for id in t.await.unwrap() {
            assert!(seen.insert(id.clone()), "job {id} was claimed twice");
        }
    }
    assert_eq!(seen.len(), 600, "every job was claimed");
    assert_eq!(flexiq_core::store::Inspect::stats(&a, None).await.unwrap().running, 600);
    drop_schema(&schema).await;
}
