//! [`Events`]: custom events, reading the stream (blocking while it is empty), trimming it,
//! and the per-namespace switch.
//!
//! An event id is the decimal rowid of its `events` row: ids grow across the whole file and
//! are never reused (see `events_schema.rs`), so within a namespace they are ordered, and a
//! reader resumes with `id > after` whether or not trimming removed the event it saw last. A
//! blocked read registers with the hub before it reads (see `wake.rs`), so an event committed
//! between its read and its wait still wakes it; a commit of this process wakes it as the
//! commit returns, and one of another process within the watcher's poll interval. Reads go
//! through the reader pool; switching, publishing and trimming are writes.

use std::time::Duration;

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{Events, PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
use flexiq_core::{Error, Result};
use rusqlite::{Connection, Row};

use crate::error::{closed, SqlResultExt};
use crate::events_write::{write, NewEvent};
use crate::SqliteStore;

/// A page of namespace `?1`'s events after id `?2`, oldest first, at most `?3`.
pub(crate) const READ_PAGE: &str = "SELECT id, kind, name, job_id, queue, task, attempt, at_ms, data
    FROM events WHERE ns = ?1 AND id > ?2 ORDER BY id LIMIT ?3";

/// The newest event id of namespace `?1`.
pub(crate) const LAST_ID: &str = "SELECT max(id) FROM events WHERE ns = ?1";

/// Drops all but the newest `?2` events of namespace `?1`: everything up to the id `?2` places
/// below the newest (nothing when there are no more than `?2`).
pub(crate) const TRIM_TO_LEN: &str = "DELETE FROM events WHERE ns = ?1
    AND id <= (SELECT id FROM events WHERE ns = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)";

/// Drops the events of namespace `?1` written before `?2` (Unix ms).
pub(crate) const TRIM_BEFORE: &str = "DELETE FROM events WHERE ns = ?1 AND at_ms < ?2";

/// Whether namespace `?1` writes events.
pub(crate) const EVENTS_ON: &str = "SELECT COUNT(*) = 0 FROM events_off WHERE ns = ?1";

/// The id a reader passed, as a rowid: a non-negative decimal integer that fits 63 bits.
pub(crate) fn parse_event_id(id: &str) -> Result<i64> {
    let refuse =
        || Error::invalid(format!("event id {id:?} is not a sqlite event id (a non-negative integer)"));
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse());
    }
    id.parse::<i64>().map_err(|_| refuse())
}

/// An event row as stored, before its kind and data are parsed.
struct StoredEvent {
    id: i64,
    kind: String,
    event: QueueEvent,
    data: String,
}

fn stored_from_row(r: &Row<'_>) -> rusqlite::Result<StoredEvent> {
    let id: i64 = r.get(0)?;
    let event = QueueEvent {
        id: id.to_string(),
        kind: EventKind::Custom,
        name: r.get(2)?,
        job_id: r.get(3)?,
        queue: r.get(4)?,
        task: r.get(5)?,
        attempt: r.get(6)?,
        at_ms: r.get(7)?,
        data: serde_json::Value::Null,
    };
    Ok(StoredEvent { id, kind: r.get(1)?, event, data: r.get(8)? })
}

impl StoredEvent {
    /// The event with its kind and data parsed; a row this build cannot read names its id.
    fn parse(self) -> Result<QueueEvent> {
        let StoredEvent { id, kind, mut event, data } = self;
        event.kind = match EventKind::built_in(&kind) {
            Some(k) => k,
            None if kind == EventKind::Custom.as_str() => EventKind::Custom,
            None => return Err(Error::backend(format!("event {id} has unknown kind {kind:?}"))),
        };
        event.data = serde_json::from_str(&data)
            .map_err(|e| Error::backend(format!("event {id} holds data that is not JSON: {e}")))?;
        Ok(event)
    }
}

/// Up to `limit` events of `ns` after id `after`, oldest first.
pub(crate) fn read_page(conn: &Connection, ns: &str, after: i64, limit: u32) -> Result<Vec<QueueEvent>> {
    let mut stmt = conn.prepare_cached(READ_PAGE).db()?;
    let rows = stmt.query_map((ns, after, limit), stored_from_row).db()?;
    rows.map(|row| row.db()?.parse()).collect()
}

#[async_trait::async_trait]
impl Events for SqliteStore {
    async fn publish_event(&self, req: PublishEventRequest) -> Result<String> {
        let data = req.validate()?;
        let ns = self.ns();
        self.write_small(false, move |ctx| {
            let ev = NewEvent {
                kind: EventKind::Custom,
                name: &req.name,
                job_id: req.job_id.as_ref().map(|j| j.as_str()),
                queue: req.queue.as_deref(),
                task: None,
                attempt: None,
                data: &data,
                at_ms: req.now,
            };
            match write(ctx.conn, &ns, &ev)? {
                Some(id) => Ok(id.to_string()),
                None => Err(Error::Conflict(format!(
                    "events are switched off in namespace {ns}: custom event {} was not published",
                    req.name
                ))),
            }
        })
        .await
    }

    async fn read_events(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>> {
        req.validate()?;
        let after = req.after.as_deref().map(parse_event_id).transpose()?.unwrap_or(0);
        let (ns, limit) = (self.ns(), req.limit);
        if req.block_ms == 0 {
            return self.read(move |conn| read_page(conn, &ns, after, limit)).await;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_millis(req.block_ms);
        let mut watch = self.hub().watch_events();
        loop {
            watch.rx.borrow_and_update();
            let ns = ns.clone();
            let got = self.read(move |conn| read_page(conn, &ns, after, limit)).await?;
            if !got.is_empty() {
                return Ok(got);
            }
            tokio::select! {
                changed = watch.rx.changed() => changed.map_err(|_| closed())?,
                _ = tokio::time::sleep_until(deadline) => return Ok(Vec::new()),
            }
        }
    }

    async fn last_event_id(&self) -> Result<Option<String>> {
        let ns = self.ns();
        self.read(move |conn| {
            let id: Option<i64> = conn.prepare_cached(LAST_ID).db()?.query_row([&*ns], |r| r.get(0)).db()?;
            Ok(id.map(|id| id.to_string()))
        })
        .await
    }

    async fn trim_events(&self, req: TrimEventsRequest) -> Result<u64> {
        let ns = self.ns();
        self.write(false, move |ctx| {
            let keep = i64::try_from(req.max_len).unwrap_or(i64::MAX);
            let mut gone = ctx.conn.prepare_cached(TRIM_TO_LEN).db()?.execute((&*ns, keep)).db()?;
            if let Some(age) = req.max_age_ms {
                let cutoff = req.now.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX));
                gone += ctx.conn.prepare_cached(TRIM_BEFORE).db()?.execute((&*ns, cutoff)).db()?;
            }
            Ok(gone as u64)
        })
        .await
    }

    async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        let ns = self.ns();
        self.write_small(false, move |ctx| {
            let sql = if enabled {
                "DELETE FROM events_off WHERE ns = ?1"
            } else {
                "INSERT INTO events_off (ns) VALUES (?1) ON CONFLICT (ns) DO NOTHING"
            };
            ctx.conn.prepare_cached(sql).db()?.execute([&*ns]).db()?;
            Ok(())
        })
        .await
    }

    async fn events_enabled(&self) -> Result<bool> {
        let ns = self.ns();
        self.read(move |conn| conn.prepare_cached(EVENTS_ON).db()?.query_row([&*ns], |r| r.get(0)).db()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_id_is_a_non_negative_integer_that_fits() {
        assert_eq!(parse_event_id("0").unwrap(), 0);
        assert_eq!(parse_event_id("42").unwrap(), 42);
        assert_eq!(parse_event_id(&i64::MAX.to_string()).unwrap(), i64::MAX);
        for bad in ["", "-1", "+1", " 1", "1.5", "x", "9223372036854775808"] {
            let err = parse_event_id(bad).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT", "{bad:?}");
            assert!(err.to_string().contains(&format!("{bad:?}")), "names the id: {err}");
        }
    }
}
