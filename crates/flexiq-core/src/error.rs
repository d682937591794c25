//! One error type for the whole engine.
//!
//! Every store maps its driver errors into these meanings in one place, and every front
//! door (Rust, Python, Node, CLI) maps them back out by [`ErrorKind`] / [`Error::code`], so a
//! caller can branch on what went wrong without parsing messages.

use crate::id::JobId;

/// What went wrong, without the details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The job, dead letter or key named does not exist.
    NotFound,
    /// The caller passed something malformed or out of range.
    InvalidArgument,
    /// The operation conflicts with the current state (illegal transition, busy lease).
    Conflict,
    /// A fenced write lost to a newer attempt.
    Superseded,
    /// This store or build cannot do the operation.
    Unsupported,
    /// The storage's contract floor is above this build's level.
    ContractTooOld,
    /// The handle was closed.
    Closed,
    /// A wait ran out of time.
    Timeout,
    /// An admission cap rejected an enqueue.
    QueueFull,
    /// The task is revoked: new enqueues of it are refused.
    TaskRevoked,
    /// The datastore failed; see `retryable`.
    Backend,
}

/// The engine's error.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A job id that no job in this namespace carries.
    #[error("job {0} not found")]
    JobNotFound(JobId),
    /// Something else named by the caller that does not exist.
    #[error("{what} {id} not found")]
    NotFound {
        /// What kind of thing ("dead letter", "setting", ...).
        what: &'static str,
        /// The identifier the caller gave.
        id: String,
    },
    /// Malformed or out-of-range input.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The state does not allow the operation.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A fenced write lost to a newer attempt of the job.
    #[error("job {0} was superseded by a newer attempt")]
    Superseded(JobId),
    /// Not supported by this store or build.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The storage refuses builds below its contract floor.
    #[error("storage requires contract level {floor}, this build speaks {level}")]
    ContractTooOld {
        /// The floor recorded in the storage.
        floor: u32,
        /// This build's level.
        level: u32,
    },
    /// The handle was closed.
    #[error("closed: {0}")]
    Closed(String),
    /// A wait ran out of time.
    #[error("timed out: {0}")]
    Timeout(String),
    /// `max_pending` rejected the enqueue.
    #[error("queue {queue} is full: {pending} pending, cap {max_pending}")]
    QueueFull {
        /// The queue.
        queue: String,
        /// Pending jobs counted at the time.
        pending: u64,
        /// The cap in force.
        max_pending: u64,
    },
    /// An enqueue named a revoked task.
    #[error("task {task} is revoked: enqueues of it are refused until it is unrevoked")]
    TaskRevoked {
        /// The revoked task's name.
        task: String,
    },
    /// The datastore failed.
    #[error("backend error: {message}")]
    Backend {
        /// What the driver said.
        message: String,
        /// Whether retrying the same call may succeed (connection loss, serialization).
        retryable: bool,
    },
}

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::JobNotFound(_) | Error::NotFound { .. } => ErrorKind::NotFound,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Superseded(_) => ErrorKind::Superseded,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::ContractTooOld { .. } => ErrorKind::ContractTooOld,
            Error::Closed(_) => ErrorKind::Closed,
            Error::Timeout(_) => ErrorKind::Timeout,
            Error::QueueFull { .. } => ErrorKind::QueueFull,
            Error::TaskRevoked { .. } => ErrorKind::TaskRevoked,
            Error::Backend { .. } => ErrorKind::Backend,
        }
    }

    /// A stable upper-case code for SDKs (`NOT_FOUND`, `INVALID_ARGUMENT`, ...).
    pub fn code(&self) -> &'static str {
        match self.kind() {
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::Conflict => "CONFLICT",
            ErrorKind::Superseded => "SUPERSEDED",
            ErrorKind::Unsupported => "UNSUPPORTED",
            ErrorKind::ContractTooOld => "CONTRACT_TOO_OLD",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::Timeout => "TIMEOUT",
            ErrorKind::QueueFull => "QUEUE_FULL",
            ErrorKind::TaskRevoked => "TASK_REVOKED",
            ErrorKind::Backend => "BACKEND",
        }
    }

    /// Whether the same call may succeed if repeated (connection loss and the like).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Backend { retryable: true, .. })
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// Shorthand for a non-retryable [`Error::Backend`].
    pub fn backend(msg: impl std::fmt::Display) -> Self {
        Error::Backend { message: msg.to_string(), retryable: false }
    }

    /// Shorthand for a retryable [`Error::Backend`].
    pub fn backend_retryable(msg: impl std::fmt::Display) -> Self {
        Error::Backend { message: msg.to_string(), retryable: true }
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_kinds() {
        assert_eq!(Error::JobNotFound(JobId::new()).code(), "NOT_FOUND");
        assert_eq!(Error::invalid("x").code(), "INVALID_ARGUMENT");
        assert!(Error::backend_retryable("reset").is_retryable());
        assert!(!Error::backend("syntax").is_retryable());
        let full = Error::QueueFull { queue: "q".into(), pending: 3, max_pending: 3 };
        assert_eq!(full.kind(), ErrorKind::QueueFull);
        assert!(full.to_string().contains("queue q is full"));
        let revoked = Error::TaskRevoked { task: "email.send".into() };
        assert_eq!((revoked.kind(), revoked.code()), (ErrorKind::TaskRevoked, "TASK_REVOKED"));
        assert!(revoked.to_string().contains("email.send"));
    }
}
