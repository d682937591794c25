//! The claim sequence on the store's batched paths: a claim of many jobs (plain ones written by
//! one UPDATE, jobs with dependents one by one) and an ack batch of many plain completions (one
//! UPDATE) each honour it, job by job.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, HeartbeatRequest, JobStore, RequeueRequest,
};
use flexiq_core::{AckOutcome, EnqueueOptions, JobStatus, NewJob};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

fn claim(limit: u32, now: i64) -> ClaimRequest {
    ClaimRequest { queues: vec!["q".into()], limit, worker_id: "w".into(), now }
}

#[tokio::test]
async fn batched_claims_and_completions_each_check_the_claim_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("fences.db"), SqliteOptions::default()).unwrap();
    let mut jobs: Vec<NewJob> = (0..5).map(|_| job_on("q")).collect();
    // A dependent makes jobs[0] a job with dependents, whose claim is not the plain shape.
    let opts = EnqueueOptions {
        queue: Some("later".into()),
        depends_on: vec![jobs[0].id.to_string()],
        ..Default::default()
    };
    jobs.push(NewJob::build("t", b"p".to_vec(), opts, T0).unwrap());
    s.enqueue(EnqueueRequest { jobs: jobs.clone(), max_pending: None, now: T0 }).await.unwrap();
    let first = s.claim(claim(10, T0)).await.unwrap();
    assert_eq!(first.len(), 5);
    assert!(first.iter().all(|c| c.fence.claim_seq == 1 && c.job.claim_seq == 1));
    // Hand every job back and claim them all again in the same millisecond.
    for c in &first {
        assert!(s.requeue(RequeueRequest { id: c.job.id.clone(), now: T0 }).await.unwrap());
    }
    let second = s.claim(claim(10, T0)).await.unwrap();
    assert_eq!(second.len(), 5);
    for c in &second {
        assert_eq!((c.fence.attempt, c.fence.started_at, c.fence.claim_seq), (1, T0, 2), "job {}", c.job.id);
        assert_eq!(s.get(&c.job.id).await.unwrap().unwrap().fence(), Some(c.fence));
    }
    // One ack batch: the first claim's fences for two jobs, the current ones for the rest.
    let stale: Vec<_> = first.iter().take(2).map(|c| c.job.id.clone()).collect();
    let acks: Vec<Ack> = second
        .iter()
        .map(|c| {
            let old = first.iter().find(|f| f.job.id == c.job.id).unwrap();
            let fence = if stale.contains(&c.job.id) { old.fence } else { c.fence };
            Ack { job_id: c.job.id.clone(), fence, kind: AckKind::Complete { result: Some(b"r".to_vec()) } }
        })
        .collect();
    let out = s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
    for (c, outcome) in second.iter().zip(&out) {
        let job = s.get(&c.job.id).await.unwrap().unwrap();
        if stale.contains(&c.job.id) {
            assert_eq!(*outcome, AckOutcome::Superseded, "job {}", c.job.id);
            assert_eq!((job.status, job.result), (JobStatus::Running, None));
        } else {
            assert_eq!(*outcome, AckOutcome::Acknowledged, "job {}", c.job.id);
            assert_eq!((job.status, job.result.as_deref()), (JobStatus::Completed, Some(&b"r"[..])));
        }
    }
    // The stale fences cannot heartbeat either; the current ones still can.
    let beats = stale
        .iter()
        .map(|id| (id.clone(), first.iter().find(|f| &f.job.id == id).unwrap().fence))
        .chain(second.iter().filter(|c| stale.contains(&c.job.id)).map(|c| (c.job.id.clone(), c.fence)))
        .collect();
    let replies = s.heartbeat(HeartbeatRequest { jobs: beats, now: T0 + 2 }).await.unwrap();
    let outcomes: Vec<_> = replies.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            AckOutcome::Superseded,
            AckOutcome::Superseded,
            AckOutcome::Acknowledged,
            AckOutcome::Acknowledged
        ]
    );
}
