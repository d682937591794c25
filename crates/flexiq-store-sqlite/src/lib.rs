//! flexiq-store-sqlite: flexiq's embedded store on one SQLite file.
//!
//! The file runs in WAL mode. One write connection group-commits: every queued write is
//! drained into one `BEGIN IMMEDIATE` transaction, each operation in its own savepoint, with
//! replies after the single commit; its WAL frames go out in one write (`wal_vfs.rs`). Small
//! writes are committed on the caller's own thread when the connection is free (no thread
//! hand-off); bulk ones by a writer thread. A small pool of reader threads serves lookups,
//! listings and stats. Every status change goes through
//! [`flexiq_core::transition`]. Per (namespace, queue, status) counters are kept in the same
//! transactions, so stats and `count_pending` never scan jobs. Waiting claimers wake on an
//! in-process signal, on another process's commit (seen through `PRAGMA data_version`), or when
//! the next delayed job comes due. Several processes may share one file. Every claim stamps a
//! fence of (attempt, start, claim sequence); the claim sequence is never given back, so each
//! claim's fence is unique. Closing the last handle checkpoints the WAL into the database file
//! and truncates it, so the `.db` file alone then holds every job.
//!
//! Each core store trait is implemented in a file of its name: `jobs.rs` ([`JobStore`]),
//! `inspect.rs`, `dead.rs`, `control.rs`, `history.rs`, `settings.rs`, `leadership.rs`,
//! `maintenance.rs`, `schema.rs` (which also holds the migrations) and `workflow.rs` (with the
//! fair claim in `workflow_claim.rs`), `admin.rs` (with the shared removal of jobs and their
//! history in `removal.rs` and the orphan sweep in `orphans.rs`), `reschedule.rs` (new delays,
//! promotion, new priorities, LIFO), `flows.rs` (dependency listings, cutting a child loose, and
//! the per-edge failure policies every status change hands its dependents to), `dedup.rs`
//! (the dedup records enqueue decides against), `schedulers.rs` (job schedulers, each
//! round's slots enqueued and recorded in one write) and `events.rs` (the events stream: its
//! table and the triggers on `jobs` that write every status change's event in the change's own
//! statement are in `events_schema.rs`, the events an operation writes itself in
//! `events_write.rs`). Each method checks its request with the
//! request's own `validate()` from core before touching the file.
//!
//! [`JobStore`]: flexiq_core::store::JobStore
//!
//! ```no_run
//! use flexiq_store_sqlite::{SqliteOptions, SqliteStore};
//! let store = SqliteStore::open("/var/lib/app/queue.db", SqliteOptions::default())?;
//! # Ok::<(), flexiq_core::Error>(())
//! ```

mod admin;
mod apply;
mod checkpoint;
mod claim;
mod control;
mod dead;
mod dedup;
mod enqueue;
mod error;
mod events;
mod events_schema;
mod events_write;
mod flows;
mod group_commit;
mod history;
mod inspect;
mod jobs;
mod leadership;
mod maintenance;
mod options;
mod orphans;
mod readers;
mod removal;
mod reschedule;
mod row;
mod schedulers;
mod schema;
mod settings;
mod store;
mod wait;
mod wake;
mod wal_vfs;
mod workflow;
mod workflow_claim;
mod writer;

pub mod query_plans;

pub use options::{Durability, SqliteOptions};
pub use store::SqliteStore;
