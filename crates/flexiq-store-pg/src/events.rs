//! [`Events`] for [`PgStore`]: custom events, reading the stream (`events_read.rs`), trimming
//! it and switching it off per namespace (`events_off`, on by default).
//!
//! Who writes: status and progress changes of a job are written by the triggers of migration
//! 12 in the statement that makes them, whatever path that is. The operations whose events
//! are not a row change write them in their own transaction: an enqueue absorbed by a dedup
//! or unique key (`enqueue.rs`, `enqueue_dedup.rs`), pausing and resuming (`control.rs`),
//! removals by an operator (`remove.rs`, `admin.rs`, `control.rs`), and [`Events::publish_event`],
//! with the SQL they share in `event_writes.rs`. Each write checks `events_off` in the same
//! statement. Archiving and retention delete job rows without events.
//!
//! Order: a sequence number is taken when a row is inserted, not when its transaction
//! commits, so a reader that only asked for "ids above the last one" could read a later row
//! and then skip an earlier one whose transaction was still open. Each row therefore keeps the
//! id of its transaction, the stream is ordered by (transaction id, sequence), and a read
//! returns only rows of transactions below the oldest one still running
//! (`pg_snapshot_xmin(pg_current_snapshot())`): every transaction below it has ended, so no
//! row can ever appear before what was read. The price: a transaction that may still write
//! to this schema (including a prepared one) holds back its readers until it ends (the
//! cluster-wide horizon is narrowed to those, see `events_read.rs`); and two transactions are
//! ordered by when each first wrote, so for one job a change can come before a change it
//! waited for, when its transaction had written something else before the other began. Ids
//! are `<xid>-<sequence>` (`event_id.rs`).
//!
//! Waking readers: the triggers do not NOTIFY, since PostgreSQL serialises the commits of
//! transactions that notify (a quarter of the throughput at 16 clients on this machine, see
//! `wake.rs`); the operations announce their commits as they already do for work and job
//! waiters, and the operations above that change no job announce their events (`e`
//! payloads).

use flexiq_core::events::QueueEvent;
use flexiq_core::store::{Events, PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
use flexiq_core::{Error, Result};

use crate::db::uid;
use crate::event_id::EventId;
use crate::event_writes::events_on;
use crate::store::PgStore;

/// Deletes all but the newest `$2` events of namespace `$1`, and those written before `$3`.
const TRIM: &str = "WITH edge AS (SELECT xid, id FROM {S}.events WHERE ns = $1 \
      ORDER BY xid DESC, id DESC OFFSET $2 LIMIT 1), \
    gone AS (DELETE FROM {S}.events e WHERE e.ns = $1 \
      AND ((e.xid, e.id) <= (SELECT xid, id FROM edge) OR e.at_ms < $3) RETURNING 1) \
    SELECT count(*) FROM gone";

impl PgStore {
    async fn publish_custom(&self, req: PublishEventRequest) -> Result<String> {
        let data = req.validate()?;
        let job = req.job_id.as_ref().map(uid).transpose()?;
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "INSERT INTO {{S}}.events (ns, kind, name, job_id, queue, at_ms, data) \
             SELECT $1, 'custom', $2, $3, $4, $5, $6::text::jsonb WHERE {} \
             RETURNING xid::text, id",
            events_on("$1")
        ));
        let row = {
            let c = self.conn().await?;
            c.opt("publish event", &sql, &[&ns, &req.name, &job, &req.queue, &req.now, &data]).await?
        };
        let Some(r) = row else {
            return Err(Error::Conflict(format!(
                "events are switched off in namespace {ns}: event {} was not published",
                req.name
            )));
        };
        self.shared.hub.publish_events(ns);
        Ok(EventId::of_row(r.get(0), r.get(1))?.to_string())
    }

    async fn trim(&self, req: TrimEventsRequest) -> Result<u64> {
        let ns: &str = &self.ns;
        // Lengths and ages beyond what the columns hold keep everything.
        let keep = i64::try_from(req.max_len).unwrap_or(i64::MAX);
        let before = req.max_age_ms.map(|age| req.now.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX)));
        let c = self.conn().await?;
        let n: i64 = c.rows("trim events", &self.sql(TRIM), &[&ns, &keep, &before]).await?[0].get(0);
        Ok(n.max(0) as u64)
    }

    async fn switch_events(&self, enabled: bool) -> Result<()> {
        let ns: &str = &self.ns;
        let sql = if enabled {
            "DELETE FROM {S}.events_off WHERE ns = $1"
        } else {
            "INSERT INTO {S}.events_off (ns) VALUES ($1) ON CONFLICT DO NOTHING"
        };
        let c = self.conn().await?;
        c.exec("switch events", &self.sql(sql), &[&ns]).await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl Events for PgStore {
    async fn publish_event(&self, req: PublishEventRequest) -> Result<String> {
        self.publish_custom(req).await
    }

    async fn read_events(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>> {
        self.read_stream(req).await
    }

    async fn last_event_id(&self) -> Result<Option<String>> {
        self.newest_event().await
    }

    async fn trim_events(&self, req: TrimEventsRequest) -> Result<u64> {
        self.trim(req).await
    }

    async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        self.switch_events(enabled).await
    }

    async fn events_enabled(&self) -> Result<bool> {
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT NOT EXISTS (SELECT 1 FROM {S}.events_off WHERE ns = $1)");
        let c = self.conn().await?;
        Ok(c.rows("read events switch", &sql, &[&ns]).await?[0].get(0))
    }
}
