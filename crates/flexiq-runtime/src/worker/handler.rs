//! Handlers: what a task runs, and how it says an attempt failed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::context::JobContext;

/// What a handler returns: optional result bytes, or a [`HandlerError`].
pub type HandlerResult = Result<Option<Vec<u8>>, HandlerError>;

/// A boxed handler future.
pub type HandlerFuture = Pin<Box<dyn Future<Output = HandlerResult> + Send>>;

/// A registered handler, type-erased (bindings build these from their own callables).
pub type Handler = Arc<dyn Fn(JobContext) -> HandlerFuture + Send + Sync>;

/// Boxes an async closure into a [`Handler`].
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    Arc::new(move |ctx| Box::pin(f(ctx)))
}

/// Why an attempt failed, and whether the job's retry budget may be spent on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerError {
    /// What went wrong (recorded as the job's error).
    pub message: String,
    /// True: retry per the job's backoff until its budget is spent, then dead-letter.
    /// False: fail the job for good now.
    pub retryable: bool,
}

impl HandlerError {
    /// A failure worth retrying.
    pub fn retryable(message: impl Into<String>) -> Self {
        HandlerError { message: message.into(), retryable: true }
    }

    /// A failure no retry will fix: the job fails for good.
    pub fn fatal(message: impl Into<String>) -> Self {
        HandlerError { message: message.into(), retryable: false }
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HandlerError {}

impl From<String> for HandlerError {
    fn from(message: String) -> Self {
        HandlerError::retryable(message)
    }
}

impl From<&str> for HandlerError {
    fn from(message: &str) -> Self {
        HandlerError::retryable(message)
    }
}

impl From<crate::Error> for HandlerError {
    fn from(e: crate::Error) -> Self {
        HandlerError::retryable(e.to_string())
    }
}
