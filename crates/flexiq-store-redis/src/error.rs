//! Maps fred and script errors onto `flexiq_core::Error`, in one place.
//!
//! Scripts signal engine-level refusals with error replies whose first word is a
//! `FLEXIQ_<KIND>` code; everything else from the driver is a backend error, retryable when
//! the connection dropped or the server is briefly unable to answer (loading, failover).

use flexiq_core::Error;
use fred::error::{Error as FredError, ErrorKind as FredKind};

/// Converts a driver error into an engine error.
pub(crate) fn map(e: FredError) -> Error {
    let details = e.details().to_string();
    if let Some(pos) = details.find("FLEXIQ_") {
        return script_error(&details[pos..]);
    }
    let transient_reply = ["LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY"]
        .iter()
        .any(|p| details.starts_with(p));
    // fred reports a command it could not write while the connection is down (before a
    // reconnect) with kind `Unknown`; those phrases describe connection state, not the command.
    let lower = details.to_lowercase();
    let driver_transient = [
        "failed to route command",
        "too many failed write attempts",
        "max attempts exceeded",
        "missing response",
        "connection",
    ]
    .iter()
    .any(|p| lower.contains(p));
    let retryable = matches!(
        e.kind(),
        FredKind::IO | FredKind::Timeout | FredKind::Canceled | FredKind::Routing | FredKind::Cluster
    ) || transient_reply
        || driver_transient;
    let message = format!("redis {:?}: {details}", e.kind()).to_lowercase();
    Error::Backend { message, retryable }
}

/// Parses a `FLEXIQ_<KIND> message` reply raised by one of the scripts.
fn script_error(text: &str) -> Error {
    let (code, rest) = text.split_once(' ').unwrap_or((text, ""));
    if code == "FLEXIQ_REVOKED" {
        // The rest is the task name exactly as stored.
        return Error::TaskRevoked { task: rest.to_string() };
    }
    let rest = rest.trim().to_string();
    match code {
        "FLEXIQ_CONFLICT" => Error::Conflict(rest),
        "FLEXIQ_INVALID" => Error::InvalidArgument(rest),
        "FLEXIQ_NOTFOUND" => {
            let id = rest.split_whitespace().nth(2).unwrap_or_default().to_string();
            Error::NotFound { what: "dead letter", id }
        }
        "FLEXIQ_FULL" => {
            let mut parts = rest.splitn(3, ' ');
            let pending = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let max_pending = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let queue = parts.next().unwrap_or_default().to_string();
            Error::QueueFull { queue, pending, max_pending }
        }
        _ => Error::backend(format!("unexpected script reply {text}")),
    }
}

/// A reply of an unexpected shape.
pub(crate) fn shape(what: &str) -> Error {
    Error::backend(format!("unexpected redis reply shape for {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_codes_map_to_kinds() {
        assert_eq!(script_error("FLEXIQ_CONFLICT job x changed").code(), "CONFLICT");
        match script_error("FLEXIQ_REVOKED email send ") {
            Error::TaskRevoked { task } => assert_eq!(task, "email send "),
            other => panic!("{other:?}"),
        }
        match map(FredError::new(FredKind::Unknown, "FLEXIQ_REVOKED billing.charge")) {
            Error::TaskRevoked { task } => assert_eq!(task, "billing.charge"),
            other => panic!("{other:?}"),
        }
        assert_eq!(script_error("FLEXIQ_INVALID dependency x not found").code(), "INVALID_ARGUMENT");
        match script_error("FLEXIQ_FULL 3 3 emails") {
            Error::QueueFull { queue, pending, max_pending } => {
                assert_eq!((queue.as_str(), pending, max_pending), ("emails", 3, 3));
            }
            other => panic!("{other:?}"),
        }
        match script_error("FLEXIQ_NOTFOUND dead letter abc not found") {
            Error::NotFound { id, .. } => assert_eq!(id, "abc"),
            other => panic!("{other:?}"),
        }
        assert_eq!(script_error("FLEXIQ_WHAT x").code(), "BACKEND");
    }

    #[test]
    fn dropped_connections_are_retryable() {
        let e = map(FredError::new(FredKind::IO, "Connection reset by peer"));
        assert!(e.is_retryable());
        let e = map(FredError::new(FredKind::Unknown, "WRONGTYPE Operation against a key"));
        assert!(!e.is_retryable());
        let e = map(FredError::new(FredKind::Unknown, "LOADING Redis is loading the dataset"));
        assert!(e.is_retryable());
        let e = map(FredError::new(FredKind::Unknown, "Failed to route command."));
        assert!(e.is_retryable(), "a command written while reconnecting can be retried");
        let e = map(FredError::new(FredKind::Unknown, "Too many failed write attempts."));
        assert!(e.is_retryable());
    }
}
