//! Rate limits: a token bucket per queue, refilled by the injected clock.

use flexiq_core::store::SetRateLimitRequest;
use flexiq_core::RateLimit;

use crate::fixtures::{at, job_in, now, open, put_all, take, take_from};
use crate::Harness;

async fn backlog(s: &dyn flexiq_core::Store, queue: &str, n: usize) {
    put_all(s, (0..n).map(|_| job_in(queue, "t")).collect(), now()).await;
}

/// "2/s" grants two claims at once, then none until the bucket refills.
pub async fn rate_claims_beyond_bucket_return_fewer(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("2/s").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "q", 10).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 2);
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
    assert_eq!(s.count_pending("q").await.unwrap(), 8);
}

/// The bucket refills with the injected clock: half a second of "2/s" is one more claim.
pub async fn rate_bucket_refills_with_time(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("2/s").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "q", 10).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 2);
    assert!(take_from(&*s, &["q"], 10, at(100)).await.is_empty());
    assert_eq!(take_from(&*s, &["q"], 10, at(600)).await.len(), 1);
}

/// A long idle period refills the bucket only up to its size.
pub async fn rate_bucket_never_exceeds_its_size(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("3/s").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "q", 20).await;
    assert_eq!(take_from(&*s, &["q"], 20, now()).await.len(), 3);
    assert_eq!(take_from(&*s, &["q"], 20, at(3_600_000)).await.len(), 3);
}

/// Per-minute limits: "5/m" grants five, then one more after twelve seconds.
pub async fn rate_per_minute_window(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("5/m").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "q", 10).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 5);
    assert!(take_from(&*s, &["q"], 10, at(11_000)).await.is_empty());
    assert_eq!(take_from(&*s, &["q"], 10, at(12_000)).await.len(), 1);
}

/// A limited queue does not hold back other queues in the same claim.
pub async fn rate_other_queues_unaffected(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "slow".into(),
        limit: Some(RateLimit::parse("1/h").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "slow", 3).await;
    backlog(&*s, "fast", 3).await;
    let got = take(&*s, 10, now()).await;
    assert_eq!(got.iter().filter(|c| c.job.queue == "slow").count(), 1);
    assert_eq!(got.iter().filter(|c| c.job.queue == "fast").count(), 3);
}

/// `queue_config` reports the limit, and clearing it lifts the limit.
pub async fn rate_clearing_lifts_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    let limit = RateLimit::parse("1/h").unwrap();
    s.set_rate_limit(SetRateLimitRequest { queue: "q".into(), limit: Some(limit) }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap().rate_limit, Some(limit));
    backlog(&*s, "q", 4).await;
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 1);
    s.set_rate_limit(SetRateLimitRequest { queue: "q".into(), limit: None }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap().rate_limit, None);
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 3);
}

/// A rate limit is persisted: another handle on the namespace is held to the same bucket.
pub async fn rate_limit_shared_across_handles(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("2/h").unwrap()),
    })
    .await
    .unwrap();
    backlog(&*s, "q", 6).await;
    let other = open(h, "default").await;
    assert_eq!(take_from(&*s, &["q"], 1, now()).await.len(), 1);
    assert_eq!(take_from(&*other, &["q"], 10, now()).await.len(), 1);
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
}

/// A malformed limit (zero jobs, or a zero-length window) is `InvalidArgument` and not stored.
pub async fn rate_malformed_limit_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    let zero_count = RateLimit { count: 0, per_ms: 1_000 };
    let zero_window = RateLimit { count: 5, per_ms: 0 };
    for bad in [zero_count, zero_window] {
        let r = s.set_rate_limit(SetRateLimitRequest { queue: "q".into(), limit: Some(bad) }).await;
        crate::fixtures::assert_kind(r, flexiq_core::ErrorKind::InvalidArgument);
    }
    assert_eq!(s.queue_config("q").await.unwrap().rate_limit, None);
}

/// Tokens are spent only on jobs actually claimed: an empty claim or a small limit saves them.
pub async fn rate_tokens_spent_only_on_claimed_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_rate_limit(SetRateLimitRequest {
        queue: "q".into(),
        limit: Some(RateLimit::parse("3/h").unwrap()),
    })
    .await
    .unwrap();
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
    backlog(&*s, "q", 10).await;
    assert_eq!(take_from(&*s, &["q"], 1, now()).await.len(), 1);
    assert_eq!(take_from(&*s, &["q"], 10, now()).await.len(), 2);
    assert!(take_from(&*s, &["q"], 10, now()).await.is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_rate {
    ($callback:path, $make:path) => {
        $callback!($make;
            rate::rate_claims_beyond_bucket_return_fewer,
            rate::rate_bucket_refills_with_time,
            rate::rate_bucket_never_exceeds_its_size,
            rate::rate_per_minute_window,
            rate::rate_other_queues_unaffected,
            rate::rate_clearing_lifts_limit,
            rate::rate_limit_shared_across_handles,
            rate::rate_malformed_limit_is_invalid,
            rate::rate_tokens_spent_only_on_claimed_jobs,
        );
    };
}
