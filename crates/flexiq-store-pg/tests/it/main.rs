//! PostgreSQL-specific integration tests: migrations and roles, query plans, limits across
//! pools, LISTEN/NOTIFY reconnects, connection loss, multiple worker processes and LIFO in
//! every claim path, dedup keys of purged jobs, and scheduler rounds that skip a refused slot.

mod bulk;
mod chaos;
mod chaos_workflow;
mod close;
mod common;
mod connect;
mod counts;
mod dedup;
mod events_horizon;
mod events_migrate;
mod events_paths;
mod events_wake;
mod explain;
mod fair;
mod limits;
mod listen;
mod migrate;
mod multiprocess;
mod reschedule;
mod revoke;
mod schedulers;
mod upgrade;
