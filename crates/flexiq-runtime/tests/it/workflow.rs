//! The workflow view on every store: a host's loop (enqueue_parallel, dequeue, fenced ack), the
//! unfenced forms, fail / suspend / defer, both lease tiers on a manual clock, the run-wide
//! cancel, delete and listing, worker-id adoption, fairness through the view, and bad input
//! refused with `InvalidArgument` naming the field and nothing written.

use flexiq_runtime::{
    AckOutcome, DequeueOptions, Dequeued, EnqueueOptions, JobStatus, Queue, WorkflowJobRecord,
    WorkflowJobSpec, WorkflowJobs, WorkflowOptions, WorkflowServes,
};

use crate::common::{manual, T0};
use crate::{assert_code, on_every_store};

on_every_store!(
    host_loop_enqueues_dequeues_and_acks_fenced,
    unfenced_acks_ack_the_running_attempt_or_nothing,
    fail_retries_only_when_asked,
    suspend_and_defer_come_back_at_their_poll_time,
    touch_keeps_the_lease_and_both_tiers_count,
    cancel_by_run_leaves_started_and_finished_jobs_alone,
    delete_and_list_by_run,
    adopted_worker_ids_are_stamped_unless_configured,
    fairness_groups_come_from_the_payload_path,
    bad_input_is_refused_and_nothing_is_written,
    concurrent_hosts_each_get_their_own_job_and_outcome,
    concurrent_hosts_share_the_fairness_cap,
    a_host_that_stops_waiting_strands_no_other,
);

fn stage(run: &str, stage: &str, payload: &str) -> WorkflowJobSpec {
    WorkflowJobSpec {
        workflow_run_id: run.into(),
        workflow_id: "order".into(),
        stage_id: stage.into(),
        payload: payload.as_bytes().to_vec(),
        ..Default::default()
    }
}

fn view(q: &Queue) -> WorkflowJobs {
    q.workflow_jobs(WorkflowOptions::default()).unwrap()
}

async fn take(wf: &WorkflowJobs) -> Dequeued {
    wf.dequeue(DequeueOptions::default()).await.unwrap().expect("a job to dequeue")
}

async fn one(wf: &WorkflowJobs, run: &str, stage: &str) -> WorkflowJobRecord {
    let jobs = wf.get_jobs_by_workflow_run(run).await.unwrap();
    jobs.into_iter().find(|j| j.stage_id == stage).unwrap_or_else(|| panic!("no stage {stage} in run {run}"))
}

async fn status(wf: &WorkflowJobs, run: &str, stage: &str) -> JobStatus {
    one(wf, run, stage).await.status
}

async fn host_loop_enqueues_dequeues_and_acks_fenced(q: &Queue) {
    let (q, _clock) = manual(q);
    let wf = view(&q);
    assert_eq!(wf.queue_name(), "workflow");
    let mut specs = vec![stage("r1", "a", "{}"), stage("r1", "b", "{}"), stage("r1", "c", "{}")];
    specs[1].definition_version = Some("v2".into());
    specs[2].priority = 10;
    let ids = wf.enqueue_parallel(specs.clone()).await.unwrap();
    assert_eq!(ids.len(), 3);

    // Served pairs filter: a version nobody enqueued serves nothing.
    let v9 = DequeueOptions {
        serves: vec![WorkflowServes { workflow_id: "order".into(), definition_version: Some("v9".into()) }],
        ..Default::default()
    };
    assert!(wf.dequeue(v9).await.unwrap().is_none());

    let mut done = Vec::new();
    while let Some(d) = wf.dequeue(DequeueOptions::default()).await.unwrap() {
        assert_eq!(d.job.status, JobStatus::Running);
        assert_eq!((d.job.attempt, d.job.max_attempts), (1, 3));
        assert_eq!(d.job.worker_id.as_deref(), Some(wf.worker_id().as_str()));
        assert_eq!((d.job.workflow_id.as_str(), d.job.workflow_run_id.as_str()), ("order", "r1"));
        assert_eq!((d.job.started_at, d.job.locked_at), (Some(T0), Some(T0)));
        assert_eq!(wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap(), AckOutcome::Acknowledged);
        // The same fence again: that attempt is over.
        assert_eq!(wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap(), AckOutcome::Superseded);
        done.push(d.job.stage_id);
    }
    assert_eq!(done[0], "c", "priority first: {done:?}");
    let jobs = wf.get_jobs_by_workflow_run("r1").await.unwrap();
    assert!(jobs.iter().all(|j| j.status == JobStatus::Completed), "{jobs:?}");
    assert_eq!(jobs.iter().find(|j| j.stage_id == "b").unwrap().definition_version.as_deref(), Some("v2"));

    // Re-enqueueing a finished stage replaces its row in place.
    let again = wf.enqueue_parallel(vec![stage("r1", "a", r#"{"n":2}"#)]).await.unwrap();
    assert_eq!(again, vec![ids[0].clone()]);
    let a = one(&wf, "r1", "a").await;
    assert_eq!((a.status, a.attempt, a.worker_id.as_deref()), (JobStatus::Pending, 0, None));
    assert_eq!(a.payload, br#"{"n":2}"#);

    // The Conflict rule: an ordinary enqueue naming a pair that has a row is refused.
    let opts = EnqueueOptions {
        queue: Some("workflow".into()),
        workflow_run_id: Some("r1".into()),
        workflow_stage_id: Some("a".into()),
        ..Default::default()
    };
    assert_code!(q.enqueue("order", b"{}".to_vec(), opts).await, "CONFLICT");
}

async fn unfenced_acks_ack_the_running_attempt_or_nothing(q: &Queue) {
    let (q, clock) = manual(q);
    let wf = view(&q);
    // Stage b is not due for ten hours: every dequeue here takes stage a.
    let later = WorkflowJobSpec { next_poll_at_ms: Some(T0 + 36_000_000), ..stage("r", "b", "{}") };
    wf.enqueue_parallel(vec![stage("r", "a", "{}"), later]).await.unwrap();
    let d = take(&wf).await;
    let other = one(&wf, "r", "b").await;
    // Not running: nothing changes and the answer is still acknowledged.
    for outcome in [
        wf.complete(other.id.as_str(), None).await.unwrap(),
        wf.fail(other.id.as_str(), "no", false, None).await.unwrap(),
        wf.suspend(other.id.as_str(), T0 + 1_000, None).await.unwrap(),
        wf.defer(other.id.as_str(), T0 + 1_000, "busy", None).await.unwrap(),
    ] {
        assert_eq!(outcome, AckOutcome::Acknowledged);
    }
    assert_eq!(status(&wf, "r", &other.stage_id).await, JobStatus::Pending);
    // Running: the unfenced forms ack the current attempt.
    let id = d.job.id.as_str();
    assert_eq!(wf.defer(id, q.now_ms(), "not yet", None).await.unwrap(), AckOutcome::Acknowledged);
    let job = one(&wf, "r", &d.job.stage_id).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 0));
    let d = take(&wf).await;
    assert_eq!(wf.suspend(id, q.now_ms(), None).await.unwrap(), AckOutcome::Acknowledged);
    assert_eq!(status(&wf, "r", &d.job.stage_id).await, JobStatus::Suspended);
    let d = take(&wf).await;
    assert_eq!(d.job.id.as_str(), id);
    assert_eq!(wf.fail(id, "retry me", true, None).await.unwrap(), AckOutcome::Acknowledged);
    let job = one(&wf, "r", &d.job.stage_id).await;
    assert_eq!((job.status, job.last_error.as_deref()), (JobStatus::Pending, Some("retry me")));
    clock.advance(3_600_000);
    let d = take(&wf).await;
    assert_eq!(wf.complete(d.job.id.as_str(), None).await.unwrap(), AckOutcome::Acknowledged);
    assert_eq!(status(&wf, "r", &d.job.stage_id).await, JobStatus::Completed);
    // A fence for an attempt that is over is superseded; an unknown id is not found.
    assert_eq!(
        wf.fail(d.job.id.as_str(), "late", true, Some(d.fence)).await.unwrap(),
        AckOutcome::Superseded
    );
    let unknown = flexiq_runtime::JobId::new();
    assert_code!(wf.complete(unknown.as_str(), None).await, "NOT_FOUND");
    assert_code!(wf.touch_job(unknown.as_str()).await, "NOT_FOUND");
    assert_code!(wf.complete("not-an-id", None).await, "INVALID_ARGUMENT");
}

async fn fail_retries_only_when_asked(q: &Queue) {
    let (q, clock) = manual(q);
    let wf = view(&q);
    let mut twice = stage("r", "twice", "{}");
    twice.max_attempts = Some(2);
    wf.enqueue_parallel(vec![stage("r", "once", "{}"), twice]).await.unwrap();

    let first = take(&wf).await;
    let second = take(&wf).await;
    let (once, twice) = if first.job.stage_id == "once" { (first, second) } else { (second, first) };
    assert_eq!(twice.job.max_attempts, 2);
    let out = wf.fail(once.job.id.as_str(), "bad input", false, Some(once.fence)).await.unwrap();
    assert_eq!(out, AckOutcome::Acknowledged);
    assert_eq!(status(&wf, "r", "once").await, JobStatus::Failed);

    assert_eq!(
        wf.fail(twice.job.id.as_str(), "flaky", true, Some(twice.fence)).await.unwrap(),
        AckOutcome::Acknowledged
    );
    let job = one(&wf, "r", "twice").await;
    assert_eq!((job.status, job.attempt, job.last_error.as_deref()), (JobStatus::Pending, 1, Some("flaky")));
    assert!(job.next_poll_at > T0, "retried after the backoff");
    assert!(wf.dequeue(DequeueOptions::default()).await.unwrap().is_none());
    clock.advance(3_600_000);
    let retry = take(&wf).await;
    assert_eq!(retry.job.attempt, 2);
    wf.fail(retry.job.id.as_str(), "flaky again", true, Some(retry.fence)).await.unwrap();
    assert_eq!(status(&wf, "r", "twice").await, JobStatus::Dead);
}

async fn suspend_and_defer_come_back_at_their_poll_time(q: &Queue) {
    let (q, clock) = manual(q);
    let wf = view(&q);
    wf.enqueue_parallel(vec![stage("r", "batch", "{}")]).await.unwrap();
    let d = take(&wf).await;
    assert_eq!(
        wf.suspend(d.job.id.as_str(), T0 + 10_000, Some(d.fence)).await.unwrap(),
        AckOutcome::Acknowledged
    );
    let job = wf.get_jobs_by_workflow_run("r").await.unwrap().remove(0);
    assert_eq!((job.status, job.attempt, job.next_poll_at), (JobStatus::Suspended, 0, T0 + 10_000));
    assert!(wf.dequeue(DequeueOptions::default()).await.unwrap().is_none());
    assert_eq!(wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap(), AckOutcome::Superseded);

    clock.advance(10_000);
    for round in 0..5 {
        let d = take(&wf).await;
        assert_eq!(d.job.attempt, 1, "defer {round} gave the attempt back");
        let until = q.now_ms() + 1_000;
        assert_eq!(
            wf.defer(d.job.id.as_str(), until, "not my version", Some(d.fence)).await.unwrap(),
            AckOutcome::Acknowledged
        );
        let job = wf.get_jobs_by_workflow_run("r").await.unwrap().remove(0);
        assert_eq!((job.status, job.attempt, job.next_poll_at), (JobStatus::Pending, 0, until));
        assert!(wf.dequeue(DequeueOptions::default()).await.unwrap().is_none());
        clock.advance(1_000);
    }
    let d = take(&wf).await;
    wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
    assert_eq!(status(&wf, "r", "batch").await, JobStatus::Completed);
}

async fn touch_keeps_the_lease_and_both_tiers_count(q: &Queue) {
    let (q, clock) = manual(q);
    let wf = view(&q);
    wf.enqueue_parallel(vec![stage("r", "crashed", "{}"), stage("r", "wedged", "{}")]).await.unwrap();
    let a = take(&wf).await;
    let b = take(&wf).await;
    let (crashed, wedged) = if a.job.stage_id == "crashed" { (a, b) } else { (b, a) };

    // Both hosts touch once; then only the wedged one keeps touching its job.
    clock.advance(20_000);
    wf.touch_job(crashed.job.id.as_str()).await.unwrap();
    wf.touch_job(wedged.job.id.as_str()).await.unwrap();
    let job = one(&wf, "r", "crashed").await;
    assert_eq!((job.locked_at, job.started_at), (Some(T0 + 20_000), Some(T0)));
    assert_eq!(wf.release_stale_jobs(30_000).await.unwrap(), 0);
    for _ in 0..2 {
        clock.advance(20_000);
        wf.touch_job(wedged.job.id.as_str()).await.unwrap();
    }
    // At T0 + 60 s the crashed job's lease (T0 + 20 s) is stale, the wedged one's is fresh.
    assert_eq!(wf.release_stale_jobs(30_000).await.unwrap(), 1);
    let c = one(&wf, "r", "crashed").await;
    assert_ne!(c.status, JobStatus::Running);
    assert!(c.last_error.as_deref().unwrap_or("").starts_with("LEASE_HEARTBEAT_LOST"), "{c:?}");
    assert_eq!(
        wf.complete(crashed.job.id.as_str(), Some(crashed.fence)).await.unwrap(),
        AckOutcome::Superseded
    );
    // Touching a job that is not running does nothing.
    wf.touch_job(crashed.job.id.as_str()).await.unwrap();

    // At T0 + 80 s the wedged attempt, touched all along, is past a 60 s absolute cap.
    clock.advance(20_000);
    wf.touch_job(wedged.job.id.as_str()).await.unwrap();
    assert_eq!(wf.release_stale_jobs(30_000).await.unwrap(), 0);
    assert_eq!(wf.expire_runaway_jobs(100_000).await.unwrap(), 0);
    assert_eq!(wf.expire_runaway_jobs(60_000).await.unwrap(), 1);
    let w = one(&wf, "r", "wedged").await;
    assert_ne!(w.status, JobStatus::Running);
    assert!(w.last_error.as_deref().unwrap_or("").starts_with("LEASE_ABSOLUTE_CAP"), "{w:?}");
    assert_eq!(
        wf.complete(wedged.job.id.as_str(), Some(wedged.fence)).await.unwrap(),
        AckOutcome::Superseded
    );
}

async fn cancel_by_run_leaves_started_and_finished_jobs_alone(q: &Queue) {
    let (q, _clock) = manual(q);
    let wf = view(&q);
    let specs = ["done", "running", "parked"].map(|s| stage("r", s, "{}")).to_vec();
    wf.enqueue_parallel(specs).await.unwrap();
    for _ in 0..3 {
        let d = take(&wf).await;
        let id = d.job.id.as_str();
        match d.job.stage_id.as_str() {
            "done" => assert_eq!(wf.complete(id, Some(d.fence)).await.unwrap(), AckOutcome::Acknowledged),
            "parked" => {
                assert_eq!(
                    wf.suspend(id, T0 + 60_000, Some(d.fence)).await.unwrap(),
                    AckOutcome::Acknowledged
                )
            }
            _ => {}
        }
    }
    wf.enqueue_parallel(vec![stage("r", "pending", "{}"), stage("other", "pending", "{}")]).await.unwrap();
    assert_eq!(wf.cancel_by_run("r").await.unwrap(), 2, "the parked and the pending stage");
    assert_eq!(status(&wf, "r", "done").await, JobStatus::Completed);
    assert_eq!(status(&wf, "r", "running").await, JobStatus::Running);
    assert_eq!(status(&wf, "r", "parked").await, JobStatus::Cancelled);
    assert_eq!(status(&wf, "r", "pending").await, JobStatus::Cancelled);
    assert_eq!(status(&wf, "other", "pending").await, JobStatus::Pending);
    assert_eq!(wf.cancel_by_run("r").await.unwrap(), 0);
    assert_eq!(wf.cancel_by_run("no-such-run").await.unwrap(), 0);
}

async fn delete_and_list_by_run(q: &Queue) {
    let (q, clock) = manual(q);
    let wf = view(&q);
    wf.enqueue_parallel(vec![stage("r", "a", "{}")]).await.unwrap();
    clock.advance(1);
    wf.enqueue_parallel(vec![stage("r", "b", "{}"), stage("r", "c", r#"{"x":1}"#)]).await.unwrap();
    wf.enqueue_parallel(vec![stage("s", "a", "{}")]).await.unwrap();
    let listed = wf.get_jobs_by_workflow_run("r").await.unwrap();
    let stages: Vec<&str> = listed.iter().map(|j| j.stage_id.as_str()).collect();
    assert_eq!(stages[0], "a", "oldest first: {stages:?}");
    assert_eq!(listed.len(), 3);
    assert!(
        listed[1].created_at <= listed[2].created_at && listed[1].id.as_str() < listed[2].id.as_str(),
        "then by id"
    );
    assert_eq!(listed.iter().find(|j| j.stage_id == "c").unwrap().payload, br#"{"x":1}"#);
    assert!(wf.get_jobs_by_workflow_run("nobody").await.unwrap().is_empty());

    let running = loop {
        let d = take(&wf).await;
        if d.job.workflow_run_id == "r" && d.job.stage_id == "b" {
            break d;
        }
    };
    assert_eq!(wf.delete_by_run_and_stages("r", &[]).await.unwrap(), 0);
    assert_eq!(wf.delete_by_run_and_stages("r", &["b".into(), "c".into(), "zz".into()]).await.unwrap(), 2);
    let left: Vec<String> =
        wf.get_jobs_by_workflow_run("r").await.unwrap().into_iter().map(|j| j.stage_id).collect();
    assert_eq!(left, vec!["a".to_string()]);
    assert_eq!(wf.get_jobs_by_workflow_run("s").await.unwrap().len(), 1);
    assert_eq!(
        wf.complete(running.job.id.as_str(), Some(running.fence)).await.unwrap(),
        AckOutcome::Superseded
    );
    assert!(q.get_job(running.job.id.as_str()).await.unwrap().is_none());
}

async fn adopted_worker_ids_are_stamped_unless_configured(q: &Queue) {
    let (q, _clock) = manual(q);
    let free = view(&q);
    assert!(!free.worker_id().is_empty());
    assert_eq!(free.adopt_worker_id("host-7").unwrap(), "host-7");
    assert_eq!(free.clone().worker_id(), "host-7", "clones share the id");
    let pinned =
        q.workflow_jobs(WorkflowOptions { worker_id: Some("pinned".into()), ..Default::default() }).unwrap();
    assert_eq!(pinned.adopt_worker_id("host-8").unwrap(), "pinned");
    assert_eq!(pinned.worker_id(), "pinned");
    assert_code!(free.adopt_worker_id(""), "INVALID_ARGUMENT");

    free.enqueue_parallel(vec![stage("r", "a", "{}"), stage("r", "b", "{}")]).await.unwrap();
    assert_eq!(take(&free).await.job.worker_id.as_deref(), Some("host-7"));
    assert_eq!(take(&pinned).await.job.worker_id.as_deref(), Some("pinned"));
}

async fn fairness_groups_come_from_the_payload_path(q: &Queue) {
    let (q, _clock) = manual(q);
    let opts = WorkflowOptions {
        fairness_group_by: Some("tenant.id".into()),
        fairness_cap: Some(1),
        ..Default::default()
    };
    let wf = q.workflow_jobs(opts).unwrap();
    assert_eq!((wf.fairness_group_by(), wf.fairness_cap()), (Some("tenant.id"), Some(1)));
    let mut specs: Vec<WorkflowJobSpec> =
        (0..20).map(|i| stage("big", &format!("s{i}"), r#"{"tenant":{"id":"acme"}}"#)).collect();
    specs.push(stage("small", "s0", r#"{"tenant":{"id":"beta"}}"#));
    specs.push(stage("none", "s0", r#"{"other":1}"#));
    // Higher priority on the big tenant: without fairness it would take every claim.
    for s in specs.iter_mut().take(20) {
        s.priority = 5;
    }
    wf.enqueue_parallel(specs).await.unwrap();
    let none = wf.get_jobs_by_workflow_run("none").await.unwrap().remove(0);
    assert_eq!(none.group_key, None, "a payload without the path is in the default group");
    assert_eq!(wf.get_jobs_by_workflow_run("small").await.unwrap()[0].group_key.as_deref(), Some("beta"));

    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(take(&wf).await);
    }
    let mut groups: Vec<Option<String>> = held.iter().map(|d| d.job.group_key.clone()).collect();
    groups.sort();
    assert_eq!(groups, vec![None, Some("acme".into()), Some("beta".into())]);
    assert!(wf.dequeue(DequeueOptions::default()).await.unwrap().is_none(), "every group at its cap");
    let acme = held.iter().find(|d| d.job.group_key.as_deref() == Some("acme")).unwrap();
    wf.complete(acme.job.id.as_str(), Some(acme.fence)).await.unwrap();
    assert_eq!(take(&wf).await.job.group_key.as_deref(), Some("acme"));

    // Fairness off: the same backlog by priority.
    let plain = q
        .workflow_jobs(WorkflowOptions { fairness_group_by: Some("tenant.id".into()), ..Default::default() })
        .unwrap();
    assert_eq!(plain.fairness_cap(), None);
    assert_eq!(take(&plain).await.job.group_key.as_deref(), Some("acme"));
    assert_eq!(take(&plain).await.job.group_key.as_deref(), Some("acme"));
}

async fn bad_input_is_refused_and_nothing_is_written(q: &Queue) {
    let (q, _clock) = manual(q);
    let invalid = |r: flexiq_runtime::Result<WorkflowJobs>, field: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains(field), "{e} does not name {field}");
    };
    let cap0 = WorkflowOptions { fairness_cap: Some(0), ..Default::default() };
    invalid(q.workflow_jobs(cap0), "fairness_cap");
    for path in ["", "a..b", ".a", "a."] {
        invalid(
            q.workflow_jobs(WorkflowOptions { fairness_group_by: Some(path.into()), ..Default::default() }),
            "fairness_group_by",
        );
    }
    invalid(
        q.workflow_jobs(WorkflowOptions { queue: Some(String::new()), ..Default::default() }),
        "queue name",
    );
    invalid(
        q.workflow_jobs(WorkflowOptions { worker_id: Some(String::new()), ..Default::default() }),
        "worker_id",
    );

    let wf = view(&q);
    let good = stage("r", "ok", "{}");
    let bad: Vec<(WorkflowJobSpec, &str)> = vec![
        (stage("", "a", "{}"), "workflow_run_id"),
        (stage("r", "", "{}"), "stage_id"),
        (WorkflowJobSpec { workflow_id: String::new(), ..stage("r", "a", "{}") }, "workflow_id"),
        (stage("r", "ok", "{}"), "appears twice"),
        (stage("r", "a", "not json"), "not JSON"),
        (WorkflowJobSpec { next_poll_at_ms: Some(-1), ..stage("r", "a", "{}") }, "next_poll_at"),
        (WorkflowJobSpec { max_attempts: Some(0), ..stage("r", "a", "{}") }, "max_attempts"),
        (
            WorkflowJobSpec { definition_version: Some(String::new()), ..stage("r", "a", "{}") },
            "definition_version",
        ),
    ];
    for (spec, field) in bad {
        let e = wf.enqueue_parallel(vec![good.clone(), spec]).await.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains(field), "{e} does not name {field}");
    }
    assert!(wf.get_jobs_by_workflow_run("r").await.unwrap().is_empty(), "nothing written");
    assert_eq!(q.stats_for_queue("workflow").await.unwrap().total(), 0);

    wf.enqueue_parallel(vec![good]).await.unwrap();
    let d = take(&wf).await;
    let id = d.job.id.as_str();
    let e = |r: flexiq_runtime::Result<u64>, field: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains(field), "{e} does not name {field}");
    };
    e(wf.release_stale_jobs(-1).await, "threshold_ms");
    e(wf.release_stale_jobs(0).await, "threshold_ms");
    e(wf.expire_runaway_jobs(-5).await, "absolute_ms");
    e(wf.cancel_by_run("").await, "workflow_run_id");
    e(wf.delete_by_run_and_stages("", &[]).await, "workflow_run_id");
    e(wf.delete_by_run_and_stages("r", &[String::new()]).await, "stage_id");
    assert_code!(wf.get_jobs_by_workflow_run("").await, "INVALID_ARGUMENT");
    for r in [
        wf.suspend(id, -1, Some(d.fence)).await,
        wf.defer(id, -1, "later", Some(d.fence)).await,
        wf.suspend(id, -1, None).await,
    ] {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains("next_poll_at") && e.to_string().contains(id), "{e}");
    }
    let bad_serve = DequeueOptions {
        serves: vec![WorkflowServes { workflow_id: String::new(), definition_version: None }],
        ..Default::default()
    };
    assert_code!(wf.dequeue(bad_serve).await, "INVALID_ARGUMENT");
    // The running attempt was left alone by all of it.
    let job = wf.get_jobs_by_workflow_run("r").await.unwrap().remove(0);
    assert_eq!((job.status, job.attempt), (JobStatus::Running, 1));
    assert_eq!(wf.complete(id, Some(d.fence)).await.unwrap(), AckOutcome::Acknowledged);
}

/// Eight views of one queue handle, each with its own worker id.
fn hosts(q: &Queue, cap: Option<u32>) -> Vec<WorkflowJobs> {
    (0..8)
        .map(|i| {
            let opts = WorkflowOptions {
                worker_id: Some(format!("host-{i}")),
                fairness_group_by: cap.map(|_| "tenant".to_string()),
                fairness_cap: cap,
                ..Default::default()
            };
            q.workflow_jobs(opts).unwrap()
        })
        .collect()
}

async fn dequeue_all(views: &[WorkflowJobs]) -> Vec<Option<Dequeued>> {
    let calls = views.iter().map(|v| v.dequeue(DequeueOptions::default()));
    futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap()).collect()
}

/// Hosts dequeuing at the same moment (which may share one store claim) each get a job of
/// their own stamped with their own worker id, fewer jobs than hosts leaves the rest with
/// `None`, and acks made together get the outcomes they would get one after another: the same
/// job completed twice with one fence is acknowledged once and superseded once.
async fn concurrent_hosts_each_get_their_own_job_and_outcome(q: &Queue) {
    let views = hosts(q, None);
    views[0].enqueue_parallel((0..12).map(|i| stage("r", &format!("s{i}"), "{}")).collect()).await.unwrap();
    let first = dequeue_all(&views).await;
    let mut ids = std::collections::BTreeSet::new();
    for (i, d) in first.iter().enumerate() {
        let d = d.as_ref().unwrap_or_else(|| panic!("host-{i} got no job of twelve"));
        assert!(ids.insert(d.job.id.clone()), "job {} handed out twice", d.job.id);
        assert_eq!(d.job.worker_id.as_deref(), Some(format!("host-{i}").as_str()));
        assert_eq!(one(&views[0], "r", &d.job.stage_id).await.worker_id, d.job.worker_id, "stored worker");
    }
    let second = dequeue_all(&views).await;
    assert_eq!(second.iter().filter(|d| d.is_some()).count(), 4, "four jobs left for eight hosts");
    let done = first.iter().flatten().map(|d| views[0].complete(d.job.id.as_str(), Some(d.fence)));
    for out in futures::future::join_all(done).await {
        assert_eq!(out.unwrap(), AckOutcome::Acknowledged);
    }
    let d = second.iter().flatten().next().unwrap();
    let (a, b) = tokio::join!(
        views[1].complete(d.job.id.as_str(), Some(d.fence)),
        views[2].complete(d.job.id.as_str(), Some(d.fence))
    );
    let mut outs = vec![a.unwrap(), b.unwrap()];
    outs.sort_by_key(|o| o.as_str());
    assert_eq!(outs, vec![AckOutcome::Acknowledged, AckOutcome::Superseded]);
    assert_eq!(one(&views[0], "r", &d.job.stage_id).await.status, JobStatus::Completed);
    let stats = q.stats_for_queue("workflow").await.unwrap();
    assert_eq!((stats.completed, stats.running), (9, 3));
}

/// Hosts dequeuing together never take a fairness group past its cap.
async fn concurrent_hosts_share_the_fairness_cap(q: &Queue) {
    let views = hosts(q, Some(1));
    let mut specs = Vec::new();
    for t in ["a", "b", "c"] {
        specs.extend(
            (0..5).map(|i| stage(&format!("run-{t}"), &format!("s{i}"), &format!(r#"{{"tenant":"{t}"}}"#))),
        );
    }
    views[0].enqueue_parallel(specs).await.unwrap();
    let got: Vec<Dequeued> = dequeue_all(&views).await.into_iter().flatten().collect();
    let mut groups: Vec<_> = got.iter().map(|d| d.job.group_key.clone().unwrap_or_default()).collect();
    groups.sort();
    assert_eq!(groups, vec!["a", "b", "c"], "one job per tenant under a cap of 1");
}

/// A host whose dequeue is dropped while it waits does not leave the hosts waiting with it
/// unanswered.
async fn a_host_that_stops_waiting_strands_no_other(q: &Queue) {
    let views = hosts(q, None);
    views[0].enqueue_parallel((0..8).map(|i| stage("r", &format!("s{i}"), "{}")).collect()).await.unwrap();
    let mut dropped = Box::pin(views[7].dequeue(DequeueOptions::default()));
    let _ = futures::poll!(&mut dropped);
    let rest = views[..7].iter().map(|v| v.dequeue(DequeueOptions::default()));
    let (got, _) = tokio::join!(futures::future::join_all(rest), async move { drop(dropped) });
    for (i, d) in got.into_iter().enumerate() {
        assert!(d.unwrap().is_some(), "host-{i} was answered");
    }
}
