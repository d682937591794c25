//! Offset listings: newest first, filters, the wider filtered listing and page bounds.

use flexiq_core::store::{ListJobsAfterRequest, ListJobsRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobFilter, JobId, JobStatus, MAX_PAGE};

use crate::fixtures::{assert_kind, at, fail, finish, job, job_in, job_with, list, now, open, put, start};
use crate::Harness;

/// Jobs are listed newest first by creation time.
pub async fn listing_newest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(put(&*s, job("t", ""), at(i * 1_000)).await);
    }
    ids.reverse();
    let got: Vec<JobId> = list(&*s, &JobFilter::default()).await.into_iter().map(|j| j.id).collect();
    assert_eq!(got, ids);
}

/// Jobs created at the same instant are ordered by id, newest (largest) first.
pub async fn listing_same_instant_ordered_by_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<_> = (0..4).map(|_| job("t", "")).collect();
    let mut expected: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    crate::fixtures::put_all(&*s, jobs, now()).await;
    expected.sort();
    expected.reverse();
    let got: Vec<JobId> = list(&*s, &JobFilter::default()).await.into_iter().map(|j| j.id).collect();
    assert_eq!(got, expected);
}

/// Offset and limit slice the same order.
pub async fn listing_offset_and_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..10 {
        put(&*s, job("t", &i.to_string()), at(i)).await;
    }
    let page =
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 3, offset: 2 }).await.unwrap();
    let payloads: Vec<_> = page.iter().map(|j| String::from_utf8(j.payload.clone()).unwrap()).collect();
    assert_eq!(payloads, vec!["7", "6", "5"]);
    assert!(s
        .list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 3, offset: 10 })
        .await
        .unwrap()
        .is_empty());
}

/// The status filter returns only jobs in that status.
pub async fn listing_filters_by_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let done = finish(&*s, job("t", ""), now()).await;
    let pending = put(&*s, job("t", ""), at(1)).await;
    let f = JobFilter { status: Some(JobStatus::Completed), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![done]);
    let f = JobFilter { status: Some(JobStatus::Pending), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![pending]);
    let f = JobFilter { status: Some(JobStatus::Dead), ..Default::default() };
    assert!(list(&*s, &f).await.is_empty());
}

/// The queue and task filters combine.
pub async fn listing_filters_by_queue_and_task(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a_x = put(&*s, job_in("a", "x"), now()).await;
    put(&*s, job_in("a", "y"), now()).await;
    put(&*s, job_in("b", "x"), now()).await;
    let f = JobFilter { queue: Some("a".into()), ..Default::default() };
    assert_eq!(list(&*s, &f).await.len(), 2);
    let f = JobFilter { task: Some("x".into()), ..Default::default() };
    assert_eq!(list(&*s, &f).await.len(), 2);
    let f = JobFilter { queue: Some("a".into()), task: Some("x".into()), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![a_x]);
}

/// The wider filter matches a substring of the metadata text.
pub async fn listing_filtered_by_metadata_substring(h: &dyn Harness) {
    let s = open(h, "default").await;
    let meta = |m: &str| EnqueueOptions { metadata: Some(m.into()), ..Default::default() };
    let acme = put(&*s, job_with("t", "", meta(r#"{"tenant":"acme-corp"}"#)), now()).await;
    put(&*s, job_with("t", "", meta(r#"{"tenant":"globex"}"#)), now()).await;
    put(&*s, job("t", ""), now()).await;
    let f = JobFilter { metadata_contains: Some("acme".into()), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![acme]);
}

/// The wider filter matches a substring of the last error.
pub async fn listing_filtered_by_error_substring(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    fail(&*s, &c, "connection refused by upstream", true, at(1)).await;
    let d = start(&*s, job("t", ""), at(2)).await;
    fail(&*s, &d, "bad request", false, at(3)).await;
    put(&*s, job("t", ""), at(4)).await;
    let f = JobFilter { error_contains: Some("refused".into()), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![c.job.id]);
}

/// The created range is inclusive at `created_after` and exclusive at `created_before`.
pub async fn listing_filtered_by_created_range(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("t", "0"), at(0)).await;
    let mid = put(&*s, job("t", "1"), at(1_000)).await;
    put(&*s, job("t", "2"), at(2_000)).await;
    let f =
        JobFilter { created_after: Some(at(1_000)), created_before: Some(at(2_000)), ..Default::default() };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![mid]);
    let f = JobFilter { created_after: Some(at(500)), ..Default::default() };
    assert_eq!(list(&*s, &f).await.len(), 2);
}

/// Wide and narrow fields combine: status plus metadata.
pub async fn listing_filtered_combines_with_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let meta = EnqueueOptions { metadata: Some(r#"{"k":"v"}"#.into()), ..Default::default() };
    let done = finish(&*s, job_with("t", "", meta.clone()), now()).await;
    put(&*s, job_with("t", "", meta), at(1)).await;
    let f = JobFilter {
        status: Some(JobStatus::Completed),
        metadata_contains: Some("\"v\"".into()),
        ..Default::default()
    };
    assert_eq!(list(&*s, &f).await.into_iter().map(|j| j.id).collect::<Vec<_>>(), vec![done]);
}

/// A limit of 0 or above the largest page is `InvalidArgument`.
pub async fn listing_bad_limit_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 0, offset: 0 }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: MAX_PAGE + 1, offset: 0 }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.list_jobs_after(ListJobsAfterRequest { filter: JobFilter::default(), limit: 0, after: None }).await,
        ErrorKind::InvalidArgument,
    );
}

/// `job_errors` of an unknown job is `NotFound`; of a clean job it is empty.
pub async fn listing_job_errors_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.job_errors(&JobId::new()).await, ErrorKind::NotFound);
    let id = put(&*s, job("t", ""), now()).await;
    assert!(s.job_errors(&id).await.unwrap().is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_listing {
    ($callback:path, $make:path) => {
        $callback!($make;
            listing::listing_newest_first,
            listing::listing_same_instant_ordered_by_id,
            listing::listing_offset_and_limit,
            listing::listing_filters_by_status,
            listing::listing_filters_by_queue_and_task,
            listing::listing_filtered_by_metadata_substring,
            listing::listing_filtered_by_error_substring,
            listing::listing_filtered_by_created_range,
            listing::listing_filtered_combines_with_status,
            listing::listing_bad_limit_is_invalid,
            listing::listing_job_errors_unknown_is_not_found,
        );
    };
}
