//! CI's short campaign on Redis (`FLEXIQ_REDIS_URL`): 300 seeds by default, under a key
//! prefix of its own that is deleted afterwards.
//!
//! Producers here re-send a failed enqueue only as new jobs under the same unique keys, never
//! with the same ids: the Redis store accepts an enqueue of an id it already holds, overwriting
//! the job (see `duplicate_id.rs`), so every seed that re-sent an id after a lost reply would
//! fail on that one known bug and hide any other. Allow same-id re-sends once it is fixed.

use flexiq_testkit::{Backing, Campaign, RedisBacking};

#[tokio::test]
async fn every_seed_keeps_the_invariants_on_redis() {
    let backing = RedisBacking::open().await.expect("connect to redis");
    let report = Campaign::from_env(300).without_same_id_resends().run(&backing).await;
    backing.cleanup().await;
    report.assert_passed();
}
