//! Plain batches through `enqueue_plain.lua`: the client lays out every write.
//!
//! Most batches carry no unique key, no dependency and no admission cap. For them the script
//! of `enqueue.lua` spends about as long in Lua (parsing each job, building its field list,
//! formatting index members, grouping them per key) as in the Redis commands it calls, on the
//! server's single thread. Here the client does most of that work: it formats every index
//! member and groups the members per key, and the script only checks revoked tasks, pairs each
//! job's values with their field names and applies the writes. Constant field names and scores
//! are not sent: every argument costs the server a parse before the script runs. Both scripts
//! write the same keys, fields and members.

use std::collections::HashMap;

use flexiq_core::store::{placed_run_at, Enqueued};
use flexiq_core::{JobStatus, NewJob, Result};
use fred::types::Value;

use crate::conn::{b, n, s};
use crate::keys::{pad, ready_member};
use crate::store::Ctx;

/// Most `(score, member)` pairs sent to one `ZADD` (Lua's `unpack` has a stack limit).
const ZADD_CHUNK: usize = 1_000;
/// Wake-up tokens per batch, as in `prelude.lua`.
const MAX_WAKE: usize = 64;

/// Whether `jobs` can take the plain path: jobs naming a workflow run take the general one,
/// which checks their (run, stage) pair and indexes the run, and so do jobs with a dedup key.
pub(crate) fn qualifies(jobs: &[NewJob], max_pending: Option<u64>, now: i64) -> bool {
    max_pending.is_none()
        && now >= 0
        && jobs.iter().all(|j| {
            j.unique_key.is_none()
                && j.dedup.is_none()
                && j.depends_on.is_empty()
                && j.workflow_run_id.is_none()
        })
}

/// A constant argument, sent without copying.
fn k(v: &'static str) -> Value {
    Value::from_static_str(v)
}

/// Index members grouped per key, keys in first-use order; `scored` groups carry a score
/// before each member, the others are all scored 0.
#[derive(Default)]
struct Indexes<'a> {
    at: HashMap<(&'a str, &'a str), usize>,
    groups: Vec<(String, bool, Vec<Value>)>,
}

impl<'a> Indexes<'a> {
    fn group(&mut self, kind: &'a str, name: &'a str, scored: bool) -> &mut Vec<Value> {
        let groups = &mut self.groups;
        let i = *self.at.entry((kind, name)).or_insert_with(|| {
            groups.push((format!("{kind}{name}"), scored, Vec::new()));
            groups.len() - 1
        });
        &mut self.groups[i].2
    }
}

/// The script's arguments for a qualifying batch.
pub(crate) fn plain_args(jobs: &[NewJob], now: i64) -> Vec<Value> {
    let at = s(now.to_string());
    let created = pad(now);
    let pending = JobStatus::Pending.code().to_string();
    let (pending_in_queue, pending_of_task) = (format!("ix:sq:{pending}:"), format!("ix:st:{pending}:"));
    let mut tasks: Vec<&str> = Vec::new();
    let mut hashes = Vec::with_capacity(1 + jobs.len() * 10);
    let mut ix = Indexes::default();
    let mut counts: Vec<(&str, i64)> = Vec::new();
    let mut wake = Vec::new();
    hashes.push(n(jobs.len() as i64));
    for j in jobs {
        let id = j.id.as_str();
        let run_at = placed_run_at(j.run_at, now);
        if !tasks.contains(&j.task.as_str()) {
            tasks.push(&j.task);
        }
        hashes.extend([
            s(id),
            s(j.queue.as_str()),
            s(j.task.as_str()),
            b(j.payload.clone()),
            n(i64::from(j.priority)),
            n(i64::from(j.max_retries)),
            n(j.backoff.base_ms as i64),
            n(j.backoff.max_ms as i64),
            n(run_at),
        ]);
        let at_extra = hashes.len();
        hashes.push(n(0));
        if let Some(t) = j.timeout_ms {
            hashes.extend([k("to"), n(t as i64)]);
        }
        for (f, v) in crate::enqueue::optional_fields(j) {
            hashes.extend([k(f), s(v)]);
        }
        hashes[at_extra] = n(((hashes.len() - at_extra - 1) / 2) as i64);
        let member = s(format!("{created}|{id}"));
        ix.group("ix:q:", &j.queue, false).push(member.clone());
        ix.group("ix:t:", &j.task, false).push(member.clone());
        if run_at <= now {
            let rd = ix.group("rd:", &j.queue, true);
            rd.extend([n(-i64::from(j.priority)), s(ready_member(run_at, id))]);
            if wake.len() < 2 * MAX_WAKE {
                wake.extend([at.clone(), s(&id[id.len().saturating_sub(3)..])]);
            }
        } else {
            ix.group("dy:", &j.queue, true).extend([n(run_at), s(id)]);
        }
        ix.group(&pending_in_queue, &j.queue, false).push(member.clone());
        ix.group(&pending_of_task, &j.task, false).push(member.clone());
        ix.group("ix:s:", &pending, false).push(member);
        match counts.iter_mut().find(|(q, _)| *q == j.queue) {
            Some((_, c)) => *c += 1,
            None => counts.push((&j.queue, 1)),
        }
    }
    let zadds: usize = ix.groups.iter().map(|(_, _, v)| v.len()).sum();
    let mut a = Vec::with_capacity(hashes.len() + zadds + 3 * ix.groups.len() + 2 * MAX_WAKE + 64);
    a.push(at.clone());
    a.push(n(tasks.len() as i64));
    a.extend(tasks.into_iter().map(s));
    a.extend(hashes);
    let per = |scored: bool| if scored { 2 } else { 1 };
    let nchunks: usize =
        ix.groups.iter().map(|(_, scored, v)| v.len().div_ceil(per(*scored) * ZADD_CHUNK)).sum();
    a.push(n(nchunks as i64));
    for (key, scored, values) in ix.groups {
        let key = s(key);
        let step = per(scored);
        let mut values = values.into_iter().peekable();
        while values.peek().is_some() {
            let chunk: Vec<Value> = values.by_ref().take(step * ZADD_CHUNK).collect();
            a.extend([key.clone(), k(if scored { "1" } else { "0" }), n((chunk.len() / step) as i64)]);
            a.extend(chunk);
        }
    }
    a.push(n(counts.len() as i64));
    for (q, c) in counts {
        a.extend([s(q), n(c)]);
    }
    a.push(n((wake.len() / 2) as i64));
    a.extend(wake);
    a
}

/// Runs the plain script; every job of the batch is created.
pub(crate) async fn run_plain(ctx: &Ctx, jobs: &[NewJob], args: Vec<Value>) -> Result<Vec<Enqueued>> {
    ctx.conn.script(&ctx.conn.scripts.enqueue_plain, &ctx.keys.base, args).await?;
    ctx.waker.work_changed();
    ctx.waker.job_changed();
    Ok(jobs.iter().map(|j| Enqueued { id: j.id.clone(), created: true }).collect())
}
