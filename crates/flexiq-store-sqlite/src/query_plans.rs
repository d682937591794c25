//! The SQL of the hot and listing queries, exposed so tests can check their query plans
//! (`EXPLAIN QUERY PLAN`): index seeks, no full scans (only of an id list passed as JSON), no
//! temporary b-trees for ordering.

use flexiq_core::cursor::Cursor;
use flexiq_core::{JobFilter, JobStatus};

use crate::inspect::{archived_page_sql, jobs_page_sql};

/// One query whose plan matters, with a name for test output.
#[derive(Debug, Clone)]
pub struct PlannedQuery {
    /// What the query does (`"claim"`, `"jobs keyset page"`, ...).
    pub name: String,
    /// The SQL text, with `?N` parameters left unbound.
    pub sql: String,
}

fn q(name: &str, sql: impl Into<String>) -> PlannedQuery {
    PlannedQuery { name: name.to_string(), sql: sql.into() }
}

/// The orphan sweeps: (side table, SQL). Each walks its side table (that is their job) and
/// may only probe the jobs and the archive by id.
pub fn orphan_sweeps() -> Vec<PlannedQuery> {
    let mut out: Vec<PlannedQuery> = crate::orphans::SWEEPS.iter().map(|(t, sql, _)| q(t, *sql)).collect();
    out.push(q("job_deps", crate::orphans::DANGLING_EDGES));
    out
}

/// Every keyset listing (first and later pages, with and without filters), the claim query,
/// the ack lookup, the sweeps, the counters, the wake generation, the workflow lookups and
/// fair claim steps, the row selections of the admin operations and removals, the delayed
/// rows `promote_jobs` reads, the edge reads of flows, the dedup record lookups, the job
/// scheduler reads (one by id, a keyset page, the count, a round's due scan) and the events
/// stream's reads, trims and switch.
pub fn planned_queries() -> Vec<PlannedQuery> {
    let cursor = Cursor { listing: "jobs".into(), filter_fp: 0, sort_key: 0, id: String::new() };
    let mut out = vec![
        q("claim", crate::claim::claim_sql()),
        q("ack lookup", crate::row::state_sql()),
        q("ack lookup of a batch", crate::row::states_sql()),
        q("write of plain claims", crate::apply::CLAIMS_UPDATE),
        q("write of plain claims for several workers", crate::apply::CLAIMS_UPDATE_EACH),
        q("write of plain completions", crate::apply::COMPLETIONS_UPDATE),
        q("release stale sweep", crate::jobs::sweep_sql("heartbeat_at")),
        q("expire runaway sweep", crate::jobs::sweep_sql("started_at")),
        q("archive sweep", crate::maintenance::ARCHIVE_SWEEP),
        q("purge completed", crate::control::purge_completed_sql()),
        q("next priority", crate::wait::NEXT_PRIORITY),
        q("next run_at", crate::wait::NEXT_RUN_AT),
        q("count pending", "SELECT n FROM queue_counts WHERE ns = ?1 AND queue = ?2 AND status = 0"),
        q("wake generation read", crate::wake::READ_GEN),
        q("wake generation bump", crate::wake::BUMP_GEN),
        q("dead letters keyset first page", crate::dead::dead_page_sql(false)),
        q("dead letters keyset page", crate::dead::dead_page_sql(true)),
        q("archive keyset first page", archived_page_sql("ns", None, 10).0),
        q("archive keyset page", archived_page_sql("ns", Some(&cursor), 10).0),
        q("stage holder of an enqueue", crate::enqueue::STAGE_HOLDER),
        q("stage lookup", crate::workflow::stage_sql()),
        q("jobs of a run", crate::workflow::run_jobs_sql()),
        q("unstarted jobs of a run", crate::workflow::RUN_UNSTARTED),
        q("fair claim best job", crate::workflow_claim::best_sql()),
        q("fair claim best job of a group", crate::workflow_claim::best_in_group_sql()),
        q("fair claim next job of a group", crate::workflow_claim::next_in_group_sql()),
        q("fair claim first group", crate::workflow_claim::FIRST_GROUP),
        q("fair claim next group", crate::workflow_claim::NEXT_GROUP),
        q("fair claim running of a group", crate::workflow_claim::GROUP_RUNNING),
        q("fair claim running with a group", crate::workflow_claim::GROUPED_RUNNING),
        q("fair claim cursor", crate::workflow_claim::READ_CURSOR),
        q("admin clean of finished jobs", crate::admin::clean_finished_sql()),
        q("admin clean of pending or suspended jobs", crate::admin::clean_created_sql()),
        q("admin clean of waiting jobs", crate::admin::clean_waiting_sql()),
        q("admin drain", crate::admin::drain_sql()),
        q("admin retry of finished jobs", crate::admin::retry_sql()),
        q("admin archived jobs of a queue", crate::admin::ARCHIVED_OF_QUEUE),
        q("admin dead letters of a queue", crate::admin::DEAD_LETTERS_OF_QUEUE),
        q("removal of a dead letter", crate::removal::DEAD_LETTER_OF_JOB),
        q("removal dependents", crate::removal::DEPENDENTS),
        q("running jobs by worker", crate::maintenance::RUNNING_BY_WORKER),
        q("promote jobs of a priority", crate::reschedule::DELAYED_AT_PRIORITY),
        q("dependents with their edge policies", crate::flows::DEPENDENTS_WITH_POLICY),
        q("edges of a job with their dependencies' statuses", crate::flows::EDGES_OF),
        q("dependencies page", crate::flows::EDGE_PAGE),
        q("dedup record", crate::dedup::RECORD),
        q("removal of a held dedup record", crate::dedup::RELEASE_HELD),
        q("retention purge of archived dedup holders", crate::maintenance::ARCHIVED_DEDUP_PURGE),
        q("job scheduler by id", crate::schedulers::one_sql()),
        q("job schedulers keyset page", crate::schedulers::page_sql()),
        q("job scheduler count", crate::schedulers::COUNT),
        q("job schedulers due scan", crate::schedulers::due_sql()),
        q("events page", crate::events::READ_PAGE),
        q("newest event id", crate::events::LAST_ID),
        q("events trim to a length", crate::events::TRIM_TO_LEN),
        q("events trim by age", crate::events::TRIM_BEFORE),
        q("events switch", crate::events::EVENTS_ON),
        q("event's job lookup", crate::events_write::JOB_REF),
    ];
    for (what, sql) in crate::admin::obliterate_sqls() {
        out.push(q(&format!("admin obliterate of {what} jobs"), sql));
    }
    for sql in crate::removal::HISTORY {
        let table = sql.split_whitespace().nth(2).unwrap_or("history");
        out.push(q(&format!("removal of {table} rows"), sql));
    }
    let filters = [
        ("", JobFilter::default()),
        (" by status", JobFilter { status: Some(JobStatus::Completed), ..Default::default() }),
        (" by queue", JobFilter { queue: Some("q".into()), ..Default::default() }),
        (" by task", JobFilter { task: Some("t".into()), ..Default::default() }),
    ];
    for (label, f) in filters {
        out.push(q(&format!("jobs keyset first page{label}"), jobs_page_sql("ns", &f, None, 10).0));
        out.push(q(&format!("jobs keyset page{label}"), jobs_page_sql("ns", &f, Some(&cursor), 10).0));
    }
    out
}
