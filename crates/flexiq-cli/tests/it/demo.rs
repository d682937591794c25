//! `flexiq demo`: a small workload ends as scripted and the report is printed, and the SQLite
//! file it leaves is self-contained.

use crate::fixture::flexiq;

#[test]
fn demo_runs_a_small_workload_and_prints_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let db = db.to_str().unwrap();
    let run = flexiq(&["demo", "--jobs", "60", "--concurrency", "8", "--db", db]).ok();
    for needle in [
        "queues:",
        "emails",
        "images",
        "reports",
        "metrics per task",
        "p99 ms",
        "webhook.deliver",
        "dead letters (1)",
        "every job ended as scripted",
    ] {
        assert!(run.stdout.contains(needle), "missing {needle:?} in:\n{}", run.stdout);
    }
    // The file is recreated on every run: a second run starts from an empty store again.
    flexiq(&["demo", "--jobs", "20", "--db", db]).ok();
    let stats = flexiq(&["stats", "--json", "--url", db]).ok().json();
    let total: u64 = stats.as_object().unwrap().values().map(|q| q["total"].as_u64().unwrap()).sum();
    assert_eq!(total, 20);
}

#[test]
fn demo_json_report_parses_and_every_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let v = flexiq(&["demo", "--jobs", "40", "--json", "--url", &url]).ok().json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["expected"]["jobs"], 40);
    assert!(v["namespace"].as_str().unwrap().starts_with("demo-"), "{}", v["namespace"]);
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.len() >= 8);
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:?}");
    assert_eq!(v["dead_letters"].as_array().unwrap().len() as u64, v["expected"]["dead"].as_u64().unwrap());
    assert!(v["metrics"]["etl.load"]["count"].as_u64().unwrap() >= 1);
    // A second run on the same URL gets its own namespace and passes too.
    let again = flexiq(&["demo", "--jobs", "20", "--json", "--url", &url]).ok().json();
    assert_ne!(again["namespace"], v["namespace"]);
}

#[test]
fn demo_leaves_a_db_file_that_holds_every_job_without_its_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let v = flexiq(&["demo", "--jobs", "60", "--concurrency", "8", "--json", "--db", db.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(v["ok"], true);
    let wal = std::fs::metadata(dir.path().join("demo.db-wal")).map(|m| m.len()).unwrap_or(0);
    assert_eq!(wal, 0, "the demo closes its store: the WAL is checkpointed into the .db and emptied");
    // Only the .db file is copied, as a user would attach it to a bug report.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let jobs: i64 = conn.query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0)).unwrap();
    assert_eq!(jobs, 60);
    let dead: i64 = conn.query_row("SELECT COUNT(*) FROM dead_letters", [], |r| r.get(0)).unwrap();
    assert_eq!(dead as u64, v["expected"]["dead"].as_u64().unwrap());
    drop(conn);
    // The copy reports exactly what the demo saw, queue by queue and status by status.
    let stats = flexiq(&["stats", "--json", "--url", copy.to_str().unwrap()]).ok().json();
    assert_eq!(stats, v["queues"]);
}

#[test]
fn demo_refuses_a_namespace_that_holds_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("ns.db").display());
    flexiq(&["demo", "--jobs", "20", "--json", "--url", &url, "--namespace", "mine"]).ok();
    flexiq(&["demo", "--jobs", "20", "--url", &url, "--namespace", "mine"])
        .fails(4, "namespace mine already holds 20 jobs");
}

#[test]
fn demo_rejects_bad_options() {
    flexiq(&["demo", "--jobs", "5"]).fails(2, "--jobs 5");
    flexiq(&["demo", "--jobs", "-3"]).fails(2, "--jobs -3");
    flexiq(&["demo", "--concurrency", "0"]).fails(2, "--concurrency 0");
    flexiq(&["demo", "--timeout", "0"]).fails(2, "--timeout 0");
    flexiq(&["demo", "--db", "a.db", "--url", "b.db"]).fails(2, "not both");
    let dir = tempfile::tempdir().unwrap();
    flexiq(&["demo", "--db", dir.path().to_str().unwrap()]).fails(2, "is a directory");
}
