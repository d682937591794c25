//! What a fault is, which store operations can suffer one, and the record of what was injected.
//!
//! A job queue is only as good as its behaviour when a call goes wrong halfway. The case that
//! matters most is the lost reply: the store committed, the caller saw an error, and whatever
//! the caller does next (retry, give up, let a lease lapse) must still leave every job terminal
//! exactly once. [`Fault::FailAfter`] is that case; [`Fault::FailBefore`] is the plain outage
//! and [`Fault::Delay`] the slow call. A [`FaultPlan`] draws one of them from a seed for every
//! call of a chosen [`Op`], and keeps an [`Injection`] for each fault so a failing seed's
//! report can say what happened to which ids.

mod op;
mod pacer;
mod plan;

pub use op::Op;
pub use pacer::{ClockPacer, Pacer, SleepPacer, YieldPacer};
pub use plan::{FaultPlan, FaultRates};

/// What happens to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call reaches the store and its reply reaches the caller.
    Pass,
    /// The call fails before it reaches the store: nothing is written, the caller sees a
    /// `Backend` error.
    FailBefore {
        /// Whether the error says a retry may help (the runtime retries only those).
        retryable: bool,
    },
    /// The store applies the call, then the reply is lost: the caller sees a `Backend` error
    /// for a change that committed.
    FailAfter {
        /// Whether the error says a retry may help.
        retryable: bool,
    },
    /// The call is held for `ms` milliseconds of the plan's pace (see [`Pacer`]) before it
    /// reaches the store.
    Delay {
        /// How long, in ms.
        ms: u64,
    },
}

impl Fault {
    /// The error a caller sees for this fault on call `call` of `op` about `subject`; `None`
    /// for faults that let the reply through.
    pub(crate) fn error(self, op: Op, call: u64, subject: &str) -> Option<flexiq_core::Error> {
        let (message, retryable) = match self {
            Fault::Pass | Fault::Delay { .. } => return None,
            Fault::FailBefore { retryable } => {
                (format!("injected fault: {op} call {call} ({subject}) failed before reaching the store"), retryable)
            }
            Fault::FailAfter { retryable } => (
                format!("injected fault: the reply to {op} call {call} ({subject}) was lost after the store applied it"),
                retryable,
            ),
        };
        Some(flexiq_core::Error::Backend { message, retryable })
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = |retryable: bool| if retryable { "retryable" } else { "fatal" };
        match self {
            Fault::Pass => f.write_str("pass"),
            Fault::FailBefore { retryable } => write!(f, "fail before commit ({})", kind(*retryable)),
            Fault::FailAfter { retryable } => write!(f, "reply lost after commit ({})", kind(*retryable)),
            Fault::Delay { ms } => write!(f, "delay {ms} ms"),
        }
    }
}

/// One fault that was injected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// The call's number among every call the plan decided on (1, 2, ...).
    pub call: u64,
    /// The operation.
    pub op: Op,
    /// What was done to it.
    pub fault: Fault,
    /// The ids the call was about (jobs, worker), for the report.
    pub subject: String,
    /// For [`Fault::FailAfter`]: whether the store's own reply, which was dropped, was a
    /// success (so the change committed). `None` for other faults.
    pub committed: Option<bool>,
}

impl std::fmt::Display for Injection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{} {} ({}): {}", self.call, self.op, self.subject, self.fault)?;
        match self.committed {
            Some(true) => f.write_str(", store applied it"),
            Some(false) => f.write_str(", store refused it too"),
            None => Ok(()),
        }
    }
}
