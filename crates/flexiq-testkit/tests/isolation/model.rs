//! The operations a case draws, what one namespace should look like after them, and the
//! snapshot read back from the store to compare with.

use std::collections::{BTreeMap, BTreeSet};

use flexiq_runtime::{Fence, JobFilter, JobStatus, Queue, Stats};
use proptest::prelude::*;

/// The two namespaces of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    A,
    B,
}

/// One call on one namespace's queue.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// One job, maybe delayed far enough that no claim takes it, maybe under a unique key.
    Enqueue {
        side: Side,
        queue: u8,
        priority: i8,
        delayed: bool,
        key: Option<u8>,
    },
    /// A batch of `n` jobs.
    EnqueueMany {
        side: Side,
        queue: u8,
        n: u8,
    },
    Pause {
        side: Side,
        queue: u8,
    },
    Resume {
        side: Side,
        queue: u8,
    },
    /// A claim of up to `limit` jobs (a lease).
    Claim {
        side: Side,
        limit: u8,
    },
    /// Completes the `pick`-th running job (by id), if any.
    Complete {
        side: Side,
        pick: u8,
    },
    /// Fails the `pick`-th running job; with no retries left it is dead-lettered.
    Fail {
        side: Side,
        pick: u8,
    },
    /// Cancels the `pick`-th pending job, if any.
    Cancel {
        side: Side,
        pick: u8,
    },
    SetSetting {
        side: Side,
        key: u8,
        value: u8,
    },
    DeleteSetting {
        side: Side,
        key: u8,
    },
}

impl Op {
    pub(crate) fn side(&self) -> Side {
        match self {
            Op::Enqueue { side, .. }
            | Op::EnqueueMany { side, .. }
            | Op::Pause { side, .. }
            | Op::Resume { side, .. }
            | Op::Claim { side, .. }
            | Op::Complete { side, .. }
            | Op::Fail { side, .. }
            | Op::Cancel { side, .. }
            | Op::SetSetting { side, .. }
            | Op::DeleteSetting { side, .. } => *side,
        }
    }
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::A), Just(Side::B)]
}

/// One operation, weighted towards the ones that create state to observe.
pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (side(), 0..2u8, -3..3i8, proptest::bool::weighted(0.2), proptest::option::of(0..3u8))
            .prop_map(|(side, queue, priority, delayed, key)| Op::Enqueue { side, queue, priority, delayed, key }),
        2 => (side(), 0..2u8, 1..4u8).prop_map(|(side, queue, n)| Op::EnqueueMany { side, queue, n }),
        1 => (side(), 0..2u8).prop_map(|(side, queue)| Op::Pause { side, queue }),
        1 => (side(), 0..2u8).prop_map(|(side, queue)| Op::Resume { side, queue }),
        3 => (side(), 1..4u8).prop_map(|(side, limit)| Op::Claim { side, limit }),
        2 => (side(), any::<u8>()).prop_map(|(side, pick)| Op::Complete { side, pick }),
        2 => (side(), any::<u8>()).prop_map(|(side, pick)| Op::Fail { side, pick }),
        1 => (side(), any::<u8>()).prop_map(|(side, pick)| Op::Cancel { side, pick }),
        1 => (side(), 0..3u8, any::<u8>()).prop_map(|(side, key, value)| Op::SetSetting { side, key, value }),
        1 => (side(), 0..3u8).prop_map(|(side, key)| Op::DeleteSetting { side, key }),
    ]
}

pub(crate) fn queue_name(q: u8) -> String {
    format!("iso-q{q}")
}

pub(crate) fn setting_key(k: u8) -> String {
    format!("iso.setting{k}")
}

pub(crate) fn unique_key(k: u8) -> String {
    format!("iso-key{k}")
}

/// A job as the model knows it.
#[derive(Debug, Clone)]
pub(crate) struct MJob {
    pub(crate) queue: String,
    pub(crate) status: JobStatus,
    pub(crate) delayed: bool,
    pub(crate) key: Option<u8>,
    pub(crate) fence: Option<Fence>,
}

/// What one namespace should hold after the operations applied to it.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) jobs: BTreeMap<String, MJob>,
    pub(crate) paused: BTreeSet<String>,
    pub(crate) dead: BTreeSet<String>,
}

impl Model {
    /// The live job holding unique key `k`, if any.
    pub(crate) fn key_holder(&self, k: u8) -> Option<String> {
        self.jobs
            .iter()
            .find(|(_, j)| j.key == Some(k) && matches!(j.status, JobStatus::Pending | JobStatus::Running))
            .map(|(id, _)| id.clone())
    }

    /// Jobs a claim may take now: pending, due, on a queue that is not paused.
    pub(crate) fn claimable(&self) -> usize {
        self.jobs
            .values()
            .filter(|j| j.status == JobStatus::Pending && !j.delayed && !self.paused.contains(&j.queue))
            .count()
    }

    /// The `pick`-th job (by id) in `status`.
    pub(crate) fn nth(&self, status: JobStatus, pick: u8) -> Option<String> {
        let ids: Vec<&String> =
            self.jobs.iter().filter(|(_, j)| j.status == status).map(|(id, _)| id).collect();
        (!ids.is_empty()).then(|| ids[usize::from(pick) % ids.len()].clone())
    }

    fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for j in self.jobs.values() {
            s.add(j.status, 1);
        }
        s
    }

    /// Where `snap` differs from the model, in words; empty when it matches. Settings are
    /// deployment-wide, so they are compared with `settings`, the one map both namespaces share.
    pub(crate) fn differences(
        &self,
        snap: &Snapshot,
        shared_settings: &BTreeMap<String, String>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if snap.stats != self.stats() {
            out.push(format!("stats {:?}, model {:?}", snap.stats, self.stats()));
        }
        let jobs: BTreeMap<String, (String, JobStatus)> =
            self.jobs.iter().map(|(id, j)| (id.clone(), (j.queue.clone(), j.status))).collect();
        if snap.jobs != jobs {
            out.push(format!("listing {:?}, model {:?}", snap.jobs, jobs));
        }
        if snap.paused != self.paused {
            out.push(format!("paused {:?}, model {:?}", snap.paused, self.paused));
        }
        let settings: BTreeMap<String, String> = snap
            .settings
            .iter()
            .filter(|(k, _)| k.starts_with("iso."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if &settings != shared_settings {
            out.push(format!("settings {settings:?}, model {shared_settings:?}"));
        }
        if snap.dead != self.dead {
            out.push(format!("dead letters {:?}, model {:?}", snap.dead, self.dead));
        }
        out
    }
}

/// Everything one namespace shows: counts, per-queue counts, the listing, pauses, settings,
/// dead letters and the newest event id.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) stats: Stats,
    pub(crate) by_queue: BTreeMap<String, Stats>,
    pub(crate) jobs: BTreeMap<String, (String, JobStatus)>,
    pub(crate) paused: BTreeSet<String>,
    pub(crate) settings: BTreeMap<String, String>,
    pub(crate) dead: BTreeSet<String>,
    pub(crate) last_event: Option<String>,
}

impl Snapshot {
    /// The snapshot without the deployment-wide settings: what another namespace's
    /// operations must leave exactly as it was.
    pub(crate) fn scoped(&self) -> Snapshot {
        Snapshot { settings: BTreeMap::new(), ..self.clone() }
    }

    pub(crate) async fn read(q: &Queue) -> Result<Snapshot, String> {
        let ns = q.namespace().to_string();
        let e = |what: &str, err: flexiq_runtime::Error| format!("{what} in namespace {ns}: {err}");
        let jobs = q.list_jobs(&JobFilter::default(), 10_000, 0).await.map_err(|x| e("list_jobs", x))?;
        Ok(Snapshot {
            stats: q.stats().await.map_err(|x| e("stats", x))?,
            by_queue: q.stats_by_queue().await.map_err(|x| e("stats_by_queue", x))?,
            jobs: jobs.into_iter().map(|j| (j.id.to_string(), (j.queue, j.status))).collect(),
            paused: q
                .list_paused_queues()
                .await
                .map_err(|x| e("list_paused_queues", x))?
                .into_iter()
                .collect(),
            settings: q.list_settings().await.map_err(|x| e("list_settings", x))?,
            dead: q
                .dead_letters(10_000, 0)
                .await
                .map_err(|x| e("dead_letters", x))?
                .into_iter()
                .map(|d| d.original_job_id)
                .collect(),
            last_event: q.last_event_id().await.map_err(|x| e("last_event_id", x))?,
        })
    }
}
