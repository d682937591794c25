//! Dedicated connections for blocking reads of the events stream (`XREAD BLOCK`).
//!
//! A blocked command holds its connection until it returns, so it never runs on the shared
//! command pool, where fred multiplexes every caller over a few connections. Each blocked
//! reader takes a client of its own from a small idle list (opening one when the list is
//! empty) and gives it back when the read returns; a read that failed, or was dropped while
//! blocked, quits its client instead, since the server may still be answering on it. Closing
//! the store wakes blocked readers with `Closed` and quits the idle clients. The commands are
//! routed by the stream's key, so the same reads work on one server and on a Redis Cluster.

use std::sync::Mutex;
use std::time::Duration;

use flexiq_core::{Error, Result};
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};
use tokio::sync::watch;

use crate::conn::builder;
use crate::error::map;

/// Idle clients kept for the next blocked reader; more are quit when given back.
const MAX_IDLE: usize = 4;
/// Slack (ms) past the server-side block before the client gives up on a reply.
const REPLY_SLACK_MS: u64 = 5_000;

/// The dedicated clients of one `connect`, shared by its namespace handles.
pub(crate) struct Blockers {
    config: Config,
    idle: Mutex<Vec<Client>>,
    closed: watch::Sender<bool>,
}

/// A client out of the idle list; quit on drop unless [`Lease::give_back`] returned it.
struct Lease<'a> {
    owner: &'a Blockers,
    client: Option<Client>,
}

impl Lease<'_> {
    fn give_back(mut self) {
        if let Some(c) = self.client.take() {
            let mut idle = self.owner.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < MAX_IDLE && !*self.owner.closed.borrow() {
                idle.push(c);
                return;
            }
            drop(idle);
            quit(c);
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            quit(c);
        }
    }
}

/// Quits `c` in the background (a blocked command may still hold it).
fn quit(c: Client) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            let _ = c.quit().await;
        });
    }
}

impl Blockers {
    pub(crate) fn new(mut config: Config) -> Self {
        // A command sent to a client while its read blocks (the quit of a dropped read)
        // interrupts the read rather than waiting behind it.
        config.blocking = Blocking::Interrupt;
        Blockers { config, idle: Mutex::new(Vec::new()), closed: watch::channel(false).0 }
    }

    async fn lease(&self) -> Result<Lease<'_>> {
        let kept = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let client = match kept {
            Some(c) => c,
            None => {
                let c = builder(&self.config).build().map_err(map)?;
                if let Err(e) = c.init().await {
                    // Stops the reconnect loop a failed first connection leaves running.
                    quit(c);
                    return Err(map(e));
                }
                c
            }
        };
        Ok(Lease { owner: self, client: Some(client) })
    }

    /// Sends `cmd args` on a dedicated client, routed by `key`'s slot, waiting up to `block_ms`
    /// on the server plus some slack for the reply. `namespace` names the store in the error a
    /// close returns.
    pub(crate) async fn call(
        &self,
        cmd: &'static str,
        key: &str,
        args: Vec<Value>,
        block_ms: u64,
        namespace: &str,
    ) -> Result<Value> {
        let closed_err = || Error::Closed(format!("redis store for namespace {namespace} was closed"));
        let mut closed = self.closed.subscribe();
        if *closed.borrow() {
            return Err(closed_err());
        }
        let lease = self.lease().await?;
        let client = lease.client.clone().ok_or_else(closed_err)?;
        let opts =
            Options { timeout: Some(Duration::from_millis(block_ms + REPLY_SLACK_MS)), ..Default::default() };
        let command = CustomCommand::new_static(cmd, ClusterHash::from(key), true);
        let with = client.with_options(&opts);
        let reply = tokio::select! {
            r = with.custom::<Value, Value>(command, args) => r,
            _ = closed.wait_for(|c| *c) => return Err(closed_err()),
        };
        match reply {
            Ok(v) => {
                lease.give_back();
                Ok(v)
            }
            Err(e) => Err(map(e)),
        }
    }

    /// Wakes blocked callers with `Closed` and quits the idle clients.
    pub(crate) async fn close(&self) {
        self.closed.send_replace(true);
        let idle: Vec<Client> = self.idle.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        for c in idle {
            let _ = c.quit().await;
        }
    }
}
