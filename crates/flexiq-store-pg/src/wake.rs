//! Wake-ups: a dedicated LISTEN connection, a coalescing notifier, and the waiters of
//! `wait_for_work`, `wait_for_job` and `read_events`.
//!
//! Notifications are sent right after a transaction commits, not from inside it (except by one
//! enqueue at a time, see [`Hub::try_inline`]): PostgreSQL
//! serialises the commits of transactions that issued NOTIFY (a global lock on the notify
//! queue held through the WAL flush), which on this machine cut 16-client insert throughput
//! from about 12,100 to 2,900 transactions/s, while the same NOTIFY issued after commit kept
//! it above 7,200, and coalesced by the notifier task it costs one statement per burst.
//! Local waiters are woken directly; other processes hear about work through `flexiq`
//! channel payloads `w<US>schema<US>sender<US>namespace` and
//! `j<US>schema<US>sender<US>namespace<US>id,id,...` (`<US>` is the ASCII unit separator; a
//! store ignores its own payloads). Event readers of a namespace wake on either, since every
//! announced change may have written events, and on `e<US>schema<US>sender<US>namespace`,
//! which announces events written without a change to announce (custom events, enqueues
//! absorbed by a dedup key, purges); for the same reason the events triggers do not NOTIFY
//! from inside the transaction. The listener reconnects after losing its connection
//! and then wakes every waiter, since notifications may have been missed; waits are capped so
//! a poll remains as a safety net.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::Pool;
use futures::StreamExt;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, NoTls};
use uuid::Uuid;

/// The channel every flexiq store in a database notifies on.
pub(crate) const CHANNEL: &str = "flexiq";
/// Longest a `wait_for_work` blocks before returning so the caller polls (ms).
pub(crate) const WORK_POLL_MS: u64 = 1_000;
/// Longest a `wait_for_job` blocks before returning so the caller re-reads the job (ms).
pub(crate) const JOB_POLL_MS: u64 = 1_000;
const SEP: char = '\u{1f}';
/// Stay under PostgreSQL's 8,000-byte payload limit.
const MAX_PAYLOAD: usize = 7_000;

#[derive(Default)]
struct Outbox {
    work: BTreeSet<String>,
    jobs: Vec<(String, Uuid)>,
    events: BTreeSet<String>,
}

/// Shared wake-up state of one store (all namespaces of one schema).
pub(crate) struct Hub {
    schema: String,
    /// Tags this hub's own payloads so their echo is ignored (local waiters were woken).
    instance: String,
    work: Mutex<HashMap<String, Arc<Notify>>>,
    jobs: Mutex<HashMap<Uuid, Arc<Notify>>>,
    events: Mutex<HashMap<String, Arc<Notify>>>,
    outbox: Mutex<Outbox>,
    kick: Notify,
    /// Held by the one enqueue at a time that sends its NOTIFY from inside its own statement.
    inline: AtomicBool,
}

/// The right to notify from inside one enqueue statement; given back on drop.
pub(crate) struct InlineNotify<'a>(&'a AtomicBool);

impl Drop for InlineNotify<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Hub {
    pub(crate) fn new(schema: &str) -> Arc<Hub> {
        Arc::new(Hub {
            schema: schema.to_string(),
            instance: Uuid::new_v4().simple().to_string()[..12].to_string(),
            work: Mutex::new(HashMap::new()),
            jobs: Mutex::new(HashMap::new()),
            events: Mutex::new(HashMap::new()),
            outbox: Mutex::new(Outbox::default()),
            kick: Notify::new(),
            inline: AtomicBool::new(false),
        })
    }

    /// The notifier of work in `ns` (created on first use).
    pub(crate) fn work_notify(&self, ns: &str) -> Arc<Notify> {
        let mut m = self.work.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(ns.to_string()).or_insert_with(|| Arc::new(Notify::new())).clone()
    }

    /// The notifier of events written in `ns` (created on first use).
    pub(crate) fn events_notify(&self, ns: &str) -> Arc<Notify> {
        let mut m = self.events.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(ns.to_string()).or_insert_with(|| Arc::new(Notify::new())).clone()
    }

    /// The notifier of changes to job `id` (created on first use; see [`Hub::release_job`]).
    pub(crate) fn job_notify(&self, id: Uuid) -> Arc<Notify> {
        let mut m = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(id).or_insert_with(|| Arc::new(Notify::new())).clone()
    }

    /// Drops the job notifier once its last waiter is gone.
    pub(crate) fn release_job(&self, id: Uuid, n: Arc<Notify>) {
        let mut m = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        if Arc::strong_count(&n) <= 2 {
            m.remove(&id);
        }
    }

    fn wake_work(&self, ns: &str) {
        let n = self.work.lock().unwrap_or_else(|p| p.into_inner()).get(ns).cloned();
        if let Some(n) = n {
            n.notify_waiters();
        }
    }

    fn wake_events(&self, ns: &str) {
        let n = self.events.lock().unwrap_or_else(|p| p.into_inner()).get(ns).cloned();
        if let Some(n) = n {
            n.notify_waiters();
        }
    }

    fn wake_job(&self, id: &Uuid) {
        let n = self.jobs.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned();
        if let Some(n) = n {
            n.notify_waiters();
        }
    }

    /// Wakes every waiter (after a reconnect, or on close).
    pub(crate) fn wake_all(&self) {
        let w: Vec<_> = self.work.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        let j: Vec<_> = self.jobs.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        let e: Vec<_> = self.events.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        for n in w.into_iter().chain(j).chain(e) {
            n.notify_waiters();
        }
    }

    /// The right to send one enqueue's work NOTIFY from inside its statement, when no other
    /// enqueue of this process holds it. PostgreSQL serialises the commits of transactions
    /// that notify, so at most one at a time does; the rest notify after commit, coalesced.
    /// An idle system's enqueue thereby reaches other processes' waiters at its commit.
    pub(crate) fn try_inline(&self) -> Option<InlineNotify<'_>> {
        self.inline
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| InlineNotify(&self.inline))
    }

    /// The payload announcing work in `ns`.
    pub(crate) fn work_payload(&self, ns: &str) -> String {
        format!("w{SEP}{}{SEP}{}{SEP}{ns}", self.schema, self.instance)
    }

    /// Wakes local waiters on work in `ns` whose NOTIFY was already sent with the commit.
    pub(crate) fn publish_notified(&self, ns: &str) {
        self.wake_work(ns);
        self.wake_events(ns);
    }

    /// Announces committed changes: wakes local waiters now and queues the NOTIFY for others.
    pub(crate) fn publish(&self, ns: &str, work: bool, jobs: &[Uuid]) {
        if !work && jobs.is_empty() {
            return;
        }
        if work {
            self.wake_work(ns);
        }
        for id in jobs {
            self.wake_job(id);
        }
        self.wake_events(ns);
        let mut o = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        if work {
            o.work.insert(ns.to_string());
        }
        o.jobs.extend(jobs.iter().map(|id| (ns.to_string(), *id)));
        drop(o);
        self.kick.notify_one();
    }

    /// Announces committed events that no change announces: wakes local readers now and
    /// queues the NOTIFY for others.
    pub(crate) fn publish_events(&self, ns: &str) {
        self.wake_events(ns);
        self.outbox.lock().unwrap_or_else(|p| p.into_inner()).events.insert(ns.to_string());
        self.kick.notify_one();
    }

    /// Payloads for everything queued since the last flush.
    fn drain(&self) -> Vec<String> {
        let o = std::mem::take(&mut *self.outbox.lock().unwrap_or_else(|p| p.into_inner()));
        let mut out: Vec<String> = o.work.iter().map(|ns| self.work_payload(ns)).collect();
        let mut by_ns: HashMap<&str, Vec<Uuid>> = HashMap::new();
        for (ns, id) in &o.jobs {
            by_ns.entry(ns.as_str()).or_default().push(*id);
        }
        // Work and job payloads wake a namespace's event readers too.
        for ns in o.events.iter().filter(|ns| !o.work.contains(*ns) && !by_ns.contains_key(ns.as_str())) {
            out.push(format!("e{SEP}{}{SEP}{}{SEP}{ns}", self.schema, self.instance));
        }
        for (ns, mut ids) in by_ns {
            ids.sort_unstable();
            ids.dedup();
            let head = format!("j{SEP}{}{SEP}{}{SEP}{ns}{SEP}", self.schema, self.instance);
            let mut cur = head.clone();
            for id in ids {
                if cur.len() + 33 > MAX_PAYLOAD {
                    out.push(std::mem::replace(&mut cur, head.clone()));
                }
                if !cur.ends_with(SEP) {
                    cur.push(',');
                }
                cur.push_str(&id.simple().to_string());
            }
            if !cur.ends_with(SEP) {
                out.push(cur);
            }
        }
        out
    }

    /// Handles one payload heard on the channel.
    fn on_payload(&self, payload: &str) {
        let mut parts = payload.split(SEP);
        let (Some(kind), Some(schema), Some(from), Some(ns)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        if schema != self.schema || from == self.instance {
            return;
        }
        match kind {
            "w" => self.wake_work(ns),
            "j" => {
                for id in parts.next().unwrap_or("").split(',') {
                    if let Ok(u) = Uuid::parse_str(id) {
                        self.wake_job(&u);
                    }
                }
            }
            "e" => {}
            _ => return,
        }
        self.wake_events(ns);
    }
}

/// Sends queued notifications, one statement per burst, until the hub is dropped.
pub(crate) async fn run_notifier(hub: Arc<Hub>, pool: Pool) {
    loop {
        hub.kick.notified().await;
        let payloads = hub.drain();
        if payloads.is_empty() {
            continue;
        }
        let sent = async {
            let c = pool.get().await.ok()?;
            let st = c.prepare_cached("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p").await.ok()?;
            c.execute(&st, &[&CHANNEL, &payloads]).await.ok()
        };
        if sent.await.is_none() {
            // Other processes fall back on their poll; nothing else to do.
            tracing::debug!("flexiq postgres notify failed; waiters will poll");
        }
    }
}

/// Keeps one LISTEN connection open, reconnecting after it drops.
pub(crate) async fn run_listener(hub: Arc<Hub>, mut cfg: tokio_postgres::Config) {
    let name: String = format!("flexiq-listen {}", hub.schema).chars().take(63).collect();
    cfg.application_name(&name);
    let mut backoff_ms = 50;
    loop {
        if let Ok((client, mut conn)) = cfg.connect(NoTls).await {
            let hub2 = hub.clone();
            let drive = tokio::spawn(async move {
                let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
                while let Some(m) = messages.next().await {
                    match m {
                        Ok(AsyncMessage::Notification(n)) => hub2.on_payload(n.payload()),
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            });
            if client.batch_execute(&format!("LISTEN {CHANNEL}")).await.is_ok() {
                backoff_ms = 50;
                // Anything sent while we were away was missed.
                hub.wake_all();
                let _ = drive.await;
            } else {
                drive.abort();
            }
            hub.wake_all();
        }
        tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
        backoff_ms = (backoff_ms * 2).min(2_000);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_split() {
        let sender = Hub::new("s1");
        let hub = Hub::new("s1");
        let ids: Vec<Uuid> = (0..500).map(|_| Uuid::now_v7()).collect();
        sender.publish("ns", true, &ids);
        let p = sender.drain();
        assert!(p.len() >= 3, "{}", p.len());
        assert!(p.iter().all(|x| x.len() <= MAX_PAYLOAD));
        let n = hub.job_notify(ids[499]);
        let waiter = n.notified();
        tokio::pin!(waiter);
        waiter.as_mut().enable();
        for x in &p {
            hub.on_payload(x);
        }
        assert!(futures::FutureExt::now_or_never(waiter).is_some());
        assert!(sender.drain().is_empty());
        hub.on_payload("garbage");
        hub.on_payload(&format!("w{SEP}other{SEP}x{SEP}ns"));
        // A hub ignores the echo of its own payloads.
        let own = hub.job_notify(ids[0]);
        let waiter = own.notified();
        tokio::pin!(waiter);
        waiter.as_mut().enable();
        hub.publish("ns", false, &[]);
        hub.on_payload(&format!("j{SEP}s1{SEP}{}{SEP}ns{SEP}{}", hub.instance, ids[0].simple()));
        assert!(futures::FutureExt::now_or_never(waiter).is_none());
    }

    #[test]
    fn event_readers_wake_on_every_payload_of_their_namespace() {
        let (sender, hub) = (Hub::new("s1"), Hub::new("s1"));
        sender.publish_events("a");
        sender.publish_events("b");
        sender.publish("b", true, &[]);
        let p = sender.drain();
        assert_eq!(p.len(), 2, "a work payload stands for the namespace's events too: {p:?}");
        for (ns, payload) in [("a", &p[1]), ("b", &p[0])] {
            let n = hub.events_notify(ns);
            let waiter = n.notified();
            tokio::pin!(waiter);
            waiter.as_mut().enable();
            hub.on_payload(payload);
            assert!(futures::FutureExt::now_or_never(waiter).is_some(), "{ns}: {payload:?}");
        }
        let other = hub.events_notify("c");
        let waiter = other.notified();
        tokio::pin!(waiter);
        waiter.as_mut().enable();
        hub.on_payload(&p[1]);
        assert!(futures::FutureExt::now_or_never(waiter).is_none(), "another namespace sleeps on");
    }
}
