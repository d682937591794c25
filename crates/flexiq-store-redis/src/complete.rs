//! Plain completions, the common ack, written by one script call per batch.
//!
//! The state machine is asked what completing the attempt named by each fence writes; when
//! that is the plain completion (completed now, lease cleared, a success metric, nothing
//! else) `complete.lua` applies it to every job still running with that fence, with the
//! minimal writes and no read round trip first. Anything else, and jobs with dependents to
//! release, take the general path through [`crate::transact`].

use flexiq_core::id::new_row_id;
use flexiq_core::store::{Ack, AckKind};
use flexiq_core::{transition, AckOutcome, Event, Fence, JobState, JobStatus, Result};

use crate::conn::{b, n, s};
use crate::row::int;
use crate::store::Ctx;

/// Whether completing the attempt `fence` names is the plain completion.
pub(crate) fn is_plain(fence: Fence, now: i64) -> bool {
    let mut state = JobState::probe(JobStatus::Running, fence.attempt);
    state.started_at = Some(fence.started_at);
    state.claim_seq = fence.claim_seq;
    transition(&state, &Event::Complete { fence }, now)
        .is_ok_and(|next| next.is_plain_completion(fence.attempt, now))
}

/// Applies plain completions; `None` marks an ack left for the general path (the job has
/// dependents).
pub(crate) async fn complete(ctx: &Ctx, acks: &[&Ack], now: i64) -> Result<Vec<Option<AckOutcome>>> {
    let mut a = Vec::with_capacity(2 + acks.len() * 8);
    a.push(n(now));
    a.push(n(acks.len() as i64));
    for ack in acks {
        a.push(s(ack.job_id.as_str()));
        a.push(n(i64::from(ack.fence.attempt)));
        a.push(n(ack.fence.started_at));
        a.push(n(i64::try_from(ack.fence.claim_seq).unwrap_or(i64::MAX)));
        a.push(n((now - ack.fence.started_at).max(0)));
        a.push(s(new_row_id()));
        match &ack.kind {
            AckKind::Complete { result: Some(r) } => {
                a.push(s("1"));
                a.push(b(r.clone()));
            }
            _ => {
                a.push(s("0"));
                a.push(s(""));
            }
        }
    }
    let reply = ctx.conn.script(&ctx.conn.scripts.complete, &ctx.keys.base, a).await?.into_array();
    if reply.len() != acks.len() {
        return Err(crate::error::shape("plain completions"));
    }
    Ok(reply
        .iter()
        .map(|c| match int(c) {
            Some(1) => Some(AckOutcome::Acknowledged),
            Some(0) => Some(AckOutcome::Superseded),
            _ => None,
        })
        .collect())
}
