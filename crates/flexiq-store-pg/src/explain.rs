//! Query plans of the hot statements, for operators tuning a deployment (and for the tests
//! that keep claims and keyset pages on index seeks).

use flexiq_core::store::{ClaimFairRequest, ClaimRequest, ListJobsAfterRequest};
use flexiq_core::{JobFilter, Result};
use tokio_postgres::types::ToSql;

use crate::claim::claim_sql;
use crate::claim_free::claim_effect;
use crate::inspect::refs;
use crate::store::PgStore;
use crate::workflow_claim_free::{best_free_sql, fair_free_sql};

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

    /// The plan PostgreSQL picks for the one-statement fair claim of `req` (with a group cap,
    /// the round-robin group walk; without, the best jobs), as it runs on queues without
    /// limits (plain `EXPLAIN`: nothing is locked, claimed or written).
    pub async fn explain_claim_fair(&self, req: &ClaimFairRequest) -> Result<String> {
        req.validate()?;
        let ns: &str = &self.ns;
        let n = req.workers.len() as i64;
        let (st, step) = claim_effect(req.now)?;
        let workflows: Vec<&str> = req.serves.iter().map(|s| s.workflow_id.as_str()).collect();
        let versions: Vec<Option<&str>> =
            req.serves.iter().map(|s| s.definition_version.as_deref()).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> =
            vec![&ns, &req.queues, &req.now, &n, &st, &step, &req.workers, &workflows, &versions];
        let cap = req.group_cap.map(i64::from);
        let statement = match &cap {
            None => best_free_sql(false),
            Some(cap) => {
                params.push(cap);
                fair_free_sql(false)
            }
        };
        self.explain(&format!("EXPLAIN {}", self.sql(&statement)), &params).await
    }

    /// The generic plan the one-statement fair claim of `req` runs on: the host loop's
    /// transactions prepare it once per connection and keep the plan made then (see
    /// `GENERIC_SETTINGS` in `db.rs`), so this is the plan a connection that first claims now
    /// would keep, from the tables' statistics as they are. Shown by `EXPLAIN EXECUTE` of the
    /// statement prepared in a transaction that is rolled back: nothing is claimed or written.
    pub async fn explain_claim_fair_generic(&self, req: &ClaimFairRequest) -> Result<String> {
        self.explain_fair_generic(req, false).await
    }

    /// The generic plan of the statement that completes the acks of hosts and makes their
    /// fair claim `req` in one flight (see `explain_claim_fair_generic`): its completions find
    /// their jobs by id, however many jobs are running. Nothing is completed or claimed.
    pub async fn explain_complete_and_claim_fair_generic(&self, req: &ClaimFairRequest) -> Result<String> {
        self.explain_fair_generic(req, true).await
    }

    async fn explain_fair_generic(&self, req: &ClaimFairRequest, completes: bool) -> Result<String> {
        req.validate()?;
        let (st, step) = claim_effect(req.now)?;
        let text = |v: &str| format!("'{}'", v.replace('\'', "''"));
        let texts = |vs: &[Option<&str>]| {
            let items: Vec<String> = vs.iter().map(|v| v.map_or_else(|| "NULL".to_string(), text)).collect();
            format!("ARRAY[{}]::text[]", items.join(", "))
        };
        let workflows: Vec<Option<&str>> = req.serves.iter().map(|s| Some(s.workflow_id.as_str())).collect();
        let versions: Vec<Option<&str>> =
            req.serves.iter().map(|s| s.definition_version.as_deref()).collect();
        let mut args = vec![
            text(&self.ns),
            texts(&req.queues.iter().map(|q| Some(q.as_str())).collect::<Vec<_>>()),
            req.now.to_string(),
            req.workers.len().to_string(),
            st.to_string(),
            step.to_string(),
            texts(&req.workers.iter().map(|w| Some(w.as_str())).collect::<Vec<_>>()),
            texts(&workflows),
            texts(&versions),
        ];
        let statement = match req.group_cap {
            None => best_free_sql(completes),
            Some(cap) => {
                args.push(cap.to_string());
                fair_free_sql(completes)
            }
        };
        if completes {
            // The acks' parameters, after the cap (see `completes_sql`): none, as a generic
            // plan does not depend on them.
            args.extend(["uuid", "int4", "int8", "int8", "bytea"].map(|t| format!("'{{}}'::{t}[]")));
        }
        let c = self.conn().await?;
        let what = "explain generic fair claim";
        let fail = |e| crate::error::pg(what, e);
        c.begin_generic().await?;
        let run = async {
            c.batch_execute(&format!("PREPARE flexiq_generic_claim AS {}", self.sql(&statement)))
                .await
                .map_err(fail)?;
            let rows = c
                .simple_query(&format!("EXPLAIN EXECUTE flexiq_generic_claim({})", args.join(", ")))
                .await
                .map_err(fail)?;
            c.batch_execute("DEALLOCATE flexiq_generic_claim").await.map_err(fail)?;
            let lines: Vec<String> = rows
                .iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                    _ => None,
                })
                .collect();
            Ok(lines.join("\n"))
        };
        let plan = run.await;
        c.rollback().await;
        plan
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

    /// The plans PostgreSQL picks for a page of `read_events` after `after` (`None`: from the
    /// oldest event kept): on the cluster-wide horizon, a blank line, then on the narrowed one.
    pub async fn explain_read_events(&self, after: Option<&str>, limit: u32) -> Result<String> {
        self.explain_events_page(after, limit).await
    }

    pub(crate) async fn explain(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<String> {
        let c = self.conn().await?;
        let rows = c.rows("explain", sql, params).await?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n"))
    }
}
