//! [`plan_dedup`] as a table, for stores that decide dedup inside the server.
//!
//! A store that reads a dedup record and writes the outcome in one server-side step (a Redis
//! script, one PostgreSQL statement) cannot call [`plan_dedup`] between the read and the
//! write. What the plan depends on is small: the holder's status (or that it is gone) and
//! whether the hold has no expiry, one still to come, or one that has come. So the caller
//! sends, per job, the plan for every such state as one letter each ([`plan_table`]), and the
//! server looks up the letter of the state it reads ([`lookup`] is that reading, in Rust). The
//! expiry a new holder takes, and the one an extension moves the hold to, is always
//! `DedupOptions::expires_at(now)`, sent beside the table. No mode's rule is written twice.
//!
//! Letters: `i` insert, `b` insert behind the holder, `g` ignore, `e` ignore and extend, `r`
//! ignore and replace, `x` ignore, extend and replace.

use crate::dedup::{plan_dedup, DedupHold, DedupOptions, DedupPlan};
use crate::id::JobId;
use crate::job::JobStatus;

/// The holder states a table covers, in table order: a gone holder (or no record), then each
/// status by its storage code (slot `code + 1`).
pub fn holder_slots() -> impl Iterator<Item = Option<JobStatus>> {
    std::iter::once(None).chain(JobStatus::ALL.into_iter().map(Some))
}

/// The expiry classes in table order, as holds read at time 0: none, one still to come, one
/// that has come.
const EXPIRIES: [Option<i64>; 3] = [None, Some(1), Some(0)];

/// The letter of a plan.
pub fn plan_letter(plan: &DedupPlan) -> char {
    match plan {
        DedupPlan::Insert { .. } => 'i',
        DedupPlan::InsertBehind { .. } => 'b',
        DedupPlan::Ignore { extend_to: None, replace: false, .. } => 'g',
        DedupPlan::Ignore { extend_to: Some(_), replace: false, .. } => 'e',
        DedupPlan::Ignore { extend_to: None, replace: true, .. } => 'r',
        DedupPlan::Ignore { extend_to: Some(_), replace: true, .. } => 'x',
    }
}

/// What [`plan_dedup`] decides for `opts` in every holder state: three letters per holder
/// slot ([`holder_slots`]), one per expiry class.
pub fn plan_table(opts: &DedupOptions) -> String {
    let holder = JobId::from_trusted("holder");
    let mut out = String::with_capacity(3 * (JobStatus::ALL.len() + 1));
    for status in holder_slots() {
        for expires_at in EXPIRIES {
            let hold = DedupHold { job_id: holder.clone(), expires_at, holder_status: status };
            out.push(plan_letter(&plan_dedup(opts, Some(&hold), 0)));
        }
    }
    out
}

/// The letter `table` gives a holder in `status` (`None`: gone, or no record) whose hold
/// lapses at `expires_at` (`None`: no expiry), read at `now`: the 0-based position
/// `3 * slot + class`, where `slot` is 0 for a gone holder and `code + 1` otherwise, and
/// `class` is 0 without expiry, 1 when it is after `now`, 2 when it has come.
pub fn lookup(table: &str, status: Option<JobStatus>, expires_at: Option<i64>, now: i64) -> char {
    let slot = status.map_or(0, |st| usize::from(st.code()) + 1);
    let class = match expires_at {
        None => 0,
        Some(at) if at > now => 1,
        Some(_) => 2,
    };
    table.as_bytes()[3 * slot + class] as char
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::DedupMode;

    fn options() -> Vec<DedupOptions> {
        let mut out = Vec::new();
        for mode in DedupMode::ALL {
            let ttl_ms = matches!(mode, DedupMode::Throttle | DedupMode::Debounce).then_some(1_000);
            for (extend, replace) in [(false, false), (true, false), (false, true), (true, true)] {
                let o = DedupOptions { id: "k".into(), mode, ttl_ms, extend, replace };
                if o.validate().is_ok() {
                    out.push(o);
                }
            }
        }
        out
    }

    #[test]
    fn the_slots_follow_the_storage_codes() {
        for (i, st) in JobStatus::ALL.iter().enumerate() {
            assert_eq!(usize::from(st.code()), i, "{st:?}");
        }
    }

    #[test]
    fn the_table_gives_the_plan_core_decides_for_every_hold() {
        let now = 5_000;
        for o in options() {
            let table = plan_table(&o);
            assert_eq!(table.len(), 3 * (JobStatus::ALL.len() + 1));
            for status in holder_slots() {
                for expires_at in [None, Some(now - 1), Some(now), Some(now + 1), Some(i64::MAX)] {
                    let hold =
                        DedupHold { job_id: JobId::from_trusted("h"), expires_at, holder_status: status };
                    let want = plan_letter(&plan_dedup(&o, Some(&hold), now));
                    assert_eq!(
                        lookup(&table, status, expires_at, now),
                        want,
                        "{o:?} {status:?} {expires_at:?}"
                    );
                }
            }
            let none = plan_letter(&plan_dedup(&o, None, now));
            assert_eq!(lookup(&table, None, None, now), none, "no record reads as a gone holder");
        }
    }
}
