//! The events an operation writes itself, inside its own write: those that are not a job's
//! status change (the triggers of `events_schema.rs` write those). An enqueue absorbed by an
//! existing job (`deduplicated`), a queue paused or resumed, jobs removed by an operator, and
//! custom events.
//!
//! Each is one INSERT whose `WHERE` checks the namespace's switch, so a namespace switched off
//! costs its operations one probe and writes nothing. Times are the request's `now` (Unix ms),
//! or the wall clock for operations whose request carries none.

use flexiq_core::events::EventKind;
use flexiq_core::Result;
use rusqlite::{Connection, OptionalExtension};

use crate::error::SqlResultExt;
use crate::row::Loaded;

/// One event row, written unless its namespace (`?1`) is switched off.
const INSERT: &str = "INSERT INTO events (ns, kind, name, job_id, queue, task, attempt, at_ms, data)
    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
    WHERE NOT EXISTS (SELECT 1 FROM events_off WHERE ns = ?1)";

/// The job an event is about, as the event records it.
pub(crate) struct JobRef<'a> {
    /// The job id.
    pub(crate) id: &'a str,
    /// Its queue.
    pub(crate) queue: &'a str,
    /// Its task.
    pub(crate) task: &'a str,
    /// Its attempt counter.
    pub(crate) attempt: u32,
}

impl<'a> From<&'a Loaded> for JobRef<'a> {
    fn from(st: &'a Loaded) -> Self {
        JobRef { id: &st.id, queue: &st.queue, task: &st.task, attempt: st.attempt }
    }
}

/// An event to write.
pub(crate) struct NewEvent<'a> {
    /// Its kind.
    pub(crate) kind: EventKind,
    /// The kind's name, or a custom event's own name.
    pub(crate) name: &'a str,
    /// The job it is about.
    pub(crate) job_id: Option<&'a str>,
    /// The job's queue, or the queue it is about.
    pub(crate) queue: Option<&'a str>,
    /// The job's task.
    pub(crate) task: Option<&'a str>,
    /// The job's attempt counter.
    pub(crate) attempt: Option<u32>,
    /// Its data, encoded JSON.
    pub(crate) data: &'a str,
    /// When it happened (Unix ms).
    pub(crate) at_ms: i64,
}

impl<'a> NewEvent<'a> {
    /// A built-in event about `job`.
    fn about(kind: EventKind, job: JobRef<'a>, data: &'a str, at_ms: i64) -> Self {
        NewEvent {
            kind,
            name: kind.as_str(),
            job_id: Some(job.id),
            queue: Some(job.queue),
            task: Some(job.task),
            attempt: Some(job.attempt),
            data,
            at_ms,
        }
    }

    /// A built-in event about `queue` alone.
    fn of_queue(kind: EventKind, queue: &'a str, data: &'a str, at_ms: i64) -> Self {
        let name = kind.as_str();
        NewEvent { kind, name, job_id: None, queue: Some(queue), task: None, attempt: None, data, at_ms }
    }
}

/// Writes `ev` in `ns`; its id, or `None` when the namespace is switched off.
pub(crate) fn write(conn: &Connection, ns: &str, ev: &NewEvent<'_>) -> Result<Option<i64>> {
    let written = conn
        .prepare_cached(INSERT)
        .db()?
        .execute(rusqlite::params![
            ns,
            ev.kind.as_str(),
            ev.name,
            ev.job_id,
            ev.queue,
            ev.task,
            ev.attempt,
            ev.at_ms,
            ev.data
        ])
        .db()?;
    Ok((written == 1).then(|| conn.last_insert_rowid()))
}

/// `removed` for each of `gone`, written before their rows go.
pub(crate) fn removed(conn: &Connection, ns: &str, gone: &[Loaded], now: i64) -> Result<()> {
    for g in gone {
        write(conn, ns, &NewEvent::about(EventKind::Removed, g.into(), "{}", now))?;
    }
    Ok(())
}

/// `removed` for job `id` of `ns` of which only the archived copy is left.
pub(crate) fn removed_archived(conn: &Connection, ns: &str, id: &str, now: i64) -> Result<()> {
    job_ref_event(conn, ns, EventKind::Removed, id, "{}", now)
}

/// A queue's own event (`paused`, `resumed`, an obliterate's `removed`): no job.
pub(crate) fn queue_event(
    conn: &Connection,
    ns: &str,
    kind: EventKind,
    queue: &str,
    data: &serde_json::Value,
    now: i64,
) -> Result<()> {
    let data = data.to_string();
    write(conn, ns, &NewEvent::of_queue(kind, queue, &data, now)).map(|_| ())
}

/// The queue, task and attempt of job `?1` of `?2`, from the hot table or the archive.
pub(crate) const JOB_REF: &str = "SELECT queue, task, attempt FROM jobs WHERE id = ?1 AND ns = ?2
    UNION ALL SELECT queue, task, attempt FROM archived_jobs WHERE id = ?1 AND ns = ?2 LIMIT 1";

/// `deduplicated` on `holder`, the job that absorbed an enqueue by `key` (a unique key or a
/// dedup id).
pub(crate) fn deduplicated(conn: &Connection, ns: &str, holder: &str, key: &str, now: i64) -> Result<()> {
    let data = serde_json::json!({ "key": key }).to_string();
    job_ref_event(conn, ns, EventKind::Deduplicated, holder, &data, now)
}

/// A built-in event about job `id` of `ns`, its queue, task and attempt read from the hot row
/// or the archived copy; a job whose row is gone by now is named by id alone.
fn job_ref_event(conn: &Connection, ns: &str, kind: EventKind, id: &str, data: &str, now: i64) -> Result<()> {
    let found: Option<(String, String, u32)> = conn
        .prepare_cached(JOB_REF)
        .db()?
        .query_row((id, ns), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()
        .db()?;
    let ev = match &found {
        Some((queue, task, attempt)) => {
            NewEvent::about(kind, JobRef { id, queue, task, attempt: *attempt }, data, now)
        }
        None => NewEvent {
            kind,
            name: kind.as_str(),
            job_id: Some(id),
            queue: None,
            task: None,
            attempt: None,
            data,
            at_ms: now,
        },
    };
    write(conn, ns, &ev).map(|_| ())
}
