//! Deduplication modes: what an enqueue does when its dedup key is already held.
//!
//! A unique key (`unique_key`) is the simplest rule: one live job per key. Producers of bursty
//! events need more: ignore repeats for a while (`throttle`), keep only the newest of a burst
//! (`debounce` with `replace`), or keep at most one job running and one queued behind it with
//! the newest payload (`keep_last_if_active`). The key is held in a per-namespace dedup record
//! (key, holder job, expiry); every store reads that record and the holder's status in the
//! enqueue transaction, asks [`plan_dedup`] what to do and writes exactly that, so the four
//! modes behave the same on every store.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::JobId;
use crate::job::JobStatus;
use crate::options::validate_name;

/// Longest dedup TTL accepted (ms): one year.
pub const MAX_DEDUP_TTL_MS: u64 = 365 * 24 * 3_600_000;

/// How a held dedup key treats a new enqueue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupMode {
    /// Ignored while the holder is not finished.
    #[default]
    Simple,
    /// Ignored for `ttl_ms` after the holder was enqueued, whatever its status.
    Throttle,
    /// Ignored for `ttl_ms`; `extend` restarts the window on each duplicate and `replace` gives
    /// a holder that has not started the duplicate's payload and options.
    Debounce,
    /// At most one running and one waiting job: a duplicate replaces the waiting holder's
    /// payload, or queues behind a running holder.
    KeepLastIfActive,
}

impl DedupMode {
    /// Every mode, in a stable order.
    pub const ALL: [DedupMode; 4] =
        [DedupMode::Simple, DedupMode::Throttle, DedupMode::Debounce, DedupMode::KeepLastIfActive];

    /// The mode's name as the SDKs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            DedupMode::Simple => "simple",
            DedupMode::Throttle => "throttle",
            DedupMode::Debounce => "debounce",
            DedupMode::KeepLastIfActive => "keep_last_if_active",
        }
    }

    /// Parses a mode name (`keepLastIfActive` is accepted for JavaScript callers).
    pub fn parse(s: &str) -> Result<DedupMode> {
        match s {
            "simple" => Ok(DedupMode::Simple),
            "throttle" => Ok(DedupMode::Throttle),
            "debounce" => Ok(DedupMode::Debounce),
            "keep_last_if_active" | "keepLastIfActive" => Ok(DedupMode::KeepLastIfActive),
            other => Err(Error::invalid(format!(
                "unknown dedup mode {other:?}: expected simple, throttle, debounce or keep_last_if_active"
            ))),
        }
    }
}

impl std::fmt::Display for DedupMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `dedup` option of an enqueue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DedupOptions {
    /// The dedup key, scoped to the namespace.
    pub id: String,
    /// The mode (default `simple`).
    #[serde(default)]
    pub mode: DedupMode,
    /// Window length (ms): required by `throttle` and `debounce`, refused by the others.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// `debounce` only: each duplicate restarts the window.
    #[serde(default)]
    pub extend: bool,
    /// `debounce` only: a duplicate replaces the payload and options of a holder that has not
    /// started.
    #[serde(default)]
    pub replace: bool,
}

impl DedupOptions {
    /// Checks the key, that `ttl_ms` is given (and positive) exactly where the mode needs it,
    /// and that `extend` / `replace` are only asked of `debounce`.
    pub fn validate(&self) -> Result<()> {
        validate_name("dedup id", &self.id)?;
        let key = &self.id;
        let mode = self.mode;
        match (mode, self.ttl_ms) {
            (DedupMode::Throttle | DedupMode::Debounce, None) => {
                return Err(Error::invalid(format!("dedup {key}: mode {mode} needs ttl_ms")));
            }
            (DedupMode::Throttle | DedupMode::Debounce, Some(0)) => {
                return Err(Error::invalid(format!("dedup {key}: ttl_ms must be positive")));
            }
            (DedupMode::Throttle | DedupMode::Debounce, Some(t)) if t > MAX_DEDUP_TTL_MS => {
                return Err(Error::invalid(format!(
                    "dedup {key}: ttl_ms {t} is over the limit of {MAX_DEDUP_TTL_MS}"
                )));
            }
            (DedupMode::Simple | DedupMode::KeepLastIfActive, Some(_)) => {
                return Err(Error::invalid(format!(
                    "dedup {key}: mode {mode} takes no ttl_ms (throttle and debounce do)"
                )));
            }
            _ => {}
        }
        if mode != DedupMode::Debounce && (self.extend || self.replace) {
            return Err(Error::invalid(format!(
                "dedup {key}: extend and replace belong to mode debounce, not {mode}"
            )));
        }
        Ok(())
    }

    /// When a key taken at `now` stops holding on its own (`None`: while the holder lives).
    pub fn expires_at(&self, now: i64) -> Option<i64> {
        self.ttl_ms.map(|t| now.saturating_add(i64::try_from(t).unwrap_or(i64::MAX)))
    }
}

/// A stored dedup record, with the holder's status read in the same transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupHold {
    /// The job holding the key.
    pub job_id: JobId,
    /// When the hold lapses by itself (Unix ms); `None` holds while the job is unfinished.
    pub expires_at: Option<i64>,
    /// The holder's status; `None` when the job is gone.
    pub holder_status: Option<JobStatus>,
}

impl DedupHold {
    /// Whether the key still holds at `now`: before its expiry, or (without one) while the
    /// holder exists and is not finished.
    pub fn is_live(&self, now: i64) -> bool {
        match (self.expires_at, self.holder_status) {
            (_, None) => false,
            (Some(at), Some(_)) => at > now,
            (None, Some(st)) => !st.is_terminal(),
        }
    }
}

/// What an enqueue with a dedup key writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DedupPlan {
    /// Insert the new job; it takes the key with this expiry.
    Insert {
        /// The record's new expiry.
        expires_at: Option<i64>,
    },
    /// Insert nothing: the enqueue returns the holder's id, deduplicated.
    Ignore {
        /// The holder.
        holder: JobId,
        /// Move the record's expiry here (debounce with `extend`).
        extend_to: Option<i64>,
        /// Overwrite the holder's payload, priority, run_at, retries, backoff, timeout and
        /// metadata with the new job's (its id, queue and task stay).
        replace: bool,
    },
    /// Insert the new job `waiting` behind the running holder (an edge with
    /// [`crate::flow::EdgePolicy::IgnoreDependency`], so it runs however the holder ends); the
    /// new job takes the key.
    InsertBehind {
        /// The running holder.
        holder: JobId,
    },
}

/// Decides an enqueue carrying `opts` against the current record `hold` at `now`.
pub fn plan_dedup(opts: &DedupOptions, hold: Option<&DedupHold>, now: i64) -> DedupPlan {
    let fresh = DedupPlan::Insert { expires_at: opts.expires_at(now) };
    let Some(h) = hold.filter(|h| h.holder_status.is_some()) else { return fresh };
    let status = h.holder_status.unwrap_or(JobStatus::Completed);
    let not_started = matches!(status, JobStatus::Pending | JobStatus::Waiting);
    let ignore = |extend_to, replace| DedupPlan::Ignore { holder: h.job_id.clone(), extend_to, replace };
    match opts.mode {
        DedupMode::Simple if !status.is_terminal() => ignore(None, false),
        DedupMode::Throttle if h.is_live(now) => ignore(None, false),
        DedupMode::Debounce if h.is_live(now) => {
            ignore(opts.extend.then(|| opts.expires_at(now)).flatten(), opts.replace && not_started)
        }
        DedupMode::KeepLastIfActive if not_started => ignore(None, true),
        DedupMode::KeepLastIfActive if matches!(status, JobStatus::Running | JobStatus::Suspended) => {
            DedupPlan::InsertBehind { holder: h.job_id.clone() }
        }
        _ => fresh,
    }
}

/// Checks a dedup key given to `dedup_job_id` or `delete_dedup_key`.
pub fn validate_dedup_key(key: &str) -> Result<()> {
    validate_name("dedup id", key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(mode: DedupMode, ttl: Option<u64>) -> DedupOptions {
        DedupOptions { id: "k".into(), mode, ttl_ms: ttl, extend: false, replace: false }
    }

    fn hold(status: Option<JobStatus>, expires_at: Option<i64>) -> DedupHold {
        DedupHold { job_id: JobId::from_trusted("h"), expires_at, holder_status: status }
    }

    #[test]
    fn options_need_a_ttl_exactly_where_the_mode_uses_one() {
        assert!(opts(DedupMode::Simple, None).validate().is_ok());
        assert!(opts(DedupMode::Simple, Some(5)).validate().is_err());
        assert!(opts(DedupMode::Throttle, None).validate().is_err());
        assert!(opts(DedupMode::Throttle, Some(0)).validate().is_err());
        assert!(opts(DedupMode::Debounce, Some(MAX_DEDUP_TTL_MS + 1)).validate().is_err());
        assert!(opts(DedupMode::Debounce, Some(10)).validate().is_ok());
        let mut o = opts(DedupMode::Throttle, Some(10));
        o.replace = true;
        assert!(o.validate().unwrap_err().to_string().contains("debounce"));
        let mut o = opts(DedupMode::Simple, None);
        o.id = String::new();
        assert!(o.validate().is_err());
        assert!(DedupMode::parse("sometimes").unwrap_err().to_string().contains("sometimes"));
        for m in DedupMode::ALL {
            assert_eq!(DedupMode::parse(m.as_str()).unwrap(), m);
        }
    }

    #[test]
    fn simple_holds_while_the_holder_is_unfinished() {
        let o = opts(DedupMode::Simple, None);
        assert!(matches!(plan_dedup(&o, None, 0), DedupPlan::Insert { expires_at: None }));
        let live = hold(Some(JobStatus::Running), None);
        assert!(matches!(plan_dedup(&o, Some(&live), 0), DedupPlan::Ignore { replace: false, .. }));
        let done = hold(Some(JobStatus::Completed), None);
        assert!(matches!(plan_dedup(&o, Some(&done), 0), DedupPlan::Insert { .. }));
        assert!(matches!(plan_dedup(&o, Some(&hold(None, None)), 0), DedupPlan::Insert { .. }));
    }

    #[test]
    fn throttle_holds_for_its_window_even_after_the_holder_finished() {
        let o = opts(DedupMode::Throttle, Some(100));
        let h = hold(Some(JobStatus::Completed), Some(150));
        assert!(matches!(plan_dedup(&o, Some(&h), 149), DedupPlan::Ignore { extend_to: None, .. }));
        assert_eq!(plan_dedup(&o, Some(&h), 150), DedupPlan::Insert { expires_at: Some(250) });
    }

    #[test]
    fn debounce_extends_and_replaces_only_an_unstarted_holder() {
        let mut o = opts(DedupMode::Debounce, Some(100));
        o.extend = true;
        o.replace = true;
        let h = hold(Some(JobStatus::Pending), Some(150));
        assert_eq!(
            plan_dedup(&o, Some(&h), 120),
            DedupPlan::Ignore { holder: h.job_id.clone(), extend_to: Some(220), replace: true }
        );
        let running = hold(Some(JobStatus::Running), Some(150));
        assert!(matches!(plan_dedup(&o, Some(&running), 120), DedupPlan::Ignore { replace: false, .. }));
        assert!(matches!(plan_dedup(&o, Some(&h), 150), DedupPlan::Insert { expires_at: Some(250) }));
    }

    #[test]
    fn keep_last_replaces_the_waiting_one_and_queues_behind_the_running_one() {
        let o = opts(DedupMode::KeepLastIfActive, None);
        let waiting = hold(Some(JobStatus::Waiting), None);
        assert!(matches!(plan_dedup(&o, Some(&waiting), 0), DedupPlan::Ignore { replace: true, .. }));
        let running = hold(Some(JobStatus::Running), None);
        assert!(matches!(plan_dedup(&o, Some(&running), 0), DedupPlan::InsertBehind { .. }));
        let dead = hold(Some(JobStatus::Dead), None);
        assert!(matches!(plan_dedup(&o, Some(&dead), 0), DedupPlan::Insert { .. }));
    }

    #[test]
    fn a_hold_without_expiry_lapses_with_its_holder() {
        assert!(hold(Some(JobStatus::Pending), None).is_live(0));
        assert!(!hold(Some(JobStatus::Failed), None).is_live(0));
        assert!(!hold(None, Some(100)).is_live(0));
        assert!(hold(Some(JobStatus::Failed), Some(100)).is_live(99));
    }
}
