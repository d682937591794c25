//! The dead-letter queue: entries are JSON rows in one hash (`B:dlq`), listed through a
//! newest-first index over all entries (`B:dlix`) and one per task (`B:dlt:<task>`).
//!
//! A retry re-enqueues the entry's job as a new job and removes the entry in the same script,
//! except for a workflow stage: its (run, stage) pair holds one row, which stays (dead) beside
//! the entry, so `workflow.lua`'s `revive` makes that row pending again in place. An entry
//! keeps its job's workflow fields and group ([`DeadEntry`]) so that a stage whose row was
//! archived or deleted since is re-enqueued as a stage of its run, not as a plain job a plain
//! claimer would take.

use flexiq_core::cursor::page_from_rows;
use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
use flexiq_core::{Cursor, DeadJob, EnqueueOptions, Error, JobId, NewJob, Page, Result};
use fred::types::Value;
use serde::{Deserialize, Serialize};

use crate::conn::{n, s};
use crate::enqueue::{enqueue_args, run_enqueue};
use crate::keys::{member, member_id};
use crate::listing::Walk;
use crate::row::{int, text};
use crate::store::RedisStore;

/// A dead-letter entry as stored: the public row plus the dead job's group and workflow fields
/// (absent for a plain job, and in entries written before they were kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DeadEntry {
    #[serde(flatten)]
    pub(crate) job: DeadJob,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) group_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) workflow_run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) workflow_stage_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) workflow_version: Option<String>,
}

impl DeadEntry {
    /// The job a retry enqueues when it does not revive a stage in place: the entry's task,
    /// payload, queue and metadata, and its run, stage, version and group when it has a run.
    fn new_job(&self, now: i64) -> Result<NewJob> {
        let d = &self.job;
        let mut opts = EnqueueOptions {
            queue: Some(d.queue.clone()),
            metadata: d.metadata.clone(),
            ..Default::default()
        };
        if self.workflow_run_id.is_some() && self.workflow_stage_id.is_some() {
            opts.workflow_run_id = self.workflow_run_id.clone();
            opts.workflow_stage_id = self.workflow_stage_id.clone();
            opts.workflow_version = self.workflow_version.clone();
            opts.group_key = self.group_key.clone();
        }
        NewJob::build(&d.task_name, d.payload.clone(), opts, now)
    }
}

impl RedisStore {
    async fn dead_walk(
        &self,
        task: Option<&str>,
        before: Option<String>,
        offset: u64,
        want: usize,
    ) -> Result<Vec<DeadJob>> {
        let key = match task {
            Some(t) => self.ctx.keys.k(&format!("dlt:{t}")),
            None => self.ctx.keys.k("dlix"),
        };
        let mut walk = Walk::exact(&self.ctx.conn, key, before, offset, want);
        let mut out = Vec::new();
        while let Some(ms) = walk.next().await? {
            if ms.is_empty() {
                continue;
            }
            let mut args = vec![s(self.ctx.keys.k("dlq"))];
            args.extend(ms.iter().map(|m| s(member_id(m))));
            for v in self.ctx.conn.cmd("HMGET", args).await?.into_array() {
                if let Some(j) = text(&v) {
                    out.push(serde_json::from_str::<DeadJob>(&j).map_err(Error::backend)?);
                }
            }
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl DeadLetters for RedisStore {
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>> {
        self.ctx.check()?;
        req.validate()?;
        self.dead_walk(req.task.as_deref(), None, req.offset, req.limit as usize).await
    }

    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>> {
        self.ctx.check()?;
        req.validate()?;
        let limit = req.limit as usize;
        let before = match &req.after {
            Some(c) => {
                let c = Cursor::decode(c, "dead_letters", 0)?;
                Some(member(c.sort_key, &c.id))
            }
            None => None,
        };
        let rows = self.dead_walk(None, before, 0, limit + 1).await?;
        Ok(page_from_rows(rows, limit, "dead_letters", 0, |d| (d.failed_at, d.id.clone())))
    }

    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId> {
        self.ctx.check()?;
        let RetryDeadRequest { dead_id, now } = req;
        let not_found = || Error::NotFound { what: "dead letter", id: dead_id.clone() };
        let v = self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.k("dlq")), s(dead_id.as_str())]).await?;
        let entry: DeadEntry =
            serde_json::from_str(&text(&v).ok_or_else(not_found)?).map_err(Error::backend)?;
        let dead = &entry.job;
        let revive = vec![s("revive"), n(now), s(dead_id.as_str()), s(dead.original_job_id.as_str())];
        match self.workflow_op(revive).await? {
            Value::Integer(0) => {}
            v => {
                let id = text(&v).ok_or_else(|| crate::error::shape("revived stage"))?;
                self.changed();
                return Ok(JobId::from_trusted(id));
            }
        }
        let job = entry.new_job(now)?;
        let m = member(dead.failed_at, &dead.id);
        let args = enqueue_args(std::slice::from_ref(&job), None, now, Some((&dead_id, &m, &dead.task_name)));
        let out = run_enqueue(&self.ctx, args).await?;
        out.into_iter().next().map(|e| e.id).ok_or_else(not_found)
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        self.ctx.check()?;
        Ok(self.small_op(vec![s("delete_dead"), s(dead_id)]).await? == 1)
    }

    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .script(
                &self.ctx.conn.scripts.retention,
                &self.ctx.keys.base,
                vec![s("dead_letter"), n(req.cutoff_ms), s("purge")],
            )
            .await?;
        Ok(int(&v).unwrap_or(0) as u64)
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        self.ctx.check()?;
        Ok(self.small_op(vec![s("purge_dead_task"), s(task)]).await? as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> DeadJob {
        DeadJob {
            id: "d1".into(),
            original_job_id: "j1".into(),
            queue: "q".into(),
            task_name: "t".into(),
            payload: vec![0, 255, 7],
            error: Some("boom".into()),
            retry_count: 1,
            failed_at: 5,
            metadata: None,
        }
    }

    /// Entries written before the workflow fields were kept read as entries without them,
    /// and readers of the public row skip the fields they do not know.
    #[test]
    fn entries_with_and_without_workflow_fields_read_both_ways() {
        let old = serde_json::to_string(&entry()).unwrap();
        let read: DeadEntry = serde_json::from_str(&old).unwrap();
        assert_eq!(read.job, entry());
        assert!(read.workflow_run_id.is_none() && read.group_key.is_none());
        let stage = DeadEntry {
            job: entry(),
            group_key: Some("g".into()),
            workflow_run_id: Some("r".into()),
            workflow_stage_id: Some("s".into()),
            workflow_version: None,
        };
        let json = serde_json::to_string(&stage).unwrap();
        assert!(!json.contains("workflow_version"), "{json}");
        assert_eq!(serde_json::from_str::<DeadEntry>(&json).unwrap(), stage);
        assert_eq!(serde_json::from_str::<DeadJob>(&json).unwrap(), entry());
        let job = stage.new_job(9).unwrap();
        assert_eq!(
            (job.workflow_run_id.as_deref(), job.workflow_stage_id.as_deref()),
            (Some("r"), Some("s"))
        );
        assert_eq!((job.group_key.as_deref(), job.queue.as_str(), job.run_at), (Some("g"), "q", 9));
        let plain = DeadEntry { workflow_run_id: None, ..stage }.new_job(9).unwrap();
        assert!(plain.workflow_stage_id.is_none() && plain.group_key.is_none(), "a plain retry as before");
    }
}
