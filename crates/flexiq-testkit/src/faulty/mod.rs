//! [`FaultyStore`]: any store, with the faults of a [`FaultPlan`] injected into chosen calls.
//!
//! The wrapper is mechanical on purpose: every trait of the `Store` bundle is implemented by
//! delegation, one file per trait as in the stores themselves, and only the operations in
//! [`Op`] go through [`FaultyStore::faulted`]. A fault is applied where a network would apply
//! it: before the call (nothing written), after it (written, reply dropped), or as a delay
//! before it (waited out by the [`Pacer`]). The plan keeps what it injected, and the wrapper
//! notes for each lost reply whether the store had in fact applied the call.

mod admin;
mod control;
mod dead;
mod dedup;
mod events;
mod flows;
mod history;
mod inspect;
mod jobs;
mod leadership;
mod maintenance;
mod reschedule;
mod schedulers;
mod schema;
mod settings;
mod workflow;

use std::future::Future;
use std::sync::Arc;

use flexiq_core::{JobId, Result, Store};
use parking_lot::Mutex;

use crate::fault::{Fault, FaultPlan, Injection, Op, Pacer, YieldPacer};

/// A store whose chosen calls fail, lose their reply or stall as a seeded plan decides.
pub struct FaultyStore {
    inner: Arc<dyn Store>,
    plan: Mutex<FaultPlan>,
    pacer: Arc<dyn Pacer>,
}

impl std::fmt::Debug for FaultyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyStore")
            .field("backend", &self.inner.backend())
            .field("namespace", &self.inner.namespace())
            .field("pacer", &self.pacer)
            .finish_non_exhaustive()
    }
}

impl FaultyStore {
    /// Wraps `inner`; delays yield to the runtime (see [`FaultyStore::with_pacer`]).
    pub fn new(inner: Arc<dyn Store>, plan: FaultPlan) -> Self {
        FaultyStore { inner, plan: Mutex::new(plan), pacer: Arc::new(YieldPacer) }
    }

    /// Waits out delays with `pacer` instead.
    pub fn with_pacer(mut self, pacer: Arc<dyn Pacer>) -> Self {
        self.pacer = pacer;
        self
    }

    /// The wrapped store, for reads that must see the truth.
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// Turns injection on or off (see [`FaultPlan::set_enabled`]).
    pub fn set_faults_enabled(&self, on: bool) {
        self.plan.lock().set_enabled(on);
    }

    /// Every fault injected so far, oldest first.
    pub fn injections(&self) -> Vec<Injection> {
        self.plan.lock().injections().to_vec()
    }

    /// The faults injected after the first `from`, oldest first.
    pub fn injections_since(&self, from: usize) -> Vec<Injection> {
        self.plan.lock().injections().get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// How many faults have been injected.
    pub fn injection_count(&self) -> usize {
        self.plan.lock().injections().len()
    }

    /// Runs `call` (an unpolled call of the wrapped store) under the plan's fault for the next
    /// call of `op`; `subject` names the ids involved for the record and the error.
    pub(crate) async fn faulted<T, Fut>(&self, op: Op, subject: String, call: Fut) -> Result<T>
    where
        Fut: Future<Output = Result<T>> + Send,
        T: Send,
    {
        let (n, fault) = self.plan.lock().decide(op);
        if fault == Fault::Pass {
            return call.await;
        }
        let error = fault.error(op, n, &subject);
        let index = self.plan.lock().record(n, op, fault, subject);
        match fault {
            Fault::Pass => call.await,
            Fault::Delay { ms } => {
                self.pacer.pause(op, ms).await;
                call.await
            }
            Fault::FailBefore { .. } => Err(error.expect("a failing fault has an error")),
            Fault::FailAfter { .. } => {
                let reply = call.await;
                self.plan.lock().mark_committed(index, reply.is_ok());
                match reply {
                    Ok(_) => Err(error.expect("a failing fault has an error")),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// `jobs a, b, c` for a record.
pub(crate) fn job_list<'a>(ids: impl IntoIterator<Item = &'a JobId>) -> String {
    let ids: Vec<&str> = ids.into_iter().map(JobId::as_str).collect();
    match ids.len() {
        0 => "no jobs".to_string(),
        1 => format!("job {}", ids[0]),
        _ => format!("jobs {}", ids.join(", ")),
    }
}

#[async_trait::async_trait]
impl Store for FaultyStore {
    fn namespace(&self) -> &str {
        self.inner.namespace()
    }

    fn backend(&self) -> &'static str {
        self.inner.backend()
    }

    async fn close(&self) -> Result<()> {
        self.inner.close().await
    }
}
