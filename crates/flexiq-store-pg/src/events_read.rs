//! Reading the events stream: a page after a position, or the newest position, below the
//! transaction horizon (see `events.rs`), waiting for commits when there is nothing to return.
//!
//! The horizon is first the snapshot's: the oldest transaction still running anywhere in the
//! cluster. That one is cheap, but any long writing transaction holds it back, in another
//! schema or database too (a migration, a bulk load). So when committed events have waited
//! above it for a few milliseconds, a read narrows it to the transactions that may still
//! write events here ([`Horizon::Schema`]): those holding a lock on a relation of this
//! schema, and those it cannot place (ended since the snapshot, or prepared). Every flexiq
//! transaction locks a relation of its schema in the statement that gives it a transaction
//! id, and keeps the lock until it ends, so a transaction that holds none has written nothing
//! here and will not; a transaction that writes elsewhere first and then to this schema's
//! tables (outside flexiq) is the one the narrowing could pass.
//!
//! A read registers its waker, then reads. A full page returns at once. Otherwise, when
//! committed events wait above the horizon, the read looks again until the ones it saw first
//! have fallen below it, for at most [`SETTLE_MS`] from first seeing them (when it has nothing
//! to return, also as long as it asked to wait): their older transactions are usually about to
//! end, and may announce nothing here, so it looks after 1 ms, doubling to 20 ms (50 ms once
//! narrowed, since narrowing reads the lock table). So a caller reading right after its own
//! commit finds it, even with other transactions in flight, and a reader woken by a commit
//! returns it with whatever committed around it. With nothing to return and nothing waiting,
//! the read waits for a wake-up (`wake.rs`: any change announced in the namespace, by this
//! process or another) or for its time to run out, looking once a second meanwhile.

use std::time::{Duration, Instant};

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::ReadEventsRequest;
use flexiq_core::Result;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::corrupt;
use crate::event_id::EventId;
use crate::store::PgStore;

/// Longest a read (or `last_event_id`) waits for the transactions ahead of committed events
/// to end, however long it asked to wait (ms).
pub(crate) const SETTLE_MS: u64 = 250;
/// Longest a waiting read goes without looking (ms).
const EVENTS_POLL_MS: u64 = 1_000;
/// How long committed events wait above the snapshot's horizon before a read narrows it (ms).
const NARROW_AFTER_MS: u64 = 4;

/// Which transactions a read waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Horizon {
    /// Every running transaction of the cluster.
    Snapshot,
    /// The running transactions that may write to this schema (`$schema` is its name).
    Schema,
}

impl Horizon {
    /// A CTE `h(x)`: the transaction id below which every row is final. `schema` is the SQL
    /// parameter holding the schema's name, which only [`Horizon::Schema`] takes (see
    /// [`Horizon::params`]).
    fn cte(self, schema: &str) -> String {
        match self {
            Horizon::Snapshot => "h AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS x)".into(),
            Horizon::Schema => format!(
                "snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s), \
                 locks AS MATERIALIZED (SELECT locktype, database, relation, transactionid, pid, granted \
                   FROM pg_locks), \
                 here AS MATERIALIZED (SELECT DISTINCT l.pid FROM locks l JOIN pg_class c ON c.oid = l.relation \
                   WHERE l.locktype = 'relation' AND l.pid IS NOT NULL \
                     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                     AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = {schema})), \
                 h AS (SELECT least(pg_snapshot_xmax(snap.s), \
                     (SELECT min(r.x) FROM pg_snapshot_xip(snap.s) AS r(x) \
                      WHERE NOT EXISTS (SELECT 1 FROM locks t WHERE t.locktype = 'transactionid' \
                        AND t.transactionid = r.x::xid AND t.granted AND t.pid IS NOT NULL \
                        AND t.pid NOT IN (SELECT pid FROM here)))) AS x FROM snap)"
            ),
        }
    }

    /// `params` with the schema's name added when this horizon takes it (always last).
    fn params<'a>(
        self,
        mut params: Vec<&'a (dyn ToSql + Sync)>,
        schema: &'a (dyn ToSql + Sync),
    ) -> Vec<&'a (dyn ToSql + Sync)> {
        if self == Horizon::Schema {
            params.push(schema);
        }
        params
    }

    /// A page of namespace `$1` after position (`$2`, `$3`), at most `$4`, below the horizon,
    /// each row followed by the lowest and highest transaction ids of the committed events
    /// after the position that wait above it (NULL with none): one statement, so both are of
    /// one snapshot. With an empty page, one row of NULL event columns carries them. The
    /// schema's name is `$5`.
    fn page_sql(self) -> String {
        format!(
            "WITH {}, \
             page AS (SELECT e.xid, e.id, e.kind, coalesce(e.name, e.kind) AS name, e.job_id, e.queue, e.task, \
               e.attempt, e.at_ms, e.data FROM {{S}}.events e \
               WHERE e.ns = $1 AND (e.xid, e.id) > ($2::text::xid8, $3) AND e.xid < (SELECT x FROM h) \
               ORDER BY e.xid, e.id LIMIT $4), \
             above AS (SELECT min(a.xid)::text AS lo, max(a.xid)::text AS hi FROM {{S}}.events a \
               WHERE a.ns = $1 AND (a.xid, a.id) > ($2::text::xid8, $3) AND a.xid >= (SELECT x FROM h)) \
             SELECT p.xid::text, p.id, p.kind, p.name, p.job_id, p.queue, p.task, p.attempt, p.at_ms, \
               p.data::text, above.lo, above.hi \
             FROM above LEFT JOIN page p ON true ORDER BY p.xid, p.id",
            self.cte("$5")
        )
    }

    /// The newest position of namespace `$1` below the horizon, then the lowest and highest
    /// transaction ids of the committed events above it; the schema's name is `$2`.
    fn newest_sql(self) -> String {
        format!(
            "WITH {} SELECT b.xid::text, b.id, a.lo, a.hi \
             FROM (SELECT min(xid)::text AS lo, max(xid)::text AS hi FROM {{S}}.events \
               WHERE ns = $1 AND xid >= (SELECT x FROM h)) AS a \
             LEFT JOIN LATERAL (SELECT xid, id FROM {{S}}.events \
               WHERE ns = $1 AND xid < (SELECT x FROM h) ORDER BY xid DESC, id DESC LIMIT 1) AS b ON true",
            self.cte("$2")
        )
    }
}

/// The pauses between looks while committed events wait above the horizon, and when to narrow.
struct Recheck {
    since: Option<Instant>,
    pause_ms: u64,
    horizon: Horizon,
}

impl Recheck {
    fn new() -> Recheck {
        Recheck { since: None, pause_ms: 1, horizon: Horizon::Snapshot }
    }

    /// The pause after a look that found events waiting above the horizon.
    fn waiting(&mut self) -> Duration {
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() >= Duration::from_millis(NARROW_AFTER_MS) {
            self.horizon = Horizon::Schema;
        }
        let pause = Duration::from_millis(self.pause_ms);
        let cap = if self.horizon == Horizon::Schema { 50 } else { 20 };
        self.pause_ms = (self.pause_ms * 2).min(cap);
        pause
    }

    /// A wake-up: something committed, look again at once.
    fn woken(&mut self) {
        self.pause_ms = 1;
    }
}

/// The committed events a look found above the horizon, by transaction id.
#[derive(Debug, Clone, Copy)]
struct Above {
    lowest: u64,
    highest: u64,
}

impl Above {
    fn of(lowest: Option<&str>, highest: Option<&str>) -> Result<Option<Above>> {
        let id = |t: &str| t.parse::<u64>().map_err(|_| corrupt(format!("transaction id {t:?} of an event")));
        match (lowest, highest) {
            (Some(lo), Some(hi)) => Ok(Some(Above { lowest: id(lo)?, highest: id(hi)? })),
            _ => Ok(None),
        }
    }
}

/// The transaction a read waits for to fall below the horizon, and until when.
#[derive(Debug, Clone, Copy)]
struct Target {
    xid: u64,
    until: Instant,
}

/// One stored event.
fn event_of(r: &Row) -> Result<QueueEvent> {
    let id = EventId::of_row(r.get(0), r.get(1))?;
    let kind_name: &str = r.get(2);
    let kind = match EventKind::built_in(kind_name) {
        Some(k) => k,
        None if kind_name == EventKind::Custom.as_str() => EventKind::Custom,
        None => return Err(corrupt(format!("kind {kind_name:?} of event {id}"))),
    };
    let data: &str = r.get(9);
    let data = serde_json::from_str(data).map_err(|e| corrupt(format!("data of event {id}: {e}")))?;
    Ok(QueueEvent {
        id: id.to_string(),
        kind,
        name: r.get(3),
        job_id: r.get::<_, Option<Uuid>>(4).map(|u| u.hyphenated().to_string()),
        queue: r.get(5),
        task: r.get(6),
        attempt: r.get::<_, Option<i32>>(7).map(|a| a.max(0) as u32),
        at_ms: r.get(8),
        data,
    })
}

impl PgStore {
    pub(crate) async fn read_stream(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>> {
        req.validate()?;
        let after = req.after.as_deref().map(EventId::parse).transpose()?.unwrap_or(EventId::START);
        let until = Instant::now() + Duration::from_millis(req.block_ms);
        let notify = self.shared.hub.events_notify(&self.ns);
        let (ns, schema): (&str, &str) = (&self.ns, self.schema());
        let (xid, seq, limit) = (after.xid_text(), after.seq, i64::from(req.limit));
        let mut recheck = Recheck::new();
        let mut target: Option<Target> = None;
        loop {
            self.check_open()?;
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let h = recheck.horizon;
            let (rows, above) = {
                let c = self.conn().await?;
                let params = h.params(vec![&ns, &xid, &seq, &limit], &schema);
                let mut rows = c.rows("read events", &self.sql(&h.page_sql()), &params).await?;
                let above = match rows.first() {
                    Some(r) => Above::of(r.get(10), r.get(11))?,
                    None => None,
                };
                rows.retain(|r| r.get::<_, Option<i64>>(1).is_some());
                if rows.len() as i64 >= limit {
                    return rows.iter().map(event_of).collect();
                }
                (rows, above)
            };
            let now = Instant::now();
            if let Some(a) = above {
                // Wait for the events seen above the horizon first (for later ones too when
                // there is nothing to return yet), up to SETTLE_MS after first seeing them.
                let t = match target {
                    Some(t) if !(rows.is_empty() && a.lowest > t.xid) => t,
                    _ => Target { xid: a.highest, until: now + Duration::from_millis(SETTLE_MS) },
                };
                target = Some(t);
                let deadline = if rows.is_empty() { until.max(t.until) } else { t.until };
                if a.lowest <= t.xid && now < deadline {
                    let pause = recheck.waiting().min(deadline - now);
                    tokio::select! {
                        _ = notified => recheck.woken(),
                        _ = tokio::time::sleep(pause) => {}
                    }
                    continue;
                }
            }
            if !rows.is_empty() || now >= until {
                return rows.iter().map(event_of).collect();
            }
            target = None;
            let pause = Duration::from_millis(EVENTS_POLL_MS).min(until - now);
            tokio::select! {
                _ = notified => recheck.woken(),
                _ = tokio::time::sleep(pause) => {}
            }
        }
    }

    /// The plans of both horizons' page statements, a blank line between them.
    pub(crate) async fn explain_events_page(&self, after: Option<&str>, limit: u32) -> Result<String> {
        let after = after.map(EventId::parse).transpose()?.unwrap_or(EventId::START);
        let (ns, schema): (&str, &str) = (&self.ns, self.schema());
        let (xid, seq, limit) = (after.xid_text(), after.seq, i64::from(limit));
        let mut plans = Vec::new();
        for h in [Horizon::Snapshot, Horizon::Schema] {
            let sql = format!("EXPLAIN {}", self.sql(&h.page_sql()));
            plans.push(self.explain(&sql, &h.params(vec![&ns, &xid, &seq, &limit], &schema)).await?);
        }
        Ok(plans.join("\n\n"))
    }

    /// The newest event's id below the horizon; while committed events wait above it, looks
    /// again for up to [`SETTLE_MS`] for those seen first to fall below it.
    pub(crate) async fn newest_event(&self) -> Result<Option<String>> {
        let (ns, schema): (&str, &str) = (&self.ns, self.schema());
        let settle = Instant::now() + Duration::from_millis(SETTLE_MS);
        let mut recheck = Recheck::new();
        let mut target: Option<u64> = None;
        loop {
            let r = {
                let c = self.conn().await?;
                let h = recheck.horizon;
                let params = h.params(vec![&ns], &schema);
                c.rows("read last event id", &self.sql(&h.newest_sql()), &params).await?.remove(0)
            };
            if let Some(a) = Above::of(r.get(2), r.get(3))? {
                let t = *target.get_or_insert(a.highest);
                if a.lowest <= t && Instant::now() < settle {
                    tokio::time::sleep(recheck.waiting()).await;
                    continue;
                }
            }
            return match r.get::<_, Option<&str>>(0) {
                Some(xid) => Ok(Some(EventId::of_row(xid, r.get(1))?.to_string())),
                None => Ok(None),
            };
        }
    }
}
