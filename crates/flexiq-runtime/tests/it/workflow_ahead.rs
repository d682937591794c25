//! `claim_ahead` on every store: an ack claims its host's next job in the same store call and
//! the host's next dequeue gets it; a held job counts against the fairness cap; it goes back
//! to pending, its attempt not counted, when the host does not take it in time, dequeues with
//! other options, or the process cancels or deletes stages of a run.

use std::time::Duration;

use flexiq_runtime::{
    AckOutcome, DequeueOptions, JobStatus, Queue, WorkflowJobRecord, WorkflowJobSpec, WorkflowJobs,
    WorkflowOptions, WorkflowServes,
};

use crate::on_every_store;

on_every_store!(
    an_ack_claims_the_hosts_next_job,
    a_held_job_counts_against_the_fairness_cap,
    a_held_job_not_taken_in_time_goes_back,
    held_jobs_of_several_hosts_go_back_again_after_a_quiet_spell,
    other_options_cancel_and_delete_give_held_jobs_back,
);

fn stage(run: &str, stage: &str) -> WorkflowJobSpec {
    WorkflowJobSpec {
        workflow_run_id: run.into(),
        workflow_id: "order".into(),
        stage_id: stage.into(),
        payload: br#"{"tenant":"t1"}"#.to_vec(),
        ..Default::default()
    }
}

fn ahead_view(q: &Queue, worker: &str, cap: Option<u32>) -> WorkflowJobs {
    let opts = WorkflowOptions {
        worker_id: Some(worker.into()),
        claim_ahead: true,
        fairness_group_by: cap.map(|_| "tenant".to_string()),
        fairness_cap: cap,
        ..Default::default()
    };
    q.workflow_jobs(opts).unwrap()
}

async fn running(wf: &WorkflowJobs, run: &str) -> Vec<WorkflowJobRecord> {
    let jobs = wf.get_jobs_by_workflow_run(run).await.unwrap();
    jobs.into_iter().filter(|j| j.status == JobStatus::Running).collect()
}

async fn an_ack_claims_the_hosts_next_job(q: &Queue) {
    let wf = ahead_view(q, "h1", None);
    wf.enqueue_parallel(vec![stage("r", "a"), stage("r", "b"), stage("r", "c")]).await.unwrap();
    let first = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    assert_eq!(running(&wf, "r").await.len(), 1, "nothing is claimed ahead before an ack");
    let mut done = vec![first.job.stage_id.clone()];
    let mut current = first;
    loop {
        let out = wf.complete(current.job.id.as_str(), Some(current.fence)).await.unwrap();
        assert_eq!(out, AckOutcome::Acknowledged);
        let held = running(&wf, "r").await;
        assert!(held.len() <= 1, "at most one job is held for a host: {held:?}");
        if let Some(h) = held.first() {
            assert_eq!(h.worker_id.as_deref(), Some("h1"), "the held job carries the host's id");
        }
        let Some(next) = wf.dequeue(DequeueOptions::default()).await.unwrap() else { break };
        if let Some(h) = held.first().filter(|h| h.id != next.job.id) {
            // Only a held job the host was too slow to take (over a second) goes back.
            let back = wf.get_jobs_by_workflow_run("r").await.unwrap();
            let back = back.into_iter().find(|j| j.id == h.id).expect("the held stage");
            let err = back.last_error.unwrap_or_default();
            assert!(
                err.starts_with("deferred: claimed ahead"),
                "the dequeue answers with the held job: {err}"
            );
        }
        assert_eq!(next.job.attempt, 1);
        done.push(next.job.stage_id.clone());
        current = next;
    }
    done.sort();
    assert_eq!(done, ["a", "b", "c"]);
    let jobs = wf.get_jobs_by_workflow_run("r").await.unwrap();
    assert!(jobs.iter().all(|j| j.status == JobStatus::Completed && j.attempt == 1), "{jobs:?}");
}

async fn a_held_job_counts_against_the_fairness_cap(q: &Queue) {
    let h1 = ahead_view(q, "h1", Some(1));
    let h2 = ahead_view(q, "h2", Some(1));
    h1.enqueue_parallel(vec![stage("r", "a"), stage("r", "b"), stage("r", "c")]).await.unwrap();
    let d = h1.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    assert!(h2.dequeue(DequeueOptions::default()).await.unwrap().is_none(), "group t1 is at its cap");
    h1.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
    assert_eq!(running(&h1, "r").await.len(), 1, "h1's next job is held");
    assert!(h2.dequeue(DequeueOptions::default()).await.unwrap().is_none(), "the held job fills the cap");
    let next = h1.dequeue(DequeueOptions::default()).await.unwrap().expect("the held job");
    h1.complete(next.job.id.as_str(), Some(next.fence)).await.unwrap();
    h1.cancel_by_run("r").await.unwrap();
}

async fn wait_until_pending(wf: &WorkflowJobs, run: &str, stage_id: &str) -> WorkflowJobRecord {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let jobs = wf.get_jobs_by_workflow_run(run).await.unwrap();
        let job = jobs.into_iter().find(|j| j.stage_id == stage_id).expect("the stage");
        if job.status == JobStatus::Pending || std::time::Instant::now() > deadline {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn a_held_job_not_taken_in_time_goes_back(q: &Queue) {
    let wf = ahead_view(q, "h1", None);
    wf.enqueue_parallel(vec![stage("r", "a"), stage("r", "b")]).await.unwrap();
    let d = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
    let held = running(&wf, "r").await;
    assert_eq!(held.len(), 1, "the other stage is held for h1");
    let back = wait_until_pending(&wf, "r", &held[0].stage_id).await;
    assert_eq!(back.status, JobStatus::Pending, "a held job no host took goes back: {back:?}");
    assert_eq!(back.worker_id, None);
    let err = back.last_error.clone().unwrap_or_default();
    assert!(err.starts_with("deferred: claimed ahead"), "{err}");
    let again = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("the stage again");
    assert_eq!((again.job.id, again.job.attempt), (back.id, 1), "giving back did not count the attempt");
}

/// Each of `hosts` dequeues and completes one stage of `run`, so its next stage is held for it;
/// returns the held stages' ids.
async fn hold_one_each(hosts: &[WorkflowJobs], run: &str) -> Vec<String> {
    for h in hosts {
        let d = h.dequeue(DequeueOptions::default()).await.unwrap().expect("a stage for each host");
        assert_eq!(h.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap(), AckOutcome::Acknowledged);
    }
    let held = running(&hosts[0], run).await;
    assert_eq!(held.len(), hosts.len(), "one stage held per host: {held:?}");
    held.into_iter().map(|j| j.stage_id).collect()
}

async fn held_jobs_of_several_hosts_go_back_again_after_a_quiet_spell(q: &Queue) {
    let hosts: Vec<WorkflowJobs> = ["h1", "h2", "h3"].iter().map(|w| ahead_view(q, w, None)).collect();
    let specs = (0..12).map(|i| stage("r", &format!("s{i:02}"))).collect();
    hosts[0].enqueue_parallel(specs).await.unwrap();
    // Twice: the second round starts after every held job went back, when nothing was held.
    for round in 0..2 {
        for stage_id in hold_one_each(&hosts, "r").await {
            let back = wait_until_pending(&hosts[0], "r", &stage_id).await;
            assert_eq!(back.status, JobStatus::Pending, "round {round}: {back:?}");
            assert_eq!((back.attempt, back.worker_id.as_deref()), (0, None), "round {round}: {back:?}");
        }
    }
    let jobs = hosts[0].get_jobs_by_workflow_run("r").await.unwrap();
    let done = jobs.iter().filter(|j| j.status == JobStatus::Completed).count();
    assert_eq!(done, 6, "two rounds of three hosts completed one stage each: {jobs:?}");
    assert_eq!(jobs.iter().filter(|j| j.status == JobStatus::Pending).count(), 6, "{jobs:?}");
}

async fn other_options_cancel_and_delete_give_held_jobs_back(q: &Queue) {
    let wf = ahead_view(q, "h1", None);
    let specs = ["a", "b", "c", "d", "e"].map(|s| stage("r", s)).to_vec();
    wf.enqueue_parallel(specs).await.unwrap();

    // Another shape: the held job goes back before the claim.
    let d = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
    let v9 = DequeueOptions {
        serves: vec![WorkflowServes { workflow_id: "order".into(), definition_version: Some("v9".into()) }],
        ..Default::default()
    };
    assert!(wf.dequeue(v9).await.unwrap().is_none());
    assert!(running(&wf, "r").await.is_empty(), "the held job went back");

    // Delete reaches a held stage.
    let d = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
    let held = running(&wf, "r").await;
    assert_eq!(held.len(), 1);
    assert_eq!(wf.delete_by_run_and_stages("r", &[held[0].stage_id.clone()]).await.unwrap(), 1);
    let next = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job");
    assert_ne!(next.job.id, held[0].id, "the deleted stage is not served");

    // Cancel reaches the held stage too: only the finished ones are left alone.
    wf.complete(next.job.id.as_str(), Some(next.fence)).await.unwrap();
    assert_eq!(running(&wf, "r").await.len(), 1);
    assert_eq!(wf.cancel_by_run("r").await.unwrap(), 1, "the held stage went back and was cancelled");
    assert!(wf.dequeue(DequeueOptions::default()).await.unwrap().is_none());
    let jobs = wf.get_jobs_by_workflow_run("r").await.unwrap();
    let mut by_status: Vec<_> = jobs.iter().map(|j| j.status).collect();
    by_status.sort_by_key(|s| s.as_str());
    assert_eq!(
        by_status,
        [JobStatus::Cancelled, JobStatus::Completed, JobStatus::Completed, JobStatus::Completed]
    );
}
