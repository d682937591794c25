//! Keyset pages and their cursors: every row exactly once, stable under inserts, and any cursor
//! that does not belong to the listing and filter is `InvalidArgument`.

use std::collections::HashSet;

use flexiq_core::store::{
    DeadLettersAfterRequest, ListArchivedAfterRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{ErrorKind, JobFilter, JobId};

use crate::fixtures::{assert_kind, at, job, job_in, kill, now, open, put, tamper};
use crate::Harness;

async fn walk(s: &dyn flexiq_core::Store, f: &JobFilter, page: u32) -> Vec<JobId> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let p = s
            .list_jobs_after(ListJobsAfterRequest { filter: f.clone(), limit: page, after: after.clone() })
            .await
            .unwrap();
        assert!(p.items.len() <= page as usize);
        out.extend(p.items.into_iter().map(|j| j.id));
        match p.next_cursor {
            Some(c) => after = Some(c),
            None => return out,
        }
    }
}

async fn seed(s: &dyn flexiq_core::Store, n: i64) -> Vec<JobId> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(put(s, job("t", &i.to_string()), at(i * 10)).await);
    }
    ids.reverse();
    ids
}

/// Walking keyset pages visits every row exactly once, newest first.
pub async fn cursors_pages_walk_every_row_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let expected = seed(&*s, 23).await;
    assert_eq!(walk(&*s, &JobFilter::default(), 5).await, expected);
}

/// When the rows fill the last page exactly, that page carries no cursor.
pub async fn cursors_exact_multiple_has_no_trailing_page(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s, 6).await;
    let p1 = s
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 3, after: None })
        .await
        .unwrap();
    assert_eq!(p1.items.len(), 3);
    let p2 = s
        .list_jobs_after(ListJobsAfterRequest {
            filter: JobFilter::default(),
            limit: 3,
            after: p1.next_cursor.clone(),
        })
        .await
        .unwrap();
    assert_eq!(p2.items.len(), 3);
    assert_eq!(p2.next_cursor, None);
}

/// An empty listing is one empty page with no cursor.
pub async fn cursors_empty_listing_has_no_cursor(h: &dyn Harness) {
    let s = open(h, "default").await;
    let p = s
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 10, after: None })
        .await
        .unwrap();
    assert!(p.items.is_empty());
    assert_eq!(p.next_cursor, None);
}

/// Jobs enqueued mid-walk neither repeat nor hide any row of the walk.
pub async fn cursors_stable_under_inserts(h: &dyn Harness) {
    let s = open(h, "default").await;
    let expected = seed(&*s, 20).await;
    let f = JobFilter::default();
    let mut seen = Vec::new();
    let mut after = None;
    let mut round = 0;
    loop {
        let p = s
            .list_jobs_after(ListJobsAfterRequest { filter: f.clone(), limit: 4, after: after.clone() })
            .await
            .unwrap();
        seen.extend(p.items.into_iter().map(|j| j.id));
        put(&*s, job("t", "late"), at(10_000 + round)).await;
        round += 1;
        match p.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, expected);
}

/// Keyset pages honour the filter and agree with the offset listing.
pub async fn cursors_filtered_walk_matches_offset_listing(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..15 {
        put(&*s, job_in(if i % 3 == 0 { "a" } else { "b" }, "t"), at(i)).await;
    }
    let f = JobFilter { queue: Some("a".into()), ..Default::default() };
    let walked = walk(&*s, &f, 2).await;
    let listed: Vec<_> = s
        .list_jobs(ListJobsRequest { filter: f.clone(), limit: 100, offset: 0 })
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(walked.len(), 5);
    assert_eq!(walked, listed);
    assert_eq!(walked.iter().collect::<HashSet<_>>().len(), 5);
}

/// Garbage text as a cursor is `InvalidArgument`.
pub async fn cursors_garbage_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s, 3).await;
    for bad in ["", "garbage", "!!!", "Y29tcGxldGVseSBib2d1cw"] {
        assert_kind(
            s.list_jobs_after(ListJobsAfterRequest {
                filter: JobFilter::default(),
                limit: 2,
                after: Some(bad.to_string()),
            })
            .await,
            ErrorKind::InvalidArgument,
        );
    }
}

/// A tampered cursor is `InvalidArgument`, never a wrong page.
pub async fn cursors_tampered_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s, 5).await;
    let p = s
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 2, after: None })
        .await
        .unwrap();
    let c = p.next_cursor.expect("a second page exists");
    let bad = tamper(&c);
    assert_ne!(bad, c);
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest {
            filter: JobFilter::default(),
            limit: 2,
            after: Some(bad.clone()),
        })
        .await,
        ErrorKind::InvalidArgument,
    );
    let truncated = &c[..c.len() - 3];
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest {
            filter: JobFilter::default(),
            limit: 2,
            after: Some(truncated.to_string()),
        })
        .await,
        ErrorKind::InvalidArgument,
    );
}

/// A cursor made for another filter is `InvalidArgument`.
pub async fn cursors_other_filter_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    for _ in 0..4 {
        put(&*s, job_in("a", "t"), now()).await;
        put(&*s, job_in("b", "t"), now()).await;
    }
    let fa = JobFilter { queue: Some("a".into()), ..Default::default() };
    let fb = JobFilter { queue: Some("b".into()), ..Default::default() };
    let c = s
        .list_jobs_after(ListJobsAfterRequest { filter: fa.clone(), limit: 2, after: None })
        .await
        .unwrap()
        .next_cursor
        .expect("more pages");
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest { filter: fb.clone(), limit: 2, after: Some(c.clone()) })
            .await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest {
            filter: JobFilter::default(),
            limit: 2,
            after: Some(c.clone()),
        })
        .await,
        ErrorKind::InvalidArgument,
    );
    assert_eq!(
        s.list_jobs_after(ListJobsAfterRequest { filter: fa.clone(), limit: 2, after: Some(c.clone()) })
            .await
            .unwrap()
            .items
            .len(),
        2
    );
}

/// A cursor from the dead-letter listing is refused by the job listing, and the other way round.
pub async fn cursors_other_listing_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..3 {
        kill(&*s, "t", "boom", at(i)).await;
    }
    let dead = s
        .dead_letters_after(DeadLettersAfterRequest { limit: 1, after: None })
        .await
        .unwrap()
        .next_cursor
        .expect("more dead letters");
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest {
            filter: JobFilter::default(),
            limit: 1,
            after: Some(dead.clone()),
        })
        .await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_archived_after(ListArchivedAfterRequest { limit: 1, after: Some(dead.clone()) }).await,
        ErrorKind::InvalidArgument,
    );
    let jobs = s
        .list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 1, after: None })
        .await
        .unwrap()
        .next_cursor
        .expect("more jobs");
    assert_kind(
        s.dead_letters_after(DeadLettersAfterRequest { limit: 1, after: Some(jobs.clone()) }).await,
        ErrorKind::InvalidArgument,
    );
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_cursors {
    ($callback:path, $make:path) => {
        $callback!($make;
            cursors::cursors_pages_walk_every_row_once,
            cursors::cursors_exact_multiple_has_no_trailing_page,
            cursors::cursors_empty_listing_has_no_cursor,
            cursors::cursors_stable_under_inserts,
            cursors::cursors_filtered_walk_matches_offset_listing,
            cursors::cursors_garbage_is_invalid,
            cursors::cursors_tampered_is_invalid,
            cursors::cursors_other_filter_is_invalid,
            cursors::cursors_other_listing_is_invalid,
        );
    };
}
