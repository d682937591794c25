//! The shared conformance suite against a local Redis, each case under its own key prefix.

#[path = "support/harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod harness;

use harness::make_harness;

flexiq_conformance::conformance_suite!(make_harness);
