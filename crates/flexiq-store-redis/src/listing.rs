//! Keyset and offset walks over the listing indexes.
//!
//! Every index is a sorted set whose members are `<pad(time)>|<id>` at score 0, so a page
//! newest-first is one `ZRANGE key (<last> - BYLEX REV LIMIT 0 n` seek: its cost follows the
//! page size, not the number of matching rows. Filters the index does not capture are
//! applied in memory while walking forward in chunks.

use fred::types::Value;

use flexiq_core::Result;

use crate::conn::{n, s, Conn};
use crate::row;

/// Members fetched per index per step when filtering in memory.
const CHUNK: i64 = 256;

/// Which members to walk, newest first.
pub(crate) struct Walk<'a> {
    /// Index keys merged into one newest-first stream.
    pub(crate) sources: Vec<String>,
    /// Exclusive upper bound member (`None`: from the newest).
    pub(crate) before: Option<String>,
    /// Inclusive lower bound member prefix (`None`: to the oldest).
    pub(crate) from: Option<String>,
    /// Whether every member matches (no in-memory filter).
    pub(crate) exact: bool,
    pub(crate) conn: &'a Conn,
    /// Members to skip (exact walks only).
    pub(crate) skip: u64,
    /// Members wanted (exact single-source walks fetch exactly this many).
    pub(crate) want: usize,
    pub(crate) done: bool,
}

impl<'a> Walk<'a> {
    /// A walk over one index where every member matches.
    pub(crate) fn exact(conn: &'a Conn, key: String, before: Option<String>, skip: u64, want: usize) -> Self {
        Walk { sources: vec![key], before, from: None, exact: true, conn, skip, want, done: false }
    }

    fn bounds(&self, before: &Option<String>) -> (String, String) {
        let max = before.as_ref().map(|m| format!("({m}")).unwrap_or_else(|| "+".into());
        let min = self.from.as_ref().map(|m| format!("[{m}")).unwrap_or_else(|| "-".into());
        (max, min)
    }

    async fn range(
        &self,
        key: &str,
        before: &Option<String>,
        offset: i64,
        count: i64,
    ) -> Result<Vec<String>> {
        let (max, min) = self.bounds(before);
        let v = self
            .conn
            .cmd(
                "ZRANGE",
                vec![s(key), s(max), s(min), s("BYLEX"), s("REV"), s("LIMIT"), n(offset), n(count)],
            )
            .await?;
        Ok(row::strings(v))
    }

    /// The next chunk of members, newest first; `None` when the walk is over. With a
    /// single exact source the first chunk is the whole page (`skip` and `want` applied
    /// server-side); otherwise `skip` applies only when `exact`.
    pub(crate) async fn next(&mut self) -> Result<Option<Vec<String>>> {
        if self.done {
            return Ok(None);
        }
        if self.exact && self.sources.len() == 1 {
            self.done = true;
            let ms = self.range(&self.sources[0], &self.before, self.skip as i64, self.want as i64).await?;
            return Ok(Some(ms));
        }
        loop {
            // An exact walk needs no more than what is still to skip plus the page from each
            // source; a filtered one reads whole chunks.
            let count = if self.exact {
                (self.skip.saturating_add(self.want as u64)).clamp(1, CHUNK as u64) as i64
            } else {
                CHUNK
            };
            let (max, min) = self.bounds(&self.before);
            let ranges = self
                .sources
                .iter()
                .map(|key| {
                    let args = vec![s(key.as_str()), s(max.as_str()), s(min.as_str()), s("BYLEX"), s("REV")];
                    ("ZRANGE", args.into_iter().chain([s("LIMIT"), n(0), n(count)]).collect())
                })
                .collect();
            let mut merged = Vec::new();
            let mut floor: Option<String> = None;
            for v in self.conn.pipeline(ranges).await? {
                let ms = row::strings(v);
                if ms.len() as i64 == count {
                    let last = ms.last().cloned();
                    if floor.is_none() || last > floor {
                        floor = last;
                    }
                }
                merged.extend(ms);
            }
            merged.sort_unstable_by(|a, b| b.cmp(a));
            if let Some(f) = &floor {
                merged.retain(|m| m >= f);
            }
            if merged.is_empty() {
                self.done = true;
                return Ok(None);
            }
            let last_read = merged.last().cloned();
            self.done = floor.is_none();
            if self.exact {
                let skipped = (self.skip as usize).min(merged.len());
                merged.drain(..skipped);
                self.skip -= skipped as u64;
                // Hand out no more than the page, and continue after what was handed out.
                if merged.len() > self.want {
                    merged.truncate(self.want);
                    self.before = merged.last().cloned();
                    self.done = false;
                    return Ok(Some(merged));
                }
            }
            self.before = last_read;
            if !merged.is_empty() {
                return Ok(Some(merged));
            }
            if self.done {
                return Ok(None);
            }
        }
    }
}

/// `HGETALL` of many keys in one pipeline.
pub(crate) async fn hgetall_many(conn: &Conn, keys: Vec<String>) -> Result<Vec<Value>> {
    conn.pipeline(keys.into_iter().map(|k| ("HGETALL", vec![s(k)])).collect()).await
}
