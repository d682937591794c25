//! Reading one job and its result.

use flexiq_core::{ErrorKind, JobId};

use crate::fixtures::{assert_kind, at, complete, fail, job, now, open, put, start};
use crate::Harness;

/// `get` of an unknown id is `None`, not an error.
pub async fn get_unknown_is_none(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.get(&JobId::new()).await.unwrap().is_none());
}

/// `get_result` of an unknown id is `NotFound`.
pub async fn get_result_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.get_result(&JobId::new()).await, ErrorKind::NotFound);
}

/// Result bytes round-trip exactly, including NUL and non-UTF-8 bytes.
pub async fn get_result_bytes_round_trip(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let bytes: Vec<u8> = (0..=255u8).rev().collect();
    complete(&*s, &c, Some(&bytes), at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), Some(bytes));
}

/// Before completion there is no result: pending, running and retrying jobs answer `None`.
pub async fn get_result_none_before_completion(h: &dyn Harness) {
    let s = open(h, "default").await;
    let pending = put(&*s, job("t", ""), now()).await;
    assert_eq!(s.get_result(&pending).await.unwrap(), None);
    let c = crate::fixtures::claim_id(&*s, &pending, now()).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
    fail(&*s, &c, "e", true, at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
}

/// A job completed without a result answers `None`; a failed one too.
pub async fn get_result_none_without_result(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, None, at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
    let f = start(&*s, job("t", ""), at(2)).await;
    fail(&*s, &f, "no", false, at(3)).await;
    assert_eq!(s.get_result(&f.job.id).await.unwrap(), None);
}

/// An empty result is distinct from no result.
pub async fn get_result_empty_bytes_kept(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, Some(&[]), at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), Some(vec![]));
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_get {
    ($callback:path, $make:path) => {
        $callback!($make;
            get::get_unknown_is_none,
            get::get_result_unknown_is_not_found,
            get::get_result_bytes_round_trip,
            get::get_result_none_before_completion,
            get::get_result_none_without_result,
            get::get_result_empty_bytes_kept,
        );
    };
}
