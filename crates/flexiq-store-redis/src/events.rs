//! The events stream (`Events`): one Redis stream per namespace, `B:ev`, under the namespace's
//! hash tag like every other key, so the scripts append to it in the same step as the change an
//! event reports (`lua/events.lua`) and it lives on the namespace's Cluster slot.
//!
//! Event ids are stream ids ([`crate::stream`]). A read is an `XRANGE` after the reader's id;
//! only when that finds nothing does it block, in `XREAD BLOCK` after the same id on a
//! dedicated connection ([`crate::blocking`]), so an event committed between the two commands
//! is returned at once rather than missed. Switching events off is the key `B:evoff`, which
//! every script checks once per call before its first event.

use flexiq_core::events::QueueEvent;
use flexiq_core::store::{Events, PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
use flexiq_core::{Error, Result};

use crate::conn::{n, s};
use crate::row::{self, int, text};
use crate::store::RedisStore;
use crate::stream::{check_event_id, entries, read_reply};

impl RedisStore {
    fn events_key(&self) -> String {
        self.ctx.keys.k("ev")
    }
}

#[async_trait::async_trait]
impl Events for RedisStore {
    async fn publish_event(&self, req: PublishEventRequest) -> Result<String> {
        self.ctx.check()?;
        let data = req.validate()?;
        let PublishEventRequest { name, job_id, queue, now, .. } = req;
        let args = vec![
            s("publish"),
            s(name.as_str()),
            s(job_id.map(|j| j.to_string()).unwrap_or_default()),
            s(queue.unwrap_or_default()),
            s(data),
            n(now),
        ];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        match text(&v) {
            Some(id) if id != "0" => Ok(id),
            _ => Err(Error::Conflict(format!(
                "events are switched off for namespace {}: event {name} was not published",
                self.ctx.ns
            ))),
        }
    }

    async fn read_events(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>> {
        self.ctx.check()?;
        req.validate()?;
        let ReadEventsRequest { after, block_ms, limit } = req;
        if let Some(a) = &after {
            if check_event_id(a)? {
                // Nothing can follow the largest id (and Redis refuses a range after it).
                return Ok(Vec::new());
            }
        }
        let key = self.events_key();
        let start = after.as_ref().map(|a| format!("({a}")).unwrap_or_else(|| "-".to_string());
        let range = vec![s(key.as_str()), s(start), s("+"), s("COUNT"), n(i64::from(limit))];
        let found = entries(self.ctx.conn.cmd("XRANGE", range).await?)?;
        if !found.is_empty() || block_ms == 0 {
            return Ok(found);
        }
        let from = after.unwrap_or_else(|| "0-0".to_string());
        let args = vec![
            s("COUNT"),
            n(i64::from(limit)),
            s("BLOCK"),
            n(i64::try_from(block_ms).unwrap_or(i64::MAX)),
            s("STREAMS"),
            s(key.as_str()),
            s(from),
        ];
        let reply = self.ctx.shared.blockers.call("XREAD", &key, args, block_ms, &self.ctx.ns).await?;
        read_reply(reply)
    }

    async fn last_event_id(&self) -> Result<Option<String>> {
        self.ctx.check()?;
        let args = vec![s(self.events_key()), s("+"), s("-"), s("COUNT"), n(1)];
        Ok(entries(self.ctx.conn.cmd("XREVRANGE", args).await?)?.pop().map(|e| e.id))
    }

    /// Exact `MAXLEN`, then `MINID` for the age: stream ids carry the server's clock in ms, read
    /// against `now` (the two clocks are taken to agree).
    async fn trim_events(&self, req: TrimEventsRequest) -> Result<u64> {
        self.ctx.check()?;
        let TrimEventsRequest { max_len, max_age_ms, now } = req;
        let key = self.events_key();
        let mut cmds = vec![(
            "XTRIM",
            vec![s(key.as_str()), s("MAXLEN"), n(i64::try_from(max_len).unwrap_or(i64::MAX))],
        )];
        if let Some(age) = max_age_ms {
            let cutoff = now.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX));
            if cutoff > 0 {
                cmds.push(("XTRIM", vec![s(key.as_str()), s("MINID"), s(format!("{cutoff}-0"))]));
            }
        }
        let removed = self.ctx.conn.pipeline(cmds).await?;
        Ok(removed.iter().filter_map(int).map(|r| r.max(0) as u64).sum())
    }

    async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        self.ctx.check()?;
        let key = self.ctx.keys.k("evoff");
        if enabled {
            self.ctx.conn.cmd("DEL", vec![s(key)]).await?;
        } else {
            self.ctx.conn.cmd("SET", vec![s(key), s("1")]).await?;
        }
        Ok(())
    }

    async fn events_enabled(&self) -> Result<bool> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("EXISTS", vec![s(self.ctx.keys.k("evoff"))]).await?;
        Ok(row::int(&v) == Some(0))
    }
}
