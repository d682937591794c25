//! Removing one job: with or without its children (the jobs it waits on), never a running one,
//! and its dependents freed as if the edge had never been.

use flexiq_core::store::RemoveJobRequest;
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus};

use super::admin_kit::{queue_stats, Q};
use crate::fixtures::{assert_kind, at, claim_id, get, job_with, put, start};
use crate::Harness;

fn in_q(task: &str, deps: &[&JobId]) -> flexiq_core::NewJob {
    let opts = EnqueueOptions {
        queue: Some(Q.into()),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    job_with(task, "p", opts)
}

fn remove(id: &JobId, children: bool, t: i64) -> RemoveJobRequest {
    RemoveJobRequest { job_id: id.clone(), remove_children: children, now: at(t) }
}

/// Removing a job another waits on frees the waiter; removing an unknown id is `NotFound`.
pub async fn admin_remove_job_frees_its_dependents(h: &dyn Harness) {
    let s = open_default(h).await;
    let dep = put(&*s, in_q("dep", &[]), at(0)).await;
    let waiter = put(&*s, in_q("waiter", &[&dep]), at(0)).await;
    let removed = s.remove_job(remove(&dep, false, 1)).await.unwrap();
    assert_eq!(removed.jobs, vec![dep.clone()]);
    assert!(s.get(&dep).await.unwrap().is_none());
    assert_eq!(get(&*s, &waiter).await.status, JobStatus::Pending);
    assert_eq!(claim_id(&*s, &waiter, at(2)).await.job.id, waiter);
    assert_kind(s.remove_job(remove(&dep, false, 3)).await, ErrorKind::NotFound);
    assert_eq!(queue_stats(&*s, Q).await.total(), 1);
}

/// With `remove_children` a parent goes with the jobs it waits on, transitively, except a child
/// another job still waits on.
pub async fn admin_remove_job_with_children(h: &dyn Harness) {
    let s = open_default(h).await;
    let leaf = put(&*s, in_q("leaf", &[]), at(0)).await;
    let c1 = put(&*s, in_q("c1", &[&leaf]), at(0)).await;
    let shared = put(&*s, in_q("shared", &[]), at(0)).await;
    let parent = put(&*s, in_q("parent", &[&c1, &shared]), at(0)).await;
    let other = put(&*s, in_q("other", &[&shared]), at(0)).await;
    let removed = s.remove_job(remove(&parent, true, 1)).await.unwrap();
    assert_eq!(removed.jobs.first(), Some(&parent), "the job first");
    let mut got: Vec<JobId> = removed.jobs.clone();
    got.sort();
    let mut want = vec![parent.clone(), c1.clone(), leaf.clone()];
    want.sort();
    assert_eq!(got, want, "the parent, its child and grandchild; not the shared child");
    for id in [&parent, &c1, &leaf] {
        assert!(s.get(id).await.unwrap().is_none(), "job {id} removed");
    }
    assert_eq!(get(&*s, &shared).await.status, JobStatus::Pending);
    assert_eq!(get(&*s, &other).await.status, JobStatus::Waiting, "still waits on the shared child");
    assert_eq!(queue_stats(&*s, Q).await.total(), 2);
}

/// A running job, or a parent with a running child to remove, is `Conflict` naming the running
/// job, and nothing is removed.
pub async fn admin_remove_job_refuses_running(h: &dyn Harness) {
    let s = open_default(h).await;
    let running = start(&*s, in_q("child", &[]), at(0)).await;
    let parent = put(&*s, in_q("parent", &[&running.job.id]), at(0)).await;
    let e = s.remove_job(remove(&running.job.id, false, 1)).await.expect_err("a running job is refused");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains(running.job.id.as_str()), "names the job: {e}");
    let e = s.remove_job(remove(&parent, true, 1)).await.expect_err("a running child is refused");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains(running.job.id.as_str()), "names the running child: {e}");
    assert_eq!(get(&*s, &parent).await.status, JobStatus::Waiting, "nothing removed");
    assert_eq!(get(&*s, &running.job.id).await.status, JobStatus::Running);
    let removed = s.remove_job(remove(&parent, false, 2)).await.unwrap();
    assert_eq!(removed.jobs, vec![parent], "without children the parent alone goes");
    assert_eq!(get(&*s, &running.job.id).await.status, JobStatus::Running);
}

async fn open_default(h: &dyn Harness) -> std::sync::Arc<dyn flexiq_core::Store> {
    crate::fixtures::open(h, "default").await
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_admin_remove {
    ($callback:path, $make:path) => {
        $callback!($make;
            admin_remove::admin_remove_job_frees_its_dependents,
            admin_remove::admin_remove_job_with_children,
            admin_remove::admin_remove_job_refuses_running,
        );
    };
}
