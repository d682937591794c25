//! Dedup records (`Deduplication`) and what an enqueue sends the script about a job's key.
//!
//! A record is the hash `B:dd:<key>` (holder `jid`, its queue `q`, expiry `exp` in Unix ms
//! when the hold lapses by itself), and the holder's hash names its key in `dk` so every path
//! deleting the job drops the record (see `lua/dedup.lua`). The enqueue script decides each
//! job against the record it reads, atomically and in batch order; what it decides is core's
//! [`plan_dedup`], which needs only the holder's status and whether the hold has an expiry
//! still to come. So Rust sends, per job, core's [`plan_table`]: the plan for every such
//! state, and the script looks up the one it reads (`flexiq_core::dedup_table`).

use flexiq_core::dedup::{validate_dedup_key, DedupHold, DedupOptions};
use flexiq_core::dedup_table::plan_table;
use flexiq_core::store::{DedupJobIdRequest, Deduplication};
use flexiq_core::{JobId, Result};
use fred::types::Value;

use crate::conn::s;
use crate::row::{int, text};
use crate::store::RedisStore;

/// The enqueue script's dedup arguments for one job: `''` without a key, else the key, its
/// plan table and the expiry the key takes at `now` (`''` for none).
pub(crate) fn dedup_args(opts: Option<&DedupOptions>, now: i64) -> Vec<Value> {
    match opts {
        None => vec![s("")],
        Some(d) => vec![
            s(d.id.as_str()),
            s(plan_table(d)),
            s(d.expires_at(now).map(|e| e.to_string()).unwrap_or_default()),
        ],
    }
}

#[async_trait::async_trait]
impl Deduplication for RedisStore {
    async fn dedup_job_id(&self, req: DedupJobIdRequest) -> Result<Option<JobId>> {
        self.ctx.check()?;
        req.validate()?;
        let args = vec![s("dedup_hold"), s(req.key.as_str())];
        let reply = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        let f = reply.into_array();
        let Some(jid) = f.first().and_then(text) else { return Ok(None) };
        let holder_status = match f.get(2).and_then(text).filter(|c| !c.is_empty()) {
            Some(code) => Some(crate::row::status(&code)?),
            None => None,
        };
        let hold =
            DedupHold { job_id: JobId::from_trusted(jid), expires_at: f.get(1).and_then(int), holder_status };
        Ok(hold.is_live(req.now).then_some(hold.job_id))
    }

    async fn delete_dedup_key(&self, key: &str) -> Result<bool> {
        self.ctx.check()?;
        validate_dedup_key(key)?;
        let gone = self.ctx.conn.cmd("DEL", vec![s(self.ctx.keys.dedup(key))]).await?;
        Ok(int(&gone) == Some(1))
    }
}

#[cfg(test)]
mod tests {
    use flexiq_core::dedup::DedupMode;

    use super::*;

    #[test]
    fn the_script_reads_the_table_as_built() {
        let lua = include_str!("lua/dedup.lua");
        assert!(lua.contains("local slot = st and st + 1 or 0"));
        assert!(lua.contains("if exp then class = exp > now and 1 or 2 end"));
        assert!(lua.contains("local at = 3 * slot + class + 1"));
        for letter in ['i', 'b', 'g', 'e', 'r', 'x'] {
            assert!(lua.contains(&format!("'{letter}'")), "{letter} is documented");
        }
        let debounce = DedupOptions {
            id: "k".into(),
            mode: DedupMode::Debounce,
            ttl_ms: Some(10),
            extend: true,
            replace: true,
        };
        let args = dedup_args(Some(&debounce), 100);
        assert_eq!(args.len(), 3);
        assert_eq!(text(&args[2]).as_deref(), Some("110"));
        assert_eq!(dedup_args(None, 100).len(), 1);
    }
}
