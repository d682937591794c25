//! Conformance cases, one module per area.

pub mod enqueue;
