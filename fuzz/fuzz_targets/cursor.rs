//! Keyset cursor decoding, sealed bodies and the encode/decode round trip.
//! The body is `fuzz_checks::cursor`, shared with its proptest twin in flexiq-core's tests.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/flexiq-core/tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::cursor::check(data));
