//! `NativeWorker`: runs JS handlers for claimed jobs.
//!
//! The runtime's worker claims, heartbeats, times out and acks; this file only bridges a job
//! to JavaScript. Every task is registered with the same dispatch function (the JS layer
//! routes by task name): it is called through a thread-safe function with a
//! [`NativeJobContext`], without waiting for a return value, and once the user's handler has
//! returned or thrown the JS layer reports a [`HandlerOutcome`] through
//! [`NativeJobContext::settle`]. Awaiting a returned Promise from Rust would cost two new JS
//! functions and a thread-safe function per job; a plain method call costs neither.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::{
    CancellationToken, Handler, HandlerError, HandlerResult, JobContext, TaskOptions, Worker, WorkerConfig,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use parking_lot::Mutex;
use tokio::sync::{oneshot, watch};

use crate::args;
use crate::context::{AbortFn, NativeJobContext};
use crate::error::{invalid, to_napi, IntoNapi, Result};
use crate::queue::NativeQueue;

/// How a worker runs. Durations in **seconds** (fractions allowed).
#[napi(object)]
pub struct WorkerOptions {
    /// Handlers running at once (1 to 10,000; default 8).
    pub concurrency: Option<f64>,
    /// Queues to take jobs from (default: every queue of the namespace).
    pub queues: Option<Vec<String>>,
    /// The id stamped on claimed jobs (default: host, pid and a random suffix).
    pub worker_id: Option<String>,
    /// Jobs claimed beyond the free slots and held locally (default: sized by the worker's
    /// finish rate, about 5 ms of work, four to 64 per slot).
    pub prefetch: Option<f64>,
    /// Lease window (s): a job whose heartbeat is older is given back to another worker
    /// (default 30 s). Heartbeats go out every third of it.
    pub lease: Option<f64>,
    /// The longest wait for a wake-up before claiming anyway (s, default 1).
    pub poll_interval: Option<f64>,
    /// On `close()`, how long running handlers may take before their `ctx.signal` aborts and
    /// their jobs are given back (s, default 30).
    pub shutdown_timeout: Option<f64>,
    /// Whether this worker may be elected its namespace's cleaner and run retention,
    /// archival and stale-lease rescue (default `true`).
    pub maintenance: Option<bool>,
    /// How long (s) a finished job stays in the jobs table before the elected cleaner moves it
    /// to the archive (default 3,600 s; 0 archives at the next maintenance round, which runs
    /// when the worker starts and every 5 s).
    pub archive_after: Option<f64>,
    /// Newest events the elected cleaner keeps in the namespace's events stream (a whole
    /// number, 0 or more; default 10,000). Needs `maintenance`.
    pub events_max_len: Option<f64>,
    /// Events older than this many **milliseconds** are trimmed from the stream too (1,000 or
    /// more; default: no age limit). Needs `maintenance`.
    pub events_max_age_ms: Option<f64>,
    /// Serve Prometheus metrics at `GET /metrics` on this address while the worker runs: an
    /// IP and a port such as `"0.0.0.0:9100"` (port 0 picks a free one; see
    /// `worker.metricsAddr`). Default: no endpoint, and no worker metrics are recorded.
    pub metrics_bind: Option<String>,
}

impl WorkerOptions {
    fn resolve(self) -> Result<WorkerConfig> {
        let secs = |what: &str, v: f64| args::secs_to_ms(what, v).map(Duration::from_millis);
        let mut c = WorkerConfig::default();
        if let Some(n) = self.concurrency {
            c.concurrency =
                args::int("concurrency", n, 1, i64::from(flexiq_runtime::MAX_CONCURRENCY))? as u32;
        }
        if let Some(q) = self.queues {
            c.queues = q;
        }
        c.worker_id = self.worker_id;
        if let Some(n) = self.prefetch {
            c.prefetch =
                Some(args::int("prefetch", n, 0, i64::from(flexiq_runtime::MAX_CONCURRENCY))? as u32);
        }
        if self.maintenance == Some(false) {
            c.maintenance = None;
        }
        if let Some(a) = self.archive_after {
            let after = secs("archiveAfter", a)?;
            match &mut c.maintenance {
                Some(m) => m.archive.after = after,
                None => {
                    return Err(invalid(
                        "archiveAfter needs maintenance: a worker with maintenance false never archives",
                    ))
                }
            }
        }
        if self.events_max_len.is_some() || self.events_max_age_ms.is_some() {
            let Some(m) = &mut c.maintenance else {
                return Err(invalid(
                    "eventsMaxLen and eventsMaxAgeMs need maintenance: a worker with maintenance false never trims events",
                ));
            };
            if let Some(n) = self.events_max_len {
                m.events.max_len = args::non_negative("eventsMaxLen", n)? as u64;
            }
            if let Some(a) = self.events_max_age_ms {
                m.events.max_age = Some(Duration::from_millis(args::millis("eventsMaxAgeMs", a)?));
            }
        }
        if let Some(l) = self.lease {
            c = c.with_lease(secs("lease", l)?);
        }
        if let Some(p) = self.poll_interval {
            c.poll_interval = secs("pollInterval", p)?;
        }
        if let Some(s) = self.shutdown_timeout {
            c.shutdown_timeout = secs("shutdownTimeout", s)?;
        }
        if let Some(addr) = self.metrics_bind {
            c.metrics_bind = Some(addr.parse().map_err(|_| {
                invalid(format!(
                    "metricsBind {addr:?} is not an address to listen on: give an IP and a port such as 127.0.0.1:9100"
                ))
            })?);
        }
        c.validate().napi()?;
        Ok(c)
    }
}

/// One task a worker serves. Timeouts in **seconds**.
#[napi(object)]
pub struct TaskSpec {
    /// The task name.
    pub name: String,
    /// Hard timeout of an attempt when the job carries none: `ctx.signal` aborts with
    /// `TIMEOUT` and the attempt fails (retryable).
    pub timeout: Option<f64>,
    /// Soft timeout: when it passes, `ctx.signal` aborts with `SOFT_TIMEOUT` so the handler
    /// can wrap up; the attempt keeps running (until its hard timeout, if any).
    pub soft_timeout: Option<f64>,
}

impl TaskSpec {
    fn options(&self) -> Result<TaskOptions> {
        let secs = |what: &str, v: Option<f64>| {
            v.map(|s| args::secs_to_ms(what, s).map(Duration::from_millis)).transpose()
        };
        Ok(TaskOptions {
            timeout: secs("timeout", self.timeout)?,
            soft_timeout: secs("softTimeout", self.soft_timeout)?,
        })
    }
}

/// What a JS handler's attempt came to (built by the JS layer, never by user code).
#[napi(object)]
pub struct HandlerOutcome {
    /// Whether the handler resolved.
    pub ok: bool,
    /// Its return value as JSON text (absent for `undefined`).
    pub result: Option<String>,
    /// The thrown error's message and stack.
    pub error: Option<String>,
    /// `false` when the error said so (`err.retryable === false`): the job fails for good.
    pub retryable: Option<bool>,
}

/// The dispatch function: called with a job's context; the outcome comes back through
/// [`NativeJobContext::settle`].
type DispatchFn = ThreadsafeFunction<NativeJobContext, (), NativeJobContext, Status, false>;

fn outcome(o: HandlerOutcome) -> HandlerResult {
    if o.ok {
        return Ok(o.result.map(String::into_bytes));
    }
    let message = o.error.unwrap_or_else(|| "handler failed".to_string());
    Err(HandlerError { message, retryable: o.retryable.unwrap_or(true) })
}

fn js_handler(dispatch: Arc<DispatchFn>, abort: Arc<AbortFn>, tokens: Arc<AtomicU32>) -> Handler {
    Arc::new(move |ctx: JobContext| {
        let dispatch = dispatch.clone();
        let abort = abort.clone();
        let token = tokens.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let done = CancellationToken::new();
            // Stops the cancellation watcher however this attempt ends, dropped future included.
            let _settled = done.clone().drop_guard();
            let job_id = ctx.id().clone();
            let settled = Arc::new(AtomicBool::new(false));
            let (reply, outcome_rx) = oneshot::channel();
            let native = NativeJobContext {
                ctx,
                token,
                abort: Arc::downgrade(&abort),
                done,
                settled: settled.clone(),
                reply: Mutex::new(Some(reply)),
            };
            let status = dispatch.call(native, ThreadsafeFunctionCallMode::NonBlocking);
            if status != Status::Ok {
                return Err(HandlerError::retryable(format!(
                    "job {job_id}: cannot call the JS handler: {status}"
                )));
            }
            // The sender is dropped unsent only when the context never reached JS or was
            // collected without settling (the event loop shutting down).
            let result = outcome_rx.await;
            settled.store(true, Ordering::Release);
            match result {
                Ok(o) => outcome(o),
                Err(_) => Err(HandlerError::retryable(format!(
                    "job {job_id}: the JS handler never reported its outcome"
                ))),
            }
        })
    })
}

/// A `CLOSED` error about worker `id`.
fn stopped(id: &str, what: &str) -> napi::Error {
    to_napi(flexiq_runtime::Error::Core(flexiq_core::Error::Closed(format!("worker {id} {what}"))))
}

/// What `run` starts: the queue, the checked config and the tasks with their options.
type Pending = (flexiq_runtime::Queue, WorkerConfig, Vec<(String, TaskOptions)>);

/// How start-up ended: ready, or the encoded error of a worker that stopped first.
type Readiness = Option<std::result::Result<(), String>>;

/// A worker on a queue, built by `NativeQueue.createWorker` and started by `run`.
#[napi]
pub struct NativeWorker {
    worker: Mutex<Option<Pending>>,
    shutdown: CancellationToken,
    ready: watch::Sender<Readiness>,
    id: String,
    /// Where the running worker serves `/metrics`, once ready (with `metricsBind` only).
    metrics_addr: Mutex<Option<std::net::SocketAddr>>,
}

impl NativeWorker {
    /// Records how start-up ended; only the first outcome counts.
    fn set_ready(&self, outcome: std::result::Result<(), String>) {
        self.ready.send_if_modified(|r| {
            if r.is_none() {
                *r = Some(outcome);
                true
            } else {
                false
            }
        });
    }
}

#[napi]
impl NativeQueue {
    /// A worker for `tasks` with `options`, checked now and started by `run`.
    #[napi]
    pub fn create_worker(
        &self,
        options: Option<WorkerOptions>,
        tasks: Vec<TaskSpec>,
    ) -> Result<NativeWorker> {
        let q = self.queue()?;
        let config = options.map_or_else(|| Ok(WorkerConfig::default()), WorkerOptions::resolve)?;
        if tasks.is_empty() {
            return Err(invalid("a worker needs at least one task: register handlers with queue.task()"));
        }
        let tasks = tasks.iter().map(|t| Ok((t.name.clone(), t.options()?))).collect::<Result<Vec<_>>>()?;
        // Checks names and options exactly as `run` will, so a bad task fails here.
        let mut probe = Worker::new(q.clone(), config.clone()).napi()?;
        for (name, opts) in &tasks {
            probe.register_handler(name, *opts, flexiq_runtime::handler(|_| async { Ok(None) })).napi()?;
        }
        Ok(NativeWorker {
            id: probe.id().to_string(),
            worker: Mutex::new(Some((
                q,
                WorkerConfig { worker_id: Some(probe.id().to_string()), ..config },
                tasks,
            ))),
            shutdown: CancellationToken::new(),
            ready: watch::channel(None).0,
            metrics_addr: Mutex::new(None),
        })
    }
}

#[napi]
impl NativeWorker {
    /// The worker's id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Runs until `close()`: calls `dispatch(ctx)` for every claimed job (which reports the
    /// outcome with `ctx.settle`) and `abort(event)` when an attempt whose `ctx.signal` was
    /// read is told to stop. Resolves with the worker's counters once it has shut down.
    #[napi(ts_args_type = "dispatch: (ctx: NativeJobContext) => void, abort: (event: AbortEvent) => void")]
    pub async fn run(&self, dispatch: DispatchFn, abort: AbortFn) -> Result<WorkerStats> {
        let (q, config, tasks) = self
            .worker
            .lock()
            .take()
            .ok_or_else(|| invalid(format!("worker {} was already started", self.id)))?;
        let dispatch = Arc::new(dispatch);
        let abort = Arc::new(abort);
        let tokens = Arc::new(AtomicU32::new(1));
        let built = Worker::new(q, config).and_then(|mut worker| {
            for (name, opts) in &tasks {
                worker.register_handler(
                    name,
                    *opts,
                    js_handler(dispatch.clone(), abort.clone(), tokens.clone()),
                )?;
            }
            Ok(worker)
        });
        let worker = match built {
            Ok(w) => w,
            Err(e) => {
                let e = to_napi(e);
                self.set_ready(Err(e.reason.clone()));
                return Err(e);
            }
        };
        let handle = worker.start();
        let stop = handle.shutdown_token();
        let close = self.shutdown.clone();
        // `close()` may come at any point: before start-up ends, or while running.
        let forward = async move {
            close.cancelled().await;
            stop.cancel();
        };
        let run = async {
            let ready = handle.ready().await;
            *self.metrics_addr.lock() = handle.metrics_addr();
            self.set_ready(ready.map_err(|e| to_napi(e).reason.clone()));
            handle.join().await
        };
        tokio::pin!(run);
        let c = tokio::select! {
            out = &mut run => out,
            () = forward => run.await,
        }
        .napi()?;
        Ok(WorkerStats {
            claimed: c.claimed as f64,
            started: c.started as f64,
            succeeded: c.succeeded as f64,
            failed: c.failed as f64,
            cancelled: c.cancelled as f64,
            acknowledged: c.acknowledged as f64,
            superseded: c.superseded as f64,
            given_back: c.given_back as f64,
            ack_errors: c.ack_errors as f64,
        })
    }

    /// Resolves once the running worker is live: registered, and its first claim reached the
    /// store, so a job enqueued from now on is picked up without waiting for a poll. Rejects
    /// with `CLOSED` naming the worker when it stopped first (closed before `run`, a closed
    /// queue, an unreachable store). Pending until `run` or `close` is called.
    #[napi]
    pub async fn ready(&self) -> Result<()> {
        let mut rx = self.ready.subscribe();
        let outcome = match rx.wait_for(Option::is_some).await {
            Ok(r) => r.clone(),
            Err(_) => None,
        };
        match outcome {
            Some(Ok(())) => Ok(()),
            Some(Err(encoded)) => Err(napi::Error::new(Status::GenericFailure, encoded)),
            None => Err(stopped(&self.id, "stopped before it was ready")),
        }
    }

    /// Where the running worker serves `GET /metrics` (`"127.0.0.1:9100"`; the chosen port when
    /// `metricsBind` asked for port 0), once `ready()` resolved; `null` without `metricsBind`.
    #[napi(getter)]
    pub fn metrics_addr(&self) -> Option<String> {
        self.metrics_addr.lock().map(|a| a.to_string())
    }

    /// Whether `close()` was called.
    #[napi(getter)]
    pub fn closing(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Stops claiming and shuts the worker down gracefully; `run()` then resolves. A worker
    /// closed before `run` never starts: its `ready()` rejects with `CLOSED`.
    #[napi]
    pub fn close(&self) {
        self.shutdown.cancel();
        if self.worker.lock().is_some() {
            self.set_ready(Err(stopped(&self.id, "was closed before it ran").reason.clone()));
        }
    }
}

/// What a worker did while it ran.
#[napi(object)]
pub struct WorkerStats {
    /// Jobs claimed.
    pub claimed: f64,
    /// Handler runs started.
    pub started: f64,
    /// Attempts that succeeded.
    pub succeeded: f64,
    /// Attempts that failed (thrown error, timeout, unknown task).
    pub failed: f64,
    /// Attempts stopped on a cancel request (the job ended cancelled).
    pub cancelled: f64,
    /// Acks the store applied.
    pub acknowledged: f64,
    /// Acks refused because a newer attempt owns the job (nothing written).
    pub superseded: f64,
    /// Jobs handed back unfinished at shutdown.
    pub given_back: f64,
    /// Ack batches the store failed to write.
    pub ack_errors: f64,
}
