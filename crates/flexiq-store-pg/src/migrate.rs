//! The migration runner: embedded, numbered migrations and the stored contract floor, used by
//! [`PgStore::connect`], [`PgStore::migrate_schema`] and the `Schema` impl in `schema.rs`.
//!
//! Migrations run in one transaction under a transaction-scoped advisory lock keyed by the
//! schema name, so two processes migrating at once are safe: the second waits, then finds
//! nothing left to apply. When the schema is already current no DDL is issued at all, so a
//! runtime role without CREATE can open a store that an owner role migrated beforehand.

use flexiq_core::cursor::fingerprint;
use flexiq_core::{Error, MigrationSummary, Result};

use crate::db::Conn;
use crate::options::validate_schema;
use crate::store::{parse_url, PgStore};

/// Every migration of this build, in order: (version, SQL with `{S}` for the schema and the
/// placeholders [`render`] fills).
const MIGRATIONS: &[(u32, &str)] = &[
    (1, include_str!("migrations/0001_init.sql")),
    (2, include_str!("migrations/0002_fewer_job_indexes.sql")),
    (3, include_str!("migrations/0003_no_due_index.sql")),
    (4, include_str!("migrations/0004_claim_seq.sql")),
    (5, include_str!("migrations/0005_job_counts.sql")),
    (6, include_str!("migrations/0006_workflow_stages.sql")),
    (7, include_str!("migrations/0007_dead_letter_stages.sql")),
    (8, include_str!("migrations/0008_admin_indexes.sql")),
    (9, include_str!("migrations/0009_stall_count.sql")),
    (10, include_str!("migrations/0010_flows_dedup.sql")),
    (11, include_str!("migrations/0011_job_schedulers.sql")),
    (12, include_str!("migrations/0012_events.sql")),
    (13, include_str!("migrations/0013_start_seq.sql")),
];

/// A migration's SQL as it runs: the parts core's rules write filled in (`event_rules.rs`),
/// and `{S}` replaced by the quoted schema.
fn render(sql: &str, quoted: &str) -> String {
    crate::event_rules::render(sql).replace("{S}", quoted)
}

/// The schema version this build needs.
pub(crate) fn latest() -> u32 {
    MIGRATIONS.last().map(|m| m.0).unwrap_or(0)
}

fn lock_key(schema: &str) -> i64 {
    fingerprint(&["flexiq-migrate", schema]) as i64
}

/// The highest applied version, or 0 when the schema or its version table is absent.
async fn current_version(c: &Conn, quoted: &str) -> Result<u32> {
    let table = format!("{quoted}.schema_migrations");
    let exists = c
        .opt("read schema version", "SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await?
        .map(|r| r.get::<_, bool>(0))
        .unwrap_or(false);
    if !exists {
        return Ok(0);
    }
    let sql = format!("SELECT coalesce(max(version), 0) FROM {table}");
    let v: i32 = c.rows("read schema version", &sql, &[]).await?[0].get(0);
    Ok(u32::try_from(v).unwrap_or(0))
}

/// Applies pending migrations to `schema`; idempotent.
pub(crate) async fn run(c: &Conn, schema: &str, quoted: &str) -> Result<MigrationSummary> {
    let mut summary = MigrationSummary::default();
    if current_version(c, quoted).await? >= latest() {
        return Ok(summary);
    }
    let what = format!("migrate schema {schema}");
    c.tx(async {
        c.exec(&what, "SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema)]).await?;
        let ddl = format!(
            "CREATE SCHEMA IF NOT EXISTS {quoted}; \
             CREATE TABLE IF NOT EXISTS {quoted}.schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)"
        );
        c.batch_execute(&ddl).await.map_err(|e| crate::error::pg(&what, e))?;
        let have = current_version(c, quoted).await?;
        for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > have) {
            c.batch_execute(&render(sql, quoted)).await.map_err(|e| crate::error::pg(&what, e))?;
            let ins = format!(
                "INSERT INTO {quoted}.schema_migrations (version, applied_at) \
                 VALUES ($1, (extract(epoch from clock_timestamp()) * 1000)::bigint)"
            );
            c.exec(&what, &ins, &[&(*version as i32)]).await?;
            summary.applied.push(*version);
        }
        Ok(())
    })
    .await?;
    Ok(summary)
}

/// Fails unless the schema is migrated to this build's version.
pub(crate) async fn require_current(c: &Conn, schema: &str, quoted: &str) -> Result<()> {
    let v = current_version(c, quoted).await?;
    if v < latest() {
        return Err(Error::Conflict(format!(
            "schema {schema} is at version {v}, this build needs version {}: run migrate with a role that may create tables, or connect with auto_migrate",
            latest()
        )));
    }
    Ok(())
}

/// The stored contract floor.
pub(crate) async fn read_floor(c: &Conn, quoted: &str) -> Result<u32> {
    let sql = format!("SELECT value FROM {quoted}.meta WHERE key = 'contract_floor'");
    let v: i64 = c.opt("read contract floor", &sql, &[]).await?.map(|r| r.get(0)).unwrap_or(1);
    u32::try_from(v).map_err(|_| crate::error::corrupt(format!("contract floor {v}")))
}

impl PgStore {
    /// Migrates `schema` at `url` without opening a store: what an owner role runs before
    /// runtime roles (without CREATE) connect with `auto_migrate: false`. Idempotent; the
    /// summary lists the versions this call applied.
    pub async fn migrate_schema(url: &str, schema: &str) -> Result<MigrationSummary> {
        validate_schema(schema)?;
        let cfg = parse_url(url)?;
        let mgr = deadpool_postgres::Manager::from_config(
            cfg,
            tokio_postgres::NoTls,
            deadpool_postgres::ManagerConfig { recycling_method: deadpool_postgres::RecyclingMethod::Fast },
        );
        let pool = deadpool_postgres::Pool::builder(mgr)
            .max_size(1)
            .build()
            .map_err(|e| Error::invalid(format!("postgres pool cannot be built: {e}")))?;
        let out = async {
            let c = Conn::get(&pool).await?;
            run(&c, schema, &format!("\"{schema}\"")).await
        }
        .await;
        pool.close();
        out
    }
}
