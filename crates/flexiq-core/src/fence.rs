//! Fences: the (attempt, started_at, claim_seq) stamp that makes every ack conditional.
//!
//! A claim stamps all three; every complete / fail / suspend / defer / heartbeat / progress
//! write must name the same stamp and find the job still `running`, or it is
//! [`AckOutcome::Superseded`] and nothing is written. A worker presumed dead can therefore never
//! overwrite the attempt that replaced it.
//!
//! `attempt` alone cannot tell claims apart: requeue, defer and suspend give the attempt back,
//! and a re-claim inside the same millisecond stamps the same `started_at`. `claim_seq` counts
//! every claim of the job and is never given back, so each claim's fence is unique.

use serde::{Deserialize, Serialize};

/// The stamp of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fence {
    /// The attempt number the claim assigned (1-based).
    pub attempt: u32,
    /// When the claim started the attempt (Unix ms).
    pub started_at: i64,
    /// The job's claim sequence number at this claim (1-based, never given back).
    pub claim_seq: u64,
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
