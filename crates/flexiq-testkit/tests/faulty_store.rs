//! The wrapper itself, on SQLite: a fault before the store writes nothing, a fault after it
//! writes and loses the reply, a delay passes through on the injected clock, and everything
//! else is the wrapped store's.

use std::sync::Arc;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, HeartbeatRequest, Inspect, JobStore,
};
use flexiq_core::{AckOutcome, ClaimedJob, EnqueueOptions, ErrorKind, Job, JobId, JobStatus, NewJob, Store};
use flexiq_runtime::{Clock, ManualClock};
use flexiq_testkit::fault::ClockPacer;
use flexiq_testkit::{Backing, Fault, FaultPlan, FaultRates, FaultyStore, Op, SqliteBacking};

const NOW: i64 = 1_700_000_000_000;

struct Fixture {
    backing: SqliteBacking,
    truth: Arc<dyn Store>,
}

impl Fixture {
    fn new() -> Self {
        let backing = SqliteBacking::open().expect("temp SQLite file");
        let truth = backing.namespace("wrapper").expect("namespace");
        Fixture { backing, truth }
    }

    fn faulty(&self, plan: FaultPlan) -> FaultyStore {
        FaultyStore::new(self.truth.clone(), plan)
    }

    async fn get(&self, id: &JobId) -> Option<Job> {
        self.truth.get(id).await.unwrap()
    }

    async fn put(&self) -> JobId {
        let j = job();
        let id = j.id.clone();
        self.truth.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: NOW }).await.unwrap();
        id
    }

    async fn claimed(&self) -> ClaimedJob {
        self.put().await;
        let req = ClaimRequest { queues: Vec::new(), limit: 1, worker_id: "w".into(), now: NOW };
        self.truth.claim(req).await.unwrap().pop().expect("a claimed job")
    }
}

fn job() -> NewJob {
    NewJob::build("t", b"{}".to_vec(), EnqueueOptions::default(), NOW).unwrap()
}

fn complete(c: &ClaimedJob) -> AckRequest {
    AckRequest {
        acks: vec![Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: None },
        }],
        now: NOW + 10,
    }
}

const BEFORE: Fault = Fault::FailBefore { retryable: true };
const AFTER: Fault = Fault::FailAfter { retryable: true };

#[tokio::test]
async fn an_enqueue_failed_before_the_store_writes_nothing() {
    let f = Fixture::new();
    let s = f.faulty(FaultPlan::new(1).script(Op::Enqueue, [BEFORE]));
    let j = job();
    let err =
        s.enqueue(EnqueueRequest { jobs: vec![j.clone()], max_pending: None, now: NOW }).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Backend);
    assert!(err.is_retryable());
    assert!(err.to_string().contains(j.id.as_str()), "{err}");
    assert_eq!(f.get(&j.id).await, None);
    assert_eq!(f.truth.stats(None).await.unwrap().total(), 0);
    let inj = s.injections();
    assert_eq!((inj.len(), inj[0].op, inj[0].fault, inj[0].committed), (1, Op::Enqueue, BEFORE, None));
    f.backing.cleanup().await;
}

#[tokio::test]
async fn an_enqueue_whose_reply_is_lost_is_in_the_store() {
    let f = Fixture::new();
    let s = f.faulty(FaultPlan::new(1).script(Op::Enqueue, [Fault::FailAfter { retryable: false }]));
    let j = job();
    let err =
        s.enqueue(EnqueueRequest { jobs: vec![j.clone()], max_pending: None, now: NOW }).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Backend);
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("lost after the store applied it"), "{err}");
    assert_eq!(f.get(&j.id).await.map(|j| j.status), Some(JobStatus::Pending));
    assert_eq!(s.injections()[0].committed, Some(true));
    f.backing.cleanup().await;
}

#[tokio::test]
async fn a_claim_failed_before_the_store_leaves_the_job_pending_and_a_lost_one_leases_it() {
    let f = Fixture::new();
    let id = f.put().await;
    let s = f.faulty(FaultPlan::new(1).script(Op::Claim, [BEFORE, AFTER]));
    let req = ClaimRequest { queues: Vec::new(), limit: 5, worker_id: "w".into(), now: NOW };
    s.claim(req.clone()).await.unwrap_err();
    assert_eq!(f.get(&id).await.unwrap().status, JobStatus::Pending);
    s.claim(req.clone()).await.unwrap_err();
    let leased = f.get(&id).await.unwrap();
    assert_eq!((leased.status, leased.worker_id.as_deref()), (JobStatus::Running, Some("w")));
    assert!(s.claim(req).await.unwrap().is_empty(), "the lost claim holds the job");
    f.backing.cleanup().await;
}

#[tokio::test]
async fn an_ack_failed_before_the_store_leaves_the_attempt_running() {
    let f = Fixture::new();
    let c = f.claimed().await;
    let s = f.faulty(FaultPlan::new(1).script(Op::Ack, [BEFORE]));
    s.ack(complete(&c)).await.unwrap_err();
    assert_eq!(f.get(&c.job.id).await.unwrap().fence(), Some(c.fence));
    assert_eq!(s.ack(complete(&c)).await.unwrap(), vec![AckOutcome::Acknowledged]);
    f.backing.cleanup().await;
}

#[tokio::test]
async fn a_lost_ack_reply_completed_the_job_and_its_resend_is_superseded() {
    let f = Fixture::new();
    let c = f.claimed().await;
    let s = f.faulty(FaultPlan::new(1).script(Op::Ack, [AFTER]));
    s.ack(complete(&c)).await.unwrap_err();
    let done = f.get(&c.job.id).await.unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(s.ack(complete(&c)).await.unwrap(), vec![AckOutcome::Superseded]);
    assert_eq!(f.get(&c.job.id).await.unwrap(), done, "the resent ack changed the completed job");
    let hb = HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: NOW + 20 };
    assert_eq!(s.heartbeat(hb).await.unwrap()[0].outcome, AckOutcome::Superseded);
    f.backing.cleanup().await;
}

#[tokio::test]
async fn a_delay_moves_the_injected_clock_and_the_call_goes_through() {
    let f = Fixture::new();
    let clock = ManualClock::new(NOW);
    let plan = FaultPlan::new(1).script(Op::Enqueue, [Fault::Delay { ms: 250 }]);
    let s = f.faulty(plan).with_pacer(Arc::new(ClockPacer(clock.clone())));
    let j = job();
    let out = s.enqueue(EnqueueRequest { jobs: vec![j.clone()], max_pending: None, now: NOW }).await.unwrap();
    assert_eq!(out[0].id, j.id);
    assert_eq!(clock.now_ms(), NOW + 250);
    assert_eq!(f.get(&j.id).await.unwrap().created_at, NOW, "the call keeps the now it was sent with");
    f.backing.cleanup().await;
}

#[tokio::test]
async fn a_disabled_plan_and_unfaulted_operations_pass_straight_through() {
    let f = Fixture::new();
    let s = f.faulty(FaultPlan::new(1).script(Op::Enqueue, [BEFORE]).script(Op::Claim, [BEFORE]));
    s.set_faults_enabled(false);
    let j = job();
    s.enqueue(EnqueueRequest { jobs: vec![j.clone()], max_pending: None, now: NOW }).await.unwrap();
    s.set_faults_enabled(true);
    assert!(s.get(&j.id).await.unwrap().is_some(), "reads are never faulted");
    assert_eq!(s.stats(None).await.unwrap().pending, 1);
    assert_eq!((s.namespace(), s.backend()), ("wrapper", "sqlite"));
    assert_eq!(s.injection_count(), 0);
    let req = ClaimRequest { queues: Vec::new(), limit: 1, worker_id: "w".into(), now: NOW };
    s.claim(req).await.unwrap_err();
    assert_eq!(s.injection_count(), 1, "the scripted claim fault was kept while injection was off");
    f.backing.cleanup().await;
}

#[tokio::test]
async fn the_same_seed_injects_the_same_faults_into_the_same_calls() {
    let f = Fixture::new();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let rates = FaultRates::new(0.2, 0.2, 0.1);
        let s = f.faulty(FaultPlan::new(9).rate_all(&Op::ALL, rates).retryable_share(0.5));
        for _ in 0..100 {
            let _ = s
                .release_stale(flexiq_core::store::ReleaseStaleRequest { stale_after_ms: 1, now: NOW })
                .await;
        }
        runs.push(s.injections());
    }
    assert!(!runs[0].is_empty(), "seed 9 injected nothing into 100 calls");
    assert_eq!(runs[0], runs[1]);
    f.backing.cleanup().await;
}
