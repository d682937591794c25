//! flexiq-store-redis: the flexiq store on Redis 7, one server or a Redis Cluster.
//!
//! Every key of a namespace shares the hash tag `{prefix:namespace}`, so each Lua script
//! touches one slot, the slot of the one key it declares (`KEYS[1]`, the namespace base), and
//! the store runs unchanged on Redis Cluster (the conformance suite runs on both). Enqueue and claim are
//! single scripts; every other status change is decided by `flexiq_core::transition` in Rust
//! and committed by a compare-and-set script guarded by per-job versions ([`transact`]). The
//! scripts spell no status code and decide no start: a header generated from `flexiq_core`
//! ([`scripts`]) gives them the codes, the claimable and terminal sets and the verdict per
//! dependency status. Jobs are hashes; listings are sorted sets keyed by time, so keyset pages
//! are index seeks; per-queue status counters make stats O(1). Idle workers block on a marker
//! key. See `docs/redis.md` for the key layout and operating notes.
//!
//! Each core store trait is implemented in the file of its name: `jobs.rs` (`JobStore`),
//! `inspect.rs`, `dead.rs` (`DeadLetters`), `control.rs` (`QueueControl`), `history.rs`,
//! `settings.rs`, `leadership.rs`, `maintenance.rs`, `schema.rs`, `workflow.rs` (`Workflows`),
//! `admin.rs` (`Admin`, with `orphans.rs`), `reschedule.rs` (`Reschedule`), `flows.rs`
//! (`Flows`), `dedup.rs` (`Deduplication`), `schedulers.rs` (`Schedulers`) and `events.rs`
//! (`Events`, with `stream.rs` and `blocking.rs`); the rest are the parts they share. Every
//! script writes the events of the changes it makes into the namespace's stream
//! (`lua/events.lua`), so an event commits exactly when its change does.

mod admin;
mod backfill;
mod blocking;
mod complete;
mod conn;
mod control;
mod dead;
mod dedup;
mod enqueue;
mod enqueue_plain;
mod error;
mod event_header;
mod events;
mod flows;
mod history;
mod inspect;
mod jobs;
mod keys;
mod leadership;
mod listing;
mod maintenance;
mod options;
mod orphans;
mod reschedule;
mod row;
mod schedulers;
mod schema;
mod scripts;
mod settings;
mod store;
mod stream;
mod transact;
mod wake;
mod workflow;

use std::sync::atomic::Ordering;

pub use options::RedisOptions;
pub use store::RedisStore;

#[async_trait::async_trait]
impl flexiq_core::Store for RedisStore {
    fn namespace(&self) -> &str {
        &self.ctx.ns
    }

    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn close(&self) -> flexiq_core::Result<()> {
        if self.ctx.shared.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.ctx.waker.stop();
        self.ctx.shared.blockers.close().await;
        let _ = fred::interfaces::ClientLike::quit(&self.ctx.conn.pool).await;
        Ok(())
    }
}
