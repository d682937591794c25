//! The list of every case, in one place, so `conformance_suite!` can stamp them all.
//!
//! Adding a case: write `pub async fn <area>_<behaviour>(h: &dyn Harness)` in its area module
//! under `cases/`, then name it here.

/// Calls `$callback!($make; module::case, ...)` with every case.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_case {
    ($callback:path, $make:path) => {
        $callback!($make;
            enqueue::enqueue_returns_ids_in_order,
        );
    };
}
