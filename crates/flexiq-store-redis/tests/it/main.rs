//! Integration tests of the Redis store's own entry points (connect, namespaces, clock,
//! close, wake-ups) and the crash test against a private server.

#[path = "../support/harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod harness;

mod admin;
mod combined;
mod entry;
mod events;
mod flows;
mod functions;
mod legacy;
mod plain;
mod reliability;
mod reschedule;
mod revoke;
mod schedulers;
mod stalls;
mod start;
mod workflow;
mod workflow_dead;
