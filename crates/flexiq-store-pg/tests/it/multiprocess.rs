//! Three worker processes (this test binary, re-executed with an environment switch) drain
//! 10,000 jobs from one schema: none acked twice, none lost.

use std::process::{Command, Stdio};
use std::time::Duration;

use flexiq_core::store::{AckRequest, Inspect, JobStore, WaitForWorkRequest};
use flexiq_core::AckOutcome;

use crate::common::{claim, completes, drop_schema, enqueue_n, fresh_schema, now_ms, open, tally};

const CHILD_ENV: &str = "FLEXIQ_PG_TEST_WORKER_SCHEMA";
const TEST_NAME: &str = "multiprocess::three_processes_drain_ten_thousand_jobs_without_duplicates";

/// The child's claim/ack loop; prints how many acks it had acknowledged.
async fn worker(schema: &str) {
    let s = open(schema, 2).await;
    let me = format!("pid{}", std::process::id());
    let mut acked = 0usize;
    loop {
        let got = claim(&s, "q", 100, &me, now_ms()).await.unwrap();
        if got.is_empty() {
            let st = s.stats(Some("q")).await.unwrap();
            if st.pending == 0 && st.running == 0 {
                break;
            }
            s.wait_for_work(WaitForWorkRequest { queues: vec!["q".to_string()], timeout_ms: 50 })
                .await
                .unwrap();
            continue;
        }
        let outcomes = s.ack(AckRequest { acks: completes(&got), now: now_ms() }).await.unwrap();
        acked += outcomes.iter().filter(|o| **o == AckOutcome::Acknowledged).count();
    }
    println!("acked={acked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_drain_ten_thousand_jobs_without_duplicates() {
    if let Ok(schema) = std::env::var(CHILD_ENV) {
        worker(&schema).await;
        return;
    }
    let schema = fresh_schema("procs");
    let s = open(&schema, 2).await;
    enqueue_n(&s, "q", 10_000, now_ms()).await;
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..3)
        .map(|_| {
            Command::new(&exe)
                .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, &schema)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("spawn worker process")
        })
        .collect();
    let mut per_child = Vec::new();
    for child in children {
        let out = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
        assert!(out.status.success(), "worker process failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let n: usize = text
            .lines()
            .find_map(|l| l.split_once("acked=").map(|(_, n)| n))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("worker printed no count:\n{text}"));
        per_child.push(n);
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(per_child.iter().sum::<usize>(), 10_000, "acks per process: {per_child:?}");
    assert_eq!(tally(&schema).await, (10_000, 10_000, 10_000, 0));
    crate::counts::check(&schema, "three processes drained the queue").await;
    drop_schema(&schema).await;
}
