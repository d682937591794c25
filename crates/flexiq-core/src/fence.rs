//! Fences: the (attempt, started_at) stamp that makes every ack conditional.
//!
//! A claim stamps both; every complete / fail / suspend / defer / progress write must name the
//! same pair and find the job still `running`, or it is [`AckOutcome::Superseded`] and nothing
//! is written. A worker presumed dead can therefore never overwrite the attempt that replaced it.

use serde::{Deserialize, Serialize};

/// The stamp of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fence {
    /// The attempt number the claim assigned (1-based).
    pub attempt: u32,
    /// When the claim started the attempt (Unix ms).
    pub started_at: i64,
}

/// What a fenced write achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckOutcome {
    /// The write applied.
    Acknowledged,
    /// The job moved on (re-claimed, requeued, cancelled, deleted); nothing was written.
    Superseded,
}

impl AckOutcome {
    /// Lower-case name for SDKs.
    pub fn as_str(self) -> &'static str {
        match self {
            AckOutcome::Acknowledged => "acknowledged",
            AckOutcome::Superseded => "superseded",
        }
    }
}
