//! [`Schema`]: embedded, numbered migrations and the `schema_meta` row (version and contract
//! floor), which every process opening the file checks.
//!
//! The jobs table is kept lean because every index costs on every enqueue, claim and ack: the
//! id, the claim order (a partial index over claimable rows only), the listing order,
//! running jobs by heartbeat (partial), terminal jobs by finish time (partial) and live unique
//! keys (partial). The workflow indexes (stage, run, fair claim, grouped running jobs) are
//! partial over rows with a run id or a group key, so plain jobs never pay for them. The
//! administration indexes (a queue's finished rows by status and finish time, its waiting rows
//! by creation) are partial too: enqueues and claims of plain jobs never touch them. Counts
//! live in `queue_counts`, maintained in the same transaction as every status change, so stats
//! never scan jobs. Each dependency edge carries its failure policy, and dedup records live in
//! `dedup_keys`, one row per (namespace, key), found by key or by holder (version 7). Job
//! schedulers live in `job_schedulers`, one row per (namespace, id), found due by their next
//! slot (version 8).

use std::path::Path;

use flexiq_core::store::Schema;
use flexiq_core::{check_floor, validate_new_floor, Error, MigrationSummary, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::error::SqlResultExt;
use crate::events_schema;
use crate::SqliteStore;

/// One migration: a script, or code for a step that must look at the file first.
enum Step {
    Sql(&'static str),
    Code(fn(&Connection) -> Result<()>),
}

/// The migrations, in order: (version, step).
const MIGRATIONS: &[(u32, Step)] = &[
    (1, Step::Sql(V1)),
    (2, Step::Sql(V2)),
    (3, Step::Code(v3_claim_seq)),
    (4, Step::Code(v4_workflows)),
    (5, Step::Sql(V5)),
    (6, Step::Code(v6_stalls)),
    (7, Step::Code(v7_flows_and_dedup)),
    (8, Step::Sql(V8)),
    (9, Step::Code(events_schema::v9_events)),
    (10, Step::Code(v10_start_seq)),
];

/// The newest schema version this build knows.
pub(crate) const LATEST: u32 = 10;

const V1: &str = r#"
CREATE TABLE jobs (
    id TEXT NOT NULL,
    ns TEXT NOT NULL,
    queue TEXT NOT NULL,
    task TEXT NOT NULL,
    payload BLOB NOT NULL,
    priority INTEGER NOT NULL,
    status INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    max_retries INTEGER NOT NULL,
    backoff_base INTEGER NOT NULL,
    backoff_max INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    started_at INTEGER,
    heartbeat_at INTEGER,
    finished_at INTEGER,
    worker_id TEXT,
    result BLOB,
    last_error TEXT,
    unique_key TEXT,
    metadata TEXT,
    progress REAL,
    timeout_ms INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    group_key TEXT,
    wf_run TEXT,
    wf_stage TEXT,
    has_deps INTEGER NOT NULL DEFAULT 0,
    has_dependents INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX jobs_id ON jobs(id);
CREATE INDEX jobs_claim ON jobs(ns, queue, priority DESC, run_at, id) WHERE status IN (0, 6);
CREATE INDEX jobs_created ON jobs(ns, created_at, id);
CREATE INDEX jobs_running ON jobs(ns, heartbeat_at) WHERE status = 1;
CREATE INDEX jobs_finished ON jobs(ns, finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX jobs_unique ON jobs(ns, unique_key)
    WHERE unique_key IS NOT NULL AND status IN (0, 1, 6, 7);

CREATE TABLE job_deps (
    job_id TEXT NOT NULL,
    dep_id TEXT NOT NULL,
    PRIMARY KEY (job_id, dep_id)
) WITHOUT ROWID;
CREATE INDEX job_deps_dep ON job_deps(dep_id);

CREATE TABLE queue_counts (
    ns TEXT NOT NULL,
    queue TEXT NOT NULL,
    status INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (ns, queue, status)
) WITHOUT ROWID;

CREATE TABLE queue_state (
    ns TEXT NOT NULL,
    queue TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    rate_count INTEGER,
    rate_per_ms INTEGER,
    tokens REAL,
    tokens_at INTEGER,
    concurrency INTEGER,
    PRIMARY KEY (ns, queue)
) WITHOUT ROWID;

CREATE TABLE revoked_tasks (
    ns TEXT NOT NULL,
    task TEXT NOT NULL,
    PRIMARY KEY (ns, task)
) WITHOUT ROWID;

CREATE TABLE job_errors (
    id TEXT NOT NULL PRIMARY KEY,
    ns TEXT NOT NULL,
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    error TEXT NOT NULL,
    failed_at INTEGER NOT NULL
);
CREATE INDEX job_errors_job ON job_errors(job_id, failed_at);
CREATE INDEX job_errors_time ON job_errors(ns, failed_at);

CREATE TABLE dead_letters (
    id TEXT NOT NULL PRIMARY KEY,
    ns TEXT NOT NULL,
    original_job_id TEXT NOT NULL,
    queue TEXT NOT NULL,
    task TEXT NOT NULL,
    payload BLOB NOT NULL,
    error TEXT,
    retry_count INTEGER NOT NULL,
    failed_at INTEGER NOT NULL,
    metadata TEXT,
    priority INTEGER NOT NULL,
    max_retries INTEGER NOT NULL,
    backoff_base INTEGER NOT NULL,
    backoff_max INTEGER NOT NULL,
    timeout_ms INTEGER,
    group_key TEXT,
    wf_run TEXT,
    wf_stage TEXT
);
CREATE INDEX dead_letters_time ON dead_letters(ns, failed_at, id);
CREATE INDEX dead_letters_task ON dead_letters(ns, task, failed_at, id);

CREATE TABLE archived_jobs (
    id TEXT NOT NULL,
    ns TEXT NOT NULL,
    queue TEXT NOT NULL,
    task TEXT NOT NULL,
    payload BLOB NOT NULL,
    priority INTEGER NOT NULL,
    status INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    max_retries INTEGER NOT NULL,
    backoff_base INTEGER NOT NULL,
    backoff_max INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    started_at INTEGER,
    heartbeat_at INTEGER,
    finished_at INTEGER,
    worker_id TEXT,
    result BLOB,
    last_error TEXT,
    unique_key TEXT,
    metadata TEXT,
    progress REAL,
    timeout_ms INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    group_key TEXT,
    wf_run TEXT,
    wf_stage TEXT,
    has_deps INTEGER NOT NULL DEFAULT 0,
    has_dependents INTEGER NOT NULL DEFAULT 0,
    archived_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX archived_id ON archived_jobs(id);
CREATE INDEX archived_finished ON archived_jobs(ns, finished_at, id);
CREATE INDEX archived_time ON archived_jobs(ns, archived_at);

CREATE TABLE task_metrics (
    ns TEXT NOT NULL,
    job_id TEXT NOT NULL,
    task TEXT NOT NULL,
    queue TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    success INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL
);
CREATE INDEX task_metrics_time ON task_metrics(ns, recorded_at);

CREATE TABLE task_logs (
    ns TEXT NOT NULL,
    job_id TEXT NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    logged_at INTEGER NOT NULL
);
CREATE INDEX task_logs_job ON task_logs(job_id);
CREATE INDEX task_logs_time ON task_logs(ns, logged_at);

CREATE TABLE job_partials (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    published_at INTEGER NOT NULL,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

CREATE TABLE replays (
    id TEXT NOT NULL PRIMARY KEY,
    ns TEXT NOT NULL,
    original_job_id TEXT NOT NULL,
    replay_job_id TEXT NOT NULL,
    replayed_at INTEGER NOT NULL,
    original_error TEXT
);
CREATE INDEX replays_original ON replays(original_job_id, replayed_at);

CREATE TABLE settings (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE leases (
    ns TEXT NOT NULL,
    name TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (ns, name)
) WITHOUT ROWID;

CREATE TABLE workers (
    ns TEXT NOT NULL,
    id TEXT NOT NULL,
    queues TEXT NOT NULL,
    concurrency INTEGER NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    PRIMARY KEY (ns, id)
) WITHOUT ROWID;

CREATE TABLE retention_state (
    ns TEXT NOT NULL PRIMARY KEY,
    body TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE wake (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    gen INTEGER NOT NULL
);
INSERT INTO wake (id, gen) VALUES (1, 0);
"#;

/// The wake generation moves from a table of its own into a `queue_counts` row. Every commit
/// that makes work claimable also changes a counter, and the counters of a file with few
/// queues share one page, so the bump no longer dirties (and writes to the WAL) a page of its
/// own. The row's empty namespace can never be a real one.
const V2: &str = r#"
INSERT INTO queue_counts (ns, queue, status, n) SELECT '', '', 255, gen FROM wake WHERE id = 1;
DROP TABLE wake;
"#;

/// Every table that keeps job rows: each carries the claim sequence.
const JOB_TABLES: [&str; 2] = ["jobs", "archived_jobs"];

/// Version 3: every job row keeps its claim sequence (claims so far, never given back), which
/// makes each claim's fence unique. Rows written before it get `claim_seq = attempt`: the
/// claims they are known to have had, so a job running across the upgrade keeps a fence
/// (attempt, start, attempt) that `get` reads back and its ack matches. A table that already
/// has the column is left as it is, so the step can run twice.
fn v3_claim_seq(conn: &Connection) -> Result<()> {
    for table in JOB_TABLES {
        if has_column(conn, table, "claim_seq")? {
            continue;
        }
        conn.execute_batch(&format!(
            "ALTER TABLE {table} ADD COLUMN claim_seq INTEGER NOT NULL DEFAULT 0;
             UPDATE {table} SET claim_seq = attempt;"
        ))
        .db()?;
    }
    Ok(())
}

/// Every table that keeps the workflow columns of a job: each gains the definition version.
const WORKFLOW_TABLES: [&str; 3] = ["jobs", "archived_jobs", "dead_letters"];

/// The indexes and table of version 4 (each `IF NOT EXISTS`, so the step can run twice).
///
/// - `jobs_wf_stage`: at most one live row per (namespace, run, stage).
/// - `jobs_wf_run`: a run's rows in listing order, for `jobs_of_run` and `cancel_run`.
/// - `jobs_fair`: claimable workflow rows by group, in claim order within a group, so a fair
///   claim seeks the next group with work and that group's best job. Plain jobs (no run id)
///   stay out of it, so their enqueues and claims pay nothing for it.
/// - `jobs_group_running`: running rows that carry a group key, so a fair claim counts a
///   group's running jobs with one seek. Rows without a group key (the default group, and
///   almost every plain job) stay out of it: their count is the queue's running counter minus
///   the grouped ones, so claims and acks of plain jobs pay nothing for it.
/// - `fair_cursor`: the group each namespace's last fair claim served.
const V4_INDEXES: &str = r#"
CREATE UNIQUE INDEX IF NOT EXISTS jobs_wf_stage ON jobs(ns, wf_run, wf_stage) WHERE wf_run IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_wf_run ON jobs(ns, wf_run, created_at, id) WHERE wf_run IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_fair ON jobs(ns, queue, COALESCE(group_key, ''), priority DESC, run_at, id)
    WHERE status IN (0, 6) AND wf_run IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_group_running ON jobs(ns, queue, group_key)
    WHERE status = 1 AND group_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS fair_cursor (
    ns TEXT NOT NULL PRIMARY KEY,
    group_key TEXT NOT NULL
) WITHOUT ROWID;
"#;

/// The columns of a job row at version 4, in both `jobs` and `archived_jobs` (the archive adds
/// `archived_at`). Spelled out, not taken from the row codec, so the step keeps meaning the
/// same once later versions add columns.
const V4_JOB_COLS: &str = "id, ns, queue, task, payload, priority, status, attempt, max_retries, \
    backoff_base, backoff_max, created_at, run_at, started_at, heartbeat_at, finished_at, worker_id, \
    result, last_error, unique_key, metadata, progress, timeout_ms, cancel_requested, group_key, \
    wf_run, wf_stage, has_deps, has_dependents, claim_seq, wf_version";

/// Version 4: workflow stages. Every table with the workflow columns gains `wf_version` (the
/// definition version; rows written before it have none), and the indexes of [`V4_INDEXES`]
/// are built. Builds before it let a (run, stage) pair hold several live rows: the newest of
/// each pair (by `created_at`, then id) stays, and the older ones, which a re-enqueue under
/// the workflow contract would have replaced, move to the archive whatever their status (their
/// counters go with them), so none is lost. The step can run twice.
fn v4_workflows(conn: &Connection) -> Result<()> {
    for table in WORKFLOW_TABLES {
        if !has_column(conn, table, "wf_version")? {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN wf_version TEXT")).db()?;
        }
    }
    let older: Vec<(i64, String, String, u8)> = {
        let mut stmt = conn
            .prepare(
                "SELECT r, ns, queue, status FROM (
                    SELECT rowid AS r, ns, queue, status, row_number() OVER (
                        PARTITION BY ns, wf_run, wf_stage ORDER BY created_at DESC, id DESC) AS n
                    FROM jobs WHERE wf_run IS NOT NULL AND wf_stage IS NOT NULL)
                 WHERE n > 1",
            )
            .db()?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).db()?;
        rows.collect::<rusqlite::Result<_>>().db()?
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let archive = format!(
        "INSERT INTO archived_jobs ({V4_JOB_COLS}, archived_at) SELECT {V4_JOB_COLS}, ?2 FROM jobs WHERE rowid = ?1"
    );
    for (rowid, ns, queue, status) in older {
        conn.execute(&archive, (rowid, now)).db()?;
        conn.execute("DELETE FROM jobs WHERE rowid = ?1", [rowid]).db()?;
        conn.execute(
            "UPDATE queue_counts SET n = n - 1 WHERE ns = ?1 AND queue = ?2 AND status = ?3",
            (&ns, &queue, status),
        )
        .db()?;
    }
    conn.execute_batch(V4_INDEXES).db()
}

/// Version 5: the indexes of queue administration (each `IF NOT EXISTS`, so the step can run
/// twice). The two on `jobs` are partial over rows that are finished or waiting, so enqueues
/// and claims of plain jobs never touch them; the others index tables written off the hot path
/// (dead letters, the archive) or beside a completion (one metric row per finished attempt).
///
/// - `jobs_queue_finished`: a queue's finished rows of one status by finish time, for `clean`
///   and `retry_jobs` (oldest first) and `obliterate`.
/// - `jobs_queue_waiting`: a queue's waiting rows by creation, for `clean` and `obliterate`.
/// - `archived_queue`: a queue's archived copies, for `obliterate`.
/// - `dead_letters_job` and `dead_letters_queue`: a removed or retried job's dead letter, and
///   a queue's, for `obliterate`.
/// - `task_metrics_job`: a removed job's metric rows.
const V5: &str = r#"
CREATE INDEX IF NOT EXISTS jobs_queue_finished ON jobs(ns, queue, status, finished_at, id)
    WHERE status IN (2, 3, 4, 5);
CREATE INDEX IF NOT EXISTS jobs_queue_waiting ON jobs(ns, queue, created_at, id) WHERE status = 7;
CREATE INDEX IF NOT EXISTS archived_queue ON archived_jobs(ns, queue);
CREATE INDEX IF NOT EXISTS dead_letters_job ON dead_letters(original_job_id);
CREATE INDEX IF NOT EXISTS dead_letters_queue ON dead_letters(ns, queue);
CREATE INDEX IF NOT EXISTS task_metrics_job ON task_metrics(job_id);
"#;

/// Version 6: stalled recovery. Every table that keeps job rows gains `stall_count` (lapsed
/// leases the job was recovered from; rows written before it read 0, as no stall was counted
/// then), and `queue_state` gains `max_stalled_count` beside the queue's other controls (NULL:
/// the default budget). A table that already has its column is left as it is, so the step can
/// run twice.
fn v6_stalls(conn: &Connection) -> Result<()> {
    for table in JOB_TABLES {
        if !has_column(conn, table, "stall_count")? {
            conn.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN stall_count INTEGER NOT NULL DEFAULT 0"
            ))
            .db()?;
        }
    }
    if !has_column(conn, "queue_state", "max_stalled_count")? {
        conn.execute_batch("ALTER TABLE queue_state ADD COLUMN max_stalled_count INTEGER").db()?;
    }
    Ok(())
}

/// Version 10: start reports. A job row keeps `start_seq`, the claim sequence of the newest
/// attempt whose start a worker's heartbeat reported; a lapsed lease of an attempt whose claim
/// sequence it does not match was still in a prefetch buffer, so its release gives the attempt
/// back without a stall. Rows written before it read 0: a job running across the upgrade whose
/// worker then dies is released as never started, which spends nothing. A `jobs` table that
/// already has the column is left as it is, so the step can run twice.
fn v10_start_seq(conn: &Connection) -> Result<()> {
    if !has_column(conn, "jobs", "start_seq")? {
        conn.execute_batch("ALTER TABLE jobs ADD COLUMN start_seq INTEGER NOT NULL DEFAULT 0").db()?;
    }
    Ok(())
}

/// The dedup records of version 7 (each `IF NOT EXISTS`, so the step can run twice): one row
/// per (namespace, key) naming the job holding the key, its queue and when the hold lapses by
/// itself (NULL: while the holder is unfinished). `dedup_keys_job` finds the record a removed
/// job held.
const V7_DEDUP: &str = r#"
CREATE TABLE IF NOT EXISTS dedup_keys (
    ns TEXT NOT NULL,
    key TEXT NOT NULL,
    job_id TEXT NOT NULL,
    queue TEXT NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (ns, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedup_keys_job ON dedup_keys(ns, job_id);
"#;

/// Version 7: flows and dedup modes. Every dependency edge gains its failure policy
/// (`EdgePolicy::code`; edges written before it read 0, the plain `depends_on` meaning they
/// always had), and the dedup records of [`V7_DEDUP`] are created. A `job_deps` that already
/// has the column is left as it is, so the step can run twice.
fn v7_flows_and_dedup(conn: &Connection) -> Result<()> {
    if !has_column(conn, "job_deps", "policy")? {
        conn.execute_batch("ALTER TABLE job_deps ADD COLUMN policy INTEGER NOT NULL DEFAULT 0").db()?;
    }
    conn.execute_batch(V7_DEDUP).db()
}

/// Version 8: job schedulers (each `IF NOT EXISTS`, so the step can run twice). One row per
/// (namespace, id): the rule and template as one JSON document (`SchedulerSpec::to_json`), the
/// next slot (NULL once the rule has none left), the newest slot fired and the count, all in
/// Unix ms. A rowid table, as a template's payload can make a row large.
/// `job_schedulers_due` is partial over schedulers with a next slot, in the order a round
/// fires them (most overdue first), so finished schedulers cost the due scan nothing.
const V8: &str = r#"
CREATE TABLE IF NOT EXISTS job_schedulers (
    ns TEXT NOT NULL,
    id TEXT NOT NULL,
    spec TEXT NOT NULL,
    next_run_ms INTEGER,
    last_run_ms INTEGER,
    iterations INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (ns, id)
);
CREATE INDEX IF NOT EXISTS job_schedulers_due ON job_schedulers(ns, next_run_ms, id)
    WHERE next_run_ms IS NOT NULL;
"#;

fn has_column(conn: &Connection, table: &str, column: &str) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
        (table, column),
        |r| r.get(0),
    )
    .db()
}

/// The recorded (version, contract floor), or `None` on a file without flexiq's schema.
pub(crate) fn read_meta(conn: &Connection) -> Result<Option<(u32, u32)>> {
    let exists: bool = conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta')",
            [],
            |r| r.get(0),
        )
        .db()?;
    if !exists {
        return Ok(None);
    }
    conn.query_row("SELECT version, contract_floor FROM schema_meta WHERE id = 1", [], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()
    .db()
}

/// Applies every pending migration in one transaction; idempotent.
pub(crate) fn migrate(conn: &Connection) -> Result<MigrationSummary> {
    conn.execute_batch("BEGIN IMMEDIATE").db()?;
    let out = migrate_in_tx(conn);
    match out {
        Ok(summary) => {
            conn.execute_batch("COMMIT").db()?;
            Ok(summary)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The body of [`migrate`], for callers already inside a transaction.
pub(crate) fn migrate_in_tx(conn: &Connection) -> Result<MigrationSummary> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_meta (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL,
            contract_floor INTEGER NOT NULL
        )",
    )
    .db()?;
    let (version, floor) = read_meta(conn)?.unwrap_or((0, 1));
    check_floor(floor)?;
    let mut applied = Vec::new();
    for (v, step) in MIGRATIONS.iter().filter(|(v, _)| *v > version) {
        let done = match step {
            Step::Sql(sql) => conn.execute_batch(sql).db(),
            Step::Code(run) => run(conn),
        };
        done.map_err(|e| Error::backend(format!("sqlite migration {v} failed: {e}")))?;
        applied.push(*v);
    }
    conn.execute(
        "INSERT INTO schema_meta (id, version, contract_floor) VALUES (1, ?1, ?2)
         ON CONFLICT (id) DO UPDATE SET version = excluded.version",
        (LATEST.max(version), floor),
    )
    .db()?;
    Ok(MigrationSummary { applied, ..Default::default() })
}

/// Refuses a file that is not migrated to this build's schema (used when `auto_migrate` is off)
/// and any file whose floor is above this build's contract level.
pub(crate) fn verify(conn: &Connection, path: &Path, need_current: bool) -> Result<()> {
    match read_meta(conn)? {
        None if need_current => Err(Error::Conflict(format!(
            "sqlite file {} has no flexiq schema: run migrate() or open it with auto_migrate",
            path.display()
        ))),
        None => Ok(()),
        Some((version, floor)) => {
            check_floor(floor)?;
            if need_current && version < LATEST {
                return Err(Error::Conflict(format!(
                    "sqlite file {} is at schema version {version}, this build needs {LATEST}: run migrate() or open it with auto_migrate",
                    path.display()
                )));
            }
            Ok(())
        }
    }
}

#[async_trait::async_trait]
impl Schema for SqliteStore {
    async fn migrate(&self) -> Result<MigrationSummary> {
        self.write(false, |ctx| migrate_in_tx(ctx.conn)).await
    }

    async fn min_contract(&self) -> Result<u32> {
        self.read(|conn| Ok(read_meta(conn)?.map_or(1, |(_, floor)| floor))).await
    }

    async fn set_min_contract(&self, level: u32) -> Result<()> {
        let level = validate_new_floor(i64::from(level))?;
        self.write(false, move |ctx| {
            ctx.conn
                .prepare_cached("UPDATE schema_meta SET contract_floor = ?1 WHERE id = 1")
                .db()?
                .execute([level])
                .db()?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrate_is_idempotent_and_reports_what_ran() {
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(read_meta(&conn).unwrap(), None);
        assert_eq!(migrate(&conn).unwrap().applied, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(migrate(&conn).unwrap().applied.is_empty());
        assert_eq!(read_meta(&conn).unwrap(), Some((LATEST, 1)));
        verify(&conn, Path::new("x.db"), true).unwrap();
        conn.execute("UPDATE schema_meta SET contract_floor = 99", []).unwrap();
        assert_eq!(migrate(&conn).unwrap_err().code(), "CONTRACT_TOO_OLD");
        assert_eq!(verify(&conn, Path::new("x.db"), false).unwrap_err().code(), "CONTRACT_TOO_OLD");
    }

    #[test]
    fn a_version_1_file_migrates_forward_keeping_its_wake_generation() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL,
                contract_floor INTEGER NOT NULL);
             INSERT INTO schema_meta VALUES (1, 1, 1);
             UPDATE wake SET gen = 41 WHERE id = 1;",
        )
        .unwrap();
        assert_eq!(migrate(&conn).unwrap().applied, vec![2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(read_meta(&conn).unwrap(), Some((LATEST, 1)));
        let gen: i64 = conn.query_row(crate::wake::READ_GEN, [], |r| r.get(0)).unwrap();
        assert_eq!(gen, 41);
        let wake_table: bool = conn
            .query_row("SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'wake')", [], |r| r.get(0))
            .unwrap();
        assert!(!wake_table);
    }

    /// A version 2 file: the version 1 tables, version 2's change, and the meta row at 2.
    fn version_2_file() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1).unwrap();
        conn.execute_batch(V2).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL,
                contract_floor INTEGER NOT NULL);
             INSERT INTO schema_meta VALUES (1, 2, 1);",
        )
        .unwrap();
        conn
    }

    fn insert_job(conn: &Connection, table: &str, id: &str, status: u8, attempt: u32) {
        let extra = if table == "archived_jobs" { ", archived_at" } else { "" };
        let extra_value = if table == "archived_jobs" { ", 9" } else { "" };
        conn.execute(
            &format!(
                "INSERT INTO {table} (id, ns, queue, task, payload, priority, status, attempt, max_retries,
                    backoff_base, backoff_max, created_at, run_at{extra})
                 VALUES (?1, 'default', 'q', 't', x'00', 0, ?2, ?3, 3, 10, 100, 1, 1{extra_value})"
            ),
            (id, status, attempt),
        )
        .unwrap();
    }

    fn claim_seq_of(conn: &Connection, table: &str, id: &str) -> u64 {
        conn.query_row(&format!("SELECT claim_seq FROM {table} WHERE id = ?1"), [id], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_version_2_file_gets_claim_seq_equal_to_attempt_on_every_job_table() {
        let conn = version_2_file();
        insert_job(&conn, "jobs", "fresh", 0, 0);
        insert_job(&conn, "jobs", "retried", 1, 3);
        insert_job(&conn, "archived_jobs", "old", 2, 2);
        assert_eq!(migrate(&conn).unwrap().applied, vec![3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(read_meta(&conn).unwrap(), Some((LATEST, 1)));
        assert_eq!(claim_seq_of(&conn, "jobs", "fresh"), 0);
        assert_eq!(claim_seq_of(&conn, "jobs", "retried"), 3);
        assert_eq!(claim_seq_of(&conn, "archived_jobs", "old"), 2);
        // Rows written after the migration start from zero.
        insert_job(&conn, "jobs", "new", 0, 0);
        assert_eq!(claim_seq_of(&conn, "jobs", "new"), 0);
        assert!(migrate(&conn).unwrap().applied.is_empty());
    }

    #[test]
    fn the_claim_seq_step_leaves_a_table_that_already_has_the_column() {
        let conn = version_2_file();
        conn.execute_batch("ALTER TABLE jobs ADD COLUMN claim_seq INTEGER NOT NULL DEFAULT 0").unwrap();
        insert_job(&conn, "jobs", "kept", 1, 2);
        conn.execute("UPDATE jobs SET claim_seq = 5 WHERE id = 'kept'", []).unwrap();
        insert_job(&conn, "archived_jobs", "old", 2, 4);
        assert_eq!(migrate(&conn).unwrap().applied, vec![3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(claim_seq_of(&conn, "jobs", "kept"), 5, "an existing column keeps its values");
        assert_eq!(claim_seq_of(&conn, "archived_jobs", "old"), 4);
        v3_claim_seq(&conn).unwrap();
        assert_eq!(claim_seq_of(&conn, "archived_jobs", "old"), 4);
    }

    #[test]
    fn the_stall_step_reads_old_rows_as_never_stalled_and_leaves_a_column_already_there() {
        let conn = version_2_file();
        insert_job(&conn, "jobs", "running", 1, 2);
        insert_job(&conn, "archived_jobs", "old", 2, 1);
        conn.execute_batch(
            "ALTER TABLE queue_state ADD COLUMN max_stalled_count INTEGER;
             INSERT INTO queue_state (ns, queue, concurrency, max_stalled_count) VALUES ('default', 'q', 2, 3);",
        )
        .unwrap();
        assert_eq!(migrate(&conn).unwrap().applied, vec![3, 4, 5, 6, 7, 8, 9, 10]);
        let stalls = |table: &str, id: &str| -> u32 {
            conn.query_row(&format!("SELECT stall_count FROM {table} WHERE id = ?1"), [id], |r| r.get(0))
                .unwrap()
        };
        assert_eq!((stalls("jobs", "running"), stalls("archived_jobs", "old")), (0, 0));
        let budget = || -> (u32, u32) {
            conn.query_row(
                "SELECT concurrency, max_stalled_count FROM queue_state WHERE queue = 'q'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        assert_eq!(budget(), (2, 3), "an existing column keeps its values");
        v6_stalls(&conn).unwrap();
        assert_eq!(budget(), (2, 3));
    }

    #[test]
    fn verify_names_the_file_of_an_unmigrated_database() {
        let conn = Connection::open_in_memory().unwrap();
        let err = verify(&conn, Path::new("/tmp/q.db"), true).unwrap_err();
        assert!(err.to_string().contains("/tmp/q.db"), "{err}");
        assert_eq!(err.code(), "CONFLICT");
    }
}
