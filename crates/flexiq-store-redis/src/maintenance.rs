//! Maintenance, what the elected cleaner runs: archiving terminal jobs (`archive.lua`),
//! retention sweeps over the history tables (`retention.lua`), the published effective
//! retention and the worker registry (one JSON row per worker in `B:workers`; the jobs a listed
//! worker runs are read off the running jobs, not stored).

use std::collections::{BTreeMap, HashMap};

use flexiq_core::history::WorkerInfo;
use flexiq_core::options::validate_name;
use flexiq_core::retention::{EffectiveRetention, RetentionTable, RetentionWindows};
use flexiq_core::store::{ArchiveTerminalRequest, Maintenance, PruneWorkersRequest, RetentionRequest};
use flexiq_core::{Error, JobStatus, Result};

use crate::conn::{n, s};
use crate::keys::member_id;
use crate::row::{self, int, text};
use crate::store::RedisStore;

/// Jobs moved or deleted per script call, so no call blocks the server for long.
pub(crate) const ARCHIVE_BATCH: i64 = 500;

impl RedisStore {
    /// Counts (`mode` `count`) or deletes (`purge`) each table's rows older than its window.
    async fn retention(
        &self,
        windows: &RetentionWindows,
        now: i64,
        mode: &str,
    ) -> Result<BTreeMap<RetentionTable, u64>> {
        let mut out = BTreeMap::new();
        for t in RetentionTable::ALL {
            let Some(cutoff) = windows.cutoff(t, now) else { continue };
            let args = vec![s(t.key()), n(cutoff), s(mode)];
            let v = self.ctx.conn.script(&self.ctx.conn.scripts.retention, &self.ctx.keys.base, args).await?;
            out.insert(t, int(&v).unwrap_or(0).max(0) as u64);
        }
        Ok(out)
    }

    /// The ids of the running jobs per worker id stamped on them: the running listing index
    /// (bounded by the jobs running at once), each job's status read again with its worker.
    async fn running_by_worker(&self) -> Result<HashMap<String, Vec<String>>> {
        let index = self.ctx.keys.k(&format!("ix:s:{}", JobStatus::Running.code()));
        let ids: Vec<String> = row::strings(self.ctx.conn.cmd("ZRANGE", vec![s(index), n(0), n(-1)]).await?)
            .iter()
            .map(|m| member_id(m).to_string())
            .collect();
        let reads = ids.iter().map(|id| ("HMGET", vec![s(self.ctx.keys.job(id)), s("st"), s("w")])).collect();
        let running = JobStatus::Running.code().to_string();
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (id, v) in ids.into_iter().zip(self.ctx.conn.pipeline(reads).await?) {
            let f = v.into_array();
            if let (Some(st), Some(w)) = (f.first().and_then(text), f.get(1).and_then(text)) {
                if st == running {
                    out.entry(w).or_default().push(id);
                }
            }
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Maintenance for RedisStore {
    async fn archive_terminal(&self, req: ArchiveTerminalRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let ArchiveTerminalRequest { cutoff_ms: cutoff, limit, now } = req;
        let mut left = i64::from(limit);
        let mut total = 0;
        while left > 0 {
            let batch = left.min(ARCHIVE_BATCH);
            let args = vec![n(cutoff), n(batch), n(now), s("archive")];
            let done =
                int(&self.ctx.conn.script(&self.ctx.conn.scripts.archive, &self.ctx.keys.base, args).await?)
                    .unwrap_or(0);
            total += done as u64;
            left -= done;
            if done < batch {
                break;
            }
        }
        Ok(total)
    }

    async fn retention_counts(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.ctx.check()?;
        self.retention(&req.windows, req.now, "count").await
    }

    async fn retention_purge(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.ctx.check()?;
        self.retention(&req.windows, req.now, "purge").await
    }

    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()> {
        self.ctx.check()?;
        let json = serde_json::to_string(eff).map_err(Error::backend)?;
        self.ctx.conn.cmd("SET", vec![s(self.ctx.keys.k("effret")), s(json)]).await?;
        Ok(())
    }

    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("GET", vec![s(self.ctx.keys.k("effret"))]).await?;
        text(&v).map(|j| serde_json::from_str(&j).map_err(Error::backend)).transpose()
    }

    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()> {
        self.ctx.check()?;
        validate_name("worker id", &info.id)?;
        // What a worker runs is read off the jobs when listed, never taken from the worker.
        let stored = WorkerInfo { current_jobs: Vec::new(), ..info.clone() };
        let json = serde_json::to_string(&stored).map_err(Error::backend)?;
        self.ctx.conn.cmd("HSET", vec![s(self.ctx.keys.k("workers")), s(info.id.clone()), s(json)]).await?;
        Ok(())
    }

    async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("HVALS", vec![s(self.ctx.keys.k("workers"))]).await?;
        let mut out: Vec<WorkerInfo> = row::strings(v)
            .iter()
            .map(|j| serde_json::from_str(j).map_err(Error::backend))
            .collect::<Result<_>>()?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        let mut running = self.running_by_worker().await?;
        for w in &mut out {
            w.current_jobs = running.remove(&w.id).unwrap_or_default();
        }
        Ok(out)
    }

    async fn prune_workers(&self, req: PruneWorkersRequest) -> Result<u64> {
        self.ctx.check()?;
        let cutoff = req.cutoff_ms;
        let stale: Vec<String> = self
            .list_workers()
            .await?
            .into_iter()
            .filter(|w| w.heartbeat_at < cutoff)
            .map(|w| w.id)
            .collect();
        if stale.is_empty() {
            return Ok(0);
        }
        let mut args = vec![s(self.ctx.keys.k("workers"))];
        args.extend(stale.into_iter().map(s));
        Ok(int(&self.ctx.conn.cmd("HDEL", args).await?).unwrap_or(0) as u64)
    }
}
