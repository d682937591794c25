//! The [`Worker`]: runs registered handlers for claimed jobs.
//!
//! A worker claims in batches sized to its free slots plus a prefetch that follows its finish
//! rate, starts a buffered job the moment a slot frees, blocks on the store's `wait_for_work`
//! when there is nothing to do (a slow poll is only a safety net), renews leases in batched
//! heartbeats, writes acks in batches, and — when elected cleaner of its namespace — runs the
//! maintenance services. Every ack is fenced: a worker whose lease was lost gets
//! `Superseded` and never overwrites the attempt that replaced it.
//!
//! Buffered jobs cost nothing extra to start: the claim records no start, and each heartbeat
//! renews the buffered jobs without one (`renew_buffered`) and the started ones with one
//! (`heartbeat`). If the worker dies, a job it never started is released with its attempt
//! given back and no stall counted; one whose start a heartbeat reported stalls as before. A
//! job started less than a heartbeat interval before the worker died looks unstarted too, so
//! a job that kills its worker at once is spared only up to
//! [`UNSTARTED_RELEASE_LIMIT`](flexiq_core::transition::UNSTARTED_RELEASE_LIMIT) given-back
//! claims; after that its releases spend its queue's stall budget, which ends the loop.

mod acker;
mod config;
mod context;
mod counters;
mod execute;
mod handler;
mod heartbeat;
mod prefetch;
mod readiness;
mod run;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use flexiq_core::options::validate_name;
use flexiq_core::{Fence, JobId};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::observe::{serve_metrics, WorkerMetrics};
use crate::queue::Queue;

pub use config::{TaskOptions, WorkerConfig, MAX_CONCURRENCY, PREFETCH_PER_SLOT};
pub use context::{CancelReason, JobContext};
pub use counters::WorkerCounters;
pub use handler::{handler, Handler, HandlerError, HandlerFuture, HandlerResult};

use context::CancelState;
use counters::Counters;

/// A job the worker holds a lease on (buffered or running, until its ack is written).
pub(crate) struct ActiveJob {
    pub(crate) fence: Fence,
    pub(crate) cancel: Arc<CancelState>,
    /// Whether its handler was started: the next heartbeat reports the start to the store, so
    /// that if this worker dies the job is released as a stall rather than as never started.
    pub(crate) started: bool,
}

/// State shared by the worker's tasks.
pub(crate) struct Shared {
    pub(crate) queue: Queue,
    pub(crate) worker_id: String,
    pub(crate) config: WorkerConfig,
    pub(crate) handlers: HashMap<String, (Handler, TaskOptions)>,
    pub(crate) active: Mutex<HashMap<JobId, ActiveJob>>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) ready: readiness::ReadySender,
    /// In-process metrics, recorded only when the worker serves them (`metrics_bind`).
    pub(crate) metrics: Option<WorkerMetrics>,
}

/// A handler registry plus the configuration to run it; [`Worker::start`] or
/// [`Worker::run`] sets it going.
pub struct Worker {
    queue: Queue,
    config: WorkerConfig,
    worker_id: String,
    handlers: HashMap<String, (Handler, TaskOptions)>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("id", &self.worker_id).field("tasks", &self.tasks()).finish()
    }
}

impl Worker {
    /// A worker on `queue` (its namespace and store) with `config`, validated.
    pub fn new(queue: Queue, config: WorkerConfig) -> Result<Self> {
        config.validate()?;
        let worker_id = config.worker_id.clone().unwrap_or_else(default_worker_id);
        // Webhook deliveries are jobs any worker may claim, so every worker can run them.
        let builtin = (
            crate::webhooks::DELIVER_TASK.to_string(),
            (crate::webhooks::delivery_handler(), TaskOptions::default()),
        );
        Ok(Worker { queue, config, worker_id, handlers: HashMap::from([builtin]) })
    }

    /// This worker's id (stamped on claimed jobs and in the registry).
    pub fn id(&self) -> &str {
        &self.worker_id
    }

    /// Registers an async handler for `task` with default [`TaskOptions`]. Registering a task
    /// twice is `InvalidArgument`.
    pub fn register<F, Fut>(&mut self, task: &str, f: F) -> Result<&mut Self>
    where
        F: Fn(JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        self.register_handler(task, TaskOptions::default(), handler(f))
    }

    /// Registers an async handler for `task` with options (timeouts).
    pub fn register_with<F, Fut>(&mut self, task: &str, opts: TaskOptions, f: F) -> Result<&mut Self>
    where
        F: Fn(JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        self.register_handler(task, opts, handler(f))
    }

    /// Registers an already boxed [`Handler`] (what the bindings use).
    pub fn register_handler(&mut self, task: &str, opts: TaskOptions, h: Handler) -> Result<&mut Self> {
        validate_name("task name", task)?;
        opts.validate()?;
        if self.handlers.contains_key(task) {
            return Err(Error::invalid(format!(
                "task {task} is already registered on worker {}",
                self.worker_id
            )));
        }
        self.handlers.insert(task.to_string(), (h, opts));
        Ok(self)
    }

    /// The registered task names, sorted (the built-in webhook delivery task not included).
    pub fn tasks(&self) -> Vec<String> {
        let mut t: Vec<_> =
            self.handlers.keys().filter(|k| *k != crate::webhooks::DELIVER_TASK).cloned().collect();
        t.sort();
        t
    }

    /// Starts the worker on the current tokio runtime and returns a handle to watch and stop it.
    pub fn start(self) -> WorkerHandle {
        let shutdown = CancellationToken::new();
        let counters = Arc::new(Counters::default());
        let worker_id = self.worker_id.clone();
        let (ready_tx, ready) = readiness::channel();
        let metrics_addr = Arc::new(OnceLock::new());
        let join =
            tokio::spawn(self.run_with(shutdown.clone(), counters.clone(), ready_tx, metrics_addr.clone()));
        WorkerHandle { shutdown, join, counters, worker_id, ready, metrics_addr }
    }

    /// Runs until `shutdown` fires, then shuts down gracefully (see [`WorkerConfig::shutdown_timeout`]).
    pub async fn run(self, shutdown: CancellationToken) -> Result<WorkerCounters> {
        self.run_with(shutdown, Arc::new(Counters::default()), readiness::channel().0, Default::default())
            .await
    }

    async fn run_with(
        self,
        shutdown: CancellationToken,
        counters: Arc<Counters>,
        ready: readiness::ReadySender,
        metrics_addr: Arc<OnceLock<SocketAddr>>,
    ) -> Result<WorkerCounters> {
        let metrics = self.config.metrics_bind.map(|_| WorkerMetrics::new(self.worker_id.clone()));
        let shared = Arc::new(Shared {
            queue: self.queue,
            worker_id: self.worker_id,
            config: self.config,
            handlers: self.handlers,
            active: Mutex::new(HashMap::new()),
            counters,
            ready,
            metrics,
        });
        let server = match (shared.config.metrics_bind, &shared.metrics) {
            (Some(bind), Some(m)) => {
                match serve_metrics(bind, shared.queue.clone(), Some(m.clone()), Default::default()).await {
                    Ok(s) => {
                        let _ = metrics_addr.set(s.local_addr());
                        Some(s)
                    }
                    Err(e) => {
                        readiness::mark_stopped(&shared.ready);
                        return Err(e);
                    }
                }
            }
            _ => None,
        };
        let out = run::run(shared.clone(), shutdown).await;
        if let Some(s) = server {
            s.shutdown().await;
        }
        readiness::mark_stopped(&shared.ready);
        out
    }
}

/// A running worker.
#[derive(Debug)]
pub struct WorkerHandle {
    shutdown: CancellationToken,
    join: JoinHandle<Result<WorkerCounters>>,
    counters: Arc<Counters>,
    worker_id: String,
    ready: tokio::sync::watch::Receiver<readiness::Readiness>,
    metrics_addr: Arc<OnceLock<SocketAddr>>,
}

impl WorkerHandle {
    /// Resolves once the worker is live: registered in the worker registry and its first claim
    /// has reached the store, so a job enqueued from now on is picked up without waiting for a
    /// poll. `Closed` (naming the worker) when it stopped before getting there, for example
    /// because the store could not be reached.
    pub async fn ready(&self) -> Result<()> {
        readiness::wait_ready(self.ready.clone(), &self.worker_id).await
    }

    /// The address its `/metrics` endpoint listens on (the chosen port when `metrics_bind` asked
    /// for port 0); `None` without `metrics_bind`, or before [`WorkerHandle::ready`] resolved.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr.get().copied()
    }

    /// Whether the worker has stopped (shut down, or failed).
    pub fn is_finished(&self) -> bool {
        self.join.is_finished()
    }

    /// The worker's id.
    pub fn id(&self) -> &str {
        &self.worker_id
    }

    /// What the worker has done so far.
    pub fn counters(&self) -> WorkerCounters {
        self.counters.snapshot()
    }

    /// The token that stops the worker when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops claiming, lets running handlers finish within the shutdown timeout, gives the
    /// rest back, writes every pending ack and returns the final counters.
    pub async fn shutdown(self) -> Result<WorkerCounters> {
        self.shutdown.cancel();
        self.join().await
    }

    /// Waits for the worker to stop (after its token was cancelled elsewhere).
    pub async fn join(self) -> Result<WorkerCounters> {
        self.join.await.map_err(|e| {
            Error::Core(flexiq_core::Error::backend(format!("worker {} task failed: {e}", self.worker_id)))
        })?
    }
}

fn default_worker_id() -> String {
    let host = hostname();
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}-{}", std::process::id(), &suffix[..8])
}

/// The host name, from the environment or the kernel, else `"localhost"`.
pub(crate) fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_string()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
