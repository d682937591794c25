//! The store handle: connection sharing across namespaces, the closed flag and opening
//! checks (contract floor).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flexiq_core::{check_floor, Error, Result};

use crate::blocking::Blockers;
use crate::conn::{s, Conn};
use crate::keys::Keys;
use crate::options::{validate_namespace, RedisOptions};
use crate::row;
use crate::wake::Waker;

/// Connections shared by every namespace handle of one `connect`.
pub(crate) struct Shared {
    pub(crate) conn: Arc<Conn>,
    /// Dedicated clients for blocking reads of the events stream.
    pub(crate) blockers: Blockers,
    pub(crate) closed: AtomicBool,
    pub(crate) prefix: String,
}

/// What every operation of one namespace handle needs.
pub(crate) struct Ctx {
    pub(crate) conn: Arc<Conn>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) keys: Keys,
    pub(crate) ns: String,
    pub(crate) waker: Waker,
}

impl Ctx {
    /// Fails with `Closed` after `close()`.
    pub(crate) fn check(&self) -> Result<()> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed(format!("redis store for namespace {} was closed", self.ns)));
        }
        Ok(())
    }
}

/// A flexiq store on Redis (one server or a Redis Cluster), scoped to one namespace.
///
/// Cheap to clone; clones and [`RedisStore::with_namespace`] siblings share connections.
#[derive(Clone)]
pub struct RedisStore {
    pub(crate) ctx: Arc<Ctx>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("namespace", &self.ctx.ns)
            .field("base", &self.ctx.keys.base)
            .finish()
    }
}

/// Connections in the command pool (fred multiplexes many callers over each).
const POOL_SIZE: usize = 4;

impl RedisStore {
    /// Connects to `url` and checks the contract floor (`ContractTooOld` when it is above this
    /// build's level), after loading the scripts on every primary.
    ///
    /// `redis://[[user:]password@]host[:port][/db]` (or `rediss://` for TLS) names one server;
    /// `redis-cluster://[[user:]password@]host:port[?node=host:port&node=...]` (or
    /// `rediss-cluster://`) names one or more nodes of a Redis Cluster, whose topology the
    /// client discovers and follows. Any other scheme is `InvalidArgument`.
    pub async fn connect(url: &str, opts: RedisOptions) -> Result<RedisStore> {
        opts.validate()?;
        let conn = Arc::new(Conn::connect(url, POOL_SIZE).await?);
        let shared = Arc::new(Shared {
            blockers: Blockers::new(conn.config.clone()),
            conn: conn.clone(),
            closed: AtomicBool::new(false),
            prefix: opts.prefix,
        });
        let store = RedisStore::scoped(shared, &opts.namespace);
        let floor = store.floor().await?;
        check_floor(floor)?;
        Ok(store)
    }

    fn scoped(shared: Arc<Shared>, ns: &str) -> RedisStore {
        let keys = Keys::new(&shared.prefix, ns);
        let waker = Waker::new(shared.clone(), keys.k("wake"));
        RedisStore {
            ctx: Arc::new(Ctx { conn: shared.conn.clone(), shared, keys, ns: ns.to_string(), waker }),
        }
    }

    /// A handle on another namespace sharing this one's connections.
    pub fn with_namespace(&self, ns: &str) -> Result<RedisStore> {
        self.ctx.check()?;
        validate_namespace(ns)?;
        Ok(RedisStore::scoped(self.ctx.shared.clone(), ns))
    }

    /// The server clock (`TIME`) in Unix ms, for callers that want one clock for all hosts.
    pub async fn server_now_ms(&self) -> Result<i64> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("TIME", vec![]).await?.into_array();
        let secs = v.first().and_then(row::int).ok_or_else(|| crate::error::shape("TIME"))?;
        let micros = v.get(1).and_then(row::int).unwrap_or(0);
        Ok(secs * 1_000 + micros / 1_000)
    }

    /// The stored contract floor (1 when never set).
    pub(crate) async fn floor(&self) -> Result<u32> {
        let v = self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.meta()), s("min_contract")]).await?;
        Ok(row::int(&v).map(|f| f as u32).unwrap_or(1))
    }
}
