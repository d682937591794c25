//! The scripts are function libraries the server keeps. A server that lost one behind the
//! store's back (a restart without persistence, `FUNCTION FLUSH`, an operator's
//! `FUNCTION DELETE`) has it loaded again by the next call, and the call goes through; a store
//! opened where the libraries are already loaded keeps them.

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore, ListJobsAfterRequest};
use flexiq_core::{EnqueueOptions, JobFilter, NewJob};
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::harness::RedisHarness;
use crate::workflow::raw;

const NOW: i64 = 1_700_000_000_000;

/// The names of the libraries whose names match the glob `pattern`.
async fn libraries(c: &Client, pattern: &str) -> Vec<String> {
    let list: Value = c
        .custom(
            CustomCommand::new_static("FUNCTION", ClusterHash::Random, false),
            vec!["LIST", "LIBRARYNAME", pattern],
        )
        .await
        .unwrap();
    let mut names = Vec::new();
    for lib in list.into_array() {
        let fields = lib.into_array();
        for pair in fields.chunks(2) {
            if pair[0].as_str().as_deref() == Some("library_name") {
                names.push(pair[1].as_string().unwrap());
            }
        }
    }
    names
}

async fn enqueue_one(store: &flexiq_store_redis::RedisStore) {
    let job = NewJob::build("t", b"{}".to_vec(), EnqueueOptions::default(), NOW).unwrap();
    store.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now: NOW }).await.unwrap();
}

#[tokio::test]
async fn a_library_the_server_lost_is_loaded_again_by_the_next_call() {
    let h = RedisHarness::new();
    let store = h.store("functions").await.unwrap();
    let c = raw(&h).await;
    enqueue_one(&store).await;
    let loaded = libraries(&c, "flexiq_enqueue_plain_*").await;
    assert!(!loaded.is_empty(), "connect loads the plain enqueue's library");
    for name in &loaded {
        let _: Value = c
            .custom(CustomCommand::new_static("FUNCTION", ClusterHash::Random, false), vec!["DELETE", name])
            .await
            .unwrap();
    }
    assert!(libraries(&c, "flexiq_enqueue_plain_*").await.is_empty());

    enqueue_one(&store).await;
    assert!(!libraries(&c, "flexiq_enqueue_plain_*").await.is_empty(), "the call loaded it again");
    let page = store
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), after: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 2, "both enqueues wrote their job, and only once");

    // A second store opened on a server that holds every library keeps them and works.
    let again = h.store("functions2").await.unwrap();
    enqueue_one(&again).await;
    h.cleanup_now().await;
    let _ = c.quit().await;
}
