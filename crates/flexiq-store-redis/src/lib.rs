//! Placeholder crate awaiting its implementation.
