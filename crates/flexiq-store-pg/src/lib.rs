//! flexiq-store-pg: flexiq's store on PostgreSQL, for many worker processes on many hosts
//! sharing one database.
//!
//! [`PgStore`] implements every trait of [`flexiq_core::store`]. Its tables live in a
//! configurable schema with embedded numbered migrations ([`PgStore::migrate_schema`] for
//! deployments whose runtime role cannot issue DDL). Claims are batch `FOR UPDATE SKIP LOCKED`
//! statements over per-status partial indexes; acks are fenced and applied in batches; rate
//! limits and concurrency caps are enforced under the queue's state row lock so they hold
//! across processes; wake-ups use LISTEN/NOTIFY on a dedicated connection with a poll as a
//! safety net; job counts per queue and status are kept by triggers, so stats cost
//! O(queues), and so are the events of status changes, so no write path can leave one out.
//! Every status change is decided by [`flexiq_core::transition()`], and a new job's start by
//! [`flexiq_core::start::starting`].
//!
//! Each core trait is implemented in the file of its name (`jobs.rs`, `inspect.rs`,
//! `dead.rs`, `control.rs`, `history.rs`, `settings.rs`, `leadership.rs`, `maintenance.rs`,
//! `schema.rs`, `workflow.rs`, whose fair claim is in `workflow_claim.rs` and
//! `workflow_claim_free.rs`, `admin.rs`, with `admin_remove.rs`, `reschedule.rs`, `flows.rs`,
//! where the per-edge failure policies are applied, `dedup.rs`, which enqueue also uses, and
//! `schedulers.rs`, whose rounds enqueue through the checked enqueue path, `events.rs`, which
//! reads the stream in `events_read.rs`, takes the triggers' rules from `event_rules.rs` and
//! shares the events operations write themselves in `event_writes.rs`); every removal of jobs
//! goes through `remove.rs`; the hot path's work lives beside them (`enqueue.rs`,
//! `enqueue_copy.rs`, `claim.rs`, `claim_free.rs`, `ack.rs`, `apply.rs`), as do the migration
//! runner (`migrate.rs`) and the wake-ups (`wake.rs`, `wait.rs`). Every request is checked by
//! its own `validate()` in core first; this crate only refuses what its columns cannot hold.

mod ack;
mod admin;
mod admin_remove;
mod apply;
mod busy;
mod claim;
mod claim_free;
mod complete;
mod control;
mod counts;
mod db;
mod dead;
mod dedup;
mod enqueue;
mod enqueue_copy;
mod enqueue_dedup;
mod error;
mod event_id;
mod event_rules;
mod event_writes;
mod events;
mod events_read;
mod explain;
mod flows;
mod history;
mod inspect;
mod jobs;
mod leadership;
mod maintenance;
mod migrate;
mod options;
mod remove;
mod reschedule;
mod row;
mod schedulers;
mod schema;
mod settings;
mod store;
mod wait;
mod wake;
mod workflow;
mod workflow_ack_claim;
mod workflow_claim;
mod workflow_claim_free;

pub use options::{PgOptions, DEFAULT_SCHEMA};
pub use store::PgStore;

#[async_trait::async_trait]
impl flexiq_core::Store for PgStore {
    fn namespace(&self) -> &str {
        &self.ns
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn close(&self) -> flexiq_core::Result<()> {
        self.close_all().await;
        Ok(())
    }
}
