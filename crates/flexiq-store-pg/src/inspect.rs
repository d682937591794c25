//! [`Inspect`] for [`PgStore`]: listings (offset and keyset), counts, errors and the job graph.
//!
//! Status filters are written into the SQL as literals so the planner can pick the per-status
//! partial index; a listing of every status merges one branch per status (see
//! `ordered_sql`); keyset pages seek with a row comparison on `(created_at, id)`.

use std::collections::{BTreeMap, BTreeSet};

use flexiq_core::cursor::page_from_rows;
use flexiq_core::store::{
    Inspect, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{
    Cursor, DagEdge, DagNode, Error, Job, JobDag, JobError, JobFilter, JobId, JobStatus, Page, Result, Stats,
};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::db::{i64_of, uid};
use crate::row::{code, job, status, JOB_COLS};
use crate::store::PgStore;

pub(crate) type Param = Box<dyn ToSql + Sync + Send>;

/// `AND ...` conditions for `f`, pushing parameters after the namespace (`$1`).
fn filter_sql(f: &JobFilter, params: &mut Vec<Param>) -> String {
    let mut sql = String::new();
    let mut add = |cond: &str, p: Param, params: &mut Vec<Param>| {
        params.push(p);
        sql.push_str(&cond.replace('#', &format!("${}", params.len())));
    };
    if let Some(q) = &f.queue {
        add(" AND queue = #", Box::new(q.clone()), params);
    }
    if let Some(t) = &f.task {
        add(" AND task = #", Box::new(t.clone()), params);
    }
    if let Some(m) = &f.metadata_contains {
        add(" AND strpos(metadata, #) > 0", Box::new(m.clone()), params);
    }
    if let Some(e) = &f.error_contains {
        add(" AND strpos(last_error, #) > 0", Box::new(e.clone()), params);
    }
    if let Some(a) = f.created_after {
        add(" AND created_at >= #", Box::new(a), params);
    }
    if let Some(b) = f.created_before {
        add(" AND created_at < #", Box::new(b), params);
    }
    if let Some(s) = f.status {
        sql.push_str(&format!(" AND status = {}", code(s)));
    }
    sql
}

/// A listing in `created_at DESC, id DESC` order: `SELECT {JOB_COLS}` of the jobs matching
/// `cond` (conditions after `namespace = $1`), at most `take` of them (a SQL expression).
///
/// A status filter is one seek on that status's partial index. Without one, every status is
/// read from its own partial index, `take` rows each, and the branches are merged: there is
/// deliberately no index over all statuses, since every job would then carry one more index
/// entry through each of its transitions.
fn ordered_sql(filter: &JobFilter, cond: &str, take: &str) -> String {
    let order = "ORDER BY created_at DESC, id DESC";
    if filter.status.is_some() {
        return format!("SELECT {JOB_COLS} FROM {{S}}.jobs WHERE namespace = $1{cond} {order} LIMIT {take}");
    }
    let branches: Vec<String> = JobStatus::ALL
        .iter()
        .map(|st| {
            format!(
                "(SELECT {JOB_COLS} FROM {{S}}.jobs WHERE namespace = $1{cond} AND status = {} {order} LIMIT {take})",
                code(*st)
            )
        })
        .collect();
    format!("SELECT {JOB_COLS} FROM ({}) AS j {order} LIMIT {take}", branches.join(" UNION ALL "))
}

pub(crate) fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
}

/// Decodes a keyset cursor into its (sort key, id).
pub(crate) fn cursor_pos(after: &str, listing: &str, fp: u64) -> Result<(i64, Uuid)> {
    let c = Cursor::decode(after, listing, fp)?;
    let id = Uuid::parse_str(&c.id)
        .map_err(|_| Error::invalid(format!("cursor for {listing} names no valid id")))?;
    Ok((c.sort_key, id))
}

impl PgStore {
    /// The keyset page statement of `list_jobs_after` and its parameters; the page size is
    /// checked by the caller.
    pub(crate) fn keyset_sql(
        &self,
        filter: &JobFilter,
        limit: u32,
        after: Option<&str>,
    ) -> Result<(String, Vec<Param>)> {
        let lim = i64::from(limit);
        let fp = filter.fingerprint();
        let mut params: Vec<Param> = vec![Box::new(self.ns.to_string())];
        let mut cond = filter_sql(filter, &mut params);
        if let Some(a) = after {
            let (key, id) = cursor_pos(a, "jobs", fp)?;
            params.push(Box::new(key));
            params.push(Box::new(id));
            cond.push_str(&format!(" AND (created_at, id) < (${}, ${})", params.len() - 1, params.len()));
        }
        params.push(Box::new(lim + 1));
        let sql = self.sql(&ordered_sql(filter, &cond, &format!("${}", params.len())));
        Ok((sql, params))
    }

    async fn select_jobs(&self, what: &str, sql: &str, params: &[Param]) -> Result<Vec<Job>> {
        let c = self.conn().await?;
        c.rows(what, sql, &refs(params)).await?.iter().map(job).collect()
    }
}

#[async_trait::async_trait]
impl Inspect for PgStore {
    async fn list_jobs(&self, req: ListJobsRequest) -> Result<Vec<Job>> {
        req.validate()?;
        let filter = &req.filter;
        let (limit, offset) = (i64::from(req.limit), i64_of("offset", req.offset)?);
        let mut params: Vec<Param> = vec![Box::new(self.ns.to_string())];
        let cond = filter_sql(filter, &mut params);
        params.push(Box::new(limit));
        params.push(Box::new(offset));
        let n = params.len();
        let sql = format!(
            "SELECT {JOB_COLS} FROM ({}) AS page ORDER BY created_at DESC, id DESC OFFSET ${n}",
            ordered_sql(filter, &cond, &format!("(${}::int8 + ${n}::int8)", n - 1))
        );
        self.select_jobs("list jobs", &self.sql(&sql), &params).await
    }

    async fn list_jobs_after(&self, req: ListJobsAfterRequest) -> Result<Page<Job>> {
        req.validate()?;
        let (filter, limit) = (&req.filter, req.limit);
        let (sql, params) = self.keyset_sql(filter, limit, req.after.as_deref())?;
        let rows = self.select_jobs("list jobs", &sql, &params).await?;
        Ok(page_from_rows(rows, limit as usize, "jobs", filter.fingerprint(), |j| {
            (j.created_at, j.id.to_string())
        }))
    }

    async fn stats(&self, queue: Option<&str>) -> Result<Stats> {
        self.counted(queue).await
    }

    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        self.counted_by_queue().await
    }

    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>> {
        let mut map = self.stats_by_queue().await?;
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT queue FROM {S}.queues WHERE namespace = $1");
        let c = self.conn().await?;
        for r in c.rows("stats of all queues", &sql, &[&ns]).await? {
            map.entry(r.get(0)).or_default();
        }
        Ok(map)
    }

    async fn count_pending(&self, queue: &str) -> Result<u64> {
        let ns: &str = &self.ns;
        let sql = self.sql(crate::counts::PENDING_OF_QUEUES);
        let c = self.conn().await?;
        let rows = c.rows("count pending", &sql, &[&ns, &vec![queue]]).await?;
        Ok(rows.first().map(|r| r.get::<_, i64>(1)).unwrap_or(0).max(0) as u64)
    }

    async fn job_status(&self, id: &JobId) -> Result<Option<JobStatus>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT status FROM {S}.jobs WHERE namespace = $1 AND id = $2");
        let c = self.conn().await?;
        c.opt("job status", &sql, &[&ns, &u]).await?.map(|r| status(r.get(0))).transpose()
    }

    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let c = self.conn().await?;
        let exists = self.sql(
            "SELECT EXISTS (SELECT 1 FROM {S}.jobs WHERE namespace = $1 AND id = $2) \
             OR EXISTS (SELECT 1 FROM {S}.archived_jobs WHERE namespace = $1 AND id = $2)",
        );
        if !c.rows("job errors", &exists, &[&ns, &u]).await?[0].get::<_, bool>(0) {
            return Err(Error::JobNotFound(id.clone()));
        }
        let sql = self.sql(
            "SELECT id, job_id, attempt, error, failed_at FROM {S}.job_errors WHERE job_id = $1 AND namespace = $2 ORDER BY failed_at, id",
        );
        c.rows("job errors", &sql, &[&u, &ns])
            .await?
            .iter()
            .map(|r| {
                Ok(JobError {
                    id: r.get::<_, Uuid>(0).hyphenated().to_string(),
                    job_id: r.get::<_, Uuid>(1).hyphenated().to_string(),
                    attempt: r.get::<_, i32>(2).max(0) as u32,
                    error: r.get(3),
                    failed_at: r.get(4),
                })
            })
            .collect()
    }

    async fn job_dag(&self, id: &JobId) -> Result<JobDag> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let c = self.conn().await?;
        let sql = self.sql(
            "WITH RECURSIVE g(id) AS ( \
                SELECT id FROM {S}.jobs WHERE namespace = $1 AND id = $2 \
                UNION \
                SELECT CASE WHEN d.depends_on = g.id THEN d.job_id ELSE d.depends_on END \
                FROM {S}.job_deps d JOIN g ON d.depends_on = g.id OR d.job_id = g.id WHERE d.namespace = $1) \
             SELECT g.id, j.task, j.status FROM g JOIN {S}.jobs j ON j.id = g.id ORDER BY g.id",
        );
        let mut dag = JobDag::default();
        let mut ids = BTreeSet::new();
        for r in c.rows("job graph", &sql, &[&ns, &u]).await? {
            let nid: Uuid = r.get(0);
            ids.insert(nid);
            dag.nodes.push(DagNode {
                id: nid.hyphenated().to_string(),
                task: r.get(1),
                status: status(r.get(2))?,
            });
        }
        if ids.is_empty() {
            return Err(Error::JobNotFound(id.clone()));
        }
        let ids: Vec<Uuid> = ids.into_iter().collect();
        let sql = self.sql(
            "SELECT depends_on, job_id FROM {S}.job_deps WHERE namespace = $1 AND job_id = ANY($2) AND depends_on = ANY($2)",
        );
        let mut edges: Vec<DagEdge> = c
            .rows("job graph", &sql, &[&ns, &ids])
            .await?
            .iter()
            .map(|r| DagEdge {
                from: r.get::<_, Uuid>(0).hyphenated().to_string(),
                to: r.get::<_, Uuid>(1).hyphenated().to_string(),
            })
            .collect();
        edges.sort();
        dag.edges = edges;
        Ok(dag)
    }

    async fn list_archived(&self, req: ListArchivedRequest) -> Result<Vec<Job>> {
        req.validate()?;
        let (limit, offset) = (i64::from(req.limit), i64_of("offset", req.offset)?);
        let sql = self.sql(&format!(
            "SELECT {JOB_COLS} FROM {{S}}.archived_jobs WHERE namespace = $1 \
             ORDER BY finished_at DESC, id DESC LIMIT $2 OFFSET $3"
        ));
        let params: Vec<Param> = vec![Box::new(self.ns.to_string()), Box::new(limit), Box::new(offset)];
        self.select_jobs("list archived jobs", &sql, &params).await
    }

    async fn list_archived_after(&self, req: ListArchivedAfterRequest) -> Result<Page<Job>> {
        req.validate()?;
        let (limit, lim) = (req.limit, i64::from(req.limit));
        let mut params: Vec<Param> = vec![Box::new(self.ns.to_string())];
        let mut cond = String::new();
        if let Some(a) = &req.after {
            let (key, id) = cursor_pos(a, "archived", 0)?;
            params.push(Box::new(key));
            params.push(Box::new(id));
            cond = " AND (finished_at, id) < ($2, $3)".to_string();
        }
        params.push(Box::new(lim + 1));
        let sql = self.sql(&format!(
            "SELECT {JOB_COLS} FROM {{S}}.archived_jobs WHERE namespace = $1{cond} \
             ORDER BY finished_at DESC, id DESC LIMIT ${}",
            params.len()
        ));
        let rows = self.select_jobs("list archived jobs", &sql, &params).await?;
        Ok(page_from_rows(rows, limit as usize, "archived", 0, |j| {
            (j.finished_at.unwrap_or(0), j.id.to_string())
        }))
    }
}
