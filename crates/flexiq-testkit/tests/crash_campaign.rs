//! Crash campaigns, one per store: three worker processes drain a batch of jobs while some
//! are killed with SIGKILL and replaced, and (PostgreSQL, Redis) the store's private server is
//! restarted and its client connections dropped; afterwards every job is terminal exactly
//! once and the counts add up. The short form runs in CI; `FLEXIQ_CRASH_JOBS`,
//! `FLEXIQ_CRASH_KILLS`, `FLEXIQ_CRASH_RESTARTS`, `FLEXIQ_CRASH_DROPS` and
//! `FLEXIQ_CRASH_SEED` make the long form (see the crate's README).
//!
//! The worker processes are this test binary re-executed: `crash_worker_entry` is their
//! entry point and does nothing in a normal run.

mod crash;

use std::future::Future;
use std::sync::Mutex;

/// Jobs per run when `FLEXIQ_CRASH_JOBS` is unset.
const DEFAULT_JOBS: usize = 10_000;

/// One campaign at a time: each already keeps three worker processes (and a server) busy, and
/// on a small machine campaigns side by side would starve each other's heartbeats.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs a campaign on a runtime of its own, after any other campaign of this binary.
fn campaign(body: impl Future<Output = ()>) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(body);
}

#[test]
fn crash_worker_entry() {
    crash::worker::child_entry();
}

#[test]
fn crash_sqlite() {
    campaign(async {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("crash.db").display());
        let settings = crash::Settings::from_env(DEFAULT_JOBS, false);
        crash::run("sqlite", url, None, settings).await;
    });
}

#[cfg(feature = "postgres")]
#[test]
fn crash_postgres() {
    use crash::server::{PrivatePostgres, ServerControl};
    campaign(async {
        let server = PrivatePostgres::start("fq_crash").unwrap_or_else(|e| panic!("{e}"));
        let url = server.url();
        let settings = crash::Settings::from_env(DEFAULT_JOBS, true);
        crash::run("postgres", url, Some(Box::new(server)), settings).await;
    });
}

#[cfg(feature = "redis")]
#[test]
fn crash_redis() {
    use crash::server::{PrivateRedis, ServerControl};
    campaign(async {
        let server = PrivateRedis::start().unwrap_or_else(|e| panic!("{e}"));
        let url = server.url();
        let settings = crash::Settings::from_env(DEFAULT_JOBS, true);
        crash::run("redis", url, Some(Box::new(server)), settings).await;
    });
}
