//! Query plans of the hot statements, for operators tuning a deployment (and for the tests
//! that keep claims and keyset pages on index seeks).

use flexiq_core::store::{ClaimFairRequest, ClaimRequest, ListJobsAfterRequest};
use flexiq_core::{JobFilter, Result};
use tokio_postgres::types::ToSql;

use crate::claim::claim_sql;
use crate::inspect::refs;
use crate::store::PgStore;
use crate::workflow_claim::search_sql;

impl PgStore {
    /// The plan PostgreSQL picks for the claim statement of `req` (plain `EXPLAIN`: nothing
    /// is locked, claimed or written), one plan line per line.
    pub async fn explain_claim(&self, req: &ClaimRequest) -> Result<String> {
        let ns: &str = &self.ns;
        let limit = i64::from(req.limit);
        let sql = format!("EXPLAIN {}", self.sql(&claim_sql(false)));
        let params: [&(dyn ToSql + Sync); 4] = [&ns, &req.queues, &req.now, &limit];
        self.explain(&sql, &params).await
    }

    /// The plan PostgreSQL picks for the group search of a fair claim of `req` resuming after
    /// group `after` (plain `EXPLAIN`: nothing is locked, claimed or written).
    pub async fn explain_claim_fair(&self, req: &ClaimFairRequest, after: &str) -> Result<String> {
        req.validate()?;
        let ns: &str = &self.ns;
        let workflows: Vec<&str> = req.serves.iter().map(|s| s.workflow_id.as_str()).collect();
        let versions: Vec<Option<&str>> =
            req.serves.iter().map(|s| s.definition_version.as_deref()).collect();
        let (none, skipped): (Vec<String>, Vec<uuid::Uuid>) = (Vec::new(), Vec::new());
        let sql = format!("EXPLAIN {}", self.sql(&search_sql(false, false)));
        let params: [&(dyn ToSql + Sync); 9] =
            [&ns, &req.queues, &after, &after, &req.now, &workflows, &versions, &none, &skipped];
        self.explain(&sql, &params).await
    }

    /// The plan PostgreSQL picks for a keyset page of `list_jobs_after(filter, limit, after)`.
    pub async fn explain_list_jobs_after(
        &self,
        filter: &JobFilter,
        limit: u32,
        after: Option<&str>,
    ) -> Result<String> {
        ListJobsAfterRequest { filter: filter.clone(), limit, after: after.map(str::to_string) }
            .validate()?;
        let (sql, params) = self.keyset_sql(filter, limit, after)?;
        self.explain(&format!("EXPLAIN {sql}"), &refs(&params)).await
    }

    async fn explain(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<String> {
        let c = self.conn().await?;
        let rows = c.rows("explain", sql, params).await?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n"))
    }
}
