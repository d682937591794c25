//! `NativeWorker`: runs the runtime's [`Worker`] with Python handlers.
//!
//! Every registered task gets the same Rust handler: it moves to a Python handler thread
//! (so a slow synchronous handler never stalls the async runtime; see `handler_threads`),
//! takes the GIL and calls the Python dispatcher with a `NativeJobContext`. The dispatcher answers
//! `(ok, result_bytes, error_text, retryable)`; retries, backoff and dead-lettering are the
//! engine's. While the worker runs, the calling thread checks for Python signals ten times
//! a second, so SIGINT / SIGTERM start a graceful shutdown.
//!
//! `run` starts the runtime worker and records when it is ready (registered, first claim at
//! the store: [`flexiq_runtime::WorkerHandle::ready`]) or stopped, so another thread can
//! block in `wait_ready` until then; this is what makes Python's `Worker.start()` return
//! only once jobs are being taken, and raise at once when the worker could not start.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flexiq_core::Error as CoreError;
use flexiq_runtime::services::EventTrimConfig;
use flexiq_runtime::{
    handler, CancellationToken, Error, HandlerError, HandlerResult, JobContext, TaskOptions, Worker,
    WorkerConfig,
};
use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args;
use crate::context::NativeJobContext;
use crate::errors::{invalid, to_py_err};
use crate::handler_threads::HandlerThreads;
use crate::queue::millis;
use crate::queue::NativeQueue;
use crate::runtime::runtime;

/// How often the running worker looks for Python signals (ms).
const SIGNAL_CHECK_MS: u64 = 100;

/// One task to register: `(name, hard timeout ms, soft timeout ms)`.
type TaskSpec = (String, Option<u64>, Option<u64>);

/// Where a worker is in its one run.
#[derive(Debug, Default)]
struct Phase {
    /// `run` was called.
    ran: bool,
    /// Readiness was decided: `ready` holds the answer.
    settled: bool,
    /// The worker became ready (registered, first claim at the store).
    ready: bool,
    /// `run` has returned.
    stopped: bool,
    /// Where the worker serves `/metrics`, once ready (with `metrics_bind` only).
    metrics_addr: Option<SocketAddr>,
}

/// The phase, and a condition variable `wait_ready` sleeps on.
#[derive(Debug, Default)]
struct Readiness {
    phase: Mutex<Phase>,
    changed: Condvar,
}

impl Readiness {
    fn update(&self, f: impl FnOnce(&mut Phase)) {
        f(&mut self.phase.lock());
        self.changed.notify_all();
    }
}

/// A worker configured from Python; `run` blocks until `stop` or a signal.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct NativeWorker {
    queue: flexiq_runtime::Queue,
    config: WorkerConfig,
    worker_id: String,
    tasks: Vec<(String, TaskOptions)>,
    dispatch: Arc<Py<PyAny>>,
    shutdown: CancellationToken,
    counters: Mutex<Option<flexiq_runtime::WorkerCounters>>,
    readiness: Arc<Readiness>,
}

/// Calls the dispatcher and turns its answer into a handler result.
fn dispatch(py: Python<'_>, dispatcher: &Py<PyAny>, ctx: JobContext) -> HandlerResult {
    let done = CancellationToken::new();
    let answer = Py::new(py, NativeJobContext { ctx, done: done.clone() })
        .and_then(|c| dispatcher.call1(py, (c,)))
        .and_then(|r| r.extract::<(bool, Option<Vec<u8>>, Option<String>, bool)>(py));
    // The attempt is over for the handler: soft-timeout waits and callbacks end with it.
    done.cancel();
    match answer {
        Ok((true, data, _, _)) => Ok(data),
        Ok((false, _, error, retryable)) => {
            let message = error.unwrap_or_else(|| "handler failed".to_string());
            Err(HandlerError { message, retryable })
        }
        Err(e) => Err(HandlerError::retryable(format!("python dispatcher failed: {e}"))),
    }
}

/// The `metrics_bind` address: an IP and a port (`127.0.0.1:9100`, `[::1]:0`).
fn metrics_bind(addr: &str) -> PyResult<SocketAddr> {
    addr.parse().map_err(|_| {
        invalid(format!(
            "metrics_bind {addr:?} is not an address to listen on: give an IP and a port such as 127.0.0.1:9100"
        ))
    })
}

/// The cleaner's events trim with the worker's overrides (checked by `config.validate()`).
fn events_trim(trim: &mut EventTrimConfig, max_len: Option<i64>, max_age_ms: Option<u64>) -> PyResult<()> {
    if let Some(n) = max_len {
        trim.max_len =
            u64::try_from(n).map_err(|_| invalid(format!("events_max_len {n} must not be negative")))?;
    }
    if let Some(age) = millis(max_age_ms) {
        trim.max_age = Some(age);
    }
    Ok(())
}

#[pymethods]
impl NativeWorker {
    /// A worker on `queue` running `tasks` through `dispatcher`. `concurrency` handlers run
    /// at once; `queues` empty means every queue; `shutdown_timeout_ms` is how long running
    /// handlers may finish on shutdown (default 30 s); `lease_ms` is the job lease window; `prefetch` jobs
    /// are claimed beyond the free slots. When elected cleaner, it trims the events stream to
    /// the newest `events_max_len` events (default 10,000) and, with `events_max_age_ms`
    /// (1,000 ms or more), to those younger than that; both need `maintenance`. With
    /// `metrics_bind` (an IP and a port; port 0 picks one) it serves Prometheus metrics at
    /// `GET /metrics` there while it runs.
    #[new]
    #[pyo3(signature = (queue, dispatcher, tasks, *, concurrency=8, queues=None, shutdown_timeout_ms=None, worker_id=None, lease_ms=None, maintenance=true, prefetch=None, events_max_len=None, events_max_age_ms=None, metrics_bind=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        queue: &NativeQueue,
        dispatcher: Py<PyAny>,
        tasks: Vec<TaskSpec>,
        #[pyo3(from_py_with = args::concurrency)] concurrency: i64,
        #[pyo3(from_py_with = args::queues)] queues: Option<Vec<String>>,
        #[pyo3(from_py_with = args::shutdown_timeout_ms)] shutdown_timeout_ms: Option<u64>,
        #[pyo3(from_py_with = args::worker_id)] worker_id: Option<String>,
        #[pyo3(from_py_with = args::lease_ms)] lease_ms: Option<u64>,
        #[pyo3(from_py_with = args::maintenance)] maintenance: bool,
        #[pyo3(from_py_with = args::prefetch)] prefetch: Option<i64>,
        #[pyo3(from_py_with = args::events_max_len)] events_max_len: Option<i64>,
        #[pyo3(from_py_with = args::events_max_age_ms)] events_max_age_ms: Option<u64>,
        #[pyo3(from_py_with = args::metrics_bind)] metrics_bind: Option<String>,
    ) -> PyResult<Self> {
        let concurrency = u32::try_from(concurrency)
            .map_err(|_| invalid(format!("concurrency {concurrency} must be between 1 and 10000")))?;
        let mut config =
            WorkerConfig { worker_id, concurrency, queues: queues.unwrap_or_default(), ..Default::default() };
        if let Some(d) = millis(shutdown_timeout_ms) {
            config.shutdown_timeout = d;
        }
        if let Some(p) = prefetch {
            config.prefetch =
                Some(u32::try_from(p).map_err(|_| invalid(format!("prefetch {p} must be 0 or more")))?);
        }
        if !maintenance {
            if events_max_len.is_some() || events_max_age_ms.is_some() {
                return Err(invalid(
                    "events_max_len and events_max_age need maintenance: a worker without it trims nothing",
                ));
            }
            config.maintenance = None;
        }
        if let Some(m) = config.maintenance.as_mut() {
            events_trim(&mut m.events, events_max_len, events_max_age_ms)?;
        }
        if let Some(lease) = millis(lease_ms) {
            config = config.with_lease(lease);
        }
        config.metrics_bind = metrics_bind.as_deref().map(self::metrics_bind).transpose()?;
        config.validate().map_err(to_py_err)?;
        // Fix the id now (the runtime picks a default one), so Python can name the worker
        // before it runs.
        let worker_id = Worker::new(queue.inner.clone(), config.clone()).map_err(to_py_err)?.id().to_string();
        config.worker_id = Some(worker_id.clone());
        let mut specs = Vec::with_capacity(tasks.len());
        for (name, timeout, soft_timeout) in tasks {
            let opts = TaskOptions { timeout: millis(timeout), soft_timeout: millis(soft_timeout) };
            opts.validate().map_err(to_py_err)?;
            specs.push((name, opts));
        }
        Ok(NativeWorker {
            queue: queue.inner.clone(),
            config,
            worker_id,
            tasks: specs,
            dispatch: Arc::new(dispatcher),
            shutdown: CancellationToken::new(),
            counters: Mutex::new(None),
            readiness: Arc::new(Readiness::default()),
        })
    }

    /// Runs until `stop()` or a signal, then shuts down gracefully; returns the counters.
    /// A signal handler's exception (KeyboardInterrupt, ...) is re-raised after the shutdown.
    /// A worker runs once: a second `run` is `Conflict`.
    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        {
            let mut phase = self.readiness.phase.lock();
            if phase.ran {
                return Err(to_py_err(Error::Core(CoreError::Conflict(format!(
                    "worker {} already ran: build a new worker to run again",
                    self.worker_id
                )))));
            }
            phase.ran = true;
        }
        let out = self.run_to_end(py);
        self.readiness.update(|p| {
            p.settled = true;
            p.stopped = true;
        });
        let counters = out?;
        counters_dict(py, &counters)
    }

    /// Blocks (GIL released, signals checked) until the worker is ready: `True`; or until
    /// it stopped without becoming ready: `False` (its `run` raises why). `timeout_ms` is in
    /// ms (`None`: no limit); running out of it raises `FlexiqTimeout`.
    #[pyo3(signature = (timeout_ms=None))]
    fn wait_ready(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::timeout_ms)] timeout_ms: Option<u64>,
    ) -> PyResult<bool> {
        let deadline = millis(timeout_ms).map(|d| Instant::now() + d);
        loop {
            let slice = Duration::from_millis(SIGNAL_CHECK_MS);
            let slice = deadline.map_or(slice, |d| slice.min(d.saturating_duration_since(Instant::now())));
            let settled = py.detach(|| {
                let mut phase = self.readiness.phase.lock();
                if !phase.settled {
                    self.readiness.changed.wait_for(&mut phase, slice);
                }
                phase.settled.then_some(phase.ready)
            });
            if let Some(ready) = settled {
                return Ok(ready);
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(to_py_err(Error::Core(CoreError::Timeout(format!(
                    "worker {} was not ready within {} s",
                    self.worker_id,
                    timeout_ms.unwrap_or_default() as f64 / 1000.0
                )))));
            }
        }
    }

    /// Whether the worker is running and ready (registered, claiming).
    #[getter]
    fn ready(&self) -> bool {
        let phase = self.readiness.phase.lock();
        phase.ready && !phase.stopped
    }

    /// Where the running worker serves `/metrics` (`"127.0.0.1:9100"`; the chosen port when
    /// `metrics_bind` asked for port 0), once it is ready; `None` without `metrics_bind`.
    #[getter]
    fn metrics_addr(&self) -> Option<String> {
        self.readiness.phase.lock().metrics_addr.map(|a| a.to_string())
    }

    /// The worker's id (in the worker registry and on the jobs it claims).
    #[getter]
    fn id(&self) -> &str {
        &self.worker_id
    }

    /// Asks a running worker to stop (from any thread); `run` returns once it has.
    fn stop(&self) {
        self.shutdown.cancel();
    }

    /// Whether `stop` was called.
    #[getter]
    fn stopping(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// The final counters once `run` has returned, else `None`.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let c = *self.counters.lock();
        c.map(|c| counters_dict(py, &c)).transpose()
    }
}

impl NativeWorker {
    /// Starts the runtime worker with every task registered, records its readiness, and
    /// waits for it to stop (on `stop()`, a signal, or a failure such as a closed store).
    fn run_to_end(&self, py: Python<'_>) -> PyResult<flexiq_runtime::WorkerCounters> {
        let mut worker = Worker::new(self.queue.clone(), self.config.clone()).map_err(to_py_err)?;
        let threads = Arc::new(HandlerThreads::new());
        for (name, opts) in &self.tasks {
            let d = self.dispatch.clone();
            let threads = threads.clone();
            let h = handler(move |ctx: JobContext| {
                let (d, threads) = (d.clone(), threads.clone());
                async move {
                    match threads.run(move |py| dispatch(py, &d, ctx)).await {
                        Some(r) => r,
                        None => Err(HandlerError::retryable("no Python handler thread could take the job")),
                    }
                }
            });
            worker.register_handler(name, *opts, h).map_err(to_py_err)?;
        }
        let (shutdown, readiness) = (self.shutdown.clone(), self.readiness.clone());
        let (result, signal) = py.detach(|| {
            runtime().block_on(async move {
                let handle = worker.start();
                let stop = handle.shutdown_token();
                let mut signal: Option<PyErr> = None;
                let tick = || tokio::time::sleep(Duration::from_millis(SIGNAL_CHECK_MS));
                let watch = |signal: &mut Option<PyErr>| {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        *signal = Some(e);
                        stop.cancel();
                    }
                };
                {
                    let ready = handle.ready();
                    tokio::pin!(ready);
                    loop {
                        tokio::select! {
                            r = &mut ready => {
                                readiness.update(|p| {
                                    p.settled = true;
                                    p.ready = r.is_ok();
                                    p.metrics_addr = handle.metrics_addr();
                                });
                                break;
                            }
                            _ = shutdown.cancelled(), if !stop.is_cancelled() => stop.cancel(),
                            _ = tick(), if signal.is_none() => watch(&mut signal),
                        }
                    }
                }
                let join = handle.join();
                tokio::pin!(join);
                loop {
                    tokio::select! {
                        r = &mut join => {
                            threads.close();
                            return (r, signal);
                        }
                        _ = shutdown.cancelled(), if !stop.is_cancelled() => stop.cancel(),
                        _ = tick(), if signal.is_none() => watch(&mut signal),
                    }
                }
            })
        });
        let counters = result.map_err(to_py_err)?;
        *self.counters.lock() = Some(counters);
        match signal {
            Some(e) => Err(e),
            None => Ok(counters),
        }
    }
}

fn counters_dict<'py>(py: Python<'py>, c: &flexiq_runtime::WorkerCounters) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("claimed", c.claimed)?;
    d.set_item("started", c.started)?;
    d.set_item("succeeded", c.succeeded)?;
    d.set_item("failed", c.failed)?;
    d.set_item("cancelled", c.cancelled)?;
    d.set_item("acknowledged", c.acknowledged)?;
    d.set_item("superseded", c.superseded)?;
    d.set_item("given_back", c.given_back)?;
    d.set_item("ack_errors", c.ack_errors)?;
    Ok(d)
}
