//! CI's short campaign on SQLite: 2,000 seeds by default, each in a fresh namespace of one
//! temp file. `FLEXIQ_SEED=<n>` replays one seed; `FLEXIQ_SEEDS=<count>` runs more.

use flexiq_testkit::{Backing, Campaign, SqliteBacking};

#[tokio::test]
async fn every_seed_keeps_the_invariants_on_sqlite() {
    let backing = SqliteBacking::open().expect("temp SQLite file");
    let report = Campaign::from_env(2_000).run(&backing).await;
    backing.cleanup().await;
    report.assert_passed();
}

/// Two runs of one seed on two fresh backings make the same calls, get the same faults and
/// the same replies: the trace is the same line for line.
#[tokio::test]
async fn a_seed_replays_exactly() {
    use flexiq_testkit::sim::{run_seed, SimOptions};
    for seed in [1, 7, 42, 1_234] {
        let mut runs = Vec::new();
        for _ in 0..2 {
            let backing = SqliteBacking::open().expect("temp SQLite file");
            let store = backing.namespace("replay").expect("namespace");
            runs.push(run_seed(store, seed, 99, &SimOptions::default()).await);
            backing.cleanup().await;
        }
        assert!(runs[0].trace.len() > 20, "seed {seed} did next to nothing");
        assert_eq!(runs[0].trace, runs[1].trace, "seed {seed} did not replay");
        assert_eq!(runs[0].injections, runs[1].injections, "seed {seed} injected other faults");
    }
}
