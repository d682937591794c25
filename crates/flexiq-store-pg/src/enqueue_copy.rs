//! Large simple batches through binary `COPY` straight into the jobs table.
//!
//! For thousands of rows, `COPY ... FROM STDIN (FORMAT binary)` costs the server less than
//! an `INSERT ... SELECT FROM unnest(...)`: no arrays to build and take apart, and the heap
//! takes the rows a page at a time (one WAL record per page instead of one per row). A batch
//! qualifies when it needs no unique-key, dependency or admission check (see `enqueue.rs`);
//! the revoked-task check and the queue registration run in the same transaction, in the
//! same flight as `BEGIN` and the `COPY`, so a batch of a revoked task inserts nothing.

use std::collections::BTreeSet;

use flexiq_core::store::{placed_run_at, Enqueued};
use flexiq_core::{NewJob, Result};
use futures::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

use crate::db::{i64_of, uid, Conn};
use crate::error::pg;
use crate::row::code;
use crate::store::PgStore;

/// Batches at least this large go through `COPY`; smaller ones take one `INSERT` round trip.
pub(crate) const COPY_MIN_JOBS: usize = 256;

const COPY_JOBS: &str = "COPY {S}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
    backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, \
    workflow_stage_id, workflow_version) FROM STDIN (FORMAT binary)";

const COPY_TYPES: [Type; 18] = [
    Type::UUID,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::BYTEA,
    Type::INT4,
    Type::INT2,
    Type::INT4,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
];

/// Registers the batch's queues unless a task is revoked, and returns the revoked tasks.
/// With `$4`/`$5` (channel, payload) it also sends the work NOTIFY, delivered at commit.
fn prelude_sql(notify: bool) -> String {
    let mut sql = String::from(
        "WITH rev AS (SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 AND task = ANY($2::text[])), \
         q AS (INSERT INTO {S}.queues (namespace, queue) SELECT $1, x FROM unnest($3::text[]) AS x \
               WHERE NOT EXISTS (SELECT 1 FROM rev) ON CONFLICT DO NOTHING) \
         SELECT task FROM rev",
    );
    if notify {
        sql.push_str(
            " UNION ALL SELECT NULL::text FROM (SELECT pg_notify($4, $5)) AS n WHERE NOT EXISTS (SELECT 1 FROM rev)",
        );
    }
    sql
}

/// One job as the `COPY` row values, in `COPY_TYPES` order.
struct CopyRow {
    id: uuid::Uuid,
    priority: i32,
    max_retries: i32,
    bb: i64,
    bm: i64,
    run_at: i64,
    timeout: Option<i64>,
    job: NewJob,
}

impl CopyRow {
    fn of(job: NewJob, now: i64) -> Result<CopyRow> {
        Ok(CopyRow {
            id: uid(&job.id)?,
            run_at: placed_run_at(job.run_at, now),
            priority: job.priority,
            max_retries: i32::try_from(job.max_retries)
                .map_err(|_| flexiq_core::Error::invalid("max_retries is too large"))?,
            bb: i64_of("backoff base ms", job.backoff.base_ms)?,
            bm: i64_of("backoff max ms", job.backoff.max_ms)?,
            timeout: job.timeout_ms.map(|t| i64_of("timeout ms", t)).transpose()?,
            job,
        })
    }
}

impl PgStore {
    /// Inserts a simple batch with `COPY`; returns the first revoked task instead when the
    /// batch names one (nothing is inserted then).
    pub(crate) async fn enqueue_copy(
        &self,
        c: &Conn,
        jobs: Vec<NewJob>,
        now: i64,
        notify: bool,
    ) -> Result<std::result::Result<Vec<Enqueued>, String>> {
        let rows: Vec<CopyRow> = jobs.into_iter().map(|j| CopyRow::of(j, now)).collect::<Result<_>>()?;
        let tasks: Vec<&str> =
            rows.iter().map(|r| r.job.task.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
        let queues: Vec<&str> =
            rows.iter().map(|r| r.job.queue.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
        let ns: &str = &self.ns;
        let payload = self.shared.hub.work_payload(ns);
        let channel = crate::wake::CHANNEL;
        let what = "enqueue";
        let prelude = c.prep(what, &self.sql(&prelude_sql(notify))).await?;
        let copy = c.prep(what, &self.sql(COPY_JOBS)).await?;
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&ns, &tasks, &queues];
        if notify {
            params.extend([&channel as &(dyn ToSql + Sync), &payload]);
        }
        let pending = code(flexiq_core::JobStatus::Pending);
        let write_rows = async {
            let sink = c.copy_in(&copy).await.map_err(|e| pg(what, e))?;
            let writer = BinaryCopyInWriter::new(sink, &COPY_TYPES);
            pin_mut!(writer);
            for r in &rows {
                let j = &r.job;
                let values: [&(dyn ToSql + Sync); 18] = [
                    &r.id,
                    &ns,
                    &j.queue,
                    &j.task,
                    &j.payload,
                    &r.priority,
                    &pending,
                    &r.max_retries,
                    &r.bb,
                    &r.bm,
                    &now,
                    &r.run_at,
                    &r.timeout,
                    &j.metadata,
                    &j.group_key,
                    &j.workflow_run_id,
                    &j.workflow_stage_id,
                    &j.workflow_version,
                ];
                writer.as_mut().write(&values).await.map_err(|e| pg(what, e))?;
            }
            writer.finish().await.map_err(|e| pg(what, e))
        };
        let sent = futures::try_join!(
            c.begin(),
            async { c.query(&prelude, &params).await.map_err(|e| pg(what, e)) },
            write_rows
        );
        let refused = match sent {
            Ok((_, found, _)) => found.iter().find_map(|r| r.get::<_, Option<String>>(0)),
            Err(e) => {
                c.rollback().await;
                return Err(e);
            }
        };
        if let Some(task) = refused {
            c.rollback().await;
            return Ok(Err(task));
        }
        if let Err(e) = c.commit().await {
            c.rollback().await;
            return Err(e);
        }
        Ok(Ok(rows.into_iter().map(|r| Enqueued { id: r.job.id, created: true }).collect()))
    }
}
