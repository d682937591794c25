//! Every area's case list, in one place, so `conformance_suite!` can stamp them all.
//!
//! Adding a case: write `pub async fn <area>_<behaviour>(h: &dyn Harness)` in its area module
//! under `cases/`, then name it in the `__cases_<area>!` list at the end of that module. A new
//! area also takes a line here and one in `cases/mod.rs`.

/// Calls `$callback!($make; module::case, ...)` once per area, with every case of the area.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_case {
    ($callback:path, $make:path) => {
        $crate::__cases_enqueue!($callback, $make);
        $crate::__cases_unique!($callback, $make);
        $crate::__cases_admission!($callback, $make);
        $crate::__cases_dependencies!($callback, $make);
        $crate::__cases_claim!($callback, $make);
        $crate::__cases_concurrency!($callback, $make);
        $crate::__cases_caps!($callback, $make);
        $crate::__cases_pause!($callback, $make);
        $crate::__cases_rate!($callback, $make);
        $crate::__cases_revoke!($callback, $make);
        $crate::__cases_ack!($callback, $make);
        $crate::__cases_fence!($callback, $make);
        $crate::__cases_heartbeat!($callback, $make);
        $crate::__cases_lease!($callback, $make);
        $crate::__cases_unstarted!($callback, $make);
        $crate::__cases_claim_seq!($callback, $make);
        $crate::__cases_requeue!($callback, $make);
        $crate::__cases_cancel!($callback, $make);
        $crate::__cases_get!($callback, $make);
        $crate::__cases_listing!($callback, $make);
        $crate::__cases_cursors!($callback, $make);
        $crate::__cases_stats!($callback, $make);
        $crate::__cases_metrics!($callback, $make);
        $crate::__cases_dead!($callback, $make);
        $crate::__cases_dead_pages!($callback, $make);
        $crate::__cases_purge!($callback, $make);
        $crate::__cases_archive!($callback, $make);
        $crate::__cases_replay!($callback, $make);
        $crate::__cases_dag!($callback, $make);
        $crate::__cases_partials!($callback, $make);
        $crate::__cases_logs!($callback, $make);
        $crate::__cases_settings!($callback, $make);
        $crate::__cases_leadership!($callback, $make);
        $crate::__cases_retention!($callback, $make);
        $crate::__cases_workers!($callback, $make);
        $crate::__cases_schema!($callback, $make);
        $crate::__cases_wait!($callback, $make);
        $crate::__cases_namespace!($callback, $make);
        $crate::__cases_namespace_history!($callback, $make);
        $crate::__cases_workflow!($callback, $make);
        $crate::__cases_workflow_fair!($callback, $make);
        $crate::__cases_workflow_batch!($callback, $make);
        $crate::__cases_workflow_ack_claim!($callback, $make);
        $crate::__cases_workflow_dead!($callback, $make);
        $crate::__cases_stalled!($callback, $make);
        $crate::__cases_flows!($callback, $make);
        $crate::__cases_dedup!($callback, $make);
        $crate::__cases_reschedule!($callback, $make);
        $crate::__cases_admin!($callback, $make);
        $crate::__cases_admin_remove!($callback, $make);
        $crate::__cases_workflow_run!($callback, $make);
        $crate::__cases_schedulers!($callback, $make);
        $crate::__cases_events!($callback, $make);
    };
}
