//! [`Inspect`]: listings (offset and keyset), counts from `queue_counts`, job errors, the
//! dependency graph and the archive. Keyset pages seek the `(ns, created_at, id)` and
//! `(ns, finished_at, id)` indexes with row-value comparisons, so page depth does not matter.

use std::collections::{BTreeMap, BTreeSet};

use flexiq_core::cursor::{page_from_rows, Cursor};
use flexiq_core::store::{
    Inspect, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{
    DagEdge, DagNode, Error, Job, JobDag, JobError, JobFilter, JobId, JobStatus, Page, Result, Stats,
};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};

use crate::error::SqlResultExt;
use crate::row::{job_exists, query_jobs, JOB_COLS};
use crate::SqliteStore;

/// The keyset listing names cursors are bound to.
pub(crate) const JOBS_LISTING: &str = "jobs";
pub(crate) const ARCHIVED_LISTING: &str = "archived";

/// The WHERE clause of a job listing and its parameters (`?1` is the namespace).
pub(crate) fn filter_sql(ns: &str, f: &JobFilter) -> (String, Vec<Value>) {
    let mut sql = String::from("ns = ?1");
    let mut params = vec![Value::Text(ns.to_string())];
    let mut push = |clause: &str, v: Value, close: &str| {
        params.push(v);
        sql.push_str(&format!(" AND {clause}?{}{close}", params.len()));
    };
    if let Some(s) = f.status {
        push("status = ", Value::Integer(i64::from(s.code())), "");
    }
    if let Some(q) = &f.queue {
        push("queue = ", Value::Text(q.clone()), "");
    }
    if let Some(t) = &f.task {
        push("task = ", Value::Text(t.clone()), "");
    }
    if let Some(m) = &f.metadata_contains {
        push("instr(COALESCE(metadata, ''), ", Value::Text(m.clone()), ") > 0");
    }
    if let Some(e) = &f.error_contains {
        push("instr(COALESCE(last_error, ''), ", Value::Text(e.clone()), ") > 0");
    }
    if let Some(a) = f.created_after {
        push("created_at >= ", Value::Integer(a), "");
    }
    if let Some(b) = f.created_before {
        push("created_at < ", Value::Integer(b), "");
    }
    (sql, params)
}

/// The SQL of a keyset page of jobs (`after` adds the seek bound).
pub(crate) fn jobs_page_sql(
    ns: &str,
    f: &JobFilter,
    after: Option<&Cursor>,
    limit: u32,
) -> (String, Vec<Value>) {
    let (mut clause, mut params) = filter_sql(ns, f);
    if let Some(c) = after {
        let n = params.len();
        clause.push_str(&format!(" AND (created_at, id) < (?{}, ?{})", n + 1, n + 2));
        params.push(Value::Integer(c.sort_key));
        params.push(Value::Text(c.id.clone()));
    }
    params.push(Value::Integer(i64::from(limit) + 1));
    let sql = format!(
        "SELECT {JOB_COLS} FROM jobs WHERE {clause} ORDER BY created_at DESC, id DESC LIMIT ?{}",
        params.len()
    );
    (sql, params)
}

/// The SQL of a keyset page of the archive.
pub(crate) fn archived_page_sql(ns: &str, after: Option<&Cursor>, limit: u32) -> (String, Vec<Value>) {
    let mut params = vec![Value::Text(ns.to_string())];
    let mut clause = String::from("ns = ?1 AND finished_at IS NOT NULL");
    if let Some(c) = after {
        clause.push_str(" AND (finished_at, id) < (?2, ?3)");
        params.push(Value::Integer(c.sort_key));
        params.push(Value::Text(c.id.clone()));
    }
    params.push(Value::Integer(i64::from(limit) + 1));
    let sql = format!(
        "SELECT {JOB_COLS} FROM archived_jobs WHERE {clause} ORDER BY finished_at DESC, id DESC LIMIT ?{}",
        params.len()
    );
    (sql, params)
}

fn run(conn: &Connection, sql: &str, params: &[Value]) -> Result<Vec<Job>> {
    let refs: Vec<&dyn rusqlite::ToSql> = params.iter().map(|v| v as &dyn rusqlite::ToSql).collect();
    query_jobs(conn, sql, &refs)
}

fn offset_param(offset: u64) -> Value {
    Value::Integer(i64::try_from(offset).unwrap_or(i64::MAX))
}

/// Reads per-queue status counts of `ns`, optionally of one queue.
pub(crate) fn counts(conn: &Connection, ns: &str, queue: Option<&str>) -> Result<BTreeMap<String, Stats>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT queue, status, n FROM queue_counts WHERE ns = ?1 AND (?2 IS NULL OR queue = ?2)",
        )
        .db()?;
    let rows = stmt
        .query_map((ns, queue), |r| Ok((r.get::<_, String>(0)?, r.get::<_, u8>(1)?, r.get::<_, i64>(2)?)))
        .db()?;
    let mut out: BTreeMap<String, Stats> = BTreeMap::new();
    for row in rows {
        let (q, code, n) = row.db()?;
        out.entry(q).or_default().add(JobStatus::from_code(code)?, n.max(0) as u64);
    }
    Ok(out)
}

fn dag(conn: &Connection, ns: &str, root: &str) -> Result<JobDag> {
    let node = |id: &str| -> Result<Option<DagNode>> {
        let row: Option<(String, u8)> = conn
            .prepare_cached(
                "SELECT task, status FROM jobs WHERE id = ?1 AND ns = ?2
                 UNION ALL SELECT task, status FROM archived_jobs WHERE id = ?1 AND ns = ?2 LIMIT 1",
            )
            .db()?
            .query_row((id, ns), |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .db()?;
        row.map(|(task, code)| Ok(DagNode { id: id.to_string(), task, status: JobStatus::from_code(code)? }))
            .transpose()
    };
    let Some(first) = node(root)? else {
        return Err(Error::JobNotFound(JobId::from_trusted(root.to_string())));
    };
    let mut nodes = BTreeMap::from([(root.to_string(), first)]);
    let mut edges = BTreeSet::new();
    let mut work = vec![root.to_string()];
    while let Some(id) = work.pop() {
        let mut linked = Vec::new();
        for (sql, forward) in [
            ("SELECT dep_id FROM job_deps WHERE job_id = ?1", false),
            ("SELECT job_id FROM job_deps WHERE dep_id = ?1", true),
        ] {
            let mut stmt = conn.prepare_cached(sql).db()?;
            let rows = stmt.query_map([&id], |r| r.get::<_, String>(0)).db()?;
            for other in rows {
                linked.push((other.db()?, forward));
            }
        }
        for (other, forward) in linked {
            let edge = if forward { (id.clone(), other.clone()) } else { (other.clone(), id.clone()) };
            if nodes.contains_key(&other) {
                edges.insert(edge);
                continue;
            }
            if let Some(n) = node(&other)? {
                nodes.insert(other.clone(), n);
                edges.insert(edge);
                work.push(other);
            }
        }
    }
    Ok(JobDag {
        nodes: nodes.into_values().collect(),
        edges: edges.into_iter().map(|(from, to)| DagEdge { from, to }).collect(),
    })
}

#[async_trait::async_trait]
impl Inspect for SqliteStore {
    async fn list_jobs(&self, req: ListJobsRequest) -> Result<Vec<Job>> {
        req.validate()?;
        let (ns, ListJobsRequest { filter: f, limit, offset }) = (self.ns(), req);
        self.read(move |conn| {
            let (clause, mut params) = filter_sql(&ns, &f);
            params.push(Value::Integer(i64::from(limit)));
            params.push(offset_param(offset));
            let n = params.len();
            let sql = format!(
                "SELECT {JOB_COLS} FROM jobs WHERE {clause} ORDER BY created_at DESC, id DESC LIMIT ?{} OFFSET ?{n}",
                n - 1
            );
            run(conn, &sql, &params)
        })
        .await
    }

    async fn list_jobs_after(&self, req: ListJobsAfterRequest) -> Result<Page<Job>> {
        req.validate()?;
        let ListJobsAfterRequest { filter: f, limit, after } = req;
        let fp = f.fingerprint();
        let cursor = after.map(|a| Cursor::decode(&a, JOBS_LISTING, fp)).transpose()?;
        let ns = self.ns();
        self.read(move |conn| {
            let (sql, params) = jobs_page_sql(&ns, &f, cursor.as_ref(), limit);
            let rows = run(conn, &sql, &params)?;
            Ok(page_from_rows(rows, limit as usize, JOBS_LISTING, fp, |j| (j.created_at, j.id.to_string())))
        })
        .await
    }

    async fn stats(&self, queue: Option<&str>) -> Result<Stats> {
        let (ns, q) = (self.ns(), queue.map(str::to_string));
        self.read(move |conn| {
            let mut total = Stats::default();
            for s in counts(conn, &ns, q.as_deref())?.values() {
                for st in JobStatus::ALL {
                    total.add(st, s.get(st));
                }
            }
            Ok(total)
        })
        .await
    }

    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        let ns = self.ns();
        self.read(move |conn| {
            Ok(counts(conn, &ns, None)?.into_iter().filter(|(_, s)| s.total() > 0).collect())
        })
        .await
    }

    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>> {
        let ns = self.ns();
        self.read(move |conn| {
            let mut all = counts(conn, &ns, None)?;
            let mut stmt = conn.prepare_cached("SELECT queue FROM queue_state WHERE ns = ?1").db()?;
            let rows = stmt.query_map([&*ns], |r| r.get::<_, String>(0)).db()?;
            for q in rows {
                all.entry(q.db()?).or_default();
            }
            Ok(all)
        })
        .await
    }

    async fn count_pending(&self, queue: &str) -> Result<u64> {
        let (ns, q) = (self.ns(), queue.to_string());
        self.read(move |conn| {
            let n: Option<i64> = conn
                .prepare_cached("SELECT n FROM queue_counts WHERE ns = ?1 AND queue = ?2 AND status = 0")
                .db()?
                .query_row((&*ns, &q), |r| r.get(0))
                .optional()
                .db()?;
            Ok(n.unwrap_or(0).max(0) as u64)
        })
        .await
    }

    async fn job_status(&self, id: &JobId) -> Result<Option<JobStatus>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            conn.prepare_cached("SELECT status FROM jobs WHERE id = ?1 AND ns = ?2")
                .db()?
                .query_row((id.as_str(), &*ns), |r| r.get::<_, u8>(0))
                .optional()
                .db()?
                .map(JobStatus::from_code)
                .transpose()
        })
        .await
    }

    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            if !job_exists(conn, &ns, id.as_str())? {
                return Err(Error::JobNotFound(id));
            }
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, job_id, attempt, error, failed_at FROM job_errors
                     WHERE job_id = ?1 AND ns = ?2 ORDER BY failed_at, attempt, rowid",
                )
                .db()?;
            let rows = stmt
                .query_map((id.as_str(), &*ns), |r| {
                    Ok(JobError {
                        id: r.get(0)?,
                        job_id: r.get(1)?,
                        attempt: r.get(2)?,
                        error: r.get(3)?,
                        failed_at: r.get(4)?,
                    })
                })
                .db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn job_dag(&self, id: &JobId) -> Result<JobDag> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| dag(conn, &ns, id.as_str())).await
    }

    async fn list_archived(&self, req: ListArchivedRequest) -> Result<Vec<Job>> {
        req.validate()?;
        let (ns, ListArchivedRequest { limit, offset }) = (self.ns(), req);
        self.read(move |conn| {
            let sql = format!(
                "SELECT {JOB_COLS} FROM archived_jobs WHERE ns = ?1 AND finished_at IS NOT NULL
                 ORDER BY finished_at DESC, id DESC LIMIT ?2 OFFSET ?3"
            );
            run(
                conn,
                &sql,
                &[Value::Text(ns.to_string()), Value::Integer(i64::from(limit)), offset_param(offset)],
            )
        })
        .await
    }

    async fn list_archived_after(&self, req: ListArchivedAfterRequest) -> Result<Page<Job>> {
        req.validate()?;
        let ListArchivedAfterRequest { limit, after } = req;
        let cursor = after.map(|a| Cursor::decode(&a, ARCHIVED_LISTING, 0)).transpose()?;
        let ns = self.ns();
        self.read(move |conn| {
            let (sql, params) = archived_page_sql(&ns, cursor.as_ref(), limit);
            let rows = run(conn, &sql, &params)?;
            Ok(page_from_rows(rows, limit as usize, ARCHIVED_LISTING, 0, |j| {
                (j.finished_at.unwrap_or(0), j.id.to_string())
            }))
        })
        .await
    }
}
