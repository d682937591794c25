//! The one-time backfill of the combined listing indexes (status + queue, status + task).
//!
//! Every status change maintains them, but jobs written by a build from before they existed
//! are only in the per-status, per-queue and per-task indexes. `migrate()` walks each status
//! index once and has a script add every job it finds to the combined indexes of the status the
//! job has at that moment (read in the script, so a job that moved meanwhile is indexed where it
//! is now), then marks the namespace done (`B:ixv`) so later migrations skip the walk.

use flexiq_core::{JobStatus, Result};

use crate::conn::{n, s};
use crate::keys::member_id;
use crate::row::{self, text};
use crate::store::RedisStore;

/// Index members read and indexed per step.
const PAGE: i64 = 1_000;
/// The version of the listing indexes a namespace has.
const INDEX_VERSION: &str = "2";

impl RedisStore {
    /// Backfills the combined indexes of this namespace unless done before; returns how many
    /// jobs it indexed.
    pub(crate) async fn backfill_combined_indexes(&self) -> Result<u64> {
        let flag = self.ctx.keys.k("ixv");
        if text(&self.ctx.conn.cmd("GET", vec![s(flag.as_str())]).await?).as_deref() == Some(INDEX_VERSION) {
            return Ok(0);
        }
        let mut indexed = 0u64;
        for st in JobStatus::ALL {
            let index = self.ctx.keys.k(&format!("ix:s:{}", st.code()));
            let mut from = "-".to_string();
            loop {
                let range = vec![s(index.as_str()), s(from), s("+"), s("BYLEX"), s("LIMIT"), n(0), n(PAGE)];
                let members = row::strings(self.ctx.conn.cmd("ZRANGE", range).await?);
                let Some(last) = members.last() else { break };
                from = format!("({last}");
                let mut args = vec![s("index_combined")];
                args.extend(members.iter().map(|m| s(member_id(m))));
                let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
                indexed += row::int(&v).unwrap_or(0).max(0) as u64;
                if (members.len() as i64) < PAGE {
                    break;
                }
            }
        }
        self.ctx.conn.cmd("SET", vec![s(flag), s(INDEX_VERSION)]).await?;
        Ok(indexed)
    }
}
