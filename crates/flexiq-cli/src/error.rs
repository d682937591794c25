//! What a command can fail with, and the exit code each failure maps to.
//!
//! Scripts branch on the exit code rather than on the message, so every engine
//! [`ErrorKind`] lands on one documented code (see `docs/cli.md`), and usage mistakes caught
//! by the argument parser share the code of an invalid argument.

use flexiq::ErrorKind;

/// Exit code of a command that succeeded.
pub const EXIT_OK: i32 = 0;
/// Exit code of any failure not listed below (backend down, timeout, demo check failed).
pub const EXIT_OTHER: i32 = 1;
/// Exit code of a usage error or an invalid argument (unknown command, bad cursor, bad rate).
pub const EXIT_INVALID: i32 = 2;
/// Exit code when the job, dead letter or setting named does not exist.
pub const EXIT_NOT_FOUND: i32 = 3;
/// Exit code when the current state refuses the operation (conflict, superseded, queue full).
pub const EXIT_CONFLICT: i32 = 4;
/// Exit code when the store or this build cannot do the operation.
pub const EXIT_UNSUPPORTED: i32 = 5;
/// Exit code when the storage's contract floor is above this build's level.
pub const EXIT_CONTRACT_TOO_OLD: i32 = 6;

/// A failed command: a one-line message and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// One line, lowercase, naming the ids involved.
    pub message: String,
    /// The process exit code (one of the `EXIT_*` constants).
    pub code: i32,
}

impl CliError {
    /// An invalid argument (exit code 2).
    pub fn invalid(message: impl Into<String>) -> Self {
        CliError { message: message.into(), code: EXIT_INVALID }
    }

    /// Something named does not exist (exit code 3).
    pub fn not_found(message: impl Into<String>) -> Self {
        CliError { message: message.into(), code: EXIT_NOT_FOUND }
    }

    /// Any other failure (exit code 1).
    pub fn other(message: impl Into<String>) -> Self {
        CliError { message: message.into(), code: EXIT_OTHER }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// The exit code for an engine error kind.
pub fn exit_code_for(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::InvalidArgument => EXIT_INVALID,
        ErrorKind::NotFound => EXIT_NOT_FOUND,
        ErrorKind::Conflict | ErrorKind::Superseded | ErrorKind::QueueFull | ErrorKind::TaskRevoked => {
            EXIT_CONFLICT
        }
        ErrorKind::Unsupported => EXIT_UNSUPPORTED,
        ErrorKind::ContractTooOld => EXIT_CONTRACT_TOO_OLD,
        _ => EXIT_OTHER,
    }
}

impl From<flexiq::core::Error> for CliError {
    fn from(e: flexiq::core::Error) -> Self {
        CliError { code: exit_code_for(e.kind()), message: e.to_string() }
    }
}

impl From<flexiq::Error> for CliError {
    fn from(e: flexiq::Error) -> Self {
        let code = e.kind().map_or(EXIT_OTHER, exit_code_for);
        CliError { code, message: e.to_string() }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::other(format!("i/o error: {e}"))
    }
}

/// The result of a command.
pub type CliResult<T = ()> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_kinds_map_to_distinct_codes() {
        let code = |e: flexiq::core::Error| CliError::from(e).code;
        assert_eq!(code(flexiq::core::Error::invalid("x")), EXIT_INVALID);
        assert_eq!(code(flexiq::core::Error::JobNotFound(flexiq::JobId::new())), EXIT_NOT_FOUND);
        assert_eq!(code(flexiq::core::Error::Conflict("x".into())), EXIT_CONFLICT);
        assert_eq!(code(flexiq::core::Error::Unsupported("x".into())), EXIT_UNSUPPORTED);
        assert_eq!(code(flexiq::core::Error::ContractTooOld { floor: 9, level: 1 }), EXIT_CONTRACT_TOO_OLD);
        assert_eq!(code(flexiq::core::Error::backend("down")), EXIT_OTHER);
    }

    #[test]
    fn job_outcomes_are_other_failures() {
        let e = flexiq::Error::JobCancelled { job_id: flexiq::JobId::new(), error: None };
        assert_eq!(CliError::from(e).code, EXIT_OTHER);
    }
}
