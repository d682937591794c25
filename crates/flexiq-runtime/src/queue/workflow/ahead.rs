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

use super::combine::ClaimShape;

/// How long a job claimed ahead waits for its host before it is given back.
pub(crate) const AHEAD_TTL: Duration = Duration::from_secs(1);

/// The reason a given-back job carries (as `deferred: ...` in its last error).
pub(crate) const GIVE_BACK_REASON: &str = "claimed ahead for a host that did not dequeue it";

/// One job held for a worker, with the shape it was claimed for.
struct Held<T> {
    shape: ClaimShape,
    job: T,
    seq: u64,
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
pub(crate) struct Ahead<T = ClaimedJob> {
    slots: Mutex<(u64, HashMap<String, Held<T>>)>,
}

impl<T> Default for Ahead<T> {
    fn default() -> Self {
        Ahead { slots: Mutex::new((0, HashMap::new())) }
    }
}

impl<T> Ahead<T> {
    /// Takes what is held for `worker`.
    pub(crate) fn take(&self, worker: &str, shape: &ClaimShape) -> Found<T> {
        let held = self.slots.lock().1.remove(worker);
        match held {
            None => Found::Nothing,
            Some(h) if &h.shape == shape => Found::Job(h.job),
            Some(h) => Found::Other(h.job),
        }
    }

    /// Whether a job is held for `worker`.
    pub(crate) fn holds(&self, worker: &str) -> bool {
        self.slots.lock().1.contains_key(worker)
    }

    /// Holds `job` for `worker` and returns its ticket for [`Ahead::expire`], or gives the job
    /// back (`Err`) when the worker already has one.
    pub(crate) fn put(&self, worker: &str, shape: ClaimShape, job: T) -> Result<u64, T> {
        let mut slots = self.slots.lock();
        if slots.1.contains_key(worker) {
            return Err(job);
        }
        slots.0 += 1;
        let seq = slots.0;
        slots.1.insert(worker.to_string(), Held { shape, job, seq });
        Ok(seq)
    }

    /// The job held for `worker` under ticket `seq`, if the host has not taken it.
    pub(crate) fn expire(&self, worker: &str, seq: u64) -> Option<T> {
        let mut slots = self.slots.lock();
        if slots.1.get(worker).is_some_and(|h| h.seq == seq) {
            return slots.1.remove(worker).map(|h| h.job);
        }
        None
    }

    /// Every held job, emptying the slots.
    pub(crate) fn drain(&self) -> Vec<T> {
        self.slots.lock().1.drain().map(|(_, h)| h.job).collect()
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
        assert!(ahead.put("w1", shape("a"), 1).is_ok());
        assert_eq!(ahead.put("w1", shape("a"), 2), Err(2), "a second job for w1 is refused");
        assert!(ahead.holds("w1") && !ahead.holds("w2"));
        assert!(matches!(ahead.take("w1", &shape("b")), Found::Other(1)));
        assert!(matches!(ahead.take("w1", &shape("a")), Found::Nothing));
        ahead.put("w1", shape("a"), 3).unwrap();
        assert!(matches!(ahead.take("w1", &shape("a")), Found::Job(3)));
    }

    #[test]
    fn expiry_takes_only_the_ticketed_job() {
        let ahead = Ahead::<u32>::default();
        let first = ahead.put("w1", shape("a"), 1).unwrap();
        assert!(matches!(ahead.take("w1", &shape("a")), Found::Job(1)));
        let second = ahead.put("w1", shape("a"), 2).unwrap();
        assert_eq!(ahead.expire("w1", first), None, "an old ticket finds nothing");
        assert_eq!(ahead.expire("w1", second), Some(2));
        ahead.put("w2", shape("a"), 4).unwrap();
        assert_eq!(ahead.drain(), vec![4]);
        assert!(!ahead.holds("w2"));
    }
}
