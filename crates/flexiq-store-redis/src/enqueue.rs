//! Enqueue: argument encoding for `enqueue.lua` (shared with replays and dead-letter
//! retries) and the checks made before a batch is sent. A LIFO job is placed at the enqueue's
//! own time ([`placed_run_at`]), so later enqueues claim first. Each job's edges go as `d` and
//! `dp` (their policies, see [`edge_fields`]) and its dedup key with the verdict table
//! [`crate::dedup::dedup_args`] builds.

use flexiq_core::store::{placed_run_at, Enqueued};
use flexiq_core::{EdgePolicy, JobId, NewJob, Result};
use fred::types::Value;

use crate::conn::{b, n, s};
use crate::row::{edge_fields, int, text};
use crate::store::Ctx;

/// The optional text fields a job hash stores when set (besides the unique key and the
/// dependencies, which the general script also acts on), by field name. `enqueue.lua` also
/// reads the run (`wr`) and stage (`ws`): it checks the pair and indexes the run.
pub(crate) fn optional_fields(j: &NewJob) -> impl Iterator<Item = (&'static str, &str)> {
    [
        ("m", &j.metadata),
        ("g", &j.group_key),
        ("wr", &j.workflow_run_id),
        ("ws", &j.workflow_stage_id),
        ("wv", &j.workflow_version),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
}

/// Builds the enqueue script's arguments for `jobs`.
pub(crate) fn enqueue_args(
    jobs: &[NewJob],
    max_pending: Option<u64>,
    now: i64,
    dead: Option<(&str, &str, &str)>,
) -> Vec<Value> {
    let mut a = Vec::with_capacity(6 + jobs.len() * 11);
    a.push(n(now));
    a.push(s(max_pending.map(|m| m.to_string()).unwrap_or_default()));
    let (di, dm, dt) = dead.unwrap_or(("", "", ""));
    a.extend([s(di), s(dm), s(dt)]);
    a.push(n(jobs.len() as i64));
    for j in jobs {
        a.push(s(j.id.as_str()));
        a.push(s(j.queue.clone()));
        a.push(s(j.task.clone()));
        a.push(b(j.payload.clone()));
        a.push(n(i64::from(j.priority)));
        a.push(n(placed_run_at(j.run_at, now)));
        a.push(n(i64::from(j.max_retries)));
        a.push(n(j.backoff.base_ms as i64));
        a.push(n(j.backoff.max_ms as i64));
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some(t) = j.timeout_ms {
            extra.push(("to", t.to_string()));
        }
        if let Some(u) = &j.unique_key {
            extra.push(("u", u.clone()));
        }
        for (k, v) in optional_fields(j) {
            extra.push((k, v.to_string()));
        }
        let edges: Vec<(String, EdgePolicy)> = j
            .depends_on
            .iter()
            .enumerate()
            .map(|(i, d)| (d.to_string(), j.dep_policies.get(i).copied().unwrap_or_default()))
            .collect();
        let (d, dp) = edge_fields(&edges);
        extra.extend(d.map(|d| ("d", d)));
        extra.extend(dp.map(|dp| ("dp", dp)));
        a.push(n(extra.len() as i64));
        for (k, v) in extra {
            a.push(s(k));
            a.push(s(v));
        }
        a.extend(crate::dedup::dedup_args(j.dedup.as_ref(), now));
    }
    a
}

/// Runs the enqueue script and parses its reply.
pub(crate) async fn run_enqueue(ctx: &Ctx, args: Vec<Value>) -> Result<Vec<Enqueued>> {
    let reply = ctx.conn.script(&ctx.conn.scripts.enqueue, &ctx.keys.base, args).await?.into_array();
    let out = reply
        .chunks(2)
        .map(|p| Enqueued {
            id: JobId::from_trusted(text(&p[0]).unwrap_or_default()),
            created: p.get(1).and_then(int) == Some(1),
        })
        .collect();
    ctx.waker.work_changed();
    ctx.waker.job_changed();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use flexiq_core::{transition, Event, JobState, JobStatus};

    /// `enqueue.lua` cancels a job whose dependency failed in the script itself; what it writes
    /// must be what `Event::DependencyFailed` decides for the waiting job it stands for.
    #[test]
    fn a_failed_dependency_cancels_as_the_state_machine_does() {
        let next = transition(
            &JobState::probe(JobStatus::Waiting, 0),
            &Event::DependencyFailed { dependency: "dep1".into() },
            7,
        )
        .unwrap();
        assert_eq!(next.status, JobStatus::Cancelled);
        assert_eq!(next.finished_at, Some(7));
        assert_eq!(next.last_error.as_deref(), Some("dependency dep1 did not complete"));
        assert!(next.error_record.is_none() && next.metric.is_none() && !next.dead_letter);
        let lua = include_str!("lua/prelude.lua");
        assert!(lua.contains("if act == 'c' then return ST.cancelled end"));
        assert!(lua.contains("if act == 'c' then return 'dependency ' .. dep .. ' did not complete' end"));
        let enqueue = include_str!("lua/enqueue.lua");
        assert!(enqueue.contains("j.st = failure_status(act)"));
        assert!(enqueue.contains("j.err = failure_error(act, dep, err)"));
    }

    /// A failed dependency under `fail_parent` fails the waiting job naming the child and its
    /// error; `failure_error` in `prelude.lua` writes the same message and status.
    #[test]
    fn a_failed_child_fails_as_the_state_machine_does() {
        let waiting = JobState::probe(JobStatus::Waiting, 0);
        let with = Event::ChildFailed { child: "c1".into(), error: Some("boom".into()) };
        let next = transition(&waiting, &with, 7).unwrap();
        assert_eq!((next.status, next.finished_at), (JobStatus::Failed, Some(7)));
        assert_eq!(next.last_error.as_deref(), Some("child c1 failed: boom"));
        assert!(next.cancel_dependents && next.error_record.is_none() && !next.dead_letter);
        let without =
            transition(&waiting, &Event::ChildFailed { child: "c1".into(), error: None }, 7).unwrap();
        assert_eq!(without.last_error.as_deref(), Some("child c1 failed"));
        let lua = include_str!("lua/prelude.lua");
        assert!(lua.contains("if err then return 'child ' .. dep .. ' failed: ' .. err end"));
        assert!(lua.contains("return 'child ' .. dep .. ' failed'\n"));
        assert!(lua.contains("  return ST.failed\n"));
    }
}
