//! Job hashes written before the claim sequence existed (no `cs` field) read their attempt as
//! their claim sequence: fences of such a running job still match on every fenced write, and
//! the next claim continues from the attempt.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, HeartbeatRequest, History, JobStore,
    SetProgressRequest,
};
use flexiq_core::{AckOutcome, ClaimedJob, EnqueueOptions, Fence, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;

const NOW: i64 = 1_700_000_000_000;

async fn raw(h: &RedisHarness) -> Client {
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

/// The key of job `id` in namespace `ns`.
fn job_key(h: &RedisHarness, ns: &str, id: &JobId) -> String {
    format!("{{{}:{ns}}}:j:{id}", h.prefix)
}

async fn claim_one(s: &RedisStore, at: i64) -> ClaimedJob {
    let req = ClaimRequest { queues: vec![], limit: 1, worker_id: "w".into(), now: at };
    s.claim(req).await.unwrap().pop().expect("a job to claim")
}

async fn enqueue_one(s: &RedisStore, max_retries: u32) -> JobId {
    let opts = EnqueueOptions { max_retries: Some(max_retries), ..Default::default() };
    let j = NewJob::build("t", b"x".to_vec(), opts, NOW).unwrap();
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: NOW }).await.unwrap()[0].id.clone()
}

/// Rewrites a running job as an older build left it: attempt `attempt`, no `cs`.
async fn make_legacy(c: &Client, key: &str, attempt: u32) {
    let _: i64 = c.hset(key, ("a", i64::from(attempt))).await.unwrap();
    let _: i64 = c.hdel(key, "cs").await.unwrap();
    let fields: Vec<String> = c.hkeys(key).await.unwrap();
    assert!(!fields.iter().any(|f| f == "cs"), "the hash has no claim sequence now");
}

#[tokio::test]
async fn a_hash_without_claim_seq_reads_its_attempt_and_keeps_its_fence() {
    let h = RedisHarness::new();
    let s = h.store("legacy").await.unwrap();
    let c = raw(&h).await;
    let id = enqueue_one(&s, 5).await;
    let claimed = claim_one(&s, NOW).await;
    let key = job_key(&h, "legacy", &id);
    make_legacy(&c, &key, 2).await;

    let job = s.get(&id).await.unwrap().unwrap();
    assert_eq!((job.attempt, job.claim_seq), (2, 2), "a missing claim sequence reads as the attempt");
    let fence = job.fence().unwrap();
    assert_eq!(fence, Fence { attempt: 2, started_at: claimed.fence.started_at, claim_seq: 2 });

    let stale = Fence { claim_seq: 3, ..fence };
    let hb = s
        .heartbeat(HeartbeatRequest { jobs: vec![(id.clone(), stale), (id.clone(), fence)], now: NOW + 1 })
        .await
        .unwrap();
    assert_eq!((hb[0].outcome, hb[1].outcome), (AckOutcome::Superseded, AckOutcome::Acknowledged));
    assert_eq!(
        s.set_progress(SetProgressRequest { id: id.clone(), fence: stale, progress: 10.0 }).await.unwrap(),
        AckOutcome::Superseded
    );
    assert_eq!(
        s.set_progress(SetProgressRequest { id: id.clone(), fence, progress: 50.0 }).await.unwrap(),
        AckOutcome::Acknowledged
    );

    // A retryable failure goes through the general path, which reads the same default.
    let fail = |f: Fence| Ack {
        job_id: id.clone(),
        fence: f,
        kind: AckKind::Fail { error: "boom".into(), retryable: true },
    };
    assert_eq!(
        s.ack(AckRequest { acks: vec![fail(stale)], now: NOW + 2 }).await.unwrap(),
        vec![AckOutcome::Superseded]
    );
    assert_eq!(
        s.ack(AckRequest { acks: vec![fail(fence)], now: NOW + 2 }).await.unwrap(),
        vec![AckOutcome::Acknowledged]
    );
    let job = s.get(&id).await.unwrap().unwrap();
    assert_eq!((job.status, job.attempt, job.claim_seq), (JobStatus::Pending, 2, 2));

    // The next claim continues from the attempt and writes the field.
    let next = claim_one(&s, NOW + 1_000_000).await;
    assert_eq!((next.fence.attempt, next.fence.claim_seq), (3, 3));
    let cs: Option<String> = c.hget(&key, "cs").await.unwrap();
    assert_eq!(cs.as_deref(), Some("3"));
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_plain_completion_of_a_hash_without_claim_seq_checks_the_attempt_in_its_place() {
    let h = RedisHarness::new();
    let s = h.store("legacy").await.unwrap();
    let c = raw(&h).await;
    let id = enqueue_one(&s, 0).await;
    let claimed = claim_one(&s, NOW).await;
    make_legacy(&c, &job_key(&h, "legacy", &id), 4).await;
    let fence = Fence { attempt: 4, started_at: claimed.fence.started_at, claim_seq: 4 };
    let done = |f: Fence| Ack { job_id: id.clone(), fence: f, kind: AckKind::Complete { result: None } };
    // The claim's own fence (claim_seq 1) no longer matches the attempt the hash now holds.
    let wrong = Fence { attempt: 4, ..claimed.fence };
    assert_eq!(
        s.ack(AckRequest { acks: vec![done(wrong)], now: NOW + 1 }).await.unwrap(),
        vec![AckOutcome::Superseded]
    );
    assert_eq!(
        s.ack(AckRequest { acks: vec![done(fence)], now: NOW + 1 }).await.unwrap(),
        vec![AckOutcome::Acknowledged]
    );
    assert_eq!(s.get(&id).await.unwrap().unwrap().status, JobStatus::Completed);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_pending_hash_without_claim_seq_is_claimed_from_its_attempt() {
    let h = RedisHarness::new();
    let s = h.store("legacy").await.unwrap();
    let id = enqueue_one(&s, 3).await;
    let job = s.get(&id).await.unwrap().unwrap();
    assert_eq!((job.attempt, job.claim_seq), (0, 0), "enqueue writes no claim sequence");
    let c = raw(&h).await;
    let _: i64 = c.hset(job_key(&h, "legacy", &id), ("a", 1)).await.unwrap();
    assert_eq!(s.get(&id).await.unwrap().unwrap().claim_seq, 1);
    let claimed = claim_one(&s, NOW).await;
    assert_eq!((claimed.fence.attempt, claimed.fence.claim_seq, claimed.job.claim_seq), (2, 2, 2));
    let _ = c.quit().await;
    h.cleanup_now().await;
}
