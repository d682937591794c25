//! Deduplicated enqueues and dedup keys on `NativeQueue`, as the runtime's `queue/dedup.rs`.
//!
//! `enqueue` resolves to an id only; a producer using dedup modes needs to know whether its
//! job was the one inserted, so `enqueueOutcome` says. The modes are decided by the engine
//! inside the store's enqueue; the `dedup` option itself is converted with the other enqueue
//! options (`options.rs`).

use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;

use crate::bridge;
use crate::error::{IntoNapi, Result};
use crate::options::JobOptions;
use crate::queue::NativeQueue;

/// What an enqueue did.
#[napi(object)]
pub struct EnqueueOutcome {
    /// The job's id: the new job's, or the existing job's that a unique key or dedup key
    /// returned.
    pub id: String,
    /// Whether an existing job was returned instead of a new one inserted.
    pub deduplicated: bool,
}

#[napi]
impl NativeQueue {
    /// Enqueues one job (payload JSON text) like `enqueue` and says whether it was inserted.
    #[napi(ts_return_type = "Promise<EnqueueOutcome>")]
    pub fn enqueue_outcome<'env>(
        &self,
        env: &'env Env,
        task: String,
        payload: String,
        options: Option<JobOptions>,
    ) -> Result<PromiseRaw<'env, EnqueueOutcome>> {
        let opts = options.map(JobOptions::resolve).transpose()?.unwrap_or_default();
        let q = self.queue()?;
        bridge::promise(env, async move {
            let out = q.enqueue_outcome(&task, payload.into_bytes(), opts).await.napi()?;
            Ok(EnqueueOutcome { id: out.id.to_string(), deduplicated: !out.created })
        })
    }

    /// The job holding dedup key `key` now; `null` when the key is free.
    #[napi]
    pub async fn dedup_job_id(&self, key: String) -> Result<Option<String>> {
        let q = self.queue()?;
        Ok(q.dedup_job_id(&key).await.napi()?.map(|id| id.to_string()))
    }

    /// Deletes dedup key `key`, so the next enqueue with it inserts; the holding job is left
    /// alone. `false` when the key did not exist.
    #[napi]
    pub async fn delete_dedup_key(&self, key: String) -> Result<bool> {
        let q = self.queue()?;
        q.delete_dedup_key(&key).await.napi()
    }
}
