//! A new job's starting status, from its dependencies' statuses.
//!
//! Every store decides where an enqueued job starts with [`starting`]: the SQL stores call it
//! with the statuses they read in the enqueue transaction, and the Redis scripts receive its
//! verdict per status code (see [`DependencyClass::of`]) instead of deciding in Lua. A job whose
//! dependency already failed is inserted `waiting` and then given
//! [`Event::DependencyFailed`](crate::transition::Event::DependencyFailed), so the state machine
//! (not the store) writes its cancellation.

use crate::job::JobStatus;
use crate::transition::Event;

/// What one dependency's status means for a job that waits on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DependencyClass {
    /// Completed: satisfied.
    Met,
    /// Not finished yet: the job waits.
    Open,
    /// Failed, dead or cancelled: the job is cancelled.
    Failed,
}

impl DependencyClass {
    /// The class of a dependency in `status`.
    pub fn of(status: JobStatus) -> DependencyClass {
        match status {
            JobStatus::Completed => DependencyClass::Met,
            JobStatus::Failed | JobStatus::Dead | JobStatus::Cancelled => DependencyClass::Failed,
            JobStatus::Pending | JobStatus::Running | JobStatus::Suspended | JobStatus::Waiting => {
                DependencyClass::Open
            }
        }
    }

    /// One-letter code (`m`, `o`, `f`) for scripts that receive the verdict per status code.
    pub fn letter(self) -> char {
        match self {
            DependencyClass::Met => 'm',
            DependencyClass::Open => 'o',
            DependencyClass::Failed => 'f',
        }
    }
}

/// Where a new job starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starting {
    /// No dependencies, or every one completed: claimable at once.
    Ready,
    /// Some dependency has not finished and none failed.
    Waiting,
    /// The dependency at `index` (the first in order) failed, died or was cancelled.
    DependencyFailed {
        /// Its position in the job's dependency list.
        index: usize,
    },
}

impl Starting {
    /// The status the row is inserted with (`pending` or `waiting`).
    pub fn insert_status(self) -> JobStatus {
        match self {
            Starting::Ready => JobStatus::Pending,
            Starting::Waiting | Starting::DependencyFailed { .. } => JobStatus::Waiting,
        }
    }

    /// The event to apply right after the insert, naming the failed dependency.
    pub fn follow_up(self, dependency_ids: &[impl AsRef<str>]) -> Option<Event> {
        match self {
            Starting::DependencyFailed { index } => Some(Event::DependencyFailed {
                dependency: dependency_ids.get(index).map(|d| d.as_ref().to_string()).unwrap_or_default(),
            }),
            Starting::Ready | Starting::Waiting => None,
        }
    }
}

/// The starting point of a job whose dependencies are in `statuses` (in dependency order).
pub fn starting(statuses: impl IntoIterator<Item = JobStatus>) -> Starting {
    let mut out = Starting::Ready;
    for (index, st) in statuses.into_iter().enumerate() {
        match DependencyClass::of(st) {
            DependencyClass::Met => {}
            DependencyClass::Open => out = Starting::Waiting,
            DependencyClass::Failed => return Starting::DependencyFailed { index },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_dependencies_start_ready() {
        assert_eq!(starting([]), Starting::Ready);
        assert_eq!(starting([JobStatus::Completed, JobStatus::Completed]), Starting::Ready);
    }

    #[test]
    fn an_open_dependency_waits() {
        for st in [JobStatus::Pending, JobStatus::Running, JobStatus::Suspended, JobStatus::Waiting] {
            assert_eq!(starting([JobStatus::Completed, st]), Starting::Waiting, "{st}");
        }
    }

    #[test]
    fn the_first_failed_dependency_wins() {
        let s = starting([JobStatus::Pending, JobStatus::Dead, JobStatus::Failed]);
        assert_eq!(s, Starting::DependencyFailed { index: 1 });
        assert_eq!(s.insert_status(), JobStatus::Waiting);
        let ev = s.follow_up(&["a", "b", "c"]).unwrap();
        assert_eq!(ev, Event::DependencyFailed { dependency: "b".into() });
        assert_eq!(Starting::Waiting.follow_up(&["a"]), None);
    }

    #[test]
    fn every_status_has_a_class() {
        for st in JobStatus::ALL {
            let c = DependencyClass::of(st);
            assert!(['m', 'o', 'f'].contains(&c.letter()));
            assert_eq!(c == DependencyClass::Met, st == JobStatus::Completed);
        }
    }
}
