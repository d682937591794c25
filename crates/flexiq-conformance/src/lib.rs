//! flexiq-conformance: the one store test suite.
//!
//! Every store runs every case here, so all stores agree on the semantics the core traits
//! describe. A store's `tests/conformance.rs` implements [`Harness`] (a fresh, isolated backing
//! per test: a new SQLite file, PostgreSQL schema or Redis key prefix) and stamps the suite out
//! with [`conformance_suite!`], one `#[test]` per case, so a failure names its case.
//! A case that meets `Error::Unsupported` fails: nothing is skipped silently.
//!
//! Cases live in [`cases`], one module per area (enqueue, unique keys, admission, dependencies,
//! claim, concurrency, caps, pause, rate limits, revocation, acks and fences, heartbeats,
//! leases, requeue, cancel, get, listings and cursors, stats, metrics, dead letters, purges,
//! archive, replay, the job graph, partials, logs and progress, settings, leadership,
//! retention, workers, schema, waits, namespaces, and workflow stages with their fair claim).
//! Every case controls time through the injected `now` ([`fixtures::T0`] plus offsets in ms)
//! and checks errors by kind.

use std::sync::Arc;

use flexiq_core::{Result, Store};

pub mod cases;
pub mod fixtures;
pub mod kit;
mod list;
#[cfg(feature = "redis")]
pub mod redis_kit;

/// A fresh, isolated backing for one test case.
#[async_trait::async_trait]
pub trait Harness: Send + Sync {
    /// Opens (or returns) a store handle for `namespace` on this harness's backing. Every call
    /// with any namespace shares the same backing, so two namespaces can be compared.
    async fn open(&self, namespace: &str) -> Result<Arc<dyn Store>>;

    /// Writes a contract floor directly into the backing, bypassing validation, so the suite
    /// can check that opening above this build's level fails with `ContractTooOld`.
    async fn force_contract_floor(&self, level: u32) -> Result<()>;

    /// Removes everything this harness created (file, schema, key prefix).
    async fn cleanup(&self);
}

/// Runs one case against a fresh harness, always cleaning up, then re-raising any panic.
pub async fn run_case<H, Fut>(harness: H, case: impl FnOnce(Arc<H>) -> Fut)
where
    H: Harness + 'static,
    Fut: std::future::Future<Output = ()>,
{
    use futures::FutureExt;
    let h = Arc::new(harness);
    let outcome = std::panic::AssertUnwindSafe(case(h.clone())).catch_unwind().await;
    h.cleanup().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Stamps out one `#[tokio::test]` per conformance case.
///
/// `$make` is an `async fn() -> impl Harness` path, called once per case.
#[macro_export]
macro_rules! conformance_suite {
    ($make:path) => {
        $crate::for_each_case!($crate::__stamp_cases, $make);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __stamp_cases {
    ($make:path; $($module:ident :: $case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let harness = $make().await;
                $crate::run_case(harness, |h| async move {
                    $crate::cases::$module::$case(&*h).await
                })
                .await;
            }
        )*
    };
}
