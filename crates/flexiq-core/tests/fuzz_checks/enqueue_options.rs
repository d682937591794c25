//! Enqueue options and dedup: `EnqueueOptions` arrive as JSON (a stored scheduler's
//! template, an SDK's options object) and `NewJob::build` is the one gate that accepts them.
//! A job it builds must pass the store-side `NewJob::validate` and batch check unchanged, its
//! `run_at` must follow the delay, `run_at` or LIFO asked for, and for its dedup options the
//! table a server-side store looks plans up in must agree with `plan_dedup` in every hold.
//!
//! Input: `task \n now \n holder status code (>= 8: gone) \n hold expiry (empty: none) \n
//! options JSON (the rest)`.

use flexiq_core::dedup::{plan_dedup, DedupHold};
use flexiq_core::dedup_table::{lookup, plan_letter, plan_table};
use flexiq_core::store::{is_lifo, lifo_run_at, EnqueueRequest};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let task = f.text();
    let now = f.i64();
    let holder_status = JobStatus::from_code(f.u64() as u8).ok();
    let expires_at = f.opt_i64();
    let Ok(opts) = serde_json::from_slice::<EnqueueOptions>(&f.rest()) else { return };

    let job = match NewJob::build(&task, b"{}".to_vec(), opts.clone(), now) {
        Ok(job) => job,
        Err(e) => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{opts:?}: {e}");
            return;
        }
    };
    job.validate().unwrap_or_else(|e| panic!("built job of {opts:?} fails validation: {e}"));
    let batch = EnqueueRequest { jobs: vec![job.clone()], max_pending: None, now };
    batch.validate().unwrap_or_else(|e| panic!("built job of {opts:?} fails the batch check: {e}"));

    let want_run_at = match (opts.lifo, opts.delay_ms, opts.run_at) {
        (true, ..) => lifo_run_at(now),
        (false, Some(d), _) => now + d as i64,
        (false, None, Some(at)) => at,
        (false, None, None) => now,
    };
    assert_eq!(job.run_at, want_run_at, "{opts:?} at {now}");
    assert!(!opts.lifo || is_lifo(job.run_at));
    assert_eq!(job.depends_on.len(), opts.depends_on.len());

    if let Some(d) = &job.dedup {
        d.validate().expect("a built job's dedup options are valid");
        let expiry = d.expires_at(now);
        assert_eq!(expiry.is_some(), d.ttl_ms.is_some());
        assert!(expiry.is_none_or(|e| e >= now));
        let table = plan_table(d);
        let hold = DedupHold { job_id: JobId::from_trusted("holder"), expires_at, holder_status };
        assert_eq!(
            lookup(&table, holder_status, expires_at, now),
            plan_letter(&plan_dedup(d, Some(&hold), now)),
            "{d:?} holder {holder_status:?} expiring {expires_at:?} at {now}"
        );
    }
}
