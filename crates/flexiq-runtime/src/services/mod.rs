//! Maintenance services, each with a config (`Default`, `validate()`) and a `run_once()` that
//! returns a report, so tests drive them with an injected clock instead of sleeping. The
//! [`Maintainer`] runs them all under one elected cleaner per namespace.

mod archiver;
mod elector;
mod events;
mod maintainer;
mod pruner;
mod rescuer;
mod retention;
mod scheduler;

pub use archiver::{ArchiveConfig, ArchiveReport, Archiver};
pub use elector::{Elector, ElectorConfig, ElectorReport, CLEANER_LEASE, DEFAULT_CLEANER_TTL};
pub use events::{EventTrimConfig, EventTrimReport, EventTrimmer};
pub use maintainer::{Maintainer, MaintenanceConfig, MaintenanceReport, DEFAULT_MAINTENANCE_INTERVAL};
pub use pruner::{WorkerPruneConfig, WorkerPruneReport, WorkerPruner};
pub use rescuer::{RescueConfig, RescueReport, Rescuer, RunawayConfig, RunawayReaper, RunawayReport};
pub use retention::{RetentionReport, RetentionSweepConfig, RetentionSweeper};
pub use scheduler::{SchedulerFireConfig, SchedulerFireReport, SchedulerFirer};

pub(crate) use maintainer::run_maintenance;
