//! Job id parsing and the timestamp inside an id.
//! The body is `fuzz_checks::job_id`, shared with its proptest twin in flexiq-core's tests.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/flexiq-core/tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::job_id::check(data));
