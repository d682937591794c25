//! [`Leadership`] for [`PgStore`]: named leases in the `leases` table, taken with one upsert
//! that only wins when the lease is free, lapsed or already ours, so two processes racing for
//! the cleaner's lease cannot both hold it.

use flexiq_core::store::{AcquireLeaseRequest, Leadership, LeaseRequest, ReleaseLeaseRequest};
use flexiq_core::{Lease, Result};

use crate::db::i64_of;
use crate::store::PgStore;

#[async_trait::async_trait]
impl Leadership for PgStore {
    async fn acquire_lease(&self, req: AcquireLeaseRequest) -> Result<bool> {
        req.validate()?;
        let now = req.now;
        let expires = now.saturating_add(i64_of("lease ttl ms", req.ttl_ms)?);
        let ns: &str = &self.ns;
        let sql = self.sql(
            "INSERT INTO {S}.leases AS l (namespace, name, holder, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (namespace, name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
             WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $5 RETURNING holder",
        );
        let c = self.conn().await?;
        Ok(c.opt("acquire lease", &sql, &[&ns, &req.name, &req.holder, &expires, &now]).await?.is_some())
    }

    async fn release_lease(&self, req: ReleaseLeaseRequest) -> Result<bool> {
        req.validate()?;
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.leases WHERE namespace = $1 AND name = $2 AND holder = $3");
        let c = self.conn().await?;
        Ok(c.exec("release lease", &sql, &[&ns, &req.name, &req.holder]).await? > 0)
    }

    async fn lease(&self, req: LeaseRequest) -> Result<Option<Lease>> {
        req.validate()?;
        let ns: &str = &self.ns;
        let sql =
            self.sql("SELECT name, holder, expires_at FROM {S}.leases WHERE namespace = $1 AND name = $2 AND expires_at > $3");
        let c = self.conn().await?;
        Ok(c.opt("read lease", &sql, &[&ns, &req.name, &req.now]).await?.map(|r| Lease {
            name: r.get(0),
            holder: r.get(1),
            expires_at: r.get(2),
        }))
    }
}
