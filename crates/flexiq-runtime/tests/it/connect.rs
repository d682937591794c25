//! Opening queues by URL.

use flexiq_runtime::{connect, ConnectOptions, EnqueueOptions};

use crate::assert_code;

#[tokio::test]
async fn sqlite_urls_and_bare_paths_open_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.db");
    let a = connect(&format!("sqlite://{}", path.display()), ConnectOptions::default()).await.unwrap();
    let id = a.enqueue("t", b"x".to_vec(), EnqueueOptions::default()).await.unwrap();
    let b = connect(path.to_str().unwrap(), ConnectOptions::default()).await.unwrap();
    assert_eq!(b.get_job(id.as_str()).await.unwrap().unwrap().task, "t");
    assert_eq!(b.backend(), "sqlite");
    assert_eq!(b.namespace(), "default");
}

#[tokio::test]
async fn namespaces_do_not_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("ns.db").display());
    let a = connect(&url, ConnectOptions::namespace("a")).await.unwrap();
    let b = connect(&url, ConnectOptions::namespace("b")).await.unwrap();
    let id = a.enqueue("t", b"x".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert!(b.get_job(id.as_str()).await.unwrap().is_none());
    assert_eq!(b.stats().await.unwrap().pending, 0);
    assert_eq!(a.stats().await.unwrap().pending, 1);
}

#[tokio::test]
async fn bad_urls_and_options_are_refused() {
    assert_code!(connect(":memory:", ConnectOptions::default()).await, "INVALID_ARGUMENT");
    assert_code!(connect("ftp://x/y", ConnectOptions::default()).await, "INVALID_ARGUMENT");
    assert_code!(connect("x.db", ConnectOptions::namespace("")).await, "INVALID_ARGUMENT");
}
