//! CI's short campaign on Redis (`FLEXIQ_REDIS_URL`): 300 seeds by default, under a key
//! prefix of its own that is deleted afterwards. Producers re-send a failed enqueue with the
//! same ids as well as with fresh ones, as on the other stores: the store refuses an id it
//! already holds (`duplicate_id.rs`).

use flexiq_testkit::{Backing, Campaign, RedisBacking};

#[tokio::test]
async fn every_seed_keeps_the_invariants_on_redis() {
    let backing = RedisBacking::open().await.expect("connect to redis");
    let report = Campaign::from_env(300).run(&backing).await;
    backing.cleanup().await;
    report.assert_passed();
}
