//! The runtime's error: the engine's [`flexiq_core::Error`] plus the outcomes of awaiting a job.
//!
//! Awaiting a result can end in ways that are not engine failures at all: the job itself
//! failed, or it was cancelled. Those get their own variants (carrying the job's last error)
//! so a caller can branch on them, and every variant has a stable [`Error::code`] that the
//! SDKs expose as-is.

use flexiq_core::{ErrorKind, JobId, JobStatus};

/// Everything a runtime call can fail with.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine or the store refused or failed (see [`flexiq_core::Error`]).
    #[error(transparent)]
    Core(#[from] flexiq_core::Error),
    /// The awaited job ended `failed` or `dead`.
    #[error("job {job_id} {status}: {}", error.as_deref().unwrap_or("no error recorded"))]
    JobFailed {
        /// The job.
        job_id: JobId,
        /// Its terminal status (`failed` or `dead`).
        status: JobStatus,
        /// Its last error.
        error: Option<String>,
    },
    /// The awaited job was cancelled.
    #[error("job {job_id} was cancelled{}", error.as_deref().map(|e| format!(": {e}")).unwrap_or_default())]
    JobCancelled {
        /// The job.
        job_id: JobId,
        /// Its last error, if any (why it was cancelled).
        error: Option<String>,
    },
}

impl Error {
    /// A stable upper-case code: the engine's codes (`NOT_FOUND`, `INVALID_ARGUMENT`,
    /// `TIMEOUT`, ...) plus `JOB_FAILED` and `JOB_CANCELLED`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Core(e) => e.code(),
            Error::JobFailed { .. } => "JOB_FAILED",
            Error::JobCancelled { .. } => "JOB_CANCELLED",
        }
    }

    /// The engine error kind, when this is an engine error.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Error::Core(e) => Some(e.kind()),
            _ => None,
        }
    }

    /// The engine error, when this is one.
    pub fn as_core(&self) -> Option<&flexiq_core::Error> {
        match self {
            Error::Core(e) => Some(e),
            _ => None,
        }
    }

    /// The job's last error for `JobFailed` / `JobCancelled`.
    pub fn job_error(&self) -> Option<&str> {
        match self {
            Error::JobFailed { error, .. } | Error::JobCancelled { error, .. } => error.as_deref(),
            Error::Core(_) => None,
        }
    }

    /// Shorthand for an `InvalidArgument` engine error.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Core(flexiq_core::Error::invalid(msg))
    }
}

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_cover_job_outcomes_and_engine_errors() {
        let id = JobId::new();
        let failed =
            Error::JobFailed { job_id: id.clone(), status: JobStatus::Dead, error: Some("boom".into()) };
        assert_eq!(failed.code(), "JOB_FAILED");
        assert_eq!(failed.job_error(), Some("boom"));
        assert!(failed.to_string().contains(id.as_str()));
        let cancelled = Error::JobCancelled { job_id: id, error: None };
        assert_eq!(cancelled.code(), "JOB_CANCELLED");
        assert_eq!(cancelled.kind(), None);
        let core = Error::invalid("x");
        assert_eq!(core.code(), "INVALID_ARGUMENT");
        assert_eq!(core.kind(), Some(ErrorKind::InvalidArgument));
    }
}
