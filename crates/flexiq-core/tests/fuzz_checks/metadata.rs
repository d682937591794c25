//! Job metadata: `validate_metadata` is the one gate every front door puts metadata text
//! through, and `JobFilter` matches a caller's substring against stored metadata in the stores
//! that filter in memory. Accepted metadata must be a JSON object that survives a re-encode,
//! and matching and fingerprinting must take any text.
//!
//! Input: `metadata text \n filter substring \n error substring`.

use flexiq_core::options::validate_metadata;
use flexiq_core::{EnqueueOptions, JobFilter, NewJob};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let text = f.text();
    let needle = f.text();
    let error = f.opt_text();

    match validate_metadata(&text) {
        Ok(()) => {
            let value: serde_json::Value = serde_json::from_str(&text).expect("accepted metadata is JSON");
            assert!(value.is_object(), "accepted metadata {text:?} is not an object");
            let again = serde_json::to_string(&value).expect("a JSON value encodes");
            assert!(validate_metadata(&again).is_ok(), "re-encoded metadata {again:?} is refused");
        }
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT", "{text:?}: {e}"),
    }
    // The enqueue path gives the same verdict.
    let opts = EnqueueOptions { metadata: Some(text.clone()), ..Default::default() };
    let built = NewJob::build("t", Vec::new(), opts, 0);
    assert_eq!(built.is_ok(), validate_metadata(&text).is_ok(), "{text:?}");

    if let Ok(new) = built {
        let job = stored_job(new, error.clone());
        let filter = JobFilter {
            metadata_contains: Some(needle.clone()),
            error_contains: error,
            ..Default::default()
        };
        assert_eq!(filter.matches(&job), text.contains(&needle), "{needle:?} in {text:?}");
        assert_eq!(filter.fingerprint(), filter.clone().fingerprint());
    }
}

fn stored_job(new: NewJob, last_error: Option<String>) -> flexiq_core::Job {
    flexiq_core::Job {
        id: new.id,
        namespace: "default".into(),
        queue: new.queue,
        task: new.task,
        payload: new.payload,
        priority: new.priority,
        status: flexiq_core::JobStatus::Pending,
        attempt: 0,
        max_retries: new.max_retries,
        backoff: new.backoff,
        created_at: 0,
        run_at: new.run_at,
        started_at: None,
        heartbeat_at: None,
        finished_at: None,
        worker_id: None,
        result: None,
        last_error,
        unique_key: None,
        metadata: new.metadata,
        progress: None,
        timeout_ms: None,
        cancel_requested: false,
        depends_on: new.depends_on,
        group_key: None,
        workflow_run_id: None,
        workflow_stage_id: None,
        workflow_version: None,
        claim_seq: 0,
        stall_count: 0,
    }
}
