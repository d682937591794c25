//! `NativeWorkflowJobs`: the Python handle on a runtime [`WorkflowJobs`] view, the workflow
//! job contract as the runtime's `queue/workflow.rs` has it, and `NativeQueue.workflow_jobs`
//! that opens one.
//!
//! The Python layer (`flexiq/_queue/workflow.py`) hands this file engine units only: payloads
//! as JSON text in `bytes`, poll times as Unix ms, fences as `(job_id, attempt, started_at,
//! claim_seq)` tuples. A fence carries the id of the job it was issued for, which the engine's
//! fence does not, so the check that a fence belongs to the job it is given with is made here,
//! before the runtime sees it. Every other rule (ids, caps, thresholds, JSON) is the runtime's;
//! each call releases the GIL through `block_on` and raises through the shared error mapping.

use flexiq_runtime::{DequeueOptions, Fence, WorkflowJobSpec, WorkflowJobs, WorkflowOptions, WorkflowServes};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use super::NativeQueue;
use crate::args::{self, Bytes, FromArg};
use crate::convert;
use crate::errors::{invalid, to_py_err};
use crate::runtime::block_on;

/// The keys a stage dict may carry (`enqueue_parallel`).
const SPEC_KEYS: [&str; 8] = [
    "workflow_run_id",
    "workflow_id",
    "stage_id",
    "definition_version",
    "payload",
    "priority",
    "next_poll_at_ms",
    "max_attempts",
];

/// A fence as Python passes it: `(job_id, attempt, started_at, claim_seq)`.
type FenceArg = (String, i64, i64, i64);

#[pymethods]
impl NativeQueue {
    /// A workflow view of this queue (see `NativeWorkflowJobs`). `fairness_cap` is an `i64`
    /// so that a negative cap is an `InvalidArgument`, as the runtime's 0 is.
    #[pyo3(signature = (fairness_group_by=None, fairness_cap=None, worker_id=None, queue=None, claim_ahead=false))]
    fn workflow_jobs(
        &self,
        #[pyo3(from_py_with = args::fairness_group_by)] fairness_group_by: Option<String>,
        #[pyo3(from_py_with = args::fairness_cap)] fairness_cap: Option<i64>,
        #[pyo3(from_py_with = args::worker_id)] worker_id: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
        #[pyo3(from_py_with = args::claim_ahead)] claim_ahead: bool,
    ) -> PyResult<NativeWorkflowJobs> {
        let fairness_cap = fairness_cap
            .map(|c| {
                u32::try_from(c)
                    .map_err(|_| invalid(format!("fairness_cap {c} must be between 1 and {}", u32::MAX)))
            })
            .transpose()?;
        let opts = WorkflowOptions { queue, fairness_group_by, fairness_cap, worker_id, claim_ahead };
        let inner = self.inner.workflow_jobs(opts).map_err(to_py_err)?;
        Ok(NativeWorkflowJobs { inner })
    }
}

/// A workflow view of one queue: stages of workflow runs as jobs, fenced acks, the two lease
/// tiers and the run-wide calls. Thread-safe; every clone of the runtime view shares the
/// worker id.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct NativeWorkflowJobs {
    inner: WorkflowJobs,
}

#[pymethods]
impl NativeWorkflowJobs {
    /// The dotted payload path naming a job's fairness group; `None` when fairness is off.
    #[getter]
    fn fairness_group_by(&self) -> Option<String> {
        self.inner.fairness_group_by().map(str::to_string)
    }

    /// The most running jobs per fairness group; `None` when uncapped.
    #[getter]
    fn fairness_cap(&self) -> Option<u32> {
        self.inner.fairness_cap()
    }

    /// The queue the view enqueues to and dequeues from by default.
    #[getter]
    fn queue_name(&self) -> String {
        self.inner.queue_name().to_string()
    }

    /// The worker id the view stamps on its claims.
    #[getter]
    fn worker_id(&self) -> String {
        self.inner.worker_id()
    }

    /// Offers a host's worker id; returns the id the view will stamp (a view configured with
    /// its own id keeps it).
    fn adopt_worker_id(&self, #[pyo3(from_py_with = args::worker_id)] worker_id: String) -> PyResult<String> {
        self.inner.adopt_worker_id(&worker_id).map_err(to_py_err)
    }

    /// Inserts or replaces stages, all in one transaction; returns the job ids in order.
    /// Each item is a dict keyed as `SPEC_KEYS`; a bad one is named by its index.
    fn enqueue_parallel(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::jobs)] jobs: Bound<'_, PyList>,
    ) -> PyResult<Vec<String>> {
        let mut specs = Vec::with_capacity(jobs.len());
        for (i, item) in jobs.iter().enumerate() {
            specs.push(spec_at(i, &item)?);
        }
        let wf = self.inner.clone();
        let ids = block_on(py, async move { wf.enqueue_parallel(specs).await })?;
        Ok(ids.into_iter().map(|id| id.to_string()).collect())
    }

    /// Claims one job of `queues` (empty: the view's queue) serving the `(workflow_id,
    /// definition_version)` pairs (empty: every workflow). Returns `(job dict, (attempt,
    /// started_at, claim_seq))` or `None`.
    #[pyo3(signature = (serves=Vec::new(), queues=Vec::new()))]
    fn dequeue<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::serves)] serves: Vec<(String, Option<String>)>,
        #[pyo3(from_py_with = args::queues)] queues: Vec<String>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let serves = serves
            .into_iter()
            .map(|(workflow_id, definition_version)| WorkflowServes { workflow_id, definition_version })
            .collect();
        let wf = self.inner.clone();
        let got = block_on(py, async move { wf.dequeue(DequeueOptions { serves, queues }).await })?;
        got.map(|d| {
            let job = convert::workflow_job(py, &d.job)?;
            let fence = (d.fence.attempt, d.fence.started_at, d.fence.claim_seq);
            PyTuple::new(py, [job.into_any(), fence.into_pyobject(py)?.into_any()])
        })
        .transpose()
    }

    /// Completes a job: `"acknowledged"` or `"superseded"` (fenced only).
    #[pyo3(signature = (job_id, fence=None))]
    fn complete(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::fence)] fence: Option<FenceArg>,
    ) -> PyResult<&'static str> {
        let fence = fence_for("complete", &job_id, fence)?;
        let (wf, id) = (self.inner.clone(), job_id);
        block_on(py, async move { wf.complete(&id, fence).await }).map(|o| o.as_str())
    }

    /// Fails an attempt; `should_retry=false` makes the failure final.
    #[pyo3(signature = (job_id, error, should_retry=false, fence=None))]
    fn fail(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::error)] error: String,
        #[pyo3(from_py_with = args::should_retry)] should_retry: bool,
        #[pyo3(from_py_with = args::fence)] fence: Option<FenceArg>,
    ) -> PyResult<&'static str> {
        let fence = fence_for("fail", &job_id, fence)?;
        let (wf, id, err) = (self.inner.clone(), job_id, error);
        block_on(py, async move { wf.fail(&id, &err, should_retry, fence).await }).map(|o| o.as_str())
    }

    /// Suspends a running job until `next_poll_at_ms` (Unix ms).
    #[pyo3(signature = (job_id, next_poll_at_ms, fence=None))]
    fn suspend(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::next_poll_at_ms)] next_poll_at_ms: i64,
        #[pyo3(from_py_with = args::fence)] fence: Option<FenceArg>,
    ) -> PyResult<&'static str> {
        let fence = fence_for("suspend", &job_id, fence)?;
        let (wf, id) = (self.inner.clone(), job_id);
        block_on(py, async move { wf.suspend(&id, next_poll_at_ms, fence).await }).map(|o| o.as_str())
    }

    /// Gives a claim back until `next_poll_at_ms` (Unix ms) without spending the attempt.
    #[pyo3(signature = (job_id, next_poll_at_ms, reason, fence=None))]
    fn defer(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::next_poll_at_ms)] next_poll_at_ms: i64,
        #[pyo3(from_py_with = args::reason)] reason: String,
        #[pyo3(from_py_with = args::fence)] fence: Option<FenceArg>,
    ) -> PyResult<&'static str> {
        let fence = fence_for("defer", &job_id, fence)?;
        let (wf, id, why) = (self.inner.clone(), job_id, reason);
        block_on(py, async move { wf.defer(&id, next_poll_at_ms, &why, fence).await }).map(|o| o.as_str())
    }

    /// Heartbeats the running attempt of a job (unfenced; a no-op when not running).
    fn touch_job(&self, py: Python<'_>, #[pyo3(from_py_with = args::job_id)] job_id: String) -> PyResult<()> {
        let (wf, id) = (self.inner.clone(), job_id);
        block_on(py, async move { wf.touch_job(&id).await })
    }

    /// Releases running jobs whose lease is older than `threshold_ms`; returns how many.
    fn release_stale_jobs(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::threshold_ms)] threshold_ms: i64,
    ) -> PyResult<u64> {
        let wf = self.inner.clone();
        block_on(py, async move { wf.release_stale_jobs(threshold_ms).await })
    }

    /// Fails running jobs whose attempt started more than `absolute_ms` ago; returns how many.
    fn expire_runaway_jobs(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::absolute_ms)] absolute_ms: i64,
    ) -> PyResult<u64> {
        let wf = self.inner.clone();
        block_on(py, async move { wf.expire_runaway_jobs(absolute_ms).await })
    }

    /// Cancels a run's jobs that have not started; returns how many.
    fn cancel_by_run(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::run_id)] run_id: String,
    ) -> PyResult<u64> {
        let (wf, run) = (self.inner.clone(), run_id);
        block_on(py, async move { wf.cancel_by_run(&run).await })
    }

    /// Deletes the job rows of some stages of a run, any status; returns how many.
    fn delete_by_run_and_stages(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::run_id)] run_id: String,
        #[pyo3(from_py_with = args::stage_ids)] stage_ids: Vec<String>,
    ) -> PyResult<u64> {
        let (wf, run) = (self.inner.clone(), run_id);
        block_on(py, async move { wf.delete_by_run_and_stages(&run, &stage_ids).await })
    }

    /// Every job of a run, any status, oldest first.
    fn get_jobs_by_workflow_run<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::run_id)] run_id: String,
    ) -> PyResult<Bound<'py, PyList>> {
        let (wf, run) = (self.inner.clone(), run_id);
        let jobs = block_on(py, async move { wf.get_jobs_by_workflow_run(&run).await })?;
        let out = PyList::empty(py);
        for j in &jobs {
            out.append(convert::workflow_job(py, j)?)?;
        }
        Ok(out)
    }
}

/// The engine fence of a Python fence given to `call` of `job_id`; a fence issued for another
/// job, or with numbers out of range, is `InvalidArgument`.
fn fence_for(call: &str, job_id: &str, fence: Option<FenceArg>) -> PyResult<Option<Fence>> {
    let Some((fence_job, attempt, started_at, claim_seq)) = fence else { return Ok(None) };
    if fence_job != job_id {
        return Err(invalid(format!(
            "{call} of job {job_id} was given the fence of job {fence_job}: a fence only acks the job it was issued for"
        )));
    }
    let attempt = u32::try_from(attempt)
        .map_err(|_| invalid(format!("fence attempt {attempt} of job {job_id} is out of range")))?;
    let claim_seq = u64::try_from(claim_seq)
        .map_err(|_| invalid(format!("fence claim_seq {claim_seq} of job {job_id} is out of range")))?;
    Ok(Some(Fence { attempt, started_at, claim_seq }))
}

/// Stage `i` of a batch; its errors name the index.
fn spec_at(i: usize, item: &Bound<'_, PyAny>) -> PyResult<WorkflowJobSpec> {
    let d = item.cast::<PyDict>().map_err(|_| invalid(format!("enqueue_parallel job {i} must be a dict")))?;
    spec_from(d)
        .map_err(|e| Python::attach(|py| invalid(format!("enqueue_parallel job {i}: {}", e.value(py)))))
}

/// The value of `key`, `None` when absent or `None`; a wrong type names the key.
fn get<'py, T: FromArg<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    args::item(d, key, key)
}

fn required(d: &Bound<'_, PyDict>, key: &str) -> PyResult<String> {
    get::<String>(d, key)?.ok_or_else(|| invalid(format!("{key} is required")))
}

fn spec_from(d: &Bound<'_, PyDict>) -> PyResult<WorkflowJobSpec> {
    for k in d.keys() {
        let k = String::from_arg("a stage key", &k)?;
        if !SPEC_KEYS.contains(&k.as_str()) {
            return Err(invalid(format!("unknown stage key {k:?} (expected {})", SPEC_KEYS.join(", "))));
        }
    }
    let payload = get::<Bytes>(d, "payload")?.ok_or_else(|| invalid("payload is required"))?.0;
    let priority = get::<i64>(d, "priority")?.unwrap_or(0);
    let priority = i32::try_from(priority)
        .map_err(|_| invalid(format!("priority {priority} is outside the 32-bit range")))?;
    let max_attempts = get::<i64>(d, "max_attempts")?
        .map(|n| u32::try_from(n).map_err(|_| invalid(format!("max_attempts {n} must be at least 1"))))
        .transpose()?;
    Ok(WorkflowJobSpec {
        workflow_run_id: required(d, "workflow_run_id")?,
        workflow_id: required(d, "workflow_id")?,
        stage_id: required(d, "stage_id")?,
        definition_version: get(d, "definition_version")?,
        payload,
        priority,
        next_poll_at_ms: get(d, "next_poll_at_ms")?,
        max_attempts,
    })
}
