//! The events stream's tables and the triggers that write status events (schema version 9).
//!
//! Status events are written by triggers on `jobs` rather than by the operations: every write
//! path (the single transition in `apply.rs`, the batched claim and completion UPDATEs, the
//! in-place retries, workflow rewrites) then reports its changes without knowing about events,
//! and a path added later cannot forget to. A trigger runs inside the statement that fired it,
//! so the event commits or rolls back with the change. The `CASE` naming a change is generated
//! here from core's [`STATUS_EVENT_RULES`] and the data objects from [`status_event_fields`],
//! so this store names a change exactly as the others do.
//!
//! - `events`: one row per event. `AUTOINCREMENT`, so an id is never handed out twice even
//!   after trimming removed the newest rows: a reader's saved id stays a safe cursor. The id is
//!   global to the file; `events_ns` (namespace, id) serves a namespace's reads in order.
//! - `events_off`: the namespaces whose events are switched off. The triggers' `WHEN` probes
//!   it by primary key; the table holds a row only per switched-off namespace, so the probe is
//!   a seek into a page that is almost always cached and almost always empty.
//!
//! Trigger times come from the database clock (Unix ms), as a trigger sees no request.

use flexiq_core::events::{status_event_fields, ChangeIs, EventField, EventKind, STATUS_EVENT_RULES};
use flexiq_core::{JobStatus, Result};
use rusqlite::Connection;

use crate::error::SqlResultExt;

/// The tables and index of the stream (each `IF NOT EXISTS`, so the step can run twice).
const TABLES: &str = r#"
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ns TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    job_id TEXT,
    queue TEXT,
    task TEXT,
    attempt INTEGER,
    at_ms INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_ns ON events(ns, id);
CREATE TABLE IF NOT EXISTS events_off (
    ns TEXT NOT NULL PRIMARY KEY
) WITHOUT ROWID;
"#;

/// The database clock in Unix ms (constant within one statement).
const CLOCK_MS: &str = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";

/// True when namespace `ns_expr` writes events.
fn events_on_sql(ns_expr: &str) -> String {
    format!("NOT EXISTS (SELECT 1 FROM events_off WHERE ns = {ns_expr})")
}

/// The columns every event row is written with, in this order.
const EVENT_COLS: &str = "ns, kind, name, job_id, queue, task, attempt, at_ms, data";

/// The names of the triggers, for the migration's drop-and-create.
const TRIGGERS: [&str; 3] = ["events_job_insert", "events_job_status", "events_job_progress"];

/// The SQL value of `field` on the row as the change left it, and whether it can be NULL.
fn field_sql(field: EventField) -> (String, bool) {
    match field {
        EventField::Status => {
            let mut case = String::from("CASE NEW.status");
            for s in JobStatus::ALL {
                case.push_str(&format!(" WHEN {} THEN '{}'", s.code(), s.as_str()));
            }
            case.push_str(" END");
            (case, false)
        }
        EventField::RunAt => ("NEW.run_at".into(), false),
        EventField::WorkerId => ("NEW.worker_id".into(), true),
        EventField::ResultSize => ("COALESCE(length(NEW.result), 0)".into(), false),
        EventField::Error => ("NEW.last_error".into(), true),
    }
}

/// The data object of `fields`, leaving out those whose value is NULL. Each field that can be
/// NULL splits the expression in two (with it, without it), so the object is built in one
/// `json_object` call rather than built and then pruned.
fn object_sql(fields: &[EventField], known_set: &[EventField]) -> String {
    let open = fields.iter().copied().find(|f| field_sql(*f).1 && !known_set.contains(f));
    if let Some(f) = open {
        let without: Vec<EventField> = fields.iter().copied().filter(|g| *g != f).collect();
        let mut set = known_set.to_vec();
        set.push(f);
        return format!(
            "CASE WHEN {} IS NULL THEN {} ELSE {} END",
            field_sql(f).0,
            object_sql(&without, known_set),
            object_sql(fields, &set)
        );
    }
    if fields.is_empty() {
        return "'{}'".into();
    }
    let pairs: Vec<String> = fields.iter().map(|f| format!("'{}', {}", f.key(), field_sql(*f).0)).collect();
    format!("json_object({})", pairs.join(", "))
}

/// The data object a status event of `kind` carries.
fn data_sql(kind: EventKind) -> String {
    object_sql(status_event_fields(kind), &[])
}

/// The condition of one rule's `when` on OLD and NEW.
fn change_sql(when: ChangeIs) -> Option<&'static str> {
    match when {
        ChangeIs::Any => None,
        ChangeIs::Stalled => Some("NEW.stall_count > OLD.stall_count"),
        ChangeIs::AttemptGivenBack => Some("NEW.attempt < OLD.attempt"),
        ChangeIs::Fresh => Some("NEW.attempt = 0"),
    }
}

/// [`STATUS_EVENT_RULES`] as one `CASE` on the new status whose branches are `value(kind)`:
/// each status's branch walks that status's rules in table order, first match wins (rules for
/// different statuses never both match, so grouping them keeps the table's meaning). Returned
/// with whether it names every change, that is whether each status has a rule that matches
/// whatever the earlier status and counters; otherwise it is NULL for a change no rule names.
///
/// Switching on the status first costs a changed row one comparison per status before its
/// own, instead of a walk through every rule's conditions.
fn rules_case_sql(value: impl Fn(EventKind) -> String) -> (String, bool) {
    let mut case = String::from("CASE NEW.status");
    let mut names_all = true;
    for to in JobStatus::ALL {
        let mut branch = String::new();
        let mut closed = false;
        for r in STATUS_EVENT_RULES.iter().filter(|r| r.to == to) {
            let mut conds: Vec<String> =
                r.from.map(|f| format!("OLD.status = {}", f.code())).into_iter().collect();
            conds.extend(change_sql(r.when).map(str::to_string));
            if conds.is_empty() {
                branch = if branch.is_empty() {
                    value(r.kind)
                } else {
                    format!("CASE{branch} ELSE {} END", value(r.kind))
                };
                closed = true;
                break;
            }
            branch.push_str(&format!(" WHEN {} THEN {}", conds.join(" AND "), value(r.kind)));
        }
        names_all &= closed;
        if branch.is_empty() {
            continue;
        }
        if !closed {
            branch = format!("CASE{branch} END");
        }
        case.push_str(&format!(" WHEN {} THEN {branch}", to.code()));
    }
    case.push_str(" END");
    (case, names_all)
}

/// The `CREATE TRIGGER` statements, generated from core's rules.
pub(crate) fn triggers_sql() -> String {
    let on = events_on_sql("NEW.ns");
    let (kind, names_all) = rules_case_sql(|k| format!("'{}'", k.as_str()));
    let (data, _) = rules_case_sql(data_sql);
    // A rule table that leaves some change unnamed: such a change writes nothing.
    let named = if names_all { String::new() } else { format!(" AND ({kind}) IS NOT NULL") };
    let job = "NEW.id, NEW.queue, NEW.task, NEW.attempt";
    let enqueued = EventKind::Enqueued.as_str();
    let progress = EventKind::Progress.as_str();
    format!(
        "CREATE TRIGGER events_job_insert AFTER INSERT ON jobs WHEN {on}
BEGIN
    INSERT INTO events ({EVENT_COLS})
    VALUES (NEW.ns, '{enqueued}', '{enqueued}', {job}, {CLOCK_MS}, {enqueued_data});
END;
CREATE TRIGGER events_job_status AFTER UPDATE OF status ON jobs
WHEN OLD.status <> NEW.status AND {on}{named}
BEGIN
    INSERT INTO events ({EVENT_COLS})
    VALUES (NEW.ns, {kind}, {kind}, {job}, {CLOCK_MS}, {data});
END;
CREATE TRIGGER events_job_progress AFTER UPDATE OF progress ON jobs
WHEN NEW.progress IS NOT NULL AND {on}
BEGIN
    INSERT INTO events ({EVENT_COLS})
    VALUES (NEW.ns, '{progress}', '{progress}', {job}, {CLOCK_MS}, json_object('progress', NEW.progress));
END;",
        enqueued_data = data_sql(EventKind::Enqueued),
    )
}

/// Version 9: the events stream. Creates [`TABLES`] and (re)creates the triggers, dropping any
/// of the same name first, so the step can run twice and always leaves this build's rules.
pub(crate) fn v9_events(conn: &Connection) -> Result<()> {
    conn.execute_batch(TABLES).db()?;
    for t in TRIGGERS {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS {t}")).db()?;
    }
    conn.execute_batch(&triggers_sql()).db()
}

#[cfg(test)]
#[path = "events_schema_tests.rs"]
mod tests;
