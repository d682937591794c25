//! Where a job stands over its dependency edges, each with its flow policy.
//!
//! [`crate::start::starting`] is the rule for plain edges; flows give each edge a policy
//! (`flexiq_core::flow::EdgePolicy`) that says what a failed dependency does to its dependent.
//! Every store asks [`standing`] when it inserts a job with dependencies and when an edge goes
//! away (a dependency removed), so the policies read the same everywhere; the store only reads
//! the statuses and, when a `fail_parent` dependency decides, that dependency's last error.

use crate::error::Result;
use crate::flow::{edge_settled, ChildFailure, EdgePolicy};
use crate::job::JobStatus;
use crate::start::DependencyClass;
use crate::transition::Event;

/// One edge as the store read it.
#[derive(Debug, Clone, Copy)]
pub struct EdgeRead<'a> {
    /// The dependency's id.
    pub dep: &'a str,
    /// The edge's policy.
    pub policy: EdgePolicy,
    /// The dependency's status; `None` when it is gone from the store (it counts as no edge).
    pub status: Option<JobStatus>,
}

impl EdgeRead<'_> {
    /// Whether the dependency failed under `remove_dependency`, so the edge is not kept.
    pub fn dropped(&self) -> bool {
        self.policy == EdgePolicy::RemoveDependency
            && self.status.is_some_and(|s| DependencyClass::of(s) == DependencyClass::Failed)
    }
}

/// Where a job stands over its edges.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Every edge is settled, or a `continue_parent` dependency failed: claimable.
    Ready,
    /// Some edge is still open.
    Waiting,
    /// A dependency failed under a policy that ends the job: it is (inserted or kept)
    /// waiting, then given this event.
    Fails(Event),
}

impl Standing {
    /// The status a new row is inserted with.
    pub fn insert_status(&self) -> JobStatus {
        match self {
            Standing::Ready => JobStatus::Pending,
            Standing::Waiting | Standing::Fails(_) => JobStatus::Waiting,
        }
    }
}

/// Where a job with `edges` (in dependency order) stands: the first failed dependency whose
/// policy ends the job decides; otherwise a failed `continue_parent` dependency, or every edge
/// settled ([`edge_settled`]), makes it ready. A gone dependency counts as no edge, and so does
/// one that failed under `remove_dependency`. `error_of(i)` gives the last error of the `i`-th
/// edge's dependency, asked only when a `fail_parent` edge decides. With plain edges only this
/// agrees with [`crate::start::starting`].
pub fn standing<'a>(
    edges: impl IntoIterator<Item = EdgeRead<'a>>,
    mut error_of: impl FnMut(usize) -> Result<Option<String>>,
) -> Result<Standing> {
    let (mut open, mut release) = (false, false);
    for (i, e) in edges.into_iter().enumerate() {
        let Some(status) = e.status else { continue };
        if DependencyClass::of(status) != DependencyClass::Failed {
            open |= !edge_settled(e.policy, status);
            continue;
        }
        match e.policy.on_child_failed() {
            ChildFailure::CancelParent => {
                return Ok(Standing::Fails(Event::DependencyFailed { dependency: e.dep.to_string() }))
            }
            ChildFailure::FailParent => {
                let error = error_of(i)?;
                return Ok(Standing::Fails(Event::ChildFailed { child: e.dep.to_string(), error }));
            }
            ChildFailure::ReleaseParent => release = true,
            ChildFailure::SettleEdge | ChildFailure::RemoveEdge => {}
        }
    }
    Ok(if release || !open { Standing::Ready } else { Standing::Waiting })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::start::{starting, Starting};

    fn e(dep: &str, policy: EdgePolicy, status: Option<JobStatus>) -> EdgeRead<'_> {
        EdgeRead { dep, policy, status }
    }

    fn no_error(_: usize) -> Result<Option<String>> {
        Ok(None)
    }

    #[test]
    fn plain_edges_agree_with_starting() {
        for a in JobStatus::ALL {
            for b in JobStatus::ALL {
                let got = standing(
                    [
                        e("a", EdgePolicy::CancelDependent, Some(a)),
                        e("b", EdgePolicy::CancelDependent, Some(b)),
                    ],
                    no_error,
                )
                .unwrap();
                let want = match starting([a, b]) {
                    Starting::Ready => Standing::Ready,
                    Starting::Waiting => Standing::Waiting,
                    Starting::DependencyFailed { index } => {
                        Standing::Fails(Event::DependencyFailed { dependency: ["a", "b"][index].to_string() })
                    }
                };
                assert_eq!(got, want, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn policies_decide_a_failed_dependency() {
        let dead = Some(JobStatus::Dead);
        let open = Some(JobStatus::Running);
        let fail =
            standing([e("a", EdgePolicy::FailParent, dead)], |i| Ok(Some(format!("boom {i}")))).unwrap();
        assert_eq!(
            fail,
            Standing::Fails(Event::ChildFailed { child: "a".into(), error: Some("boom 0".into()) })
        );
        let go = standing(
            [e("a", EdgePolicy::ContinueParent, dead), e("b", EdgePolicy::FailParent, open)],
            no_error,
        );
        assert_eq!(go.unwrap(), Standing::Ready, "continue_parent releases at once");
        let ignored = standing(
            [e("a", EdgePolicy::IgnoreDependency, dead), e("b", EdgePolicy::FailParent, open)],
            no_error,
        );
        assert_eq!(ignored.unwrap(), Standing::Waiting, "an ignored failure settles only its edge");
        let removed = e("a", EdgePolicy::RemoveDependency, dead);
        assert!(removed.dropped());
        assert_eq!(standing([removed], no_error).unwrap(), Standing::Ready);
        assert_eq!(standing([e("gone", EdgePolicy::FailParent, None)], no_error).unwrap(), Standing::Ready);
    }
}
