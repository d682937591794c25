//! The store contract: small traits by capability, bundled by [`Store`].
//!
//! Each operation takes its inputs (with `now` injected as Unix ms, so tests control time) and
//! returns a typed result. Stores decide every status change with
//! [`crate::transition::transition`]; the batched forms (enqueue many, ack many) are primary.
//! Everything is scoped to the store handle's namespace except [`Settings`], which is
//! deployment-wide. The conformance suite in `flexiq-conformance` pins down the semantics.

mod control;
mod history;
mod inspect;
mod jobs;
mod maintenance;
mod validate;

pub use control::{DeadLetters, QueueConfig, QueueControl};
pub use history::History;
pub use inspect::Inspect;
pub use jobs::{Ack, AckKind, ClaimRequest, EnqueueRequest, Enqueued, HeartbeatReply, JobStore};
pub use maintenance::{Leadership, Maintenance, Schema, Settings};

/// Everything a store does; what the runtime holds as `Arc<dyn Store>`.
#[async_trait::async_trait]
pub trait Store:
    JobStore + Inspect + DeadLetters + QueueControl + History + Settings + Leadership + Maintenance + Schema
{
    /// The namespace this handle is scoped to.
    fn namespace(&self) -> &str;

    /// The backend's name (`"sqlite"`, `"postgres"`, `"redis"`).
    fn backend(&self) -> &'static str;

    /// Releases connections and background threads; later calls fail with `Closed`.
    async fn close(&self) -> crate::Result<()>;
}
