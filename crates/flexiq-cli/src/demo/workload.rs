//! The demo's scripted workload: which jobs, on which queues, and how each must end.
//!
//! Everything is derived from the job count alone, so a run is reproducible and its final
//! check knows exactly what to expect. Each job's payload says how its handler behaves
//! (`ok`, `flaky`: fails its first attempt, `poison`: always fails) and how long it works
//! (0 to 3 ms), so the handlers need no shared state.

use flexiq::{Backoff, EnqueueItem, EnqueueOptions};
use serde::{Deserialize, Serialize};

/// Fewest jobs a demo runs: enough for one chain, one poison job and some of each kind.
pub const MIN_JOBS: u64 = 20;
/// Most jobs a demo runs.
pub const MAX_JOBS: u64 = 1_000_000;

/// Queues the demo uses.
pub const QUEUES: [&str; 3] = ["emails", "images", "reports"];
/// The always-failing task whose jobs end in the dead-letter queue.
pub const POISON_TASK: &str = "webhook.deliver";
/// The dependency chain's tasks, in order.
pub const CHAIN_TASKS: [&str; 3] = ["etl.extract", "etl.transform", "etl.load"];
/// Retries of every demo job; a poison job therefore makes `POISON_RETRIES + 1` attempts.
pub const POISON_RETRIES: u32 = 2;
/// Retries of the other jobs (a flaky one needs only one).
pub const RETRIES: u32 = 3;
/// Short retry backoff so the demo finishes in seconds (ms).
pub const BACKOFF: Backoff = Backoff { base_ms: 20, max_ms: 200 };

/// How a demo handler behaves for one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Behaviour {
    /// Succeeds.
    Ok,
    /// Fails its first attempt, succeeds on the retry.
    Flaky,
    /// Fails every attempt and ends dead-lettered.
    Poison,
}

/// A demo job's payload (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DemoPayload {
    /// The job's number in the workload.
    pub n: u64,
    /// How the handler behaves.
    pub behaviour: Behaviour,
    /// Simulated work (ms, 0 to 3).
    pub work_ms: u64,
    /// How long after enqueue the job may first run (ms, 0: at once).
    #[serde(default)]
    pub delay_ms: u64,
}

/// What the final check expects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Expected {
    /// Jobs in all.
    pub jobs: u64,
    /// Jobs that must end completed.
    pub completed: u64,
    /// Jobs that must end dead (and in the dead-letter queue).
    pub dead: u64,
    /// Jobs delayed 1 to 2 s.
    pub delayed: u64,
    /// Jobs failing once.
    pub flaky: u64,
    /// Dependency chains (three jobs each).
    pub chains: u64,
    /// Failed executions the metrics must show: one per flaky job, every attempt of a poison job.
    pub failed_executions: u64,
    /// Successful executions the metrics must show.
    pub successful_executions: u64,
}

/// The workload: independent jobs to enqueue in bulk, then chains enqueued link by link.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Independent jobs.
    pub bulk: Vec<EnqueueItem>,
    /// Chains: each is extract, transform, load (the dependencies are added at enqueue time).
    pub chains: Vec<[EnqueueItem; 3]>,
    /// What must happen.
    pub expected: Expected,
}

fn item(task: &str, queue: &str, payload: &DemoPayload, retries: u32) -> EnqueueItem {
    let delay_ms = (payload.delay_ms > 0).then_some(payload.delay_ms);
    let body = serde_json::to_vec(payload).unwrap_or_default();
    EnqueueItem {
        task: task.to_string(),
        payload: body,
        options: EnqueueOptions {
            queue: Some(queue.to_string()),
            delay_ms,
            max_retries: Some(retries),
            backoff: Some(BACKOFF),
            metadata: Some(format!(r#"{{"demo":true,"n":{}}}"#, payload.n)),
            ..Default::default()
        },
    }
}

/// The scripted workload of `jobs` jobs (checked against [`MIN_JOBS`] and [`MAX_JOBS`] by the caller).
pub fn plan(jobs: u64) -> Workload {
    let chains = (jobs / 1_000).max(1);
    let poison = (jobs / 500).clamp(1, 20);
    let plain = jobs - 3 * chains - poison;
    let mut e = Expected { jobs, chains, dead: poison, completed: jobs - poison, ..Default::default() };
    let mut bulk = Vec::with_capacity(jobs as usize);
    for i in 0..plain {
        let behaviour = if i % 19 == 7 { Behaviour::Flaky } else { Behaviour::Ok };
        let delay_ms = if i % 10 == 3 { 1_000 + (i * 37) % 1_000 } else { 0 };
        e.flaky += u64::from(behaviour == Behaviour::Flaky);
        e.delayed += u64::from(delay_ms > 0);
        let (task, queue) = match i % 5 {
            0 | 1 => ("email.send", "emails"),
            2 | 3 => ("image.resize", "images"),
            _ => ("report.render", "reports"),
        };
        let p = DemoPayload { n: i, behaviour, work_ms: i % 4, delay_ms };
        bulk.push(item(task, queue, &p, RETRIES));
    }
    for k in 0..poison {
        let p = DemoPayload { n: plain + k, behaviour: Behaviour::Poison, work_ms: 1, delay_ms: 0 };
        bulk.push(item(POISON_TASK, "emails", &p, POISON_RETRIES));
    }
    let chain_items = (0..chains)
        .map(|c| {
            let n = plain + poison + 3 * c;
            let link = |k: u64| {
                let p = DemoPayload { n: n + k, behaviour: Behaviour::Ok, work_ms: 2, delay_ms: 0 };
                item(CHAIN_TASKS[k as usize], "reports", &p, RETRIES)
            };
            [link(0), link(1), link(2)]
        })
        .collect();
    e.failed_executions = e.flaky + poison * u64::from(POISON_RETRIES + 1);
    e.successful_executions = e.completed;
    Workload { bulk, chains: chain_items, expected: e }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up() {
        for n in [MIN_JOBS, 100, 3_000, 10_001] {
            let w = plan(n);
            let total = w.bulk.len() as u64 + 3 * w.chains.len() as u64;
            assert_eq!(total, n);
            assert_eq!(w.expected.completed + w.expected.dead, n);
            assert!(w.expected.flaky > 0 && w.expected.delayed > 0 && w.expected.dead > 0, "{n}");
        }
        let w = plan(3_000);
        assert_eq!((w.expected.chains, w.expected.dead), (3, 6));
        assert_eq!(w.expected.failed_executions, w.expected.flaky + 18);
    }

    #[test]
    fn payloads_round_trip_and_delays_stay_within_two_seconds() {
        let w = plan(200);
        for it in &w.bulk {
            let p: DemoPayload = serde_json::from_slice(&it.payload).unwrap();
            assert!(p.work_ms <= 3);
            assert!(it.options.delay_ms.is_none_or(|d| (1_000..2_000).contains(&d)));
        }
    }
}
