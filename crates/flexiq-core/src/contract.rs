//! The storage contract level and the floor a store keeps.
//!
//! `CONTRACT_LEVEL` is the revision of the storage and wire contract this build speaks. A
//! store records a floor; a build below it refuses to open rather than misread rows, and a
//! floor above this build's own level is refused, since it would lock the caller out.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The contract level this build speaks.
///
/// - 1: the first storage and wire contract.
/// - 2: every claim advances the job's claim sequence and every fenced write checks it. A
///   level-1 build claims without advancing it, so once every process runs level 2, raise the
///   floor to 2 to keep level-1 builds out.
pub const CONTRACT_LEVEL: u32 = 2;

/// Fails with `ContractTooOld` when `floor` is above this build's level.
pub fn check_floor(floor: u32) -> Result<()> {
    if floor > CONTRACT_LEVEL {
        return Err(Error::ContractTooOld { floor, level: CONTRACT_LEVEL });
    }
    Ok(())
}

/// Validates a new floor: between 1 and this build's level.
pub fn validate_new_floor(level: i64) -> Result<u32> {
    if level < 1 {
        return Err(Error::invalid(format!("contract level {level} must be 1 or more")));
    }
    if level > i64::from(CONTRACT_LEVEL) {
        return Err(Error::invalid(format!(
            "contract level {level} is above this build's level {CONTRACT_LEVEL}: raising the floor there would lock this build out"
        )));
    }
    Ok(level as u32)
}

/// What `migrate()` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationSummary {
    /// Versions applied, in order (empty: already current).
    pub applied: Vec<u32>,
    /// Workflow-schema versions applied, in order.
    pub workflow_applied: Vec<u32>,
    /// Rows the one-time backlog sweep moved into the archive.
    pub archived_jobs: u64,
    /// The store keeps no schema (nothing ever to migrate).
    pub schemaless: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors() {
        assert!(check_floor(CONTRACT_LEVEL).is_ok());
        assert_eq!(check_floor(CONTRACT_LEVEL + 1).unwrap_err().code(), "CONTRACT_TOO_OLD");
        assert!(validate_new_floor(0).is_err());
        assert!(validate_new_floor(i64::from(CONTRACT_LEVEL) + 1).is_err());
        assert_eq!(validate_new_floor(1).unwrap(), 1);
    }
}
