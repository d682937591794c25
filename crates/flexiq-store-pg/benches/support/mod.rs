//! What every PostgreSQL bench needs: the server's URL, the wall clock and a no-op job.
#![allow(dead_code)]

use flexiq_core::{EnqueueOptions, NewJob};

/// The server under test: `FLEXIQ_PG_URL`, else the local one.
pub(crate) fn url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// Unix ms now.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A no-op job on `queue`.
pub(crate) fn job(queue: &str) -> NewJob {
    let opts = EnqueueOptions { queue: Some(queue.to_string()), ..Default::default() };
    NewJob::build("noop", b"{}".to_vec(), opts, now_ms()).unwrap()
}
