//! Integration tests of the SQLite store: two processes on one file, durability, migrations
//! (old files upgraded, workflow stages included), the self-contained file a close leaves, a
//! batch fair claim against single claims in a row, and the query plans of the hot, listing and
//! workflow queries, and the admin operations on the file itself (orphans planted with raw SQL,
//! archived copies, the schema version 5 upgrade), the schema version 6 upgrade (stall counts
//! and budgets), the stall count cleared wherever a row starts over in place, and the schema
//! version 7 upgrade (edge policies and dedup records) with the removals that drop a dedup
//! record beside its holder, and job schedulers (the schema version 8 upgrade, refused slots,
//! rows this build cannot read), and the events stream (the triggers under the batched writes,
//! a reader woken by another process, the schema version 9 upgrade, the per-namespace switch),
//! and the write connection's WAL writes (commits visible at once, a spilled transaction, a
//! killed writer).

mod admin;
mod close;
mod event_loop;
mod events;
mod fair_batch;
mod fences;
mod migrate;
mod migrate_admin;
mod migrate_flows;
mod migrate_stalls;
mod migrate_workflow;
mod open;
mod plans;
mod schedulers;
mod stalls;
mod two_process;
mod wal_frames;

use flexiq_core::{EnqueueOptions, NewJob};

/// Drops the events stream of schema version 9 (tables and triggers) from a current file, the
/// first step of turning it back into an older version: a file of that version has neither,
/// and the triggers name columns the older versions lack.
pub fn drop_events_schema(conn: &rusqlite::Connection) {
    conn.execute_batch(
        "DROP TRIGGER events_job_insert; DROP TRIGGER events_job_status; DROP TRIGGER events_job_progress;
         DROP TABLE events; DROP TABLE events_off; DELETE FROM sqlite_sequence WHERE name = 'events';",
    )
    .unwrap();
}

/// A fixed base clock (Unix ms).
pub const T0: i64 = 1_700_000_000_000;

/// A job of task `t` on `queue`.
pub fn job_on(queue: &str) -> NewJob {
    let opts = EnqueueOptions { queue: Some(queue.to_string()), ..Default::default() };
    NewJob::build("t", b"p".to_vec(), opts, T0).unwrap()
}
