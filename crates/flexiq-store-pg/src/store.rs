//! The store handle: the pool, the schema, the namespace, and the background wake-up tasks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use deadpool_postgres::{Hook, Manager, ManagerConfig, Pool, RecyclingMethod};
use flexiq_core::{Error, Result};
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

use crate::busy::Busy;
use crate::claim_free::LimitedHint;
use crate::db::Conn;
use crate::migrate;
use crate::options::PgOptions;
use crate::wake::{run_listener, run_notifier, Hub};

/// Set on every pooled connection: while it runs a statement, the server checks this often
/// that the client is still there, and ends the statement (and the connection) if not. A
/// future dropped mid-statement gives its connection back with the statement still running;
/// once the pool closes that connection (the store's close, or the pool shedding it), the
/// statement stops within this interval instead of waiting on, and holding, locks until it
/// next writes to the client. Connections still checked out at close are cancelled instead
/// (see `busy.rs`).
const CONNECTION_CHECK: &str = "SET client_connection_check_interval = 250";

/// A flexiq store on PostgreSQL, scoped to one namespace.
///
/// Cheap to clone; clones and [`PgStore::with_namespace`] handles share the pool, the LISTEN
/// connection and the notifier.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) shared: Arc<Shared>,
    pub(crate) ns: Arc<str>,
    /// When this namespace's claims last met limited queues.
    pub(crate) limited: Arc<LimitedHint>,
    /// When this namespace's fair claims last met limited queues.
    pub(crate) fair_limited: Arc<LimitedHint>,
}

pub(crate) struct Shared {
    pub(crate) pool: Pool,
    pub(crate) schema: String,
    /// `"schema"`, ready to prefix table names.
    quoted: String,
    pub(crate) hub: Arc<Hub>,
    /// The connections checked out, for closing to cancel what they still run.
    pub(crate) busy: Arc<Busy>,
    closed: AtomicBool,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("schema", &self.shared.schema).field("namespace", &self.ns).finish()
    }
}

/// Parses a `postgres://` URL into a driver config, defaulting the database to the user name.
pub(crate) fn parse_url(url: &str) -> Result<tokio_postgres::Config> {
    let mut cfg: tokio_postgres::Config =
        url.parse().map_err(|e| Error::invalid(format!("postgres url is invalid: {e}")))?;
    if cfg.get_dbname().is_none() {
        let user = cfg.get_user().unwrap_or("postgres").to_string();
        cfg.dbname(&user);
    }
    if cfg.get_user().is_none() {
        cfg.user("postgres");
    }
    Ok(cfg)
}

impl PgStore {
    /// Connects to `url` (`postgres://user@host:port/db`), migrates the schema when
    /// `opts.auto_migrate` is set (otherwise requires it to be current), checks the contract
    /// floor and starts the LISTEN connection and the notifier.
    ///
    /// Errors: `InvalidArgument` for bad options or URL, `ContractTooOld` when the schema's
    /// floor is above this build's level, `Conflict` when the schema is not migrated and
    /// `auto_migrate` is off, retryable `Backend` when the server cannot be reached.
    pub async fn connect(url: &str, opts: PgOptions) -> Result<PgStore> {
        opts.validate()?;
        let mut cfg = parse_url(url)?;
        let listen_cfg = cfg.clone();
        cfg.application_name(format!("flexiq {}", opts.schema).chars().take(63).collect::<String>());
        let mgr = Manager::from_config(cfg, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(mgr)
            .max_size(opts.pool_size)
            .post_create(Hook::async_fn(|client, _| {
                Box::pin(async move {
                    // A server before 14, or on a platform without the check, refuses the
                    // setting; such a server only learns of a dropped connection when it next
                    // writes to it, and the connection works as before.
                    let _ = client.batch_execute(CONNECTION_CHECK).await;
                    Ok(())
                })
            }))
            .build()
            .map_err(|e| Error::invalid(format!("postgres pool cannot be built: {e}")))?;
        let quoted = format!("\"{}\"", opts.schema);
        {
            let c = Conn::get(&pool).await?;
            if opts.auto_migrate {
                migrate::run(&c, &opts.schema, &quoted).await?;
            } else {
                migrate::require_current(&c, &opts.schema, &quoted).await?;
            }
            let floor = migrate::read_floor(&c, &quoted).await?;
            flexiq_core::check_floor(floor)?;
        }
        let hub = Hub::new(&opts.schema);
        let tasks = vec![
            tokio::spawn(run_listener(hub.clone(), listen_cfg)),
            tokio::spawn(run_notifier(hub.clone(), pool.clone())),
        ];
        let shared = Arc::new(Shared {
            pool,
            schema: opts.schema,
            quoted,
            hub,
            busy: Arc::default(),
            closed: AtomicBool::new(false),
            tasks,
        });
        Ok(PgStore {
            shared,
            ns: Arc::from(opts.namespace.as_str()),
            limited: Arc::default(),
            fair_limited: Arc::default(),
        })
    }

    /// A handle on another namespace sharing this one's pool and listener.
    pub fn with_namespace(&self, ns: &str) -> Result<PgStore> {
        flexiq_core::options::validate_name("namespace", ns)?;
        self.check_open()?;
        Ok(PgStore {
            shared: self.shared.clone(),
            ns: Arc::from(ns),
            limited: Arc::default(),
            fair_limited: Arc::default(),
        })
    }

    /// The PostgreSQL schema holding this store's tables.
    pub fn schema(&self) -> &str {
        &self.shared.schema
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed(format!("postgres store on schema {} is closed", self.shared.schema)));
        }
        Ok(())
    }

    /// A pooled connection.
    pub(crate) async fn conn(&self) -> Result<Conn> {
        self.check_open()?;
        Conn::get_busy(&self.shared.pool, &self.shared.busy).await
    }

    /// `sql` with `{S}` replaced by the quoted schema.
    pub(crate) fn sql(&self, sql: &str) -> String {
        sql.replace("{S}", &self.shared.quoted)
    }

    pub(crate) fn quoted_schema(&self) -> &str {
        &self.shared.quoted
    }

    /// Closes the store for every handle sharing it: later calls fail with `Closed`, idle
    /// connections and the background tasks end, and once the connections still checked out
    /// have had a moment to come back, the server is asked to cancel whatever the others are
    /// running (see `busy.rs`). Returns once the cancel requests were delivered.
    pub(crate) async fn close_all(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.pool.close();
        for t in &self.shared.tasks {
            t.abort();
        }
        self.shared.hub.wake_all();
        self.shared.busy.settle(crate::busy::GRACE).await;
        self.shared.busy.cancel_all().await;
    }

    /// How many of the store's connections are checked out.
    pub fn connections_in_use(&self) -> usize {
        self.shared.busy.len()
    }
}
