//! The rules every store holds a request to, written once.
//!
//! Stores receive requests from the runtime (which builds jobs through `NewJob::build`) and
//! from callers who assemble `NewJob`s by hand. Each store used to re-check what it cared about,
//! with rules and messages that had drifted apart; now each request type checks itself here and
//! every store calls that one check before touching storage, so a bad request gets the same
//! `InvalidArgument`, naming the same ids, whichever store it reaches.

use std::collections::HashSet;

use crate::dedup::DedupMode;
use crate::error::{Error, Result};
use crate::filter::MAX_PAGE;
use crate::flow::EdgePolicy;
use crate::options::{
    validate_metadata, validate_name, NewJob, MAX_DEPENDENCIES, MAX_PAYLOAD_BYTES, MAX_RETRIES_LIMIT,
};
use crate::store::{ClaimRequest, EnqueueRequest};

impl NewJob {
    /// Checks one job: names, payload size, `run_at` not before the epoch, retry budget,
    /// backoff, timeout, metadata JSON, dependency count, no dependency on itself or listed twice.
    pub fn validate(&self) -> Result<()> {
        let id = &self.id;
        validate_name("queue name", &self.queue)?;
        validate_name("task name", &self.task)?;
        if self.payload.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::invalid(format!(
                "payload of job {id} is {} bytes, over the {MAX_PAYLOAD_BYTES} byte limit",
                self.payload.len()
            )));
        }
        if self.max_retries > MAX_RETRIES_LIMIT {
            return Err(Error::invalid(format!(
                "max_retries {} of job {id} is over the limit of {MAX_RETRIES_LIMIT}",
                self.max_retries
            )));
        }
        self.backoff.validate()?;
        if self.timeout_ms == Some(0) {
            return Err(Error::invalid(format!("timeout of job {id} must be positive")));
        }
        for (what, v) in [
            ("unique key", &self.unique_key),
            ("group key", &self.group_key),
            ("workflow_run_id", &self.workflow_run_id),
            ("stage_id", &self.workflow_stage_id),
            ("definition_version", &self.workflow_version),
        ] {
            if let Some(v) = v {
                validate_name(what, v)?;
            }
        }
        if let Some(m) = &self.metadata {
            validate_metadata(m)?;
        }
        if self.depends_on.len() > MAX_DEPENDENCIES {
            return Err(Error::invalid(format!(
                "job {id} has {} dependencies, over the limit of {MAX_DEPENDENCIES}",
                self.depends_on.len()
            )));
        }
        let mut deps = HashSet::with_capacity(self.depends_on.len());
        for d in &self.depends_on {
            if d == id {
                return Err(Error::invalid(format!("job {id} depends on itself")));
            }
            if !deps.insert(d) {
                return Err(Error::invalid(format!("dependency {d} of job {id} is listed twice")));
            }
        }
        if !self.dep_policies.is_empty() && self.dep_policies.len() != self.depends_on.len() {
            return Err(Error::invalid(format!(
                "job {id} gives {} dependency policies for {} dependencies",
                self.dep_policies.len(),
                self.depends_on.len()
            )));
        }
        if let Some(d) = &self.dedup {
            d.validate()?;
            if self.unique_key.is_some() {
                return Err(Error::invalid(format!(
                    "job {id}: dedup {} and a unique key cannot be given together",
                    d.id
                )));
            }
            if d.mode == DedupMode::KeepLastIfActive && !self.depends_on.is_empty() {
                return Err(Error::invalid(format!(
                    "job {id}: dedup {} in keep_last_if_active cannot also have dependencies",
                    d.id
                )));
            }
        }
        Ok(())
    }
}

impl EnqueueRequest {
    /// Checks a batch: every job valid, no id twice, a dependency inside the batch only on an
    /// earlier job, and an admission cap of at least 1. An empty batch is valid (it writes
    /// nothing).
    pub fn validate(&self) -> Result<()> {
        if self.max_pending == Some(0) {
            return Err(Error::invalid("max_pending must be at least 1"));
        }
        let mut seen = HashSet::with_capacity(self.jobs.len());
        let all: HashSet<_> = self.jobs.iter().map(|j| &j.id).collect();
        for j in &self.jobs {
            j.validate()?;
            for (i, d) in j.depends_on.iter().enumerate() {
                if all.contains(d) && !seen.contains(d) {
                    return Err(Error::invalid(format!(
                        "job {} depends on {d}, which comes later in the batch",
                        j.id
                    )));
                }
                let policy = j.dep_policies.get(i).copied().unwrap_or_default();
                if policy != EdgePolicy::CancelDependent && !seen.contains(d) {
                    return Err(Error::invalid(format!(
                        "job {} gives dependency {d} the policy {policy}, which only a child enqueued earlier in the same batch may carry",
                        j.id
                    )));
                }
            }
            if !seen.insert(&j.id) {
                return Err(Error::invalid(format!("job {} appears twice in one enqueue", j.id)));
            }
        }
        Ok(())
    }
}

impl ClaimRequest {
    /// Checks a claim: a limit between 1 and [`MAX_PAGE`], a valid worker id and queue names.
    pub fn validate(&self) -> Result<()> {
        if self.limit == 0 || self.limit > MAX_PAGE {
            return Err(Error::invalid(format!(
                "claim limit {} must be between 1 and {MAX_PAGE}",
                self.limit
            )));
        }
        validate_name("worker id", &self.worker_id)?;
        for q in &self.queues {
            validate_name("queue name", q)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::EnqueueOptions;

    fn job(task: &str) -> NewJob {
        NewJob::build(task, Vec::new(), EnqueueOptions::default(), 0).unwrap()
    }

    fn batch(jobs: Vec<NewJob>) -> EnqueueRequest {
        EnqueueRequest { jobs, max_pending: None, now: 0 }
    }

    fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        e.to_string()
    }

    #[test]
    fn built_jobs_pass() {
        assert!(job("t").validate().is_ok());
        assert!(batch(vec![job("a"), job("b")]).validate().is_ok());
        assert!(batch(Vec::new()).validate().is_ok());
    }

    #[test]
    fn hand_built_jobs_are_checked_and_named() {
        let mut j = job("t");
        j.task = String::new();
        assert!(msg(j.validate()).contains("task name"));
        let mut j = job("t");
        j.payload = vec![0; MAX_PAYLOAD_BYTES + 1];
        assert!(msg(j.validate()).contains(j.id.as_str()));
        let mut j = job("t");
        j.run_at = crate::store::lifo_run_at(5);
        j.validate().expect("a LIFO job's negative run_at is valid");
        let mut j = job("t");
        j.max_retries = MAX_RETRIES_LIMIT + 1;
        assert!(msg(j.validate()).contains("max_retries"));
        let mut j = job("t");
        j.timeout_ms = Some(0);
        assert!(msg(j.validate()).contains("timeout"));
        let mut j = job("t");
        j.metadata = Some("{not json".into());
        msg(j.validate());
        let mut j = job("t");
        j.depends_on = vec![j.id.clone()];
        assert!(msg(j.validate()).contains("depends on itself"));
        let mut j = job("t");
        let d = job("d").id;
        j.depends_on = vec![d.clone(), d];
        assert!(msg(j.validate()).contains("listed twice"));
    }

    #[test]
    fn batches_refuse_duplicates_forward_references_and_a_zero_cap() {
        let a = job("a");
        assert!(msg(batch(vec![a.clone(), a.clone()]).validate()).contains("appears twice"));
        let mut early = job("early");
        let late = job("late");
        early.depends_on = vec![late.id.clone()];
        assert!(msg(batch(vec![early.clone(), late.clone()]).validate()).contains("comes later"));
        let mut after = job("after");
        after.depends_on = vec![late.id.clone()];
        assert!(batch(vec![late, after]).validate().is_ok());
        let capped = EnqueueRequest { jobs: vec![job("t")], max_pending: Some(0), now: 0 };
        assert!(msg(capped.validate()).contains("max_pending"));
    }

    #[test]
    fn claims_are_checked() {
        let ok = ClaimRequest { queues: vec!["q".into()], limit: 1, worker_id: "w".into(), now: 0 };
        assert!(ok.validate().is_ok());
        assert!(msg(ClaimRequest { limit: 0, ..ok.clone() }.validate()).contains("claim limit 0"));
        assert!(msg(ClaimRequest { limit: MAX_PAGE + 1, ..ok.clone() }.validate()).contains("claim limit"));
        assert!(msg(ClaimRequest { worker_id: String::new(), ..ok.clone() }.validate()).contains("worker id"));
        assert!(msg(ClaimRequest { queues: vec![String::new()], ..ok }.validate()).contains("queue name"));
    }

    #[test]
    fn request_rules_live_here_and_name_what_they_refuse() {
        use crate::store::*;
        let id = job("t").id;
        assert!(msg(ListJobsRequest { filter: Default::default(), limit: 0, offset: 0 }.validate())
            .contains("limit 0"));
        assert!(msg(ListArchivedRequest { limit: 1, offset: u64::MAX }.validate()).contains("offset"));
        assert!(
            msg(DeadLettersAfterRequest { limit: MAX_PAGE + 1, after: None }.validate()).contains("limit")
        );
        assert!(ListJobsAfterRequest { filter: Default::default(), limit: MAX_PAGE, after: None }
            .validate()
            .is_ok());
        let rate = SetRateLimitRequest {
            queue: "q".into(),
            limit: Some(crate::RateLimit { count: 0, per_ms: 1_000 }),
        };
        assert!(msg(rate.validate()).contains("queue q"));
        assert!(
            msg(SetConcurrencyRequest { queue: "q".into(), max: Some(0) }.validate()).contains("at least 1")
        );
        assert!(
            msg(SetConcurrencyRequest { queue: String::new(), max: None }.validate()).contains("queue name")
        );
        for bad in [f64::NAN, f64::INFINITY, -0.5, 100.5] {
            let p = SetProgressRequest {
                id: id.clone(),
                fence: crate::Fence { attempt: 1, started_at: 0, claim_seq: 1 },
                progress: bad,
            };
            assert!(msg(p.validate()).contains(id.as_str()), "{bad}");
        }
        let big = PublishPartialRequest { id: id.clone(), data: vec![0; MAX_PAYLOAD_BYTES + 1], now: 0 };
        assert!(msg(big.validate()).contains(id.as_str()));
        let log = AppendLogRequest { id: id.clone(), level: String::new(), message: "m".into(), now: 0 };
        assert!(msg(log.validate()).contains("log level"));
        let lease = AcquireLeaseRequest { name: "l".into(), holder: "h".into(), ttl_ms: 0, now: 0 };
        assert!(msg(lease.validate()).contains("lease l"));
        let lease = AcquireLeaseRequest { ttl_ms: u64::MAX, ..lease };
        msg(lease.validate());
        assert!(msg(ReleaseLeaseRequest { name: "l".into(), holder: String::new() }.validate())
            .contains("holder"));
        assert!(msg(ArchiveTerminalRequest { cutoff_ms: 0, limit: 0, now: 0 }.validate()).contains("limit"));
        assert!(msg(SetSettingRequest { key: String::new(), value: "v".into() }.validate()).contains("key"));
    }
}
