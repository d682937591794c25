//! Flows (`Flows`): a parent's dependency edges by outcome, and cutting a child loose.
//!
//! Edges live in the dependent's hash (`d`, with each edge's policy code in `dp`; see
//! `row::edges`) and in `B:dep:<child>`, the child's set of dependents. A flow is inserted by
//! the enqueue script as one batch, and what a child's failure does to its parent is the
//! cascade of [`crate::transact`]. Here the listing reads the parent's edges in child-id order
//! (a child gone from the store is left out and the page reads on, so a short page is the last),
//! and removing a child's edges is one plan: every edge to the child is cut and each waiting
//! dependent with every edge left settled is released, committed only while the child and the
//! dependents are as read.

use flexiq_core::store::{
    ChildDependency, Dependencies, DependenciesRequest, Flows, RemoveChildDependencyRequest,
};
use flexiq_core::{EdgePolicy, Error, JobId, JobStatus, Result};
use fred::types::Value;

use crate::conn::s;
use crate::row::{self, text};
use crate::store::{Ctx, RedisStore};
use crate::transact::transact;

/// The fields a listed child is read with, from its live or archived hash.
const CHILD_FIELDS: [&str; 5] = ["q", "t", "st", "res", "e"];

/// The edges of job `id` from its live hash, else its archived one; `None` when it is gone.
async fn edges_of(ctx: &Ctx, id: &str) -> Result<Option<Vec<(String, EdgePolicy)>>> {
    let cmds = vec![
        ("HMGET", vec![s(ctx.keys.job(id)), s("st"), s("d"), s("dp")]),
        ("HMGET", vec![s(ctx.keys.archived(id)), s("st"), s("d"), s("dp")]),
    ];
    for v in ctx.conn.pipeline(cmds).await? {
        let f = v.into_array();
        if f.first().and_then(text).is_some() {
            let field = |k: usize| f.get(k).and_then(text);
            return Ok(Some(row::edges(field(1).as_deref(), field(2).as_deref())?));
        }
    }
    Ok(None)
}

/// Reads the children of `edges` (in order), leaving out those gone from the store.
async fn read_children(ctx: &Ctx, edges: &[(String, EdgePolicy)]) -> Result<Vec<ChildDependency>> {
    let fields = |key: String| {
        let mut a = vec![s(key)];
        a.extend(CHILD_FIELDS.map(s));
        a
    };
    let cmds = edges
        .iter()
        .flat_map(|(id, _)| [("HMGET", fields(ctx.keys.job(id))), ("HMGET", fields(ctx.keys.archived(id)))])
        .collect();
    let replies = ctx.conn.pipeline(cmds).await?;
    let mut out = Vec::with_capacity(edges.len());
    for ((id, policy), pair) in edges.iter().zip(replies.chunks(2)) {
        let live = pair[0].clone().into_array();
        let f = if live.get(2).and_then(text).is_some() { live } else { pair[1].clone().into_array() };
        let Some(st) = f.get(2).and_then(text) else { continue };
        let status = row::status(&st)?;
        let failed = matches!(status, JobStatus::Failed | JobStatus::Dead | JobStatus::Cancelled);
        out.push(ChildDependency {
            id: JobId::from_trusted(id.clone()),
            queue: f.first().and_then(text).unwrap_or_default(),
            task: f.get(1).and_then(text).unwrap_or_default(),
            status,
            policy: *policy,
            result: if status == JobStatus::Completed { f.get(3).and_then(row::bytes) } else { None },
            error: if failed { f.get(4).and_then(text) } else { None },
        });
    }
    Ok(out)
}

/// Whether job `id` is in the archive.
async fn archived(ctx: &Ctx, id: &str) -> Result<bool> {
    let v: Value = ctx.conn.cmd("EXISTS", vec![s(ctx.keys.archived(id))]).await?;
    Ok(row::int(&v) == Some(1))
}

#[async_trait::async_trait]
impl Flows for RedisStore {
    async fn get_dependencies(&self, req: DependenciesRequest) -> Result<Dependencies> {
        self.ctx.check()?;
        req.validate()?;
        let ctx = &self.ctx;
        let mut edges = edges_of(ctx, req.job_id.as_str())
            .await?
            .ok_or_else(|| Error::JobNotFound(req.job_id.clone()))?;
        edges.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        if let Some(after) = &req.after {
            edges.retain(|(id, _)| id.as_bytes() > after.as_str().as_bytes());
        }
        let limit = req.limit as usize;
        let mut page = Vec::with_capacity(limit.min(edges.len()));
        for chunk in edges.chunks(limit) {
            let want = limit - page.len();
            page.extend(read_children(ctx, chunk).await?.into_iter().take(want));
            if page.len() == limit {
                break;
            }
        }
        Ok(Dependencies::from_page(page, req.limit))
    }

    async fn remove_child_dependency(&self, req: RemoveChildDependencyRequest) -> Result<bool> {
        self.ctx.check()?;
        let RemoveChildDependencyRequest { child_id, now } = req;
        let ctx = &self.ctx;
        let child = child_id.to_string();
        let mut ids = vec![child.clone()];
        ids.extend(row::strings(
            ctx.conn.cmd("SMEMBERS", vec![s(ctx.keys.k(&format!("dep:{child}")))]).await?,
        ));
        let out = transact(ctx, &ids, now, |plan, rows| {
            let Some(c) = &rows[0] else { return Ok(None) };
            if c.status.is_terminal() {
                return Ok(Some(false));
            }
            let dependents: Vec<_> =
                rows[1..].iter().flatten().filter(|r| r.edges.iter().any(|(d, _)| *d == child)).collect();
            if dependents.is_empty() {
                return Ok(Some(false));
            }
            plan.guard_row(c);
            for r in dependents {
                plan.cut_edges(ctx, r, &[child.as_str()]);
                plan.recheck(r.clone());
            }
            Ok(Some(true))
        })
        .await?;
        match out {
            Some(cut) => {
                if cut {
                    self.changed();
                }
                Ok(cut)
            }
            None if archived(ctx, &child).await? => Ok(false),
            None => Err(Error::JobNotFound(child_id)),
        }
    }
}
