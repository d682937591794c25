//! Proptest twins of the cargo-fuzz targets in `fuzz/`, and the replay of their corpora.
//!
//! cargo-fuzz needs nightly and CI stays on stable, so each fuzz target's body (in
//! `fuzz_checks/`) also runs here: on arbitrary bytes, and on structured inputs drawn near each
//! parser's grammar (`fuzz_twins/strategies.rs`) so that most of a few thousand cases reach the code
//! past the first refusal. Every file kept in `fuzz/corpus/<target>/` is replayed too, so a crash
//! input, once added there, stays fixed.

mod fuzz_checks;
#[path = "fuzz_twins/strategies.rs"]
mod strategies;

use std::path::PathBuf;

use proptest::prelude::*;

use fuzz_checks::TARGETS;

/// Cases per twin: together the file runs in seconds in a debug build.
const CASES: u32 = 2048;
/// Cron twins walk slots through croner, which is slow in a debug build: fewer cases.
const CRON_CASES: u32 = 1024;

/// Arbitrary bytes for one case in four, the structured strategy for the rest.
fn input(structured: impl Strategy<Value = Vec<u8>> + 'static) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![1 => strategies::bytes(), 3 => structured]
}

/// One proptest twin: `test` runs `fuzz_checks::<target>::check` on `strategies::<target>()`.
macro_rules! twin {
    ($test:ident: $target:ident, $cases:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases($cases))]
            #[test]
            fn $test(data in input(strategies::$target())) {
                fuzz_checks::$target::check(&data);
            }
        }
    };
}

twin!(cron_rules_plan_and_fire_within_their_promises: cron, CRON_CASES);
twin!(cursors_decode_only_what_was_asked_and_round_trip: cursor, CASES);
twin!(enqueue_options_build_jobs_the_stores_accept: enqueue_options, CASES);
twin!(event_names_filters_and_stored_events_hold_up: events, CASES);
twin!(fairness_paths_parse_and_find_their_group: fairness, CASES);
twin!(flow_trees_plan_into_batches_the_stores_accept: flow, CASES);
twin!(job_ids_parse_to_canonical_ids: job_id, CASES);
twin!(metadata_validation_and_filters_agree: metadata, CASES);
twin!(metrics_aggregate_any_stored_rows: metrics, CASES);
twin!(names_and_codes_map_back_to_themselves: names, CASES);
twin!(rate_limits_parse_and_buckets_take_any_state: rate, CASES);
twin!(stored_scheduler_specs_decode_and_plan_without_panic: scheduler_spec, CRON_CASES);
twin!(settings_keys_follow_the_size_and_prefix_rules: settings, CASES);
twin!(stored_records_round_trip: stored_records, CASES);

fn corpus_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn every_corpus_file_passes_its_check() {
    let root = corpus_root();
    let mut replayed = 0;
    let mut failed = Vec::new();
    for (name, check) in TARGETS {
        assert!(root.join("fuzz_targets").join(format!("{name}.rs")).is_file(), "no fuzz target {name}");
        let dir = root.join("corpus").join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
            .map(|e| e.expect("a corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "corpus {name} is empty");
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file");
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(format!("{name}/{}", file.file_name().unwrap_or_default().to_string_lossy()));
            }
            replayed += 1;
        }
    }
    assert!(failed.is_empty(), "corpus files failing their check: {failed:?}");
    let dirs = std::fs::read_dir(root.join("corpus")).expect("the corpus directory").count();
    assert_eq!(dirs, TARGETS.len(), "a corpus directory has no target");
    assert!(replayed >= TARGETS.len());
}
