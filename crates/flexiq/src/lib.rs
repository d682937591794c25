//! flexiq: a durable job queue with a Rust engine.
//!
//! Embedded on SQLite with no server, and the same API on PostgreSQL or Redis when many
//! worker processes share one store. Pick the backend with a URL at run time:
//! `sqlite:///var/lib/app/jobs.db` (or a bare file path), `postgres://host/db?schema=jobs`,
//! `redis://host:6379?prefix=app`. SQLite is on by default; the `postgres` and `redis` cargo
//! features add the others.
//!
//! - [`connect`] returns a [`Queue`]: enqueue, await results, stream partials, cancel, list,
//!   inspect dead letters, pause queues, read stats and metrics, manage settings.
//! - A [`Worker`] runs your async handlers for claimed jobs, with a concurrency limit,
//!   retries with backoff, timeouts, cooperative cancellation and graceful shutdown. Every
//!   ack is fenced: a worker that lost its lease never overwrites the attempt that replaced
//!   it.
//! - [`services`] are the maintenance sweeps (retention, archival, stale-lease rescue) a
//!   worker runs when elected cleaner of its namespace.
//! - [`WorkflowJobs`] ([`Queue::workflow_jobs`]) makes a queue the job transport of a workflow
//!   engine: stages enqueued per (run, stage), a fair dequeue, fenced acks and both lease tiers
//!   (see `docs/workflows.md`).
//!
//! Payloads and results are bytes: serialise with whatever you like.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use flexiq::{connect, ConnectOptions, EnqueueOptions, HandlerError, Worker, WorkerConfig};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> flexiq::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let url = format!("sqlite://{}", dir.path().join("jobs.db").display());
//! let queue = connect(&url, ConnectOptions::default()).await?;
//!
//! // Define a task.
//! let mut worker = Worker::new(queue.clone(), WorkerConfig::default())?;
//! worker.register("greet", |ctx| async move {
//!     let name = std::str::from_utf8(ctx.payload()).map_err(|e| HandlerError::fatal(e.to_string()))?;
//!     Ok(Some(format!("hello, {name}").into_bytes()))
//! })?;
//!
//! // Enqueue, run a worker, await the result.
//! let id = queue.enqueue("greet", "flexiq", EnqueueOptions::default()).await?;
//! let running = worker.start();
//! let result = queue.result(id.as_str(), Some(Duration::from_secs(10)), None).await?;
//! assert_eq!(result.as_deref(), Some(&b"hello, flexiq"[..]));
//! running.shutdown().await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Units
//!
//! Options the spec gives in seconds take seconds (`purge_dead(older_than_secs)`,
//! `metrics(task, since_secs)`, [`Retention`] windows); everything reported back —
//! timestamps, durations, retention windows — is in milliseconds (timestamps Unix ms).

pub use flexiq_runtime::*;

/// Items of the engine's model that the runtime's signatures return but do not re-export at
/// its top level: an error's [`ErrorKind`], what [`Queue::migrate`] reports, the retention
/// windows inside [`EffectiveRetention`], and the contract level this build speaks. Everything
/// else of the model (store traits and requests, option limits, setting names) is under
/// [`core`].
pub use flexiq_runtime::core::{ErrorKind, MigrationSummary, RetentionWindows, CONTRACT_LEVEL};
