//! Awaiting a job: [`Queue::result`] and the partial-result [`Queue::stream`].
//!
//! Both block on the store's `wait_for_job` (an in-process notify, LISTEN/NOTIFY or a blocking
//! pop, depending on the backend) and re-read after every wake, so they react at once and
//! never miss a change; `poll` only caps how long one wait may last.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use flexiq_core::store::{PartialsRequest, WaitForJobRequest};
use flexiq_core::{JobId, JobStatus, Partial};
use futures::Stream;
use tokio::time::Instant;

use super::{parse_id, Queue};
use crate::error::{Error, Result};

/// The partial results of one job, in publication order.
pub type PartialStream = Pin<Box<dyn Stream<Item = Result<Partial>> + Send>>;

/// Longest single wait when no poll interval is given (ms).
const DEFAULT_POLL_MS: u64 = 1_000;
/// Partials read per round trip.
const PARTIAL_BATCH: u32 = 256;

fn poll_ms(poll: Option<Duration>) -> Result<u64> {
    match poll {
        None => Ok(DEFAULT_POLL_MS),
        Some(p) if p.is_zero() => Err(Error::invalid("poll interval must be positive")),
        Some(p) => Ok(u64::try_from(p.as_millis()).unwrap_or(u64::MAX).max(1)),
    }
}

fn timed_out(id: &JobId, timeout: Option<Duration>, what: &str) -> Error {
    let ms = timeout.map(|t| t.as_millis()).unwrap_or_default();
    Error::Core(flexiq_core::Error::Timeout(format!("job {id} {what} within {ms} ms")))
}

/// Ms left before `deadline`, capped at `cap`; `None` once it has passed.
fn remaining(deadline: Option<Instant>, cap: u64) -> Option<u64> {
    match deadline {
        None => Some(cap),
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                None
            } else {
                Some(cap.min(u64::try_from(left.as_millis()).unwrap_or(u64::MAX)).max(1))
            }
        }
    }
}

impl Queue {
    /// Waits for a job to finish and returns its result bytes (`None` when it completed
    /// without a result).
    ///
    /// A `failed` or `dead` job is [`Error::JobFailed`]; a cancelled one (or one that failed
    /// after a cancel request) is [`Error::JobCancelled`]; both carry the job's last error.
    /// `timeout` (`None`: wait forever) running out is a `Timeout` error; `poll` caps one
    /// wait on the store (default 1 s). An unknown id is `NotFound`.
    pub async fn result(
        &self,
        id: &str,
        timeout: Option<Duration>,
        poll: Option<Duration>,
    ) -> Result<Option<Vec<u8>>> {
        let id = parse_id(id)?;
        let cap = poll_ms(poll)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let job =
                self.store.get(&id).await?.ok_or_else(|| flexiq_core::Error::JobNotFound(id.clone()))?;
            match job.status {
                JobStatus::Completed => return Ok(job.result),
                JobStatus::Cancelled => {
                    return Err(Error::JobCancelled { job_id: id, error: job.last_error })
                }
                JobStatus::Failed | JobStatus::Dead if job.cancel_requested => {
                    return Err(Error::JobCancelled { job_id: id, error: job.last_error })
                }
                JobStatus::Failed | JobStatus::Dead => {
                    return Err(Error::JobFailed { job_id: id, status: job.status, error: job.last_error })
                }
                _ => {}
            }
            let Some(wait) = remaining(deadline, cap) else {
                return Err(timed_out(&id, timeout, "did not finish"));
            };
            self.store.wait_for_job(WaitForJobRequest { id: id.clone(), timeout_ms: wait }).await?;
        }
    }

    /// The partial results a job publishes, in order, none dropped or repeated. The stream
    /// ends once the job is terminal and every partial has been read. An unknown job yields
    /// one `NotFound` error; `timeout` (`None`: no limit) running out yields one `Timeout`.
    pub fn stream(
        &self,
        id: &str,
        timeout: Option<Duration>,
        poll: Option<Duration>,
    ) -> Result<PartialStream> {
        let id = parse_id(id)?;
        let cap = poll_ms(poll)?;
        let state = StreamState {
            queue: self.clone(),
            id,
            after: 0,
            buffer: VecDeque::new(),
            done: false,
            timeout,
            deadline: timeout.map(|t| Instant::now() + t),
            cap,
        };
        Ok(Box::pin(futures::stream::unfold(state, |mut s| async move {
            let item = s.next().await?;
            Some((item, s))
        })))
    }
}

struct StreamState {
    queue: Queue,
    id: JobId,
    after: u64,
    buffer: VecDeque<Partial>,
    done: bool,
    timeout: Option<Duration>,
    deadline: Option<Instant>,
    cap: u64,
}

impl StreamState {
    async fn next(&mut self) -> Option<Result<Partial>> {
        loop {
            if let Some(p) = self.buffer.pop_front() {
                return Some(Ok(p));
            }
            if self.done {
                return None;
            }
            match self.fill().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            if self.done {
                return None;
            }
            let Some(wait) = remaining(self.deadline, self.cap) else {
                self.done = true;
                return Some(Err(timed_out(&self.id, self.timeout, "was still running")));
            };
            if let Err(e) = self
                .queue
                .store
                .wait_for_job(WaitForJobRequest { id: self.id.clone(), timeout_ms: wait })
                .await
            {
                self.done = true;
                return Some(Err(e.into()));
            }
        }
    }

    /// Reads the status, then the partials after the last one seen. Partials read after a
    /// terminal status are the last ones, so an empty read then ends the stream.
    async fn fill(&mut self) -> Result<bool> {
        let store = &self.queue.store;
        let job =
            store.get(&self.id).await?.ok_or_else(|| flexiq_core::Error::JobNotFound(self.id.clone()))?;
        let req = PartialsRequest { id: self.id.clone(), after_seq: self.after, limit: PARTIAL_BATCH };
        let parts = store.partials(req).await?;
        if let Some(last) = parts.last() {
            self.after = last.seq;
            self.buffer.extend(parts);
            return Ok(true);
        }
        if job.status.is_terminal() {
            self.done = true;
        }
        Ok(false)
    }
}
