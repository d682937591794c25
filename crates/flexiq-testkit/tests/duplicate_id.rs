//! An enqueue of an id the store already holds, as a client re-sending a batch after a lost
//! reply makes: the store must refuse it (`Conflict`, naming the id) and leave the job as it
//! was, or a completed job runs again and the counts drift.
//!
//! Found by the Redis campaign with same-id re-sends on (17 of the first 300 seeds failed: 66,
//! 68, 71, 79, 87, 102, 117, 133, 169, 173, 174, 180, 194, 232, 245, 253, 265): the Redis store
//! accepted the second enqueue, counted the job pending twice, and turned a completed job back
//! into a pending one that was claimed and run again; PostgreSQL refused it, but as a
//! non-retryable `Backend` error rather than `Conflict`. The Redis campaign (`campaign_redis.rs`)
//! now re-sends with the same ids on every seed, so those seeds replay the case there too.

use std::sync::Arc;

use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobStatus, NewJob, Stats, Store};
use flexiq_testkit::Backing;

const NOW: i64 = 1_700_000_000_000;

/// Enqueues a job, runs it to completion, enqueues it again and checks nothing changed.
async fn resent_id_is_refused(store: Arc<dyn Store>) {
    let job = NewJob::build("t", b"{}".to_vec(), EnqueueOptions::default(), NOW).unwrap();
    let id = job.id.clone();
    let send = |now| EnqueueRequest { jobs: vec![job.clone()], max_pending: None, now };
    store.enqueue(send(NOW)).await.unwrap();
    let again = store.enqueue(send(NOW + 1)).await;
    assert!(again.is_err(), "a second enqueue of pending job {id} was accepted: {again:?}");
    let s = store.stats(None).await.unwrap();
    assert_eq!(s, Stats { pending: 1, ..Stats::default() }, "counts after re-sending job {id}");

    let claim = ClaimRequest { queues: Vec::new(), limit: 10, worker_id: "w".into(), now: NOW + 2 };
    let c = store.claim(claim.clone()).await.unwrap().pop().expect("the job is claimable once");
    let acks = vec![Ack { job_id: id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } }];
    store.ack(AckRequest { acks, now: NOW + 3 }).await.unwrap();

    let late = store.enqueue(send(NOW + 4)).await;
    assert!(late.is_err(), "an enqueue of completed job {id} was accepted: {late:?}");
    let kind = late.unwrap_err().kind();
    assert_eq!(store.get(&id).await.unwrap().map(|j| j.status), Some(JobStatus::Completed));
    let s = store.stats(None).await.unwrap();
    assert_eq!(s, Stats { completed: 1, ..Stats::default() }, "counts after re-sending completed job {id}");
    let claim = ClaimRequest { now: NOW + 5, ..claim };
    assert!(store.claim(claim).await.unwrap().is_empty(), "completed job {id} was claimed again");
    assert_eq!(kind, ErrorKind::Conflict, "re-sent job {id} was refused, but not as a conflict");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_refuses_an_id_it_holds() {
    let b = flexiq_testkit::SqliteBacking::open().unwrap();
    let outcome = isolated(resent_id_is_refused(b.namespace("dup").unwrap())).await;
    b.cleanup().await;
    outcome.unwrap();
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_refuses_an_id_it_holds() {
    let b = flexiq_testkit::PgBacking::open().await.unwrap();
    let store = b.namespace("dup").unwrap();
    let outcome = isolated(resent_id_is_refused(store)).await;
    b.cleanup().await;
    outcome.unwrap();
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn redis_refuses_an_id_it_holds() {
    let b = flexiq_testkit::RedisBacking::open().await.unwrap();
    let store = b.namespace("dup").unwrap();
    let outcome = isolated(resent_id_is_refused(store)).await;
    b.cleanup().await;
    outcome.unwrap();
}

/// Runs `f` in its own task so a failed assertion still lets the caller clean up.
async fn isolated(f: impl std::future::Future<Output = ()> + Send + 'static) -> Result<(), String> {
    tokio::spawn(f).await.map_err(|e| format!("{e}"))
}
