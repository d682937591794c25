//! The worker registry on `NativeQueue`: which worker processes serve the namespace.
//!
//! Every running worker registers itself and refreshes its row on each heartbeat, so the
//! listing shows live workers and, until their rows age out, recently stopped ones.

use napi_derive::napi;

use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;

/// A worker as it registered itself.
#[napi(object)]
pub struct WorkerInfo {
    /// The worker's id (stamped on the jobs it claims).
    pub id: String,
    /// The queues it serves (empty: every queue).
    pub queues: Vec<String>,
    /// Its concurrency.
    pub concurrency: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When it started (Unix ms).
    pub started_at: f64,
    /// Its last heartbeat (Unix ms).
    pub heartbeat_at: f64,
}

#[napi]
impl NativeQueue {
    /// Workers registered in the namespace with their last heartbeat.
    #[napi]
    pub async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        let q = self.queue()?;
        Ok(q.list_workers()
            .await
            .napi()?
            .into_iter()
            .map(|w| WorkerInfo {
                id: w.id,
                queues: w.queues,
                concurrency: w.concurrency,
                host: w.host,
                pid: w.pid,
                started_at: w.started_at as f64,
                heartbeat_at: w.heartbeat_at as f64,
            })
            .collect())
    }
}
