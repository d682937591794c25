use flexiq_core::events::{status_event, StatusChange};
use serde_json::{json, Value};

use super::*;

fn migrated() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&conn).unwrap();
    conn
}

fn insert(conn: &Connection, id: &str, status: JobStatus, attempt: u32) {
    conn.execute(
        "INSERT INTO jobs (id, ns, queue, task, payload, priority, status, attempt, max_retries,
            backoff_base, backoff_max, created_at, run_at)
         VALUES (?1, 'n', 'q', 't', x'00', 0, ?2, ?3, 3, 10, 100, 1, 77)",
        (id, status.code(), attempt),
    )
    .unwrap();
}

/// The newest event: (kind, job id, data).
fn newest(conn: &Connection) -> Option<(String, String, Value)> {
    conn.query_row("SELECT kind, job_id, data FROM events ORDER BY id DESC LIMIT 1", [], |r| {
        let data: String = r.get(2)?;
        Ok((r.get(0)?, r.get(1)?, serde_json::from_str(&data).unwrap()))
    })
    .ok()
}

fn count(conn: &Connection) -> i64 {
    conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap()
}

#[test]
fn the_trigger_names_every_status_change_as_core_does() {
    let conn = migrated();
    let attempts = [(1, 1), (2, 1), (1, 0), (0, 0), (0, 1)];
    let mut n = 0;
    for from in JobStatus::ALL {
        for to in JobStatus::ALL {
            for stalled in [false, true] {
                for (before, after) in attempts {
                    n += 1;
                    let id = format!("j{n}");
                    insert(&conn, &id, from, before);
                    let written = count(&conn);
                    conn.execute(
                        "UPDATE jobs SET status = ?2, attempt = ?3, stall_count = stall_count + ?4 WHERE id = ?1",
                        (&id, to.code(), after, u32::from(stalled)),
                    )
                    .unwrap();
                    let change = StatusChange {
                        from: Some(from),
                        to,
                        attempt_before: before,
                        attempt_after: after,
                        stalled,
                    };
                    let expected = status_event(change).map(|k| k.as_str().to_string());
                    let got = (count(&conn) > written).then(|| newest(&conn).unwrap().0);
                    assert_eq!(got, expected, "{change:?}");
                }
            }
        }
    }
}

#[test]
fn status_events_carry_their_fields_and_leave_out_nulls() {
    let conn = migrated();
    insert(&conn, "a", JobStatus::Waiting, 0);
    assert_eq!(
        newest(&conn).unwrap(),
        ("enqueued".into(), "a".into(), json!({"status": "waiting", "run_at": 77}))
    );
    conn.execute_batch("UPDATE jobs SET status = 0 WHERE id = 'a'").unwrap();
    assert_eq!(newest(&conn).unwrap().0, "released");
    conn.execute_batch("UPDATE jobs SET status = 1, attempt = 1 WHERE id = 'a'").unwrap();
    assert_eq!(newest(&conn).unwrap().2, json!({}), "no worker named: no worker_id");
    conn.execute_batch("UPDATE jobs SET status = 0, last_error = 'boom', run_at = 90 WHERE id = 'a'")
        .unwrap();
    assert_eq!(
        newest(&conn).unwrap(),
        ("retried".into(), "a".into(), json!({"error": "boom", "run_at": 90}))
    );
    conn.execute_batch("UPDATE jobs SET status = 1, attempt = 2, worker_id = 'w' WHERE id = 'a'").unwrap();
    assert_eq!(newest(&conn).unwrap().2, json!({"worker_id": "w"}));
    conn.execute_batch("UPDATE jobs SET progress = 12.5 WHERE id = 'a'").unwrap();
    assert_eq!(newest(&conn).unwrap(), ("progress".into(), "a".into(), json!({"progress": 12.5})));
    conn.execute_batch("UPDATE jobs SET status = 2, result = x'010203' WHERE id = 'a'").unwrap();
    assert_eq!(newest(&conn).unwrap(), ("completed".into(), "a".into(), json!({"result_size": 3})));
    let written = count(&conn);
    conn.execute_batch("UPDATE jobs SET status = 2, progress = NULL WHERE id = 'a'").unwrap();
    assert_eq!(count(&conn), written, "no change of status, no progress: nothing written");
}

#[test]
fn a_namespace_switched_off_gets_no_trigger_events() {
    let conn = migrated();
    conn.execute_batch("INSERT INTO events_off (ns) VALUES ('n')").unwrap();
    insert(&conn, "a", JobStatus::Pending, 0);
    conn.execute_batch("UPDATE jobs SET status = 1, attempt = 1, progress = 1 WHERE id = 'a'").unwrap();
    assert_eq!(count(&conn), 0);
}

#[test]
fn the_step_runs_twice_and_keeps_one_set_of_triggers() {
    let conn = migrated();
    v9_events(&conn).unwrap();
    let triggers: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'events_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(triggers, 3);
    insert(&conn, "a", JobStatus::Pending, 0);
    assert_eq!(count(&conn), 1);
}
