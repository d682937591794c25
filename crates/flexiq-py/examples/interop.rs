//! The Rust side of the Python SDK's interop tests: a Rust worker and a Rust producer that
//! speak the SDKs' JSON payload, `{"args": [...], "kwargs": {...}}`.
//!
//! ```text
//! interop worker <store-url> <count>   run task "interop.add" (a + b) until <count> jobs succeed
//! interop enqueue <store-url> <a> <b>  enqueue "interop.py_add" with args [a, b]; print the id
//! interop archive <store-url>          archive every terminal job, as the cleaner would an
//!                                      hour after they finished; print how many
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use flexiq_runtime::services::{ArchiveConfig, Archiver};
use flexiq_runtime::{
    connect, ConnectOptions, EnqueueOptions, HandlerError, JobContext, ManualClock, Worker, WorkerConfig,
};

/// How long the worker waits for its jobs before giving up (s).
const WORKER_DEADLINE_S: u64 = 60;

fn add(ctx: &JobContext) -> Result<Option<Vec<u8>>, HandlerError> {
    let payload: serde_json::Value = serde_json::from_slice(ctx.payload())
        .map_err(|e| HandlerError::fatal(format!("payload is not JSON: {e}")))?;
    let args = payload["args"].as_array().ok_or_else(|| HandlerError::fatal("payload has no args list"))?;
    let sum: i64 = args.iter().filter_map(serde_json::Value::as_i64).sum();
    Ok(Some(serde_json::to_vec(&serde_json::json!({ "sum": sum, "by": "rust" })).expect("json encodes")))
}

async fn worker(url: &str, count: u64) -> Result<(), String> {
    let queue = connect(url, ConnectOptions::default()).await.map_err(|e| e.to_string())?;
    let config = WorkerConfig { maintenance: None, ..Default::default() };
    let mut w = Worker::new(queue, config).map_err(|e| e.to_string())?;
    w.register("interop.add", |ctx: JobContext| async move { add(&ctx) }).map_err(|e| e.to_string())?;
    let handle = w.start();
    let started = Instant::now();
    while handle.counters().succeeded < count {
        if started.elapsed() > Duration::from_secs(WORKER_DEADLINE_S) {
            return Err(format!(
                "only {} of {count} jobs succeeded in {WORKER_DEADLINE_S} s",
                handle.counters().succeeded
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = handle.shutdown().await.map_err(|e| e.to_string())?;
    println!("succeeded {}", c.succeeded);
    Ok(())
}

async fn enqueue(url: &str, a: i64, b: i64) -> Result<(), String> {
    let queue = connect(url, ConnectOptions::default()).await.map_err(|e| e.to_string())?;
    let payload =
        serde_json::to_vec(&serde_json::json!({ "args": [a, b], "kwargs": {} })).expect("json encodes");
    let id = queue
        .enqueue("interop.py_add", payload, EnqueueOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    println!("{id}");
    queue.close().await.map_err(|e| e.to_string())
}

async fn archive(url: &str) -> Result<(), String> {
    let queue = connect(url, ConnectOptions::default()).await.map_err(|e| e.to_string())?;
    let config = ArchiveConfig::default();
    let later = queue.now_ms() + i64::try_from(config.after.as_millis()).unwrap_or(i64::MAX / 2) + 1_000;
    let archiver = Archiver::new(&queue.with_clock(Arc::new(ManualClock::new(later))), config)
        .map_err(|e| e.to_string())?;
    let report = archiver.run_once().await.map_err(|e| e.to_string())?;
    println!("{}", report.archived);
    queue.close().await.map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [_, "worker", url, count] => match count.parse() {
            Ok(n) => worker(url, n).await,
            Err(_) => Err(format!("count {count:?} is not a number")),
        },
        [_, "enqueue", url, a, b] => match (a.parse(), b.parse()) {
            (Ok(a), Ok(b)) => enqueue(url, a, b).await,
            _ => Err(format!("{a:?} and {b:?} must be integers")),
        },
        [_, "archive", url] => archive(url).await,
        _ => {
            Err("usage: interop worker <url> <count> | interop enqueue <url> <a> <b> | interop archive <url>"
                .to_string())
        }
    };
    if let Err(e) = outcome {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
