//! The drain: faults off, the producer finishes, every worker shuts down as the runtime's does
//! (buffered jobs given back with a `Defer`, running ones finished and acked), and a clean
//! worker then claims and completes whatever is left, the clock moving past the lease window
//! each round so lapsed leases, back-offs, delays and suspensions all come due. A seed whose
//! jobs are not all terminal after [`DRAIN_ROUNDS`] rounds has jobs the queue cannot finish.

use flexiq_core::store::{
    Ack, AckKind, ClaimFairRequest, ClaimRequest, JobStore, ListJobsRequest, Workflows,
};
use flexiq_core::{JobFilter, JobStatus, Result, MAX_PAGE};

use super::scenario::STAGE_QUEUE;
use super::worker::Phase;
use super::world::World;

/// Rounds of the clean worker before a seed is declared stuck.
pub(crate) const DRAIN_ROUNDS: u32 = 40;

/// The clean worker's id.
const DRAINER: &str = "drainer";

impl World {
    pub(crate) async fn drain(&mut self) -> Result<()> {
        self.store.set_faults_enabled(false);
        self.note("faults off: drain".to_string());
        while !self.producer.done() {
            self.produce().await?;
        }
        for w in 0..self.workers.len() {
            self.shutdown_worker(w).await?;
        }
        for _ in 0..DRAIN_ROUNDS {
            self.step += 1;
            if self.open_jobs().await? == 0 {
                return Ok(());
            }
            self.clock.advance(self.sc.stale_after_ms as i64 + 1);
            if let Err(e) = self.rescuer.run_once().await {
                self.violation(format!("step {}: the rescuer failed with faults off: {e}", self.step));
            }
            while self.drain_once().await? > 0 {}
        }
        let open = self.open_jobs().await?;
        if open > 0 {
            let req = ListJobsRequest { filter: JobFilter::default(), limit: MAX_PAGE, offset: 0 };
            let stuck: Vec<String> = self
                .truth()
                .list_jobs(req)
                .await?
                .into_iter()
                .filter(|j| !j.status.is_terminal())
                .map(|j| format!("{} is {}", self.ledger.name(&j.id), j.status))
                .collect();
            let what = if stuck.is_empty() {
                format!("the stats count {open} jobs as not terminal, but every listed job is")
            } else {
                stuck.join("; ")
            };
            self.violation(format!("jobs are not terminal after {DRAIN_ROUNDS} clean drain rounds: {what}"));
        }
        Ok(())
    }

    /// Graceful shutdown of worker `w`: buffered jobs are given back, running handlers finish,
    /// and the outbox is written.
    async fn shutdown_worker(&mut self, w: usize) -> Result<()> {
        let now = self.now();
        let reason = format!("worker {} shut down before starting it", self.workers[w].id);
        let held: Vec<_> = self.workers[w].held.iter().map(|(id, h)| (id.clone(), h.clone())).collect();
        for (id, h) in held {
            match h.phase {
                Phase::Buffered => self.workers[w].outbox.push(Ack {
                    job_id: id,
                    fence: h.fence,
                    kind: AckKind::Defer { until: now, reason: reason.clone() },
                }),
                Phase::Running(_) => self.finish(w, &id, &h),
                Phase::Finished => {}
            }
        }
        self.flush_acks(w).await
    }

    /// Claims once from every queue (and once fairly from the stage queue) and completes what
    /// came back; returns how many jobs that was.
    async fn drain_once(&mut self) -> Result<usize> {
        let now = self.now();
        let req = ClaimRequest { queues: Vec::new(), limit: 100, worker_id: DRAINER.to_string(), now };
        let mut jobs = JobStore::claim(&*self.store, req).await?;
        let fair = ClaimFairRequest {
            queues: vec![STAGE_QUEUE.to_string()],
            serves: Vec::new(),
            workers: vec![DRAINER.to_string(); 16],
            group_cap: None,
            now,
        };
        jobs.extend(Workflows::claim_fair(&*self.store, fair).await?);
        if jobs.is_empty() {
            return Ok(0);
        }
        let labels = self.take_claimed(DRAINER, &jobs);
        self.note(format!("{DRAINER} claim -> [{labels}]"));
        let mut acks = Vec::with_capacity(jobs.len());
        for c in &jobs {
            self.ledger.executed(&c.job.id, c.fence, DRAINER, self.step);
            acks.push(Ack {
                job_id: c.job.id.clone(),
                fence: c.fence,
                kind: AckKind::Complete { result: None },
            });
        }
        if let Err(e) = self.checked_ack(DRAINER, &acks).await? {
            self.violation(format!("step {}: the drainer's ack failed with faults off: {e}", self.step));
        }
        Ok(jobs.len())
    }

    /// Jobs of the namespace that are not terminal.
    pub(crate) async fn open_jobs(&self) -> Result<u64> {
        let s = self.truth().stats(None).await?;
        Ok([JobStatus::Pending, JobStatus::Running, JobStatus::Suspended, JobStatus::Waiting]
            .iter()
            .map(|st| s.get(*st))
            .sum())
    }
}
