//! LIFO and promotion in every claim path: a LIFO job's negative `run_at` is due and sorts
//! first in the one-statement claim, the locked claim of a limited queue, and the fair claims
//! (one statement or transactional, with and without a group cap); a promoted batch is
//! claimable at once, and a job moved while a claim holds its row waits for that claim.

use std::time::Duration;

use flexiq_core::store::{
    ChangeDelayRequest, ChangePriorityRequest, ClaimFairRequest, EnqueueRequest, JobStore,
    PromoteJobsRequest, QueueControl, Reschedule, SetConcurrencyRequest, UpsertStagesRequest, Workflows,
};
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, NewJob};
use flexiq_store_pg::PgStore;

use crate::common::{admin, claim, drop_schema, fresh_schema, job_on, open};

const T: i64 = 1_000_000;

/// Enqueues three jobs on `queue` (workflow stages when `stages`), FIFO at `T`, `T + 1` and
/// `T + 2`, then places the second and third LIFO, the second last: returns the ids in the
/// order a claim must take them.
async fn lifo_three(s: &PgStore, queue: &str, stages: bool) -> Vec<JobId> {
    let mut ids = Vec::new();
    for i in 0..3 {
        let now = T + i;
        let job = if stages {
            let opts = EnqueueOptions {
                queue: Some(queue.into()),
                workflow_run_id: Some(format!("run-{queue}")),
                workflow_stage_id: Some(format!("s{i}")),
                ..Default::default()
            };
            NewJob::build("wf", b"{}".to_vec(), opts, now).unwrap()
        } else {
            job_on(queue, now)
        };
        ids.push(job.id.clone());
        if stages {
            s.upsert_stages(UpsertStagesRequest { jobs: vec![job], now }).await.unwrap();
        } else {
            s.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now }).await.unwrap();
        }
    }
    for (k, i) in [2usize, 1].into_iter().enumerate() {
        let req =
            ChangePriorityRequest { job_id: ids[i].clone(), priority: 0, lifo: true, now: T + 10 + k as i64 };
        s.change_priority(req).await.unwrap();
        assert!(s.get(&ids[i]).await.unwrap().unwrap().run_at < 0);
    }
    vec![ids[1].clone(), ids[2].clone(), ids[0].clone()]
}

async fn fair_one(s: &PgStore, queue: &str, group_cap: Option<u32>, now: i64) -> Vec<JobId> {
    let req = ClaimFairRequest {
        queues: vec![queue.into()],
        serves: vec![],
        workers: vec!["w".into()],
        group_cap,
        now,
    };
    s.claim_fair(req).await.unwrap().into_iter().map(|c| c.job.id).collect()
}

#[tokio::test]
async fn lifo_jobs_lead_every_claim_path() {
    let schema = fresh_schema("lifo");
    let s = open(&schema, 2).await;
    let now = T + 100;
    let cap = |queue: &str| SetConcurrencyRequest { queue: queue.into(), max: Some(100) };

    let want = lifo_three(&s, "free", false).await;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.extend(claim(&s, "free", 1, "w", now).await.unwrap().into_iter().map(|c| c.job.id));
    }
    assert_eq!(got, want, "one-statement claim");

    let want = lifo_three(&s, "capped", false).await;
    s.set_concurrency(cap("capped")).await.unwrap();
    let got: Vec<JobId> =
        claim(&s, "capped", 3, "w", now).await.unwrap().into_iter().map(|c| c.job.id).collect();
    assert_eq!(got, want, "locked claim of a limited queue");

    for (queue, group_cap, limited) in [
        ("wf-best", None, false),
        ("wf-fair", Some(5), false),
        ("wf-best-capped", None, true),
        ("wf-fair-capped", Some(5), true),
    ] {
        let want = lifo_three(&s, queue, true).await;
        if limited {
            s.set_concurrency(cap(queue)).await.unwrap();
        }
        let mut got = Vec::new();
        for _ in 0..3 {
            got.extend(fair_one(&s, queue, group_cap, now).await);
        }
        assert_eq!(got, want, "fair claim of {queue}");
    }
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn promoted_jobs_are_claimable_at_once_and_a_lifo_job_is_due_at_any_time() {
    let schema = fresh_schema("promote");
    let s = open(&schema, 2).await;
    let opts = EnqueueOptions { queue: Some("q".into()), delay_ms: Some(60_000), ..Default::default() };
    let jobs: Vec<NewJob> = (0..5).map(|_| NewJob::build("t", vec![], opts.clone(), T).unwrap()).collect();
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T }).await.unwrap();
    assert!(claim(&s, "q", 10, "w", T + 1).await.unwrap().is_empty());
    let promote = |count| PromoteJobsRequest { queue: "q".into(), count, now: T + 2 };
    assert_eq!(s.promote_jobs(promote(3)).await.unwrap(), 3);
    assert_eq!(claim(&s, "q", 10, "w", T + 2).await.unwrap().len(), 3);
    assert_eq!(s.promote_jobs(promote(10)).await.unwrap(), 2);
    assert_eq!(s.promote_jobs(promote(10)).await.unwrap(), 0);
    // A LIFO job is due whatever the claim's clock says.
    let late = job_on("q", T + 3);
    let id = late.id.clone();
    s.enqueue(EnqueueRequest { jobs: vec![late], max_pending: None, now: T + 3 }).await.unwrap();
    s.change_priority(ChangePriorityRequest { job_id: id.clone(), priority: 0, lifo: true, now: T + 4 })
        .await
        .unwrap();
    let got = claim(&s, "q", 1, "w", 1).await.unwrap();
    assert_eq!(got.iter().map(|c| &c.job.id).collect::<Vec<_>>(), vec![&id]);
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_waits_for_the_transaction_holding_the_row_and_sees_its_outcome() {
    let schema = fresh_schema("reslock");
    let s = open(&schema, 2).await;
    let job = job_on("q", T);
    let id = job.id.clone();
    s.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now: T }).await.unwrap();
    // Another session holds the row (as a claim does until it commits) and starts the job.
    let a = admin().await;
    a.batch_execute("BEGIN").await.unwrap();
    let jobs = format!("\"{schema}\".jobs");
    let uid = uuid::Uuid::parse_str(id.as_str()).unwrap();
    a.execute(&format!("SELECT 1 FROM {jobs} WHERE id = $1 FOR UPDATE"), &[&uid]).await.unwrap();
    let (s2, id2) = (s.clone(), id.clone());
    let change = tokio::spawn(async move {
        s2.change_delay(ChangeDelayRequest { job_id: id2, delay_ms: 1_000, now: T + 1 }).await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!change.is_finished(), "the change waits for the row lock");
    a.execute(&format!("UPDATE {jobs} SET status = 1, attempt = 1 WHERE id = $1"), &[&uid]).await.unwrap();
    a.batch_execute("COMMIT").await.unwrap();
    let err = change.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains(id.as_str()) && err.to_string().contains("running"), "{err}");
    assert_eq!(s.get(&id).await.unwrap().unwrap().run_at, T, "nothing was written");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
