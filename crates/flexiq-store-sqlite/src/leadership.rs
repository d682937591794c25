//! [`Leadership`]: named leases with expiry in the `leases` table, taken with one upsert that
//! only overwrites a row held by the same holder or already lapsed, so two processes sharing
//! the file never both hold a lease.

use flexiq_core::store::{AcquireLeaseRequest, Leadership, LeaseRequest, ReleaseLeaseRequest};
use flexiq_core::{Lease, Result};
use rusqlite::OptionalExtension;

use crate::error::SqlResultExt;
use crate::SqliteStore;

#[async_trait::async_trait]
impl Leadership for SqliteStore {
    async fn acquire_lease(&self, req: AcquireLeaseRequest) -> Result<bool> {
        req.validate()?;
        let (ns, AcquireLeaseRequest { name, holder, ttl_ms, now }) = (self.ns(), req);
        let expires = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached(
                    "INSERT INTO leases (ns, name, holder, expires_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (ns, name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                     WHERE leases.holder = excluded.holder OR leases.expires_at <= ?5",
                )
                .db()?
                .execute((&*ns, &name, &holder, expires, now))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn release_lease(&self, req: ReleaseLeaseRequest) -> Result<bool> {
        req.validate()?;
        let (ns, ReleaseLeaseRequest { name, holder }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM leases WHERE ns = ?1 AND name = ?2 AND holder = ?3")
                .db()?
                .execute((&*ns, &name, &holder))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn lease(&self, req: LeaseRequest) -> Result<Option<Lease>> {
        req.validate()?;
        let (ns, LeaseRequest { name, now }) = (self.ns(), req);
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT name, holder, expires_at FROM leases WHERE ns = ?1 AND name = ?2 AND expires_at > ?3",
            )
            .db()?
            .query_row((&*ns, &name, now), |r| {
                Ok(Lease { name: r.get(0)?, holder: r.get(1)?, expires_at: r.get(2)? })
            })
            .optional()
            .db()
        })
        .await
    }
}
