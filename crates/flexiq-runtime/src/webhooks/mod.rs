//! Webhooks: job events POSTed, signed, to the URLs operators configure.
//!
//! Systems around a queue want to hear that a job completed or died without polling it or
//! holding a connection to its store. The store already writes every state change to the
//! namespace's events stream in the same transaction as the change, so webhooks are built from
//! three parts that each reuse what the queue has:
//!
//! - hooks are settings, one JSON [`WebhookConfig`] per `webhook:<name>` key ([`config`]), so
//!   the dashboard and every worker see the same hooks;
//! - the elected [`WebhookDispatcher`] of each namespace reads the events after its persisted
//!   cursor and enqueues one delivery job per (hook, event) on the reserved queue
//!   [`QUEUE`] ([`dispatch`]);
//! - every worker runs those jobs with the built-in handler of task [`DELIVER_TASK`]
//!   ([`deliver`]): an HMAC-SHA256-signed POST ([`signature`]) to an address checked not to be
//!   private unless the hook allows it ([`target`]), retried with backoff, dead-lettered when
//!   its retries run out. The delivery jobs and their errors are the delivery log
//!   ([`deliveries`]).
//!
//! A worker runs the dispatcher when it runs maintenance (its `maintenance` config is set);
//! deliveries run on any worker that takes jobs from every queue or lists [`QUEUE`].

pub mod config;
pub mod deliver;
pub mod dispatch;
mod log;
pub mod signature;
mod target;

pub use config::{delete_hook, get_hook, list_hooks, set_hook, WebhookConfig};
pub use deliver::Delivery;
pub use dispatch::{DispatchConfig, DispatchReport, WebhookDispatcher, DISPATCH_LEASE};
pub use log::deliveries;
pub use signature::{sign, verify, SIGNATURE_HEADER};
pub use target::check_target;

pub(crate) use deliver::delivery_handler;
pub(crate) use dispatch::run_dispatcher;

/// The reserved queue delivery jobs run on.
pub const QUEUE: &str = "flexiq.webhooks";

/// The reserved task of a delivery job.
pub const DELIVER_TASK: &str = "flexiq.webhooks.deliver";

/// The settings prefix of hooks: `webhook:<name>`.
pub const HOOK_PREFIX: &str = "webhook:";

/// The settings prefix of each namespace's dispatch cursor: `webhooks:cursor:<namespace>`.
pub const CURSOR_PREFIX: &str = "webhooks:cursor:";
