//! The Rust side of the Node SDK's interop test: a job enqueued from Node runs on a Rust
//! worker, and a job enqueued here runs on a Node worker.
//!
//! ```text
//! interop enqueue <url> <task> <json-payload>   prints the new job id
//! interop work <url> <task> <count>             runs `count` jobs of `task` on a Rust worker:
//!                                               the result is {"handledBy": "rust", "payload": ...}
//! ```

use std::time::Duration;

use flexiq_runtime::{connect, ConnectOptions, EnqueueOptions, HandlerError, Worker, WorkerConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["enqueue", url, task, payload] => {
            let q = connect(url, ConnectOptions::default()).await?;
            let id = q.enqueue(task, payload.as_bytes().to_vec(), EnqueueOptions::default()).await?;
            println!("{id}");
            q.close().await?;
        }
        ["work", url, task, count] => {
            let count: u64 = count.parse()?;
            let q = connect(url, ConnectOptions::default()).await?;
            let config = WorkerConfig { maintenance: None, ..Default::default() };
            let mut worker = Worker::new(q.clone(), config)?;
            worker.register(task, |ctx| async move {
                let payload: serde_json::Value =
                    serde_json::from_slice(ctx.payload()).map_err(|e| HandlerError::fatal(e.to_string()))?;
                let out = serde_json::json!({ "handledBy": "rust", "payload": payload });
                Ok(Some(out.to_string().into_bytes()))
            })?;
            let handle = worker.start();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            while handle.counters().acknowledged < count && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let done = handle.shutdown().await?;
            println!("{}", done.acknowledged);
            q.close().await?;
        }
        _ => {
            return Err(
                "usage: interop enqueue <url> <task> <json> | interop work <url> <task> <count>".into()
            )
        }
    }
    Ok(())
}
