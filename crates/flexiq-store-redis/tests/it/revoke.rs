//! A revoked task refuses the whole batch on both enqueue scripts: `TaskRevoked` naming the
//! task, and not one key written besides the revocation itself.

use flexiq_core::store::{EnqueueRequest, JobStore, QueueControl};
use flexiq_core::{EnqueueOptions, Error, NewJob};
use fred::prelude::*;

use crate::harness::RedisHarness;
use crate::plain::dump;

const NOW: i64 = 1_700_000_000_000;

fn batch() -> Vec<NewJob> {
    ["good", "good", "bad.task", "good"]
        .into_iter()
        .map(|t| NewJob::build(t, b"x".to_vec(), EnqueueOptions::default(), NOW).unwrap())
        .collect()
}

#[tokio::test]
async fn a_revoked_task_refuses_the_whole_batch_on_both_scripts() {
    let h = RedisHarness::new();
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    // No cap: the plain script. A cap (never reached): the general one.
    for (ns, max_pending) in [("plain", None), ("general", Some(1_000))] {
        let s = h.store(ns).await.unwrap();
        s.revoke_task("bad.task").await.unwrap();
        let err = s.enqueue(EnqueueRequest { jobs: batch(), max_pending, now: NOW }).await.unwrap_err();
        match err {
            Error::TaskRevoked { task } => assert_eq!(task, "bad.task", "{ns}"),
            other => panic!("{ns}: {other:?}"),
        }
        let keys = dump(&c, &h.prefix, ns).await;
        assert_eq!(keys.keys().collect::<Vec<_>>(), vec!["B:revoked"], "{ns} wrote nothing else");
        s.unrevoke_task("bad.task").await.unwrap();
        let out = s.enqueue(EnqueueRequest { jobs: batch(), max_pending, now: NOW }).await.unwrap();
        assert!(out.iter().all(|e| e.created), "{ns}");
    }
    let _ = c.quit().await;
    h.cleanup_now().await;
}
