//! Jobs claimed ahead for a host: a view with `claim_ahead` on asks, with each ack, for its
//! host's next job in the ack's own store call, and keeps it here until the host's next
//! dequeue takes it.
//!
//! A host loop (dequeue, run, ack) waits on two store calls per job, and the ack's commit is
//! the one it cannot skip. Claiming the next job in that same call leaves one call per job,
//! which is what a host loop on a store with a slow commit needs. The price is that the job
//! is `running`, stamped with the host's worker id, before the host asked for it; so a host
//! keeps at most one such job, of the dequeue shape it last used, and gives it back (a defer
//! to now, which does not count the attempt) when the host does not take it within
//! [`AHEAD_TTL`], dequeues with another shape, or the view cancels or deletes stages of a run,
//! or the queue handle closes.

use std::collections::HashMap;
use std::time::Duration;

use flexiq_core::ClaimedJob;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::combine::ClaimShape;

/// How long a job claimed ahead waits for its host before it is given back.
pub(crate) const AHEAD_TTL: Duration = Duration::from_secs(1);

/// The reason a given-back job carries (as `deferred: ...` in its last error).
pub(crate) const GIVE_BACK_REASON: &str = "claimed ahead for a host that did not dequeue it";

/// One job held for a worker, with the shape it was claimed for and when it goes back.
struct Held<T> {
    shape: ClaimShape,
    job: T,
    due: Instant,
}

/// What a dequeue finds held for its worker.
pub(crate) enum Found<T = ClaimedJob> {
    /// Nothing held.
    Nothing,
    /// The job, claimed for this shape: the dequeue's answer.
    Job(T),
    /// A job claimed for another shape: to give back before claiming.
    Other(T),
}

/// The jobs held for workers, at most one per worker id.
///
/// A held job's deadline is kept with it, and one sweeper per queue handle gives back what
/// passed its deadline (see `Combiner::sweep`): a busy process holds a job per host per store
/// call, and a timer task for each would cost more than the claims it saves.
pub(crate) struct Ahead<T = ClaimedJob> {
    slots: Mutex<HashMap<String, Held<T>>>,
}

impl<T> Default for Ahead<T> {
    fn default() -> Self {
        Ahead { slots: Mutex::new(HashMap::new()) }
    }
}

impl<T> Ahead<T> {
    /// Takes what is held for `worker`.
    pub(crate) fn take(&self, worker: &str, shape: &ClaimShape) -> Found<T> {
        let held = self.slots.lock().remove(worker);
        match held {
            None => Found::Nothing,
            Some(h) if &h.shape == shape => Found::Job(h.job),
            Some(h) => Found::Other(h.job),
        }
    }

    /// Whether a job is held for `worker`.
    pub(crate) fn holds(&self, worker: &str) -> bool {
        self.slots.lock().contains_key(worker)
    }

    /// Holds `job` for `worker` until `due`, or gives the job back (`Err`) when the worker
    /// already has one.
    pub(crate) fn put(&self, worker: &str, shape: ClaimShape, job: T, due: Instant) -> Result<(), T> {
        let mut slots = self.slots.lock();
        if slots.contains_key(worker) {
            return Err(job);
        }
        slots.insert(worker.to_string(), Held { shape, job, due });
        Ok(())
    }

    /// The earliest deadline of a held job, or `None` when nothing is held.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.slots.lock().values().map(|h| h.due).min()
    }

    /// Takes every held job whose deadline is at or before `now`.
    pub(crate) fn take_due(&self, now: Instant) -> Vec<T> {
        let mut slots = self.slots.lock();
        let due: Vec<String> = slots.iter().filter(|(_, h)| h.due <= now).map(|(w, _)| w.clone()).collect();
        due.into_iter().filter_map(|w| slots.remove(&w)).map(|h| h.job).collect()
    }

    /// Every held job, emptying the slots.
    pub(crate) fn drain(&self) -> Vec<T> {
        self.slots.lock().drain().map(|(_, h)| h.job).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(q: &str) -> ClaimShape {
        ClaimShape { queues: vec![q.to_string()], serves: vec![], group_cap: None }
    }

    #[test]
    fn one_job_per_worker_taken_by_its_shape_only() {
        let ahead = Ahead::<u32>::default();
        let due = Instant::now() + AHEAD_TTL;
        assert!(ahead.put("w1", shape("a"), 1, due).is_ok());
        assert_eq!(ahead.put("w1", shape("a"), 2, due), Err(2), "a second job for w1 is refused");
        assert!(ahead.holds("w1") && !ahead.holds("w2"));
        assert!(matches!(ahead.take("w1", &shape("b")), Found::Other(1)));
        assert!(matches!(ahead.take("w1", &shape("a")), Found::Nothing));
        ahead.put("w1", shape("a"), 3, due).unwrap();
        assert!(matches!(ahead.take("w1", &shape("a")), Found::Job(3)));
    }

    #[test]
    fn only_jobs_past_their_deadline_are_due() {
        let ahead = Ahead::<u32>::default();
        let t0 = Instant::now();
        assert_eq!(ahead.next_due(), None);
        ahead.put("w1", shape("a"), 1, t0 + Duration::from_millis(10)).unwrap();
        ahead.put("w2", shape("a"), 2, t0 + Duration::from_millis(20)).unwrap();
        assert_eq!(ahead.next_due(), Some(t0 + Duration::from_millis(10)));
        assert!(ahead.take_due(t0).is_empty(), "nothing is due before its deadline");
        assert_eq!(ahead.take_due(t0 + Duration::from_millis(15)), vec![1]);
        assert!(!ahead.holds("w1") && ahead.holds("w2"));
        assert_eq!(ahead.next_due(), Some(t0 + Duration::from_millis(20)));
        ahead.put("w3", shape("a"), 3, t0 + Duration::from_millis(30)).unwrap();
        let mut left = ahead.drain();
        left.sort();
        assert_eq!(left, vec![2, 3]);
        assert_eq!(ahead.next_due(), None);
    }
}
