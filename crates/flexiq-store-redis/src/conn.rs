//! The connection pool, the calls of the Lua scripts of [`crate::scripts`] (function libraries
//! loaded on every primary, called with `FCALL`, loaded again when the server no longer has
//! them) and small helpers to send raw commands and pipelines. Commands are routed by their
//! first key and scripts by `KEYS[1]`, so the same calls work on one server and on a Redis
//! Cluster.

use std::time::Duration;

use flexiq_core::Result;
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::error::map;
use crate::scripts::{Script, Scripts};

/// A pooled connection plus the script registry.
pub(crate) struct Conn {
    pub(crate) pool: Pool,
    pub(crate) scripts: Scripts,
    pub(crate) config: Config,
}

/// A command routed by its first string argument, which for every command the store sends is
/// its (first) key.
fn cmd(name: &'static str) -> CustomCommand {
    CustomCommand::new_static(name, ClusterHash::FirstKey, false)
}

/// The URL schemes a store connects with: one server, or a Redis Cluster (plain or TLS).
pub(crate) const SCHEMES: [&str; 4] = ["redis://", "rediss://", "redis-cluster://", "rediss-cluster://"];

/// Builds a client configuration from a `redis://` or `rediss://` URL (one server), or a
/// `redis-cluster://` or `rediss-cluster://` URL naming one or more cluster nodes
/// (`redis-cluster://host:port?node=host:port&node=host:port`; the client discovers the rest).
pub(crate) fn config(url: &str) -> Result<Config> {
    if !SCHEMES.iter().any(|s| url.starts_with(s)) {
        return Err(flexiq_core::Error::invalid(format!(
            "redis url {url:?} must start with one of {}",
            SCHEMES.join(", ")
        )));
    }
    Config::from_url(url)
        .map_err(|e| flexiq_core::Error::invalid(format!("redis url {url:?}: {}", e.details())))
}

/// A builder with the store's reconnect and timeout policy.
pub(crate) fn builder(config: &Config) -> Builder {
    let mut b = Builder::from_config(config.clone());
    b.with_connection_config(|c| {
        c.connection_timeout = Duration::from_secs(3);
        c.internal_command_timeout = Duration::from_secs(3);
        c.max_command_attempts = 1;
    })
    .with_performance_config(|p| {
        p.default_command_timeout = Duration::from_secs(10);
    })
    .set_policy(ReconnectPolicy::new_constant(0, 50));
    b
}

impl Conn {
    pub(crate) async fn connect(url: &str, size: usize) -> Result<Self> {
        let config = config(url)?;
        let pool = builder(&config).build_pool(size).map_err(map)?;
        pool.init().await.map_err(map)?;
        let conn = Conn { pool, scripts: Scripts::new(), config };
        for s in conn.scripts.all() {
            conn.load(s, false).await?;
        }
        Ok(conn)
    }

    /// Loads a script's library on every primary. Without `replace`, a server that already
    /// holds a library of that name (the same code: the name is its hash) keeps it.
    async fn load(&self, s: &Script, replace: bool) -> Result<()> {
        match self.pool.next().function_load_cluster::<Value, _>(replace, s.src.as_str()).await {
            Err(e) if !replace && e.details().contains("already exists") => Ok(()),
            r => r.map(|_| ()).map_err(map),
        }
    }

    /// Sends one command.
    pub(crate) async fn cmd(&self, name: &'static str, args: Vec<Value>) -> Result<Value> {
        self.pool.next().custom(cmd(name), args).await.map_err(map)
    }

    /// Sends one command to the node serving `key`'s slot: for commands that name no key but
    /// act on one node (`SCAN` walks the keys of the node it reaches).
    pub(crate) async fn cmd_at(&self, name: &'static str, key: &str, args: Vec<Value>) -> Result<Value> {
        let command = CustomCommand::new_static(name, ClusterHash::from(key), false);
        self.pool.next().custom(command, args).await.map_err(map)
    }

    /// Sends commands in one pipeline; the first error fails the whole call.
    pub(crate) async fn pipeline(&self, cmds: Vec<(&'static str, Vec<Value>)>) -> Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let p = self.pool.next().pipeline();
        for (name, args) in cmds {
            let _: () = p.custom(cmd(name), args).await.map_err(map)?;
        }
        let out: Vec<FredResult<Value>> = p.try_all().await;
        out.into_iter().map(|r| r.map_err(map)).collect()
    }

    /// Runs a script's function against namespace base `base`, loading its library again
    /// when the server no longer has it (a restart without persistence, `FUNCTION FLUSH` or
    /// `FUNCTION DELETE`).
    pub(crate) async fn script(&self, s: &Script, base: &str, args: Vec<Value>) -> Result<Value> {
        let mut full = Vec::with_capacity(args.len() + 3);
        full.push(Value::from(s.name.as_str()));
        full.push(Value::from(1));
        full.push(Value::from(base));
        full.extend(args);
        let c = self.pool.next();
        // Routed by the slot of `KEYS[1]`: fred applies a custom command's own hash policy only
        // when it names the slot (`FirstKey` would hash the function's name).
        let slot = ClusterHash::from(base);
        let fcall = || CustomCommand::new_static("FCALL", slot.clone(), false);
        match c.custom::<Value, Value>(fcall(), full.clone()).await {
            Err(e) if e.details().contains("Function not found") => {
                self.load(s, true).await?;
                c.custom(fcall(), full).await.map_err(map)
            }
            r => r.map_err(map),
        }
    }
}

/// Helpers to build argument lists.
pub(crate) fn s(v: impl Into<String>) -> Value {
    Value::from(v.into())
}

pub(crate) fn n(v: i64) -> Value {
    Value::from(v)
}

pub(crate) fn b(v: Vec<u8>) -> Value {
    Value::Bytes(v.into())
}
