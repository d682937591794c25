//! History records as stores read them back: the Redis store keeps dead letters, attempt
//! errors, replays, worker registrations, metric rows and the published retention as JSON
//! text, and the SQL stores keep some of them the same way. Whatever text a row holds, decoding
//! returns a record or an error, and a decoded record survives a re-encode unchanged.
//!
//! Input: one JSON document, tried as each record type. (NaN and infinite floats cannot appear:
//! JSON has no spelling for them.)

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use flexiq_core::contract::MigrationSummary;
use flexiq_core::stats::MetricRow;
use flexiq_core::{
    DeadJob, EffectiveRetention, Job, JobDag, JobError, Lease, LogEntry, Partial, ReplayEntry, Retention,
    WorkerInfo,
};

pub(crate) fn check(data: &[u8]) {
    round_trips::<DeadJob>(data);
    round_trips::<JobError>(data);
    round_trips::<ReplayEntry>(data);
    round_trips::<WorkerInfo>(data);
    round_trips::<MetricRow>(data);
    round_trips::<EffectiveRetention>(data);
    round_trips::<JobDag>(data);
    round_trips::<Partial>(data);
    round_trips::<LogEntry>(data);
    round_trips::<Lease>(data);
    round_trips::<MigrationSummary>(data);
    // JSON need not carry a float bit for bit (serde_json parses without `float_roundtrip`):
    // the progress must come back close, everything else exactly.
    if let Some((job, back)) = decode_twice::<Job>(data) {
        let strip = |j: &Job| Job { progress: None, ..j.clone() };
        assert_eq!(strip(&back), strip(&job));
        if let (Some(a), Some(b)) = (job.progress, back.progress) {
            assert!(
                a == b || (a - b).abs() <= f64::EPSILON * a.abs().max(b.abs()),
                "progress {a} came back {b}"
            );
        }
    }
    if let Some(r) = round_trips::<Retention>(data) {
        // Windows come out in milliseconds whatever a stored document says in seconds.
        let windows = r.windows_ms();
        if r.validate().is_ok() {
            for t in flexiq_core::RetentionTable::ALL {
                assert_eq!(windows.get(t), r.get(t).map(|s| s * 1_000), "{t}");
            }
        }
    }
}

fn round_trips<T: Serialize + DeserializeOwned + PartialEq + Debug>(data: &[u8]) -> Option<T> {
    let (v, back) = decode_twice::<T>(data)?;
    assert_eq!(back, v, "{}", std::any::type_name::<T>());
    Some(v)
}

/// `data` decoded, and decoded again after a re-encode; `None` when `data` is not a `T`.
fn decode_twice<T: Serialize + DeserializeOwned>(data: &[u8]) -> Option<(T, T)> {
    let v: T = serde_json::from_slice(data).ok()?;
    let text = serde_json::to_vec(&v).expect("a decoded record encodes");
    let back: T = serde_json::from_slice(&text).expect("a re-encoded record decodes");
    Some((v, back))
}
