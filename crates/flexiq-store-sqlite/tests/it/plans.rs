//! `EXPLAIN QUERY PLAN` of every keyset listing, the claim query, the ack lookup, the sweeps,
//! the workflow lookups and fair claim steps, the admin selections, the delayed rows a
//! promotion reads, the edge reads of flows, the dedup record lookups and the job scheduler
//! reads (by id, a keyset page, the count, the due scan): index seeks only, no
//! full table scans, no temporary b-trees for ordering. The orphan sweeps walk their own side table
//! and nothing else.

use flexiq_store_sqlite::query_plans::{orphan_sweeps, planned_queries};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

fn plan(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let unbound = std::iter::repeat_n(rusqlite::types::Null, stmt.parameter_count());
    let rows = stmt.query_map(rusqlite::params_from_iter(unbound), |r| r.get::<_, String>(3)).unwrap();
    rows.collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn hot_and_listing_queries_are_index_seeks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plans.db");
    drop(SqliteStore::open(&path, SqliteOptions::default()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let queries = planned_queries();
    assert!(queries.len() >= 20, "every listing, the claim, the ack lookup and the sweeps are covered");
    let mut bad = Vec::new();
    for q in &queries {
        let lines = plan(&conn, &q.sql);
        let seeks = lines.iter().any(|l| l.starts_with("SEARCH"));
        // Walking the JSON id list a batch passes in is the one scan allowed.
        let scans = lines.iter().any(|l| l.starts_with("SCAN") && !l.contains(" VIRTUAL TABLE "));
        let sorts = lines.iter().any(|l| l.contains("TEMP B-TREE"));
        let by_id = q.name.starts_with("ack") && !lines.iter().any(|l| l.contains("jobs_id (id=?)"));
        if !seeks || scans || sorts || by_id {
            bad.push(format!("{}: {lines:?}", q.name));
        }
    }
    assert!(bad.is_empty(), "queries that do not seek an index:\n{}", bad.join("\n"));
}

#[test]
fn the_claim_seeks_the_partial_claim_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claim.db");
    drop(SqliteStore::open(&path, SqliteOptions::default()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    for q in planned_queries().iter().filter(|q| q.name.starts_with("claim")) {
        let lines = plan(&conn, &q.sql);
        assert!(
            lines.iter().any(|l| l.contains("USING INDEX jobs_claim (ns=? AND queue=?)")),
            "{}: {lines:?}",
            q.name
        );
    }
}

#[test]
fn workflow_lookups_and_fair_claim_steps_seek_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("workflow.db");
    drop(SqliteStore::open(&path, SqliteOptions::default()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let expect = [
        ("stage holder of an enqueue", "USING INDEX jobs_wf_stage (ns=? AND wf_run=? AND wf_stage=?)"),
        ("stage lookup", "USING INDEX jobs_wf_stage (ns=? AND wf_run=? AND wf_stage=?)"),
        ("jobs of a run", "USING INDEX jobs_wf_run (ns=? AND wf_run=?)"),
        ("unstarted jobs of a run", "USING INDEX jobs_wf_run (ns=? AND wf_run=?)"),
        ("fair claim best job", "USING INDEX jobs_claim (ns=? AND queue=?)"),
        ("fair claim best job of a group", "USING INDEX jobs_fair (ns=? AND queue=? AND <expr>=?)"),
        ("fair claim next job of a group", "USING INDEX jobs_fair (ns=? AND queue=? AND <expr>=?"),
        ("fair claim first group", "USING INDEX jobs_fair (ns=? AND queue=?)"),
        ("fair claim next group", "USING INDEX jobs_fair (ns=? AND queue=? AND <expr>>?)"),
        (
            "fair claim running of a group",
            "USING COVERING INDEX jobs_group_running (ns=? AND queue=? AND group_key=?)",
        ),
        ("fair claim running with a group", "USING COVERING INDEX jobs_group_running (ns=? AND queue=?"),
        ("fair claim cursor", "fair_cursor USING PRIMARY KEY (ns=?)"),
    ];
    let queries = planned_queries();
    for (name, index) in expect {
        let q = queries.iter().find(|q| q.name == name).unwrap_or_else(|| panic!("no planned query {name}"));
        let lines = plan(&conn, &q.sql);
        assert!(lines.iter().any(|l| l.starts_with("SEARCH") && l.contains(index)), "{name}: {lines:?}");
    }
}

fn fresh_file(name: &str) -> (tempfile::TempDir, rusqlite::Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    drop(SqliteStore::open(&path, SqliteOptions::default()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    (dir, conn)
}

#[test]
fn admin_selections_and_removals_seek_their_indexes() {
    let (_dir, conn) = fresh_file("admin.db");
    let expect = [
        (
            "admin clean of finished jobs",
            "jobs_queue_finished (ns=? AND queue=? AND status=? AND finished_at<?)",
        ),
        ("admin clean of pending or suspended jobs", "jobs_created (ns=? AND created_at<?)"),
        ("admin clean of waiting jobs", "jobs_queue_waiting (ns=? AND queue=? AND created_at<?)"),
        ("admin drain", "jobs_claim (ns=? AND queue=?)"),
        ("admin retry of finished jobs", "jobs_queue_finished (ns=? AND queue=? AND status=?)"),
        ("admin obliterate of claimable jobs", "jobs_claim (ns=? AND queue=?)"),
        ("admin obliterate of waiting jobs", "jobs_queue_waiting (ns=? AND queue=?)"),
        ("admin obliterate of finished jobs", "jobs_queue_finished (ns=? AND queue=? AND status=?)"),
        ("admin obliterate of running jobs", "jobs_running (ns=?)"),
        ("admin archived jobs of a queue", "archived_queue (ns=? AND queue=?)"),
        ("admin dead letters of a queue", "dead_letters_queue (ns=? AND queue=?)"),
        ("removal of a dead letter", "dead_letters_job (original_job_id=?)"),
        ("removal dependents", "job_deps_dep (dep_id=?)"),
        ("removal of job_errors rows", "job_errors_job (job_id=?)"),
        ("removal of task_logs rows", "task_logs_job (job_id=?)"),
        ("removal of task_metrics rows", "task_metrics_job (job_id=?)"),
        ("removal of replays rows", "replays_original (original_job_id=?)"),
        ("running jobs by worker", "jobs_running (ns=?)"),
        ("dependents with their edge policies", "job_deps_dep (dep_id=?)"),
        ("edges of a job with their dependencies' statuses", "d USING PRIMARY KEY (job_id=?)"),
        ("dependencies page", "job_deps USING PRIMARY KEY (job_id=? AND dep_id>?)"),
        ("dedup record", "dedup_keys USING PRIMARY KEY (ns=? AND key=?)"),
        ("removal of a held dedup record", "dedup_keys_job (ns=? AND job_id=?)"),
        ("retention purge of archived dedup holders", "dedup_keys_job (ns=? AND job_id=?)"),
    ];
    let queries = planned_queries();
    for (name, index) in expect {
        let q = queries.iter().find(|q| q.name == name).unwrap_or_else(|| panic!("no planned query {name}"));
        let lines = plan(&conn, &q.sql);
        assert!(lines.iter().any(|l| l.starts_with("SEARCH") && l.contains(index)), "{name}: {lines:?}");
    }
}

#[test]
fn job_scheduler_reads_seek_their_keys_and_the_due_index() {
    let (_dir, conn) = fresh_file("schedulers.db");
    let expect = [
        (
            "job scheduler by id",
            "job_schedulers USING INDEX sqlite_autoindex_job_schedulers_1 (ns=? AND id=?)",
        ),
        ("job schedulers keyset page", "sqlite_autoindex_job_schedulers_1 (ns=? AND id>?)"),
        ("job scheduler count", "sqlite_autoindex_job_schedulers_1 (ns=?)"),
        ("job schedulers due scan", "job_schedulers_due (ns=? AND (next_run_ms,id)>(?,?)"),
    ];
    let queries = planned_queries();
    for (name, index) in expect {
        let q = queries.iter().find(|q| q.name == name).unwrap_or_else(|| panic!("no planned query {name}"));
        let lines = plan(&conn, &q.sql);
        assert!(lines.iter().any(|l| l.starts_with("SEARCH") && l.contains(index)), "{name}: {lines:?}");
    }
}

#[test]
fn a_promotion_seeks_one_priority_of_the_claim_index_by_run_at() {
    let (_dir, conn) = fresh_file("promote.db");
    let queries = planned_queries();
    let q = queries
        .iter()
        .find(|q| q.name == "promote jobs of a priority")
        .expect("the promotion query is planned");
    let lines = plan(&conn, &q.sql);
    let index = "USING INDEX jobs_claim (ns=? AND queue=? AND priority=? AND run_at>? AND run_at<?)";
    assert!(lines.iter().any(|l| l.starts_with("SEARCH") && l.contains(index)), "{lines:?}");
}

#[test]
fn orphan_sweeps_walk_their_side_table_and_probe_jobs_by_id() {
    let (_dir, conn) = fresh_file("orphans.db");
    let sweeps = orphan_sweeps();
    assert_eq!(
        sweeps.len(),
        8,
        "errors, logs, metrics, replays, partials, both sides of the edges and dedup records"
    );
    for q in &sweeps {
        let lines = plan(&conn, &q.sql);
        let steps: Vec<&String> = lines.iter().filter(|l| !l.starts_with("CORRELATED")).collect();
        let (walks, probes): (Vec<&String>, Vec<&String>) =
            steps.into_iter().partition(|l| l.contains(&q.name));
        assert_eq!(walks.len(), 1, "{}: walks its side table once: {lines:?}", q.name);
        for probe in &probes {
            let by_id = probe.contains("jobs_id (id=?)") || probe.contains("archived_id (id=?)");
            assert!(probe.starts_with("SEARCH") && by_id, "{}: {probe} in {lines:?}", q.name);
        }
        assert!(probes.len() >= 2, "{}: probes both the jobs and the archive: {lines:?}", q.name);
        assert!(!lines.iter().any(|l| l.contains("TEMP B-TREE")), "{}: {lines:?}", q.name);
    }
}
