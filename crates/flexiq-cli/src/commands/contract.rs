//! `flexiq migrate` and `flexiq contract show | raise`: the schema and the contract floor.
//!
//! `migrate` opens the store without auto-migrating so it can report exactly which versions
//! it applied (falling back to migrating on open for a store that refuses that); the floor can only be raised here, and never above this build's own level.

use clap::Subcommand;
use flexiq::{MigrationSummary, Queue, CONTRACT_LEVEL};
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult, EXIT_CONFLICT};
use crate::output::Output;

/// `flexiq contract ...`
#[derive(Debug, Subcommand)]
pub enum ContractCmd {
    /// The storage's contract floor and this build's level.
    Show,
    /// Raise the floor: builds below LEVEL will refuse to open the storage.
    Raise {
        /// The new floor (at most this build's level).
        #[arg(allow_negative_numbers = true)]
        level: i64,
    },
}

fn list(versions: &[u32]) -> String {
    if versions.is_empty() {
        "none".to_string()
    } else {
        versions.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    }
}

/// What `flexiq migrate` prints with `--json`.
#[derive(Debug, Serialize)]
struct MigrateView {
    #[serde(flatten)]
    summary: MigrationSummary,
    /// True when the store refused to open unmigrated storage without migrating, so it was
    /// opened with auto-migration and the versions applied on open are not listed.
    migrated_on_open: bool,
}

/// Opens the store without migrating and migrates it. A store that refuses to open
/// unmigrated storage that way (a conflict) is opened again with auto-migration instead.
async fn open_and_migrate(g: &GlobalArgs) -> CliResult<(Queue, MigrateView)> {
    match open(g, Open::ForMigrate).await {
        Ok(q) => {
            let summary = q.migrate().await?;
            Ok((q, MigrateView { summary, migrated_on_open: false }))
        }
        Err(e) if e.code == EXIT_CONFLICT => {
            let q = open(g, Open::MigrateOnOpen).await?;
            let summary = q.migrate().await?;
            Ok((q, MigrateView { summary, migrated_on_open: true }))
        }
        Err(e) => Err(e),
    }
}

/// Runs `flexiq migrate`.
pub async fn migrate(g: &GlobalArgs, out: Output) -> CliResult {
    let (q, v) = open_and_migrate(g).await?;
    let s = &v.summary;
    out.emit(&v, || {
        if s.schemaless {
            outln!("the {} store keeps no schema: nothing to migrate", q.backend());
        } else if v.migrated_on_open {
            outln!("storage migrated to the current schema as it was opened");
        } else if s.applied.is_empty() && s.workflow_applied.is_empty() {
            outln!("schema already current");
        } else {
            outln!("applied versions: {}", list(&s.applied));
            outln!("applied workflow versions: {}", list(&s.workflow_applied));
        }
        if s.archived_jobs > 0 {
            outln!("archived {} jobs from the backlog", s.archived_jobs);
        }
    })
}

/// Runs a `contract` subcommand.
pub async fn run(g: &GlobalArgs, cmd: ContractCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        ContractCmd::Show => {
            let floor = q.min_contract().await?;
            out.emit(&json!({ "floor": floor, "build_level": CONTRACT_LEVEL }), || {
                outln!("contract floor {floor}; this build speaks level {CONTRACT_LEVEL}");
            })
        }
        ContractCmd::Raise { level } => {
            let floor = q.min_contract().await?;
            if level >= 1 && level < i64::from(floor) {
                return Err(CliError {
                    message: format!("contract floor is already {floor}: raise never lowers it to {level}"),
                    code: EXIT_CONFLICT,
                });
            }
            q.set_min_contract(level).await?;
            let now = q.min_contract().await?;
            out.emit(&json!({ "floor": now, "build_level": CONTRACT_LEVEL }), || {
                outln!("contract floor raised from {floor} to {now}");
            })
        }
    }
}
