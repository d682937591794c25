//! The operations commands, one module per command group.

pub mod contract;
pub mod dashboard;
pub mod dedup;
pub mod deps;
pub mod dlq;
pub mod events;
pub mod flow;
pub mod jobs;
pub mod queue;
pub mod requeue;
pub mod retention;
pub mod schedulers;
pub mod settings;
pub mod stats;
pub mod task;
pub mod view;
pub mod workers;
pub mod workflow;
