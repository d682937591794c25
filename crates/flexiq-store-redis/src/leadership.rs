//! Leader leases: one hash per lease (`B:lease:<name>`, holder and expiry), taken and given up
//! by `small.lua` so two processes never both win a race.

use flexiq_core::history::Lease;
use flexiq_core::store::{AcquireLeaseRequest, Leadership, LeaseRequest, ReleaseLeaseRequest};
use flexiq_core::Result;

use crate::conn::{n, s};
use crate::row::{int, text};
use crate::store::RedisStore;

#[async_trait::async_trait]
impl Leadership for RedisStore {
    async fn acquire_lease(&self, req: AcquireLeaseRequest) -> Result<bool> {
        self.ctx.check()?;
        req.validate()?;
        let AcquireLeaseRequest { name, holder, ttl_ms, now } = req;
        let args = vec![s("lease_acquire"), s(name), s(holder), n(ttl_ms as i64), n(now)];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v) == Some(1))
    }

    async fn release_lease(&self, req: ReleaseLeaseRequest) -> Result<bool> {
        self.ctx.check()?;
        req.validate()?;
        let args = vec![s("lease_release"), s(req.name), s(req.holder)];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v) == Some(1))
    }

    async fn lease(&self, req: LeaseRequest) -> Result<Option<Lease>> {
        self.ctx.check()?;
        req.validate()?;
        let LeaseRequest { name, now } = req;
        let v = self
            .ctx
            .conn
            .cmd("HMGET", vec![s(self.ctx.keys.k(&format!("lease:{name}"))), s("h"), s("x")])
            .await?
            .into_array();
        match (v.first().and_then(text), v.get(1).and_then(int)) {
            (Some(holder), Some(expires_at)) if expires_at > now => {
                Ok(Some(Lease { name, holder, expires_at }))
            }
            _ => Ok(None),
        }
    }
}
