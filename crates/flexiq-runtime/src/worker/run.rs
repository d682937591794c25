//! The dispatch loop and graceful shutdown.
//!
//! One loop owns the slots: it starts buffered jobs while slots are free, claims when the
//! local buffer runs low (sized to free slots plus the prefetch), and otherwise waits for a
//! finished job, a wake-up from the store, or shutdown. Finished jobs free their slot through
//! a channel, so the next buffered job starts at once rather than on a timer.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use flexiq_core::store::{Ack, AckKind, ClaimRequest, WaitForWorkRequest};
use flexiq_core::{ClaimedJob, ErrorKind, WorkerInfo};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::acker::run_acker;
use super::context::{CancelReason, CancelState};
use super::counters::{Counters, WorkerCounters};
use super::execute::execute;
use super::heartbeat::{beat, run_heartbeats};
use super::prefetch::Prefetch;
use super::{hostname, ActiveJob, Shared};
use crate::error::Result;
use crate::services::run_maintenance;

struct Dispatcher {
    shared: Arc<Shared>,
    buffer: VecDeque<(ClaimedJob, Arc<CancelState>)>,
    inflight: u32,
    prefetch: Prefetch,
    ack_tx: mpsc::UnboundedSender<Ack>,
    done_tx: mpsc::UnboundedSender<()>,
    done_rx: mpsc::UnboundedReceiver<()>,
    kill: CancellationToken,
}

pub(crate) async fn run(shared: Arc<Shared>, shutdown: CancellationToken) -> Result<WorkerCounters> {
    let cfg = &shared.config;
    let now = shared.queue.now_ms();
    let info = WorkerInfo {
        id: shared.worker_id.clone(),
        queues: cfg.queues.clone(),
        concurrency: cfg.concurrency,
        host: hostname(),
        pid: std::process::id(),
        started_at: now,
        heartbeat_at: now,
        current_jobs: Vec::new(),
    };
    shared.queue.store().worker_heartbeat(&info).await?;
    tracing::info!(worker_id = %shared.worker_id, concurrency = cfg.concurrency, queues = ?cfg.queues, "worker started");

    let (ack_tx, ack_rx) = mpsc::unbounded_channel();
    let acker = tokio::spawn(run_acker(shared.clone(), ack_rx));
    let stop_background = CancellationToken::new();
    let heartbeats = tokio::spawn(run_heartbeats(shared.clone(), info.clone(), stop_background.clone()));
    let maintenance = cfg.maintenance.clone().map(|m| {
        tokio::spawn(run_maintenance(
            shared.queue.clone(),
            m,
            shared.worker_id.clone(),
            stop_background.clone(),
        ))
    });

    let webhooks = cfg.maintenance.clone().map(|m| {
        let (queue, holder, stop) = (shared.queue.clone(), shared.worker_id.clone(), stop_background.clone());
        tokio::spawn(crate::webhooks::run_dispatcher(queue, m, holder, stop))
    });

    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut d = Dispatcher {
        shared: shared.clone(),
        buffer: VecDeque::new(),
        inflight: 0,
        prefetch: Prefetch::new(&shared.config, Instant::now()),
        ack_tx,
        done_tx,
        done_rx,
        kill: CancellationToken::new(),
    };
    d.dispatch(&shutdown).await;
    d.drain().await;
    drop(d);
    let _ = acker.await;
    stop_background.cancel();
    let _ = heartbeats.await;
    if let Some(m) = maintenance {
        let _ = m.await;
    }
    if let Some(w) = webhooks {
        let _ = w.await;
    }
    beat(&shared, &info).await;
    let counters = shared.counters.snapshot();
    tracing::info!(worker_id = %shared.worker_id, ?counters, "worker stopped");
    Ok(counters)
}

impl Dispatcher {
    fn start_buffered(&mut self) {
        if self.inflight >= self.shared.config.concurrency || self.buffer.is_empty() {
            return;
        }
        let mut active = self.shared.active.lock();
        while self.inflight < self.shared.config.concurrency {
            let Some((job, cancel)) = self.buffer.pop_front() else { break };
            if let Some(a) = active.get_mut(&job.job.id) {
                a.started = true;
            }
            self.inflight += 1;
            let (shared, ack_tx, done_tx, kill) =
                (self.shared.clone(), self.ack_tx.clone(), self.done_tx.clone(), self.kill.clone());
            tokio::spawn(async move {
                let ack = execute(shared, job, cancel, kill).await;
                let _ = ack_tx.send(ack);
                let _ = done_tx.send(());
            });
        }
    }

    fn free(&self) -> u32 {
        (self.shared.config.concurrency + self.prefetch.get())
            .saturating_sub(self.inflight + self.buffer.len() as u32)
    }

    fn finished(&mut self, first: Option<()>) {
        let mut n = u32::from(first.is_some());
        while self.done_rx.try_recv().is_ok() {
            n += 1;
        }
        self.inflight -= n;
        self.prefetch.finished(u64::from(n));
    }

    async fn claim(&mut self, limit: u32) -> flexiq_core::Result<usize> {
        let shared = &self.shared;
        let jobs = shared
            .queue
            .store()
            .claim(ClaimRequest {
                queues: shared.config.queues.clone(),
                limit,
                worker_id: shared.worker_id.clone(),
                now: shared.queue.now_ms(),
            })
            .await?;
        let n = jobs.len();
        if n > 0 {
            tracing::debug!(worker_id = %shared.worker_id, count = n, limit, "claimed");
            Counters::add(&shared.counters.claimed, n as u64);
            if let Some(m) = &shared.metrics {
                m.claimed(n);
            }
            let mut active = shared.active.lock();
            for job in jobs {
                let cancel = Arc::new(CancelState::default());
                let entry = ActiveJob { fence: job.fence, cancel: cancel.clone(), started: false };
                active.insert(job.job.id.clone(), entry);
                self.buffer.push_back((job, cancel));
            }
        }
        Ok(n)
    }

    async fn dispatch(&mut self, shutdown: &CancellationToken) {
        let cfg = self.shared.config.clone();
        let poll_ms = u64::try_from(cfg.poll_interval.as_millis()).unwrap_or(u64::MAX);
        let mut maybe_more = true;
        loop {
            self.start_buffered();
            if shutdown.is_cancelled() {
                return;
            }
            self.prefetch.update(Instant::now());
            let free = self.free();
            let low_water = (self.prefetch.get() / 2) as usize;
            if maybe_more && free > 0 && self.buffer.len() <= low_water {
                // One claim returns at most a page; a worker with more free room claims again.
                let limit = free.min(flexiq_core::MAX_PAGE);
                match self.claim(limit).await {
                    Ok(n) => {
                        super::readiness::mark_ready(&self.shared.ready);
                        maybe_more = n as u32 == limit;
                        if n > 0 {
                            continue;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Closed => {
                        tracing::error!(error = %e, "store closed: worker stopping");
                        return;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "claim failed");
                        tokio::select! {
                            _ = shutdown.cancelled() => return,
                            _ = tokio::time::sleep(cfg.poll_interval) => {}
                        }
                        continue;
                    }
                }
            }
            let idle = free > 0 && !maybe_more;
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return,
                first = self.done_rx.recv() => {
                    self.finished(first);
                }
                woke = self.shared.queue.store().wait_for_work(WaitForWorkRequest { queues: cfg.queues.clone(), timeout_ms: poll_ms }), if idle => {
                    if let Err(e) = woke {
                        tracing::warn!(error = %e, "wait for work failed");
                        tokio::time::sleep(cfg.poll_interval).await;
                    }
                    maybe_more = true;
                }
            }
        }
    }

    /// Graceful shutdown: buffered jobs go back at once; running ones get the shutdown
    /// timeout, then their handlers are dropped and their jobs given back too.
    async fn drain(&mut self) {
        let shared = self.shared.clone();
        let now = shared.queue.now_ms();
        let reason = format!("worker {} shut down before starting it", shared.worker_id);
        for (job, _) in self.buffer.drain(..) {
            Counters::add(&shared.counters.given_back, 1);
            let _ = self.ack_tx.send(Ack {
                job_id: job.job.id,
                fence: job.fence,
                kind: AckKind::Defer { until: now, reason: reason.clone() },
            });
        }
        tracing::info!(worker_id = %shared.worker_id, running = self.inflight, "worker shutting down");
        let deadline = tokio::time::sleep(shared.config.shutdown_timeout);
        tokio::pin!(deadline);
        while self.inflight > 0 {
            tokio::select! {
                first = self.done_rx.recv() => self.finished(first),
                _ = &mut deadline, if !self.kill.is_cancelled() => {
                    tracing::warn!(worker_id = %shared.worker_id, running = self.inflight, "shutdown deadline passed: giving running jobs back");
                    for a in shared.active.lock().values() {
                        a.cancel.cancel(CancelReason::Shutdown);
                    }
                    self.kill.cancel();
                }
            }
        }
    }
}
