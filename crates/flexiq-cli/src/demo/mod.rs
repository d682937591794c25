//! `flexiq demo`: the README's main job.
//!
//! It enqueues a scripted mixed workload ([`workload`]) on a fresh SQLite file (or, with
//! `--url`, a fresh namespace of any store), runs an in-process [`Worker`] with the demo
//! handlers ([`handlers`]) under a live progress bar ([`progress`]), then prints per-queue
//! stats, per-task latency percentiles and the dead letters, and checks that every job ended
//! as scripted ([`report`]). A failed check exits 1. The store is closed before the command
//! returns, whatever happened, so the SQLite file is left whole: the `.db` alone holds every
//! job and can be copied.

pub mod handlers;
pub mod progress;
pub mod report;
pub mod workload;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use flexiq::{connect, ConnectOptions, JobId, Queue, Worker, WorkerConfig, MAX_CONCURRENCY};

use crate::cli::GlobalArgs;
use crate::connect::namespace;
use crate::error::{CliError, CliResult, EXIT_CONFLICT};
use crate::output::Output;
use workload::{Workload, MAX_JOBS, MIN_JOBS};

/// Default SQLite file of the demo (recreated on every run).
pub const DEFAULT_DB: &str = "flexiq-demo.db";

/// `flexiq demo` options.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Jobs to run (at least 20).
    #[arg(long, default_value_t = 3_000, allow_negative_numbers = true)]
    pub jobs: i64,
    /// Handlers running at once.
    #[arg(long, default_value_t = 32, allow_negative_numbers = true)]
    pub concurrency: i64,
    /// SQLite file to run on, deleted and recreated first [default: ./flexiq-demo.db].
    /// With --url instead, the demo runs in a fresh namespace of that store.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Give up (exit 1) when the jobs have not all finished after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120, allow_negative_numbers = true)]
    pub timeout: i64,
}

/// Where the demo runs.
#[derive(Debug, Clone)]
struct Target {
    url: String,
    label: String,
    namespace: String,
}

/// Validated demo settings.
#[derive(Debug, Clone, Copy)]
struct Settings {
    jobs: u64,
    concurrency: u32,
    timeout: Duration,
}

fn validate(args: &DemoArgs) -> CliResult<Settings> {
    let jobs =
        u64::try_from(args.jobs).ok().filter(|n| (MIN_JOBS..=MAX_JOBS).contains(n)).ok_or_else(|| {
            CliError::invalid(format!("--jobs {} must be between {MIN_JOBS} and {MAX_JOBS}", args.jobs))
        })?;
    let concurrency = u32::try_from(args.concurrency)
        .ok()
        .filter(|n| (1..=MAX_CONCURRENCY).contains(n))
        .ok_or_else(|| {
            CliError::invalid(format!(
                "--concurrency {} must be between 1 and {MAX_CONCURRENCY}",
                args.concurrency
            ))
        })?;
    if args.timeout <= 0 {
        return Err(CliError::invalid(format!("--timeout {} s must be positive", args.timeout)));
    }
    Ok(Settings { jobs, concurrency, timeout: Duration::from_secs(args.timeout as u64) })
}

/// Removes an SQLite file and its WAL / shared-memory companions.
fn recreate(path: &Path) -> CliResult {
    if path.is_dir() {
        return Err(CliError::invalid(format!(
            "--db {} is a directory, not a database file",
            path.display()
        )));
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::other(format!("cannot remove {}: {e}", Path::new(&p).display())));
            }
        }
    }
    Ok(())
}

fn target(g: &GlobalArgs, args: &DemoArgs) -> CliResult<Target> {
    match (&g.url, &args.db) {
        (Some(_), Some(_)) => Err(CliError::invalid("give --db or --url, not both")),
        (Some(url), None) => {
            let ns =
                namespace(g).unwrap_or_else(|| format!("demo-{}", JobId::new().as_str().replace('-', "")));
            Ok(Target { url: url.clone(), label: url.clone(), namespace: ns })
        }
        (None, db) => {
            let path = db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
            recreate(&path)?;
            let ns = namespace(g).unwrap_or_else(|| flexiq::core::options::DEFAULT_NAMESPACE.to_string());
            Ok(Target {
                url: format!("sqlite://{}", path.display()),
                label: path.display().to_string(),
                namespace: ns,
            })
        }
    }
}

/// Enqueues the workload: the bulk in batches, then each chain link by link (a link depends
/// on the previous one). Returns the chains' ids.
async fn enqueue(q: &Queue, w: &Workload) -> CliResult<Vec<[JobId; 3]>> {
    for batch in w.bulk.chunks(1_000) {
        q.enqueue_many(batch.to_vec()).await?;
    }
    let mut chains = Vec::with_capacity(w.chains.len());
    for links in &w.chains {
        let mut ids: Vec<JobId> = Vec::with_capacity(3);
        for link in links {
            let mut opts = link.options.clone();
            opts.depends_on = ids.last().map(|id| vec![id.to_string()]).unwrap_or_default();
            ids.push(q.enqueue(&link.task, link.payload.clone(), opts).await?);
        }
        let [a, b, c]: [JobId; 3] =
            ids.try_into().map_err(|_| CliError::other("a demo chain did not get three job ids"))?;
        chains.push([a, b, c]);
    }
    Ok(chains)
}

/// Runs `flexiq demo`. The store is closed (awaited) on every path, success or failure, so an
/// SQLite file is left self-contained: its WAL checkpointed into the `.db` file.
pub async fn run(g: &GlobalArgs, args: &DemoArgs, out: Output) -> CliResult {
    let settings = validate(args)?;
    let t = target(g, args)?;
    let q = connect(&t.url, ConnectOptions::namespace(t.namespace.clone())).await?;
    let outcome = run_on(&q, &t, settings, out).await;
    let closed = q.close().await;
    let r = outcome?;
    closed?;
    report::verdict(&r)
}

/// The demo on an open store: enqueue, run the worker, print the report.
async fn run_on(q: &Queue, t: &Target, settings: Settings, out: Output) -> CliResult<report::Report> {
    let already = q.stats().await?.total();
    if already > 0 {
        return Err(CliError {
            message: format!(
                "namespace {} already holds {already} jobs: the demo needs an empty one",
                t.namespace
            ),
            code: EXIT_CONFLICT,
        });
    }
    let w = workload::plan(settings.jobs);
    if !out.json {
        outln!(
            "flexiq demo: {} jobs on {} ({} store, namespace {}), {} handlers at once",
            settings.jobs,
            t.label,
            q.backend(),
            t.namespace,
            settings.concurrency
        );
    }
    let started = Instant::now();
    let chains = enqueue(q, &w).await?;
    let enqueue_time = started.elapsed();

    let config = WorkerConfig {
        concurrency: settings.concurrency,
        poll_interval: Duration::from_millis(100),
        shutdown_timeout: Duration::from_secs(5),
        ..WorkerConfig::default()
    };
    let mut worker = Worker::new(q.clone(), config)?;
    handlers::register_all(&mut worker)?;
    let run_started = Instant::now();
    let handle = worker.start();
    let waited = progress::watch(q, settings.jobs, settings.timeout, !out.json).await;
    let run_time = run_started.elapsed();
    let counters = handle.shutdown().await?;
    waited?;

    let timing = report::Timing { enqueue: enqueue_time, run: run_time };
    let r = report::build(q, &t.label, settings.concurrency, &w.expected, &chains, timing, counters).await?;
    report::print(&r, out)?;
    Ok(r)
}
