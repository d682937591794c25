//! Enqueue: argument encoding for `enqueue.lua` (shared with replays and dead-letter
//! retries) and the checks made before a batch is sent. A LIFO job is placed at the enqueue's
//! own time ([`placed_run_at`]), so later enqueues claim first.

use flexiq_core::store::{placed_run_at, Enqueued};
use flexiq_core::{JobId, NewJob, Result};
use fred::types::Value;

use crate::conn::{b, n, s};
use crate::row::{int, text};
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
        if !j.depends_on.is_empty() {
            extra.push(("d", j.depends_on.iter().map(JobId::as_str).collect::<Vec<_>>().join(",")));
        }
        a.push(n(extra.len() as i64));
        for (k, v) in extra {
            a.push(s(k));
            a.push(s(v));
        }
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
        let lua = include_str!("lua/enqueue.lua");
        assert!(lua.contains("j.st = ST.cancelled"));
        assert!(lua.contains("'dependency ' .. j.fail .. ' did not complete'"));
    }
}
