//! Integration tests: run the built `flexiq` binary against temporary SQLite files (and, with
//! the `postgres` / `redis` features, a private schema or key prefix on those servers).
//!
//! State is set up through the runtime (enqueue, a short-lived worker, a direct claim) or
//! through the CLI itself, and every command's human and `--json` output is checked, along
//! with the exit code and one-line message of bad arguments.

mod admin;
mod demo;
mod errors;
mod events;
mod fixture;
mod flows;
mod jobs;
mod ops;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "redis")]
mod redis;
mod reschedule;
mod schedulers;
mod stores;
mod workflow;
