//! Bad arguments: a clear one-line message on stderr and the documented exit code.

use crate::fixture::{flexiq, seeded};

#[test]
fn usage_errors_exit_2_with_one_line() {
    flexiq(&["frobnicate"]).fails(2, "frobnicate");
    flexiq(&["jobs", "list", "--bogus"]).fails(2, "--bogus");
    flexiq(&["dlq", "purge", "--url", "x.db"]).fails(2, "--older-than");
    flexiq(&["stats"]).fails(2, "FLEXIQ_URL");
    flexiq(&["stats", "--url", "mysql://h/db"]).fails(2, "mysql");
}

#[test]
fn help_and_version_exit_0() {
    let help = flexiq(&["--help"]).ok();
    for cmd in [
        "demo",
        "stats",
        "jobs",
        "dlq",
        "queue",
        "task",
        "requeue",
        "migrate",
        "contract",
        "retention",
        "settings",
        "workers",
    ] {
        assert!(help.stdout.contains(cmd), "help lacks {cmd}");
    }
    assert!(flexiq(&["--version"]).ok().stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn missing_sqlite_file_is_not_found_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.db");
    flexiq(&["stats", "--url", path.to_str().unwrap()]).fails(3, "does not exist");
    assert!(!path.exists());
}

#[tokio::test]
async fn bad_input_on_a_real_store_gets_typed_exit_codes() {
    let s = seeded().await;
    let unknown = flexiq::JobId::new().to_string();
    s.run(&["jobs", "show", &unknown]).fails(3, &unknown);
    s.run(&["jobs", "show", "not-a-uuid"]).fails(2, "not-a-uuid");
    s.run(&["jobs", "list", "--after", "garbage"]).fails(2, "cursor");
    s.run(&["jobs", "list", "--limit", "-5"]).fails(2, "limit -5");
    s.run(&["jobs", "list", "--limit", "0"]).fails(2, "limit 0");
    s.run(&["jobs", "list", "--status", "sleeping"]).fails(2, "sleeping");
    s.run(&["queue", "rate-limit", "mail", "10/d"]).fails(2, "10/d");
    s.run(&["queue", "concurrency", "mail", "0"]).fails(2, "concurrency 0");
    s.run(&["queue", "concurrency", "mail", "lots"]).fails(2, "lots");
    s.run(&["dlq", "retry", &unknown]).fails(3, &unknown);
    s.run(&["dlq", "delete", &unknown]).fails(3, &unknown);
    s.run(&["dlq", "delete", "nope"]).fails(2, "nope");
    s.run(&["dlq", "list", "--after", "garbage"]).fails(2, "cursor");
    s.run(&["dlq", "purge", "--older-than", "-1"]).fails(2, "-1");
    s.run(&["requeue", &unknown]).fails(3, &unknown);
    s.run(&["requeue", &s.pending[0]]).fails(4, "not running");
    s.run(&["settings", "get", "never.set"]).fails(3, "never.set");
    s.run(&["settings", "delete", "never.set"]).fails(3, "never.set");
    s.run(&["settings", "set", "retention:x", "1"]).fails(2, "reserved");
    s.run(&["contract", "raise", "99"]).fails(2, "99");
    s.run(&["retention", "preview", "--task-logs", "0"]).fails(2, "task_logs");
    s.run(&["retention", "preview", "--dead-letter", "-7"]).fails(2, "-7");
    // A cursor from one filter does not page another.
    let page = s.run(&["jobs", "list", "--limit", "1", "--json", "--queue", "mail"]).ok().json();
    let cursor = page["next_cursor"].as_str().unwrap().to_string();
    s.run(&["jobs", "list", "--after", &cursor, "--queue", "later"]).fails(2, "cursor");
}

#[tokio::test]
async fn a_closed_stdout_is_not_a_crash() {
    let s = seeded().await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flexiq"))
        .args(["jobs", "list", "--url", &s.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
