//! Dedup records (`Deduplication`) and what an enqueue sends the script about a job's key.
//!
//! A record is the hash `B:dd:<key>` (holder `jid`, its queue `q`, expiry `exp` in Unix ms
//! when the hold lapses by itself), and the holder's hash names its key in `dk` so every path
//! deleting the job drops the record (see `lua/dedup.lua`). The enqueue script decides each
//! job against the record it reads, atomically and in batch order; what it decides is core's
//! [`plan_dedup`], which needs only the holder's status and whether the hold has an expiry
//! still to come. So Rust sends, per job, [`plan_table`]: the plan for every such state, and
//! the script looks up the one it reads.

use flexiq_core::dedup::{plan_dedup, validate_dedup_key, DedupHold, DedupOptions, DedupPlan};
use flexiq_core::store::{DedupJobIdRequest, Deduplication};
use flexiq_core::{JobId, JobStatus, Result};
use fred::types::Value;

use crate::conn::s;
use crate::row::{int, text};
use crate::store::RedisStore;

/// The holder states a plan table covers, in the order `dedup.lua`'s `dd_plan` reads them:
/// a gone holder (or no record), then each status code.
fn holder_slots() -> impl Iterator<Item = Option<JobStatus>> {
    std::iter::once(None).chain(JobStatus::ALL.into_iter().map(Some))
}

/// The expiry classes, in `dd_plan`'s order, as holds read at time 0: none, one still to
/// come, one that has come.
const EXPIRIES: [Option<i64>; 3] = [None, Some(1), Some(0)];

/// The letter `dd_plan` returns for a plan.
fn plan_letter(plan: &DedupPlan) -> char {
    match plan {
        DedupPlan::Insert { .. } => 'i',
        DedupPlan::InsertBehind { .. } => 'b',
        DedupPlan::Ignore { extend_to: None, replace: false, .. } => 'g',
        DedupPlan::Ignore { extend_to: Some(_), replace: false, .. } => 'e',
        DedupPlan::Ignore { extend_to: None, replace: true, .. } => 'r',
        DedupPlan::Ignore { extend_to: Some(_), replace: true, .. } => 'x',
    }
}

/// What [`plan_dedup`] decides for `opts` in every holder state: three letters per holder
/// slot ([`holder_slots`]), one per expiry class ([`EXPIRIES`]). The expiry an extension
/// moves the record to, and a new holder's, is always `opts.expires_at(now)`, sent beside it.
pub(crate) fn plan_table(opts: &DedupOptions) -> String {
    let holder = JobId::from_trusted("holder");
    let mut out = String::new();
    for status in holder_slots() {
        for expires_at in EXPIRIES {
            let hold = DedupHold { job_id: holder.clone(), expires_at, holder_status: status };
            out.push(plan_letter(&plan_dedup(opts, Some(&hold), 0)));
        }
    }
    out
}

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

    /// `dd_plan` in `dedup.lua`, in Rust: the letter at a holder's slot and expiry class.
    fn lookup(table: &str, status: Option<JobStatus>, expires_at: Option<i64>, now: i64) -> char {
        let slot = status.map_or(0, |st| usize::from(st.code()) + 1);
        let class = match expires_at {
            None => 0,
            Some(at) if at > now => 1,
            Some(_) => 2,
        };
        table.as_bytes()[3 * slot + class] as char
    }

    fn options() -> Vec<DedupOptions> {
        let mut out = Vec::new();
        for mode in DedupMode::ALL {
            let ttl_ms = matches!(mode, DedupMode::Throttle | DedupMode::Debounce).then_some(1_000);
            for (extend, replace) in [(false, false), (true, false), (false, true), (true, true)] {
                let o = DedupOptions { id: "k".into(), mode, ttl_ms, extend, replace };
                if o.validate().is_ok() {
                    out.push(o);
                }
            }
        }
        out
    }

    #[test]
    fn the_table_gives_the_plan_core_decides_for_every_hold() {
        let now = 5_000;
        for o in options() {
            let table = plan_table(&o);
            assert_eq!(table.len(), 3 * (JobStatus::ALL.len() + 1));
            for status in holder_slots() {
                for expires_at in [None, Some(now - 1), Some(now), Some(now + 1), Some(i64::MAX)] {
                    let hold =
                        DedupHold { job_id: JobId::from_trusted("h"), expires_at, holder_status: status };
                    let want = plan_letter(&plan_dedup(&o, Some(&hold), now));
                    assert_eq!(
                        lookup(&table, status, expires_at, now),
                        want,
                        "{o:?} {status:?} {expires_at:?}"
                    );
                }
            }
            let none = plan_letter(&plan_dedup(&o, None, now));
            assert_eq!(lookup(&table, None, None, now), none, "no record reads as a gone holder");
        }
    }

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
