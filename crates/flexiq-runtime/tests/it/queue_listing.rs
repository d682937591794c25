//! Listings: offset and keyset, plain and filtered, live and archived.

use std::time::Duration;

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::services::{ArchiveConfig, Archiver};
use flexiq_runtime::{EnqueueOptions, JobFilter, JobStatus};

use crate::assert_code;
use crate::common::{finish, manual, open};

async fn seed(q: &flexiq_runtime::Queue, n: usize) {
    for i in 0..n {
        let opts = EnqueueOptions {
            queue: Some(if i % 2 == 0 { "even" } else { "odd" }.into()),
            metadata: Some(format!("{{\"n\":{i}}}")),
            ..Default::default()
        };
        q.enqueue("t", b"".to_vec(), opts).await.unwrap();
    }
}

#[tokio::test]
async fn list_jobs_filters_and_pages_by_offset() {
    let q = open().await;
    seed(&q, 6).await;
    let even = JobFilter { queue: Some("even".into()), ..Default::default() };
    let page = q.list_jobs(&even, 2, 0).await.unwrap();
    assert_eq!(page.len(), 2);
    assert!(page.iter().all(|j| j.queue == "even"));
    assert!(page[0].id > page[1].id, "newest first");
    assert_eq!(q.list_jobs(&even, 10, 2).await.unwrap().len(), 1);
    let pending = JobFilter { status: Some(JobStatus::Pending), ..Default::default() };
    assert_eq!(q.list_jobs(&pending, 100, 0).await.unwrap().len(), 6);
    assert_code!(q.list_jobs(&even, 0, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.list_jobs(&even, 10, -1).await, "INVALID_ARGUMENT");
    let wide = JobFilter { metadata_contains: Some("n".into()), ..Default::default() };
    assert_code!(q.list_jobs(&wide, 10, 0).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn list_jobs_filtered_matches_metadata_and_ranges() {
    let q = open().await;
    seed(&q, 4).await;
    let f = JobFilter { metadata_contains: Some("\"n\":3".into()), ..Default::default() };
    assert_eq!(q.list_jobs_filtered(&f, 10, 0).await.unwrap().len(), 1);
    let bad_range = JobFilter { created_after: Some(10), created_before: Some(5), ..Default::default() };
    assert_code!(q.list_jobs_filtered(&bad_range, 10, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.list_jobs_filtered(&f, -5, 0).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn list_jobs_after_walks_every_job_once() {
    let q = open().await;
    seed(&q, 7).await;
    let all = JobFilter::default();
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = q.list_jobs_after(&all, 3, after.as_deref()).await.unwrap();
        seen.extend(page.items.into_iter().map(|j| j.id));
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7);
    seen.dedup();
    assert_eq!(seen.len(), 7);
    assert_code!(q.list_jobs_after(&all, 3, Some("garbage")).await, "INVALID_ARGUMENT");
    assert_code!(q.list_jobs_after(&all, 3, Some("")).await, "INVALID_ARGUMENT");
    let first = q.list_jobs_after(&all, 3, None).await.unwrap().next_cursor.unwrap();
    let other = JobFilter { queue: Some("odd".into()), ..Default::default() };
    assert_code!(q.list_jobs_after(&other, 3, Some(&first)).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn list_jobs_filtered_after_pages_the_wide_filter() {
    let q = open().await;
    seed(&q, 5).await;
    let f =
        JobFilter { metadata_contains: Some("n".into()), queue: Some("even".into()), ..Default::default() };
    let page = q.list_jobs_filtered_after(&f, 2, None).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let rest = q.list_jobs_filtered_after(&f, 2, page.next_cursor.as_deref()).await.unwrap();
    assert_eq!(rest.items.len(), 1);
    assert!(rest.next_cursor.is_none());
    assert_code!(q.list_jobs_filtered_after(&f, 2, Some("zzz")).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn archived_jobs_are_listed_by_offset_and_keyset() {
    let q = open().await;
    let (q, clock) = manual(&q);
    for _ in 0..3 {
        q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
        finish(&q, AckKind::Complete { result: None }).await;
    }
    clock.advance(2 * 3_600_000);
    let archiver =
        Archiver::new(&q, ArchiveConfig { after: Duration::from_secs(3_600), ..Default::default() }).unwrap();
    assert_eq!(archiver.run_once().await.unwrap().archived, 3);
    assert_eq!(q.list_archived(10, 0).await.unwrap().len(), 3);
    assert_eq!(q.list_archived(10, 2).await.unwrap().len(), 1);
    let page = q.list_archived_after(2, None).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let rest = q.list_archived_after(2, page.next_cursor.as_deref()).await.unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_code!(q.list_archived(0, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.list_archived(1, -1).await, "INVALID_ARGUMENT");
    assert_code!(q.list_archived_after(2, Some("junk")).await, "INVALID_ARGUMENT");
}
