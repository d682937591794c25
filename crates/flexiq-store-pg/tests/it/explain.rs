//! Query plans: claims and keyset pages are index seeks, never sequential scans of jobs.

use flexiq_core::store::{AckRequest, ClaimRequest, Inspect, ListJobsAfterRequest};
use flexiq_core::{JobFilter, JobStatus};

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, open};
use flexiq_core::store::JobStore;

fn assert_index_only(plan: &str) {
    assert!(!plan.contains("Seq Scan on jobs"), "sequential scan of jobs:\n{plan}");
    assert!(plan.contains("Index"), "no index used:\n{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_and_keyset_pages_are_index_seeks() {
    let schema = fresh_schema("plan");
    let s = open(&schema, 4).await;
    let now = 1_000_000;
    for q in ["a", "b", "c", "d"] {
        enqueue_n(&s, q, 5_000, now).await;
    }
    // Some history beside the backlog: running and completed jobs.
    let got = claim(&s, "a", 500, "w", now).await.unwrap();
    s.ack(AckRequest { acks: completes(&got[..250]), now }).await.unwrap();
    admin().await.batch_execute(&format!("ANALYZE \"{schema}\".jobs")).await.unwrap();

    for queues in [vec![], vec!["b".to_string()], vec!["a".to_string(), "c".to_string()]] {
        let plan =
            s.explain_claim(&ClaimRequest { queues, limit: 100, worker_id: "w".into(), now }).await.unwrap();
        assert_index_only(&plan);
    }
    let filters = [
        JobFilter::default(),
        JobFilter { status: Some(JobStatus::Pending), ..Default::default() },
        JobFilter { status: Some(JobStatus::Completed), ..Default::default() },
        JobFilter { status: Some(JobStatus::Running), ..Default::default() },
    ];
    for f in &filters {
        let page = ListJobsAfterRequest { filter: f.clone(), limit: 50, after: None };
        let first = s.list_jobs_after(page).await.unwrap();
        assert_index_only(&s.explain_list_jobs_after(f, 50, None).await.unwrap());
        let cursor = first.next_cursor.expect("more pages");
        assert_index_only(&s.explain_list_jobs_after(f, 50, Some(&cursor)).await.unwrap());
    }
    drop_schema(&schema).await;
}
