//! Quickstart: enqueue a few jobs into a SQLite file in a temp dir, claim them, complete them
//! and print the queue's stats.
//!
//! Run: `cargo run -p flexiq-store-sqlite --example quickstart`.

use std::time::{SystemTime, UNIX_EPOCH};

use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore};
use flexiq_core::{EnqueueOptions, NewJob, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

#[tokio::main]
async fn main() -> Result<(), flexiq_core::Error> {
    let dir = std::env::temp_dir().join(format!("flexiq-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(flexiq_core::Error::backend)?;
    let path = dir.join("queue.db");
    let store = SqliteStore::open(&path, SqliteOptions::default())?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);

    let opts = EnqueueOptions { queue: Some("emails".into()), ..Default::default() };
    let jobs = (0..5)
        .map(|i| {
            NewJob::build(
                "send_email",
                format!("{{\"to\":\"user{i}@example.com\"}}").into_bytes(),
                opts.clone(),
                now,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let enqueued = store.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await?;
    println!("enqueued {} jobs into {}", enqueued.len(), path.display());

    let claimed = store
        .claim(ClaimRequest { queues: vec!["emails".into()], limit: 10, worker_id: "quickstart".into(), now })
        .await?;
    for c in &claimed {
        println!(
            "working on {} (attempt {}): {}",
            c.job.id,
            c.fence.attempt,
            String::from_utf8_lossy(&c.job.payload)
        );
    }
    let acks = claimed
        .iter()
        .map(|c| Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: Some(b"sent".to_vec()) },
        })
        .collect();
    let outcomes = store.ack(AckRequest { acks, now: now + 5 }).await?;
    println!("acknowledged {} completions", outcomes.len());

    let stats = store.stats(Some("emails")).await?;
    for (status, n) in stats.entries() {
        println!("{status:>10}: {n}");
    }
    store.close().await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
