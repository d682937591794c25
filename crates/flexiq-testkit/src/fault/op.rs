//! The store operations a plan may fault: the ones the runtime's worker, rescuer and operator
//! calls depend on for exactly-once outcomes.

/// A faultable store operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `JobStore::enqueue`.
    Enqueue,
    /// `Workflows::upsert_stages`.
    UpsertStages,
    /// `JobStore::claim`.
    Claim,
    /// `Workflows::claim_fair`.
    ClaimFair,
    /// `JobStore::ack`.
    Ack,
    /// `JobStore::heartbeat`.
    Heartbeat,
    /// `JobStore::release_stale`.
    ReleaseStale,
    /// `JobStore::expire_runaway`.
    ExpireRunaway,
    /// `JobStore::requeue`.
    Requeue,
    /// `JobStore::cancel`.
    Cancel,
    /// `JobStore::request_cancel`.
    RequestCancel,
}

impl Op {
    /// Every faultable operation.
    pub const ALL: [Op; 11] = [
        Op::Enqueue,
        Op::UpsertStages,
        Op::Claim,
        Op::ClaimFair,
        Op::Ack,
        Op::Heartbeat,
        Op::ReleaseStale,
        Op::ExpireRunaway,
        Op::Requeue,
        Op::Cancel,
        Op::RequestCancel,
    ];

    /// The store method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Enqueue => "enqueue",
            Op::UpsertStages => "upsert_stages",
            Op::Claim => "claim",
            Op::ClaimFair => "claim_fair",
            Op::Ack => "ack",
            Op::Heartbeat => "heartbeat",
            Op::ReleaseStale => "release_stale",
            Op::ExpireRunaway => "expire_runaway",
            Op::Requeue => "requeue",
            Op::Cancel => "cancel",
            Op::RequestCancel => "request_cancel",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
