//! `remove_orphans`: what no job owns any more, found by walking the namespace's keys.
//!
//! A job hash that no status index holds is invisible to every listing and claim; an index
//! member, a per-job history key or a dedup record whose job is gone is dead weight. Every
//! store path writes a job and its indexes in one script, so neither exists unless something
//! outside the store wrote or deleted keys. The walk is a `SCAN` of the keys under the namespace's hash tag (all
//! on the node serving its slot), a page at a time, and nothing it reads is trusted: each page
//! goes to `admin.lua`, which checks every candidate again and removes it in the same step, so
//! a job enqueued or removed meanwhile is never taken for an orphan. An index the scan finds
//! is walked with a `ZSCAN` / `HSCAN` / `SSCAN` cursor inside the script, a page per call.

use flexiq_core::Result;
use fred::types::Value;

use crate::conn::{n, s};
use crate::error::shape;
use crate::row::{self, int, text};
use crate::store::RedisStore;

/// Keys asked for per `SCAN` step, and candidates sent per script call.
const SCAN_COUNT: i64 = 1_000;
const BATCH: usize = 500;

/// What a key under the namespace base is, for the orphan walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `j:<id>`: a job hash.
    Job,
    /// A per-job history key (`err:`, `log:`, `part:`, `rp:`), kept while its job is live or
    /// archived, and a dedup record (`dd:`), kept while the job it names is.
    History,
    /// `dep:<id>`: the dependents of a job, a history key whose members are checked too.
    Dependents,
    /// An index of job ids: listing, placement, lease, finished, run, stage and unique-key
    /// indexes, and the error and log indexes.
    Index,
    /// Anything else (settings, counters, dead letters, the archive, wake-ups, ...).
    Other,
}

impl Role {
    fn of(suffix: &str) -> Role {
        let head = suffix.split(':').next().unwrap_or_default();
        let nested = suffix.len() > head.len();
        match head {
            "j" if nested => Role::Job,
            "err" | "log" | "part" | "rp" | "dd" if nested => Role::History,
            "dep" if nested => Role::Dependents,
            "ix" | "rd" | "dy" | "wfr" | "wfs" if nested => Role::Index,
            "hb" | "fin" | "uniq" | "errix" | "logix" if !nested => Role::Index,
            _ => Role::Other,
        }
    }
}

/// `text` with Redis glob specials escaped, so it matches only itself in a `MATCH` pattern.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Runs `op` over `items` in batches; returns the total the script reported.
async fn batched(store: &RedisStore, op: &str, items: &[String]) -> Result<u64> {
    let mut total = 0;
    for chunk in items.chunks(BATCH) {
        let mut args = vec![s(op)];
        args.extend(chunk.iter().map(|i| s(i.as_str())));
        total += int(&store.admin_op(args).await?).unwrap_or(0).max(0) as u64;
    }
    Ok(total)
}

/// Walks one index to its end, removing members whose job is gone.
async fn walk_index(store: &RedisStore, suffix: &str) -> Result<u64> {
    let mut total = 0;
    let mut cursor = "0".to_string();
    loop {
        let reply = store.admin_op(vec![s("orphan_index"), s(suffix), s(cursor.as_str())]).await?;
        let reply = reply.into_array();
        total += reply.first().and_then(int).unwrap_or(0).max(0) as u64;
        cursor = reply.get(1).and_then(text).ok_or_else(|| shape("orphan index walk"))?;
        if cursor == "0" {
            return Ok(total);
        }
    }
}

/// The orphan walk of `store`'s namespace; returns how many orphans went. An index is walked
/// when the scan reaches it (a key the scan returns twice is walked twice, to no effect).
pub(crate) async fn remove(store: &RedisStore) -> Result<u64> {
    let base = store.ctx.keys.base.as_str();
    let pattern = format!("{}:*", glob_escape(base));
    let mut cursor = "0".to_string();
    let mut total = 0;
    loop {
        let args = vec![s(cursor.as_str()), s("MATCH"), s(pattern.as_str()), s("COUNT"), n(SCAN_COUNT)];
        let mut reply = store.ctx.conn.cmd_at("SCAN", base, args).await?.into_array().into_iter();
        cursor = reply.next().as_ref().and_then(text).ok_or_else(|| shape("SCAN"))?;
        let keys = row::strings(reply.next().unwrap_or(Value::Null));
        let (mut jobs, mut history, mut indexes) = (Vec::new(), Vec::new(), Vec::new());
        for key in keys {
            let Some(suffix) = key.strip_prefix(base).and_then(|k| k.strip_prefix(':')) else { continue };
            match Role::of(suffix) {
                Role::Job => jobs.push(suffix["j:".len()..].to_string()),
                Role::History => history.push(suffix.to_string()),
                Role::Dependents => {
                    history.push(suffix.to_string());
                    indexes.push(suffix.to_string());
                }
                Role::Index => indexes.push(suffix.to_string()),
                Role::Other => {}
            }
        }
        total += batched(store, "orphan_jobs", &jobs).await?;
        total += batched(store, "orphan_keys", &history).await?;
        for suffix in &indexes {
            total += walk_index(store, suffix).await?;
        }
        if cursor == "0" {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_told_apart_by_their_suffix() {
        assert_eq!(Role::of("j:0190-a"), Role::Job);
        assert_eq!(Role::of("err:x"), Role::History);
        assert_eq!(Role::of("part:x"), Role::History);
        assert_eq!(Role::of("dd:some key"), Role::History);
        assert_eq!(Role::of("dep:x"), Role::Dependents);
        for index in ["ix:s:0", "ix:sq:1:q", "rd:q", "dy:q", "hb", "fin", "uniq", "errix", "wfs:r", "wfr:r"] {
            assert_eq!(Role::of(index), Role::Index, "{index}");
        }
        for other in ["ixv", "a:x", "dlq", "cnt:q", "queues", "wake", "metrics", "j", "hb:x", "lease:l"] {
            assert_eq!(Role::of(other), Role::Other, "{other}");
        }
    }

    #[test]
    fn glob_specials_are_escaped() {
        assert_eq!(glob_escape("{fq:a*b?[c]\\}"), "{fq:a\\*b\\?\\[c\\]\\\\}");
    }
}
