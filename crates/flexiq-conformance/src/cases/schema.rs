//! Schema and contract floor: idempotent migrations, the floor's bounds, refusal to open
//! below it, and the handle lifecycle.

use flexiq_core::{ErrorKind, CONTRACT_LEVEL};

use crate::fixtures::{assert_kind, open};
use crate::Harness;

/// Migrating twice is harmless; the second run reports nothing applied.
pub async fn schema_migrate_is_idempotent(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.migrate().await.unwrap();
    let again = s.migrate().await.unwrap();
    assert!(again.applied.is_empty(), "{again:?}");
    assert!(again.workflow_applied.is_empty(), "{again:?}");
    assert_eq!(again.archived_jobs, 0);
}

/// Migrating leaves existing jobs readable.
pub async fn schema_migrate_keeps_data(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = crate::fixtures::put(&*s, crate::fixtures::job("t", "kept"), crate::fixtures::now()).await;
    s.migrate().await.unwrap();
    assert_eq!(crate::fixtures::get(&*s, &id).await.payload, b"kept");
}

/// A fresh store's floor is a level this build speaks.
pub async fn schema_min_contract_default(h: &dyn Harness) {
    let s = open(h, "default").await;
    let floor = s.min_contract().await.unwrap();
    assert!((1..=CONTRACT_LEVEL).contains(&floor), "floor {floor}");
}

/// Raising the floor to this build's level is accepted and read back.
pub async fn schema_set_min_contract_raise(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_min_contract(CONTRACT_LEVEL).await.unwrap();
    assert_eq!(s.min_contract().await.unwrap(), CONTRACT_LEVEL);
    open(h, "another").await;
}

/// A floor above this build's level is `InvalidArgument` and leaves the floor alone.
pub async fn schema_set_min_contract_above_level_rejected(h: &dyn Harness) {
    let s = open(h, "default").await;
    let before = s.min_contract().await.unwrap();
    assert_kind(s.set_min_contract(CONTRACT_LEVEL + 1).await, ErrorKind::InvalidArgument);
    assert_eq!(s.min_contract().await.unwrap(), before);
}

/// A floor of zero is `InvalidArgument`.
pub async fn schema_set_min_contract_zero_rejected(h: &dyn Harness) {
    let s = open(h, "default").await;
    let before = s.min_contract().await.unwrap();
    assert_kind(s.set_min_contract(0).await, ErrorKind::InvalidArgument);
    assert_eq!(s.min_contract().await.unwrap(), before);
}

/// The floor is store-wide: every namespace reads the same value.
pub async fn schema_floor_shared_across_namespaces(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    a.set_min_contract(CONTRACT_LEVEL).await.unwrap();
    assert_eq!(b.min_contract().await.unwrap(), CONTRACT_LEVEL);
}

/// A floor above this build's level makes opening fail with `ContractTooOld`.
pub async fn schema_floor_above_level_refuses_open(h: &dyn Harness) {
    h.force_contract_floor(CONTRACT_LEVEL + 1).await.unwrap();
    match h.open("default").await {
        Ok(_) => panic!("opened a store whose floor is above this build's level"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::ContractTooOld, "{e}"),
    }
    match h.open("other").await {
        Ok(_) => panic!("opened another namespace of a store whose floor is too high"),
        Err(e) => assert_eq!(e.code(), "CONTRACT_TOO_OLD", "{e}"),
    }
}

/// A handle reports its namespace and backend name.
pub async fn schema_handle_reports_namespace_and_backend(h: &dyn Harness) {
    let s = open(h, "tenant-7").await;
    assert_eq!(s.namespace(), "tenant-7");
    assert!(["sqlite", "postgres", "redis"].contains(&s.backend()), "{}", s.backend());
}

/// After `close`, calls fail with `Closed`.
pub async fn schema_closed_handle_fails_with_closed(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.close().await.unwrap();
    assert_kind(s.get(&flexiq_core::JobId::new()).await, ErrorKind::Closed);
    assert_kind(s.stats(None).await, ErrorKind::Closed);
    let j = crate::fixtures::job("t", "");
    assert_kind(
        crate::fixtures::enqueue(&*s, vec![j], None, crate::fixtures::now()).await,
        ErrorKind::Closed,
    );
    let req = flexiq_core::store::ClaimRequest {
        queues: vec![],
        limit: 1,
        worker_id: "w".into(),
        now: crate::fixtures::now(),
    };
    assert_kind(s.claim(req).await, ErrorKind::Closed);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_schema {
    ($callback:path, $make:path) => {
        $callback!($make;
            schema::schema_migrate_is_idempotent,
            schema::schema_migrate_keeps_data,
            schema::schema_min_contract_default,
            schema::schema_set_min_contract_raise,
            schema::schema_set_min_contract_above_level_rejected,
            schema::schema_set_min_contract_zero_rejected,
            schema::schema_floor_shared_across_namespaces,
            schema::schema_floor_above_level_refuses_open,
            schema::schema_handle_reports_namespace_and_backend,
            schema::schema_closed_handle_fails_with_closed,
        );
    };
}
