//! The one place rusqlite errors become engine errors.

use flexiq_core::Error;
use rusqlite::ErrorCode;

/// Maps a driver error: busy and locked files are retryable, everything else is not.
pub(crate) fn map(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
        {
            Error::backend_retryable(format!("sqlite is busy: {e}"))
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) | rusqlite::Error::SqlInputError { msg, .. }
            if schema_out_of_date(msg) =>
        {
            Error::Conflict(format!(
                "the flexiq schema is missing or out of date ({msg}): run migrate() first"
            ))
        }
        _ => Error::backend(format!("sqlite: {e}")),
    }
}

/// A table or column this build's SQL names is not in the file: a file not (fully) migrated.
fn schema_out_of_date(msg: &str) -> bool {
    msg.starts_with("no such table") || msg.starts_with("no such column")
}

/// `?`-friendly conversion for rusqlite results.
pub(crate) trait SqlResultExt<T> {
    /// Maps the error with [`map`].
    fn db(self) -> flexiq_core::Result<T>;
}

impl<T> SqlResultExt<T> for rusqlite::Result<T> {
    fn db(self) -> flexiq_core::Result<T> {
        self.map_err(map)
    }
}

/// Whether a driver error is a unique-constraint violation.
pub(crate) fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

/// The error every call on a closed handle returns.
pub(crate) fn closed() -> Error {
    Error::Closed("sqlite store handle is closed".into())
}
