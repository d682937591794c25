//! Racing claimers: many tasks claiming at once never receive the same job, and the queue's
//! concurrency cap holds across all of them.

use std::collections::HashSet;
use std::sync::Arc;

use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, SetConcurrencyRequest};
use flexiq_core::{JobId, Store};

use crate::fixtures::{job, job_in, now, open, put_all};
use crate::Harness;

async fn claim_all(s: Arc<dyn Store>, worker: String) -> Vec<JobId> {
    let mut got = Vec::new();
    loop {
        let req = ClaimRequest { queues: vec![], limit: 7, worker_id: worker.clone(), now: now() };
        let batch = s.claim(req).await.unwrap_or_else(|e| panic!("claim by {worker}: {e}"));
        if batch.is_empty() {
            return got;
        }
        got.extend(batch.into_iter().map(|c| c.job.id));
    }
}

/// Eight claimers racing over 500 jobs receive every job exactly once.
pub async fn concurrency_racing_claimers_never_share_a_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let expected: HashSet<JobId> =
        put_all(&*s, (0..500).map(|i| job("t", &i.to_string())).collect(), now()).await.into_iter().collect();
    let tasks: Vec<_> = (0..8).map(|w| tokio::spawn(claim_all(s.clone(), format!("w{w}")))).collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for t in tasks {
        for id in t.await.unwrap() {
            total += 1;
            assert!(seen.insert(id.clone()), "job {id} was claimed twice");
        }
    }
    assert_eq!(total, 500);
    assert_eq!(seen, expected);
}

/// Two handles on the same namespace racing also never share a job.
pub async fn concurrency_racing_handles_never_share_a_job(h: &dyn Harness) {
    let s1 = open(h, "default").await;
    let s2 = open(h, "default").await;
    put_all(&*s1, (0..200).map(|_| job("t", "")).collect(), now()).await;
    let a = tokio::spawn(claim_all(s1.clone(), "a".into()));
    let b = tokio::spawn(claim_all(s2.clone(), "b".into()));
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    let all: HashSet<_> = a.iter().chain(b.iter()).cloned().collect();
    assert_eq!(a.len() + b.len(), 200);
    assert_eq!(all.len(), 200);
}

/// With a cap of 3, four claimers racing for 5 each get exactly 3 jobs between them.
pub async fn concurrency_cap_holds_across_racing_claimers(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(3) }).await.unwrap();
    put_all(&*s, (0..40).map(|_| job_in("q", "t")).collect(), now()).await;
    let tasks: Vec<_> = (0..4)
        .map(|w| {
            let s = s.clone();
            tokio::spawn(async move {
                let req = ClaimRequest {
                    queues: vec!["q".into()],
                    limit: 5,
                    worker_id: format!("w{w}"),
                    now: now(),
                };
                s.claim(req).await.unwrap().len()
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    assert_eq!(total, 3);
    assert_eq!(s.stats(Some("q")).await.unwrap().running, 3);
}

/// Claimers that complete and claim again in a loop never push the running count past the cap.
pub async fn concurrency_cap_holds_while_jobs_complete(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_concurrency(SetConcurrencyRequest { queue: "q".into(), max: Some(2) }).await.unwrap();
    put_all(&*s, (0..30).map(|_| job_in("q", "t")).collect(), now()).await;
    let tasks: Vec<_> = (0..3)
        .map(|w| {
            let s = s.clone();
            tokio::spawn(async move {
                let mut done = 0;
                let mut idle = 0;
                while idle < 200 {
                    let req = ClaimRequest {
                        queues: vec!["q".into()],
                        limit: 2,
                        worker_id: format!("w{w}"),
                        now: now(),
                    };
                    let batch = s.claim(req).await.unwrap();
                    let running = s.stats(Some("q")).await.unwrap().running;
                    assert!(running <= 2, "{running} jobs running under a cap of 2");
                    if batch.is_empty() {
                        if s.count_pending("q").await.unwrap() == 0 {
                            break;
                        }
                        idle += 1;
                        tokio::task::yield_now().await;
                        continue;
                    }
                    let acks = batch
                        .iter()
                        .map(|c| Ack {
                            job_id: c.job.id.clone(),
                            fence: c.fence,
                            kind: AckKind::Complete { result: None },
                        })
                        .collect();
                    s.ack(AckRequest { acks, now: now() }).await.unwrap();
                    done += batch.len();
                }
                done
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    assert_eq!(total, 30);
    assert_eq!(s.stats(Some("q")).await.unwrap().completed, 30);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_concurrency {
    ($callback:path, $make:path) => {
        $callback!($make;
            concurrency::concurrency_racing_claimers_never_share_a_job,
            concurrency::concurrency_racing_handles_never_share_a_job,
            concurrency::concurrency_cap_holds_across_racing_claimers,
            concurrency::concurrency_cap_holds_while_jobs_complete,
        );
    };
}
