//! CI's short campaign on PostgreSQL (`FLEXIQ_PG_URL`): 300 seeds by default, in a schema of
//! its own that is dropped afterwards.

use flexiq_testkit::{Backing, Campaign, PgBacking};

#[tokio::test]
async fn every_seed_keeps_the_invariants_on_postgres() {
    let backing = PgBacking::open().await.expect("connect to postgres");
    let report = Campaign::from_env(300).run(&backing).await;
    backing.cleanup().await;
    report.assert_passed();
}
