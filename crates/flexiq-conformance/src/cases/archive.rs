//! Archival: terminal jobs move out of the hot table into the archive listings.

use flexiq_core::store::{
    ArchiveTerminalRequest, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest,
    ListJobsRequest,
};
use flexiq_core::{ErrorKind, JobFilter, JobId, JobStatus};

use crate::fixtures::{assert_kind, at, fail, finish, job, listed_ids, now, open, put, start, tamper};
use crate::Harness;

async fn archived_ids(s: &dyn flexiq_core::Store) -> Vec<JobId> {
    s.list_archived(ListArchivedRequest { limit: 100, offset: 0 })
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect()
}

/// Terminal jobs finished before the cutoff move to the archive and leave `list_jobs`.
pub async fn archive_moves_terminal_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let done = finish(&*s, job("t", ""), at(1_000)).await;
    let f = start(&*s, job("t", ""), at(1_000)).await;
    fail(&*s, &f, "no", false, at(1_100)).await;
    let pending = put(&*s, job("t", ""), at(1_200)).await;
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(2_000), limit: 100, now: at(5_000) })
            .await
            .unwrap(),
        2
    );
    let mut got = archived_ids(&*s).await;
    got.sort();
    let mut want = vec![done.clone(), f.job.id.clone()];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(listed_ids(&*s).await, vec![pending]);
}

/// Jobs finished at or after the cutoff, and live jobs, stay put.
pub async fn archive_respects_cutoff(h: &dyn Harness) {
    let s = open(h, "default").await;
    finish(&*s, job("t", ""), at(1_000)).await;
    let recent = finish(&*s, job("t", ""), at(3_000)).await;
    let running = start(&*s, job("t", ""), at(100)).await;
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(2_000), limit: 100, now: at(5_000) })
            .await
            .unwrap(),
        1
    );
    let listed = listed_ids(&*s).await;
    assert!(listed.contains(&recent));
    assert!(listed.contains(&running.job.id));
    assert_eq!(archived_ids(&*s).await.len(), 1);
}

/// At most `limit` jobs move per call; the rest follow on the next.
pub async fn archive_honours_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..5 {
        finish(&*s, job("t", ""), at(i)).await;
    }
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100), limit: 2, now: at(200) })
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 100, offset: 0 })
            .await
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100), limit: 10, now: at(200) })
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100), limit: 10, now: at(200) })
            .await
            .unwrap(),
        0
    );
    assert_eq!(archived_ids(&*s).await.len(), 5);
}

/// The archive lists newest first by finish time, keeping each job's record.
pub async fn archive_list_newest_first_by_finish(h: &dyn Harness) {
    let s = open(h, "default").await;
    let late_created = start(&*s, job("t", "a"), at(0)).await;
    let b = finish(&*s, job("t", "b"), at(10)).await;
    crate::fixtures::complete(&*s, &late_created, Some(b"r"), at(20)).await;
    let c = finish(&*s, job("t", "c"), at(30)).await;
    s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100), limit: 100, now: at(200) })
        .await
        .unwrap();
    let listed = s.list_archived(ListArchivedRequest { limit: 100, offset: 0 }).await.unwrap();
    let got: Vec<_> = listed.iter().map(|j| j.id.clone()).collect();
    assert_eq!(got, vec![c, late_created.job.id.clone(), b]);
    assert_eq!(listed[1].status, JobStatus::Completed);
    assert_eq!(listed[1].result.as_deref(), Some(&b"r"[..]));
    assert_eq!(listed[1].finished_at, Some(at(20)));
    let page = s.list_archived(ListArchivedRequest { limit: 1, offset: 1 }).await.unwrap();
    assert_eq!(page[0].id, late_created.job.id);
}

/// Keyset pages over the archive walk every job once, ordered by finish time.
pub async fn archive_pages_walk_by_finish_time(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut expected = Vec::new();
    for i in 0..7 {
        expected.push(finish(&*s, job("t", ""), at(i * 10)).await);
    }
    expected.reverse();
    s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(1_000), limit: 100, now: at(2_000) })
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let p =
            s.list_archived_after(ListArchivedAfterRequest { limit: 3, after: after.clone() }).await.unwrap();
        seen.extend(p.items.into_iter().map(|j| j.id));
        match p.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, expected);
}

/// Garbage, tampered and job-listing cursors are refused by the archive listing.
pub async fn archive_pages_bad_cursor_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..3 {
        finish(&*s, job("t", ""), at(i)).await;
    }
    let jobs_cursor = s
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 1, after: None })
        .await
        .unwrap()
        .next_cursor
        .unwrap();
    s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(100), limit: 100, now: at(200) })
        .await
        .unwrap();
    assert_kind(
        s.list_archived_after(ListArchivedAfterRequest { limit: 1, after: Some("garbage".into()) }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_archived_after(ListArchivedAfterRequest { limit: 1, after: Some(jobs_cursor.clone()) }).await,
        ErrorKind::InvalidArgument,
    );
    let c = s
        .list_archived_after(ListArchivedAfterRequest { limit: 1, after: None })
        .await
        .unwrap()
        .next_cursor
        .expect("more pages");
    assert_kind(
        s.list_archived_after(ListArchivedAfterRequest { limit: 1, after: Some(tamper(&c)) }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_archived(ListArchivedRequest { limit: 0, offset: 0 }).await,
        ErrorKind::InvalidArgument,
    );
}

/// An empty archive lists nothing and has no cursor.
pub async fn archive_empty_lists_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("t", ""), now()).await;
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(1_000), limit: 10, now: at(1_000) })
            .await
            .unwrap(),
        0
    );
    assert!(s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap().is_empty());
    let p = s.list_archived_after(ListArchivedAfterRequest { limit: 10, after: None }).await.unwrap();
    assert!(p.items.is_empty() && p.next_cursor.is_none());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_archive {
    ($callback:path, $make:path) => {
        $callback!($make;
            archive::archive_moves_terminal_jobs,
            archive::archive_respects_cutoff,
            archive::archive_honours_limit,
            archive::archive_list_newest_first_by_finish,
            archive::archive_pages_walk_by_finish_time,
            archive::archive_pages_bad_cursor_is_invalid,
            archive::archive_empty_lists_nothing,
        );
    };
}
