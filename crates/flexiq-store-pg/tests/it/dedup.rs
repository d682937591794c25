//! Dedup records beside the paths that delete job rows without going through a removal: the
//! retention purge of archived jobs and `purge_completed` take the keys their jobs hold, and a
//! holder moved to the archive still holds its throttle window.

use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::store::{
    ArchiveTerminalRequest, DedupJobIdRequest, Deduplication, EnqueueRequest, JobStore, Maintenance,
    PurgeCompletedRequest, QueueControl, RetentionRequest,
};
use flexiq_core::{EnqueueOptions, JobId, NewJob, RetentionTable, RetentionWindows};

use crate::common::{admin, claim, completes, drop_schema, fresh_schema, now_ms, open};

fn throttled(key: &str, now: i64) -> NewJob {
    let dedup = DedupOptions {
        id: key.into(),
        mode: DedupMode::Throttle,
        ttl_ms: Some(3_600_000),
        ..Default::default()
    };
    let opts = EnqueueOptions { queue: Some("q".into()), dedup: Some(dedup), ..Default::default() };
    NewJob::build("t", b"{}".to_vec(), opts, now).unwrap()
}

/// Enqueues a job holding `key`, runs it to completion and returns its id.
async fn completed_holder(s: &flexiq_store_pg::PgStore, key: &str, now: i64) -> JobId {
    let out =
        s.enqueue(EnqueueRequest { jobs: vec![throttled(key, now)], max_pending: None, now }).await.unwrap();
    assert!(out[0].created);
    let got = claim(s, "q", 1, "w", now).await.unwrap();
    assert_eq!(got[0].job.id, out[0].id);
    s.ack(flexiq_core::store::AckRequest { acks: completes(&got), now }).await.unwrap();
    out[0].id.clone()
}

async fn holder(s: &flexiq_store_pg::PgStore, key: &str, now: i64) -> Option<JobId> {
    s.dedup_job_id(DedupJobIdRequest { key: key.into(), now }).await.unwrap()
}

async fn records(schema: &str) -> i64 {
    admin()
        .await
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".dedup_keys"), &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn purging_a_holder_row_takes_its_dedup_key() {
    let schema = fresh_schema("dedup");
    let s = open(&schema, 2).await;
    let now = now_ms();
    let archived = completed_holder(&s, "archived", now).await;
    let moved = ArchiveTerminalRequest { cutoff_ms: now + 1, limit: 100, now };
    assert_eq!(s.archive_terminal(moved).await.unwrap(), 1);
    assert_eq!(holder(&s, "archived", now + 1).await, Some(archived), "an archived holder keeps its window");

    let purged = completed_holder(&s, "purged", now).await;
    assert_eq!(holder(&s, "purged", now + 1).await, Some(purged));
    assert_eq!(records(&schema).await, 2);
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: now + 1 }).await.unwrap(), 1);
    assert_eq!(holder(&s, "purged", now + 1).await, None);
    assert_eq!(records(&schema).await, 1, "only the purged job's key went");

    let mut windows = RetentionWindows::default();
    windows.0.insert(RetentionTable::ArchivedJobs, Some(1));
    let counts = s.retention_purge(RetentionRequest { windows, now: now + 10 }).await.unwrap();
    assert_eq!(counts[&RetentionTable::ArchivedJobs], 1);
    assert_eq!(holder(&s, "archived", now + 11).await, None);
    assert_eq!(records(&schema).await, 0);
    let again =
        s.enqueue(EnqueueRequest { jobs: vec![throttled("archived", now)], max_pending: None, now }).await;
    assert!(again.unwrap()[0].created, "the key is free for the next enqueue");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
