//! Connecting: option validation, bad URLs, namespaces and closing.

use flexiq_core::store::{Inspect, JobStore};
use flexiq_core::{ErrorKind, JobId, Store};
use flexiq_store_pg::{PgOptions, PgStore};

use crate::common::{drop_schema, fresh_schema, open, url};

#[tokio::test]
async fn connect_refuses_bad_options_and_urls() {
    let bad = PgOptions { schema: "bad-name".into(), ..Default::default() };
    assert_eq!(PgStore::connect(&url(), bad).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let bad = PgOptions { pool_size: 0, ..Default::default() };
    assert_eq!(PgStore::connect(&url(), bad).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let err = PgStore::connect("postgres://127.0.0.1:5432/test?bogus_option=1", PgOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_eq!(
        PgStore::migrate_schema(&url(), "no; drop").await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[tokio::test]
async fn unreachable_server_is_a_retryable_backend_error() {
    let opts = PgOptions { schema: fresh_schema("unreach"), ..Default::default() };
    let err = PgStore::connect("postgres://postgres@127.0.0.1:1/test", opts).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Backend);
    assert!(err.is_retryable(), "{err}");
}

#[tokio::test]
async fn namespaces_share_the_pool_but_not_the_jobs() {
    let schema = fresh_schema("ns");
    let a = open(&schema, 2).await;
    let b = a.with_namespace("other").unwrap();
    assert_eq!(b.namespace(), "other");
    assert_eq!(b.schema(), schema);
    assert_eq!(a.with_namespace("").unwrap_err().kind(), ErrorKind::InvalidArgument);
    crate::common::enqueue_n(&a, "q", 3, 1).await;
    assert_eq!(a.count_pending("q").await.unwrap(), 3);
    assert_eq!(b.count_pending("q").await.unwrap(), 0);
    assert_eq!(a.backend(), "postgres");
    a.close().await.unwrap();
    let err = b.get(&JobId::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Closed);
    assert_eq!(a.with_namespace("x").unwrap_err().kind(), ErrorKind::Closed);
    drop_schema(&schema).await;
}
