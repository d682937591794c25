//! Integration tests of the runtime on the SQLite store: every `Queue` entry point, the
//! worker, fencing, the maintenance services, and crash / shutdown reliability.

mod backends;
mod catalogue;
mod common;
mod connect;
mod events;
mod fence;
mod flows;
mod observe;
mod queue_admin;
mod queue_clean;
mod queue_control;
mod queue_dead;
mod queue_jobs;
mod queue_listing;
mod queue_stats;
mod queue_wait;
mod reliability;
mod reliability_rescue;
mod reschedule;
mod scheduler_failover;
mod schedulers;
mod services;
mod webhooks;
mod worker;
mod workflow;
mod workflow_ahead;
mod zombie;
