//! Listings, counts and the job graph.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use flexiq_core::cursor::page_from_rows;
use flexiq_core::history::{DagEdge, DagNode};
use flexiq_core::store::{
    Inspect, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{Cursor, Error, Job, JobDag, JobError, JobFilter, JobId, JobStatus, Page, Result, Stats};

use crate::conn::s;
use crate::keys::{member, member_id, pad};
use crate::listing::{hgetall_many, Walk};
use crate::row::{self, int, text};
use crate::store::RedisStore;

impl RedisStore {
    fn job_walk(&self, filter: &JobFilter, before: Option<String>, skip: u64, want: usize) -> Walk<'_> {
        let k = &self.ctx.keys;
        let mut exact = !(filter.metadata_contains.is_some() || filter.error_contains.is_some());
        // The narrowest index covering the filter; only a queue and a task together (with or
        // without a status) leave the task to be checked in memory.
        let sources = if let Some(st) = filter.status {
            let code = st.code();
            if let Some(q) = &filter.queue {
                exact &= filter.task.is_none();
                vec![k.k(&format!("ix:sq:{code}:{q}"))]
            } else if let Some(t) = &filter.task {
                vec![k.k(&format!("ix:st:{code}:{t}"))]
            } else {
                vec![k.k(&format!("ix:s:{code}"))]
            }
        } else if let Some(q) = &filter.queue {
            exact &= filter.task.is_none();
            vec![k.k(&format!("ix:q:{q}"))]
        } else if let Some(t) = &filter.task {
            vec![k.k(&format!("ix:t:{t}"))]
        } else {
            JobStatus::ALL.iter().map(|st| k.k(&format!("ix:s:{}", st.code()))).collect()
        };
        let mut before = before;
        if let Some(b) = filter.created_before {
            let bound = pad(b);
            if before.as_ref().is_none_or(|m| *m > bound) {
                before = Some(bound);
            }
        }
        Walk {
            sources,
            before,
            from: filter.created_after.map(pad),
            exact,
            conn: &self.ctx.conn,
            skip,
            want,
            done: false,
        }
    }

    /// Walks jobs matching `filter`, newest first: skips `offset`, returns up to `want`.
    async fn walk_jobs(
        &self,
        filter: &JobFilter,
        before: Option<String>,
        offset: u64,
        want: usize,
    ) -> Result<Vec<Job>> {
        let mut walk = self.job_walk(filter, before, offset, want);
        let mut to_skip = if walk.exact { 0 } else { offset };
        let mut out = Vec::new();
        while let Some(ms) = walk.next().await? {
            let keys: Vec<String> = ms.iter().map(|m| self.ctx.keys.job(member_id(m))).collect();
            let vals = hgetall_many(&self.ctx.conn, keys).await?;
            for (m, v) in ms.iter().zip(vals) {
                let Some(job) = row::job_from_hash(&self.ctx.ns, member_id(m), v)? else { continue };
                if !filter.matches(&job) {
                    continue;
                }
                if to_skip > 0 {
                    to_skip -= 1;
                    continue;
                }
                out.push(job);
                if out.len() >= want {
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    async fn walk_archived(&self, before: Option<String>, offset: u64, want: usize) -> Result<Vec<Job>> {
        let mut walk = Walk::exact(&self.ctx.conn, self.ctx.keys.k("aix"), before, offset, want);
        let mut out = Vec::new();
        while let Some(ms) = walk.next().await? {
            let keys: Vec<String> = ms.iter().map(|m| self.ctx.keys.archived(member_id(m))).collect();
            for (m, v) in ms.iter().zip(hgetall_many(&self.ctx.conn, keys).await?) {
                if let Some(job) = row::job_from_hash(&self.ctx.ns, member_id(m), v)? {
                    out.push(job);
                }
            }
        }
        Ok(out)
    }

    async fn queue_stats(&self, queues: &[String]) -> Result<Vec<Stats>> {
        let cmds =
            queues.iter().map(|q| ("HGETALL", vec![s(self.ctx.keys.k(&format!("cnt:{q}")))])).collect();
        let replies = self.ctx.conn.pipeline(cmds).await?;
        replies
            .into_iter()
            .map(|v| {
                let mut stats = Stats::default();
                let flat = match v {
                    fred::types::Value::Map(m) => {
                        m.inner().into_iter().flat_map(|(k, v)| [fred::types::Value::from(k), v]).collect()
                    }
                    other => other.into_array(),
                };
                for pair in flat.chunks(2) {
                    let (Some(code), Some(c)) = (pair.first().and_then(text), pair.get(1).and_then(int))
                    else {
                        continue;
                    };
                    stats.add(row::status(&code)?, c.max(0) as u64);
                }
                Ok(stats)
            })
            .collect()
    }

    pub(crate) async fn known_queues(&self) -> Result<Vec<String>> {
        let mut qs = row::strings(self.ctx.conn.cmd("SMEMBERS", vec![s(self.ctx.keys.k("queues"))]).await?);
        qs.sort();
        Ok(qs)
    }

    async fn job_exists(&self, id: &str) -> Result<bool> {
        let v = self
            .ctx
            .conn
            .cmd("EXISTS", vec![s(self.ctx.keys.job(id)), s(self.ctx.keys.archived(id))])
            .await?;
        Ok(int(&v).unwrap_or(0) > 0)
    }
}

#[async_trait::async_trait]
impl Inspect for RedisStore {
    async fn list_jobs(&self, req: ListJobsRequest) -> Result<Vec<Job>> {
        self.ctx.check()?;
        req.validate()?;
        self.walk_jobs(&req.filter, None, req.offset, req.limit as usize).await
    }

    async fn list_jobs_after(&self, req: ListJobsAfterRequest) -> Result<Page<Job>> {
        self.ctx.check()?;
        req.validate()?;
        let limit = req.limit as usize;
        let fp = req.filter.fingerprint();
        let before = match &req.after {
            Some(c) => {
                let c = Cursor::decode(c, "jobs", fp)?;
                Some(member(c.sort_key, &c.id))
            }
            None => None,
        };
        let rows = self.walk_jobs(&req.filter, before, 0, limit + 1).await?;
        Ok(page_from_rows(rows, limit, "jobs", fp, |j| (j.created_at, j.id.to_string())))
    }

    async fn stats(&self, queue: Option<&str>) -> Result<Stats> {
        self.ctx.check()?;
        let queues = match queue {
            Some(q) => vec![q.to_string()],
            None => self.known_queues().await?,
        };
        let mut total = Stats::default();
        for st in self.queue_stats(&queues).await? {
            for s in JobStatus::ALL {
                total.add(s, st.get(s));
            }
        }
        Ok(total)
    }

    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        let all = self.stats_all_queues().await?;
        Ok(all.into_iter().filter(|(_, st)| st.total() > 0).collect())
    }

    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>> {
        self.ctx.check()?;
        let queues = self.known_queues().await?;
        let stats = self.queue_stats(&queues).await?;
        Ok(queues.into_iter().zip(stats).collect())
    }

    async fn count_pending(&self, queue: &str) -> Result<u64> {
        self.ctx.check()?;
        let pending = JobStatus::Pending.code().to_string();
        let v =
            self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.k(&format!("cnt:{queue}"))), s(pending)]).await?;
        Ok(int(&v).unwrap_or(0).max(0) as u64)
    }

    async fn job_status(&self, id: &JobId) -> Result<Option<JobStatus>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.job(id.as_str())), s("st")]).await?;
        text(&v).map(|st| row::status(&st)).transpose()
    }

    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>> {
        self.ctx.check()?;
        if !self.job_exists(id.as_str()).await? {
            return Err(Error::JobNotFound(id.clone()));
        }
        let v = self
            .ctx
            .conn
            .cmd("ZRANGE", vec![s(self.ctx.keys.k(&format!("err:{id}"))), s("0"), s("-1")])
            .await?;
        let mut rows: Vec<JobError> = row::strings(v)
            .iter()
            .map(|j| serde_json::from_str(j).map_err(Error::backend))
            .collect::<Result<_>>()?;
        rows.sort_by(|a, b| (a.failed_at, a.attempt, &a.id).cmp(&(b.failed_at, b.attempt, &b.id)));
        Ok(rows)
    }

    async fn job_dag(&self, id: &JobId) -> Result<JobDag> {
        self.ctx.check()?;
        let mut seen: HashSet<String> = HashSet::new();
        let mut queue = VecDeque::from([id.to_string()]);
        let mut nodes = Vec::new();
        let mut edges: BTreeSet<DagEdge> = BTreeSet::new();
        while let Some(cur) = queue.pop_front() {
            if !seen.insert(cur.clone()) {
                continue;
            }
            let k = &self.ctx.keys;
            let replies = self
                .ctx
                .conn
                .pipeline(vec![
                    ("HMGET", vec![s(k.job(&cur)), s("t"), s("st"), s("d")]),
                    ("HMGET", vec![s(k.archived(&cur)), s("t"), s("st"), s("d")]),
                    ("SMEMBERS", vec![s(k.k(&format!("dep:{cur}")))]),
                ])
                .await?;
            let mut it = replies.into_iter();
            let live = it.next().map(|v| v.into_array()).unwrap_or_default();
            let arch = it.next().map(|v| v.into_array()).unwrap_or_default();
            let f = if live.get(1).and_then(text).is_some() { live } else { arch };
            let Some(st) = f.get(1).and_then(text) else { continue };
            nodes.push(DagNode {
                id: cur.clone(),
                task: f.first().and_then(text).unwrap_or_default(),
                status: row::status(&st)?,
            });
            for d in f.get(2).and_then(text).unwrap_or_default().split(',').filter(|d| !d.is_empty()) {
                edges.insert(DagEdge { from: d.to_string(), to: cur.clone() });
                queue.push_back(d.to_string());
            }
            for child in row::strings(it.next().unwrap_or(fred::types::Value::Null)) {
                edges.insert(DagEdge { from: cur.clone(), to: child.clone() });
                queue.push_back(child);
            }
        }
        if nodes.is_empty() {
            return Err(Error::JobNotFound(id.clone()));
        }
        let known: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let edges = edges
            .into_iter()
            .filter(|e| known.contains(e.from.as_str()) && known.contains(e.to.as_str()))
            .collect();
        Ok(JobDag { nodes, edges })
    }

    async fn list_archived(&self, req: ListArchivedRequest) -> Result<Vec<Job>> {
        self.ctx.check()?;
        req.validate()?;
        self.walk_archived(None, req.offset, req.limit as usize).await
    }

    async fn list_archived_after(&self, req: ListArchivedAfterRequest) -> Result<Page<Job>> {
        self.ctx.check()?;
        req.validate()?;
        let limit = req.limit as usize;
        let before = match &req.after {
            Some(c) => {
                let c = Cursor::decode(c, "archived", 0)?;
                Some(member(c.sort_key, &c.id))
            }
            None => None,
        };
        let rows = self.walk_archived(before, 0, limit + 1).await?;
        Ok(page_from_rows(rows, limit, "archived", 0, |j| (j.finished_at.unwrap_or(0), j.id.to_string())))
    }
}
