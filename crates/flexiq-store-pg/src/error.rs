//! The one place driver and pool errors become [`flexiq_core::Error`].
//!
//! Connection loss (a closed socket, an administrator terminating the backend, a server
//! restart), serialization failures and deadlocks are retryable backend errors: repeating the
//! call may succeed. Everything else is a non-retryable backend error naming what failed.

use deadpool_postgres::PoolError;
use flexiq_core::Error;
use tokio_postgres::error::SqlState;

/// SQLSTATE classes and codes after which repeating the same call may succeed.
fn is_retryable_state(code: &SqlState) -> bool {
    let c = code.code();
    c.starts_with("08") // connection exception
        || c.starts_with("57P") // admin_shutdown, crash_shutdown, cannot_connect_now
        || c == "40001" // serialization_failure
        || c == "40P01" // deadlock_detected
        || c == "53300" // too_many_connections
        || c == "55P03" // lock_not_available
}

/// Maps a driver error; `what` names the operation (and ids) for the message. A job id the
/// table already holds (a unique violation on `jobs_pkey`, as an enqueue re-sent after a lost
/// reply or a flow's preset id makes) is `Conflict` naming the id, as the other stores say it.
pub(crate) fn pg(what: &str, e: tokio_postgres::Error) -> Error {
    if let Some(conflict) = e.as_db_error().and_then(job_id_taken) {
        return conflict;
    }
    let retryable = match e.code() {
        Some(code) => is_retryable_state(code),
        None => is_io_like(&e),
    };
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    };
    let message = format!("postgres {what}: {detail}");
    if retryable {
        Error::backend_retryable(message)
    } else {
        Error::backend(message)
    }
}

/// The `Conflict` for a unique violation on the jobs' primary key, naming the id from the
/// server's detail (`Key (id)=(<uuid>) already exists.`).
fn job_id_taken(db: &tokio_postgres::error::DbError) -> Option<Error> {
    if db.code() != &SqlState::UNIQUE_VIOLATION || db.constraint() != Some("jobs_pkey") {
        return None;
    }
    let detail = db.detail().unwrap_or_default();
    let id =
        detail.strip_prefix("Key (id)=(").and_then(|rest| rest.split_once(')')).map(|(id, _)| id.to_string());
    Some(Error::Conflict(match id {
        Some(id) => format!("job {id} already exists"),
        None => format!("a job of the batch already exists ({})", db.message()),
    }))
}

/// Whether an error without SQLSTATE is about the connection itself.
fn is_io_like(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<std::io::Error>() {
            return true;
        }
        src = s.source();
    }
    let text = e.to_string();
    text.contains("connection") || text.contains("closed") || text.contains("unexpected EOF")
}

/// Maps a pool checkout error.
pub(crate) fn pool(e: PoolError) -> Error {
    match e {
        PoolError::Backend(e) => pg("connect", e),
        PoolError::Closed => Error::Closed("postgres store pool is closed".into()),
        PoolError::Timeout(t) => Error::backend_retryable(format!("postgres pool timed out ({t:?})")),
        other => Error::backend_retryable(format!("postgres pool: {other}")),
    }
}

/// A row value the store wrote itself but cannot read back (corruption or a foreign writer).
pub(crate) fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::backend(format!("postgres store holds an unreadable value: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_states() {
        for c in ["08006", "08003", "57P01", "40001", "40P01", "53300"] {
            assert!(is_retryable_state(&SqlState::from_code(c)), "{c}");
        }
        for c in ["23505", "42P01", "22P02", "42501"] {
            assert!(!is_retryable_state(&SqlState::from_code(c)), "{c}");
        }
    }
}
