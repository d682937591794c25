//! Job records as Redis hashes (short field names, payloads and results as raw bytes) and
//! helpers to read replies.

use flexiq_core::{Backoff, EdgePolicy, Error, Job, JobId, JobStatus, Result};
use fred::types::Value;

use crate::error::shape;

/// The fields the state machine needs, in the order [`STATE_FIELDS`] lists them.
pub(crate) const STATE_FIELDS: [&str; 17] =
    ["st", "a", "mr", "sa", "bb", "bm", "v", "q", "t", "d", "cr", "cs", "sc", "r", "dp", "ss", "wr"];

/// A job's state as read for a transition.
#[derive(Debug, Clone)]
pub(crate) struct StateRow {
    pub(crate) id: String,
    pub(crate) status: JobStatus,
    pub(crate) attempt: u32,
    pub(crate) max_retries: u32,
    pub(crate) started_at: Option<i64>,
    /// Claims so far ([`claim_seq`]).
    pub(crate) claim_seq: u64,
    /// Lapsed leases recovered so far ([`stall_count`]).
    pub(crate) stall_count: u32,
    /// The claim sequence of the newest attempt whose start a heartbeat reported (`ss`; 0 when
    /// none did): an attempt it lags never left its worker's prefetch buffer as far as the
    /// store knows.
    pub(crate) start_seq: u64,
    /// Whether it is a workflow stage (`wr`, its run id, is set): a stage starts when its host
    /// dequeues it, with no buffer in between.
    pub(crate) workflow_stage: bool,
    /// When it is due (negative for a LIFO job).
    pub(crate) run_at: i64,
    pub(crate) backoff: Backoff,
    pub(crate) version: String,
    pub(crate) queue: String,
    pub(crate) task: String,
    /// Its dependency edges: each dependency's id and the edge's policy ([`edges`]).
    pub(crate) edges: Vec<(String, EdgePolicy)>,
    pub(crate) cancel_requested: bool,
}

impl StateRow {
    /// Parses an `HMGET` of [`STATE_FIELDS`]; `None` when the job does not exist.
    pub(crate) fn parse(id: &str, v: Value) -> Result<Option<Self>> {
        let f = v.into_array();
        if f.len() != STATE_FIELDS.len() {
            return Err(shape("job state"));
        }
        let Some(st) = text(&f[0]) else { return Ok(None) };
        let attempt = int(&f[1]).unwrap_or(0) as u32;
        Ok(Some(StateRow {
            id: id.to_string(),
            status: status(&st)?,
            attempt,
            max_retries: int(&f[2]).unwrap_or(0) as u32,
            started_at: int(&f[3]),
            backoff: Backoff {
                base_ms: int(&f[4]).unwrap_or(0) as u64,
                max_ms: int(&f[5]).unwrap_or(0) as u64,
            },
            version: text(&f[6]).unwrap_or_default(),
            queue: text(&f[7]).unwrap_or_default(),
            task: text(&f[8]).unwrap_or_default(),
            edges: edges(text(&f[9]).as_deref(), text(&f[14]).as_deref())?,
            cancel_requested: text(&f[10]).as_deref() == Some("1"),
            claim_seq: claim_seq(&f[11], attempt),
            stall_count: stall_count(&f[12]),
            start_seq: int(&f[15]).map_or(0, |c| c.max(0) as u64),
            workflow_stage: text(&f[16]).is_some_and(|r| !r.is_empty()),
            run_at: int(&f[13]).unwrap_or(0),
        }))
    }

    /// Whether `fence` names the attempt this job is running now.
    pub(crate) fn holds(&self, fence: flexiq_core::Fence) -> bool {
        self.status == JobStatus::Running
            && self.attempt == fence.attempt
            && self.started_at == Some(fence.started_at)
            && self.claim_seq == fence.claim_seq
    }

    /// Whether the current attempt started: a heartbeat reported it, or the job is a workflow
    /// stage (started by its dequeue).
    pub(crate) fn start_reported(&self) -> bool {
        self.start_seq == self.claim_seq || self.workflow_stage
    }

    /// The state-machine view.
    pub(crate) fn state(&self) -> flexiq_core::JobState {
        flexiq_core::JobState {
            id: self.id.clone(),
            status: self.status,
            attempt: self.attempt,
            max_retries: self.max_retries,
            started_at: self.started_at,
            claim_seq: self.claim_seq,
            stall_count: self.stall_count,
            backoff: self.backoff,
        }
    }
}

/// A job's claim sequence from its `cs` field. Every claim writes it (enqueue does not), so a
/// job never claimed has none and reads 0, its attempt. A job hash written before the field
/// existed reads its attempt too, the value the SQL stores migrate their column to: the next
/// claim then continues from there, and fences minted before the upgrade keep matching.
pub(crate) fn claim_seq(v: &Value, attempt: u32) -> u64 {
    int(v).map_or(u64::from(attempt), |c| c.max(0) as u64)
}

/// A job's stall count from its `sc` field: written only when a lapsed lease is recovered
/// and removed when the job is started over, so a job that never stalled (or a hash written
/// before the field existed) has none and reads 0.
pub(crate) fn stall_count(v: &Value) -> u32 {
    int(v).map_or(0, |c| u32::try_from(c.max(0)).unwrap_or(u32::MAX))
}

/// The edges stored in a job's `d` (dependency ids) and `dp` (their policy codes, aligned with
/// `d`). A hash without `dp`, or one listing fewer codes than ids, reads
/// [`EdgePolicy::CancelDependent`] for the rest: the meaning every edge had before edges
/// carried policies.
pub(crate) fn edges(d: Option<&str>, dp: Option<&str>) -> Result<Vec<(String, EdgePolicy)>> {
    let mut codes = dp.unwrap_or_default().split(',').filter(|c| !c.is_empty());
    split_ids(d)
        .into_iter()
        .map(|id| {
            let policy = match codes.next() {
                Some(c) => EdgePolicy::from_code(c.parse().map_err(|_| {
                    Error::backend(format!("bad dependency policy code {c:?} on an edge to job {id}"))
                })?)?,
                None => EdgePolicy::CancelDependent,
            };
            Ok((id, policy))
        })
        .collect()
}

/// The `d` and `dp` values storing `edges` (`None` for an empty list; `dp` `None` when every
/// edge is plain), as `prelude.lua`'s `edge_fields` writes them.
pub(crate) fn edge_fields(edges: &[(String, EdgePolicy)]) -> (Option<String>, Option<String>) {
    if edges.is_empty() {
        return (None, None);
    }
    let d = edges.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>().join(",");
    let plain = edges.iter().all(|(_, p)| *p == EdgePolicy::CancelDependent);
    let dp = (!plain).then(|| edges.iter().map(|(_, p)| p.code().to_string()).collect::<Vec<_>>().join(","));
    (Some(d), dp)
}

fn split_ids(s: Option<&str>) -> Vec<String> {
    s.map(|s| s.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect()).unwrap_or_default()
}

/// A status from its stored code.
pub(crate) fn status(code: &str) -> Result<JobStatus> {
    let c: u8 = code.parse().map_err(|_| Error::backend(format!("bad status code {code:?}")))?;
    JobStatus::from_code(c)
}

/// A reply value as text (`None` for nil).
pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Integer(i) => Some(i.to_string()),
        Value::Double(d) => Some(d.to_string()),
        Value::Boolean(b) => Some(if *b { "1".into() } else { "0".into() }),
        other => other.as_bytes().map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}

/// A reply value as an integer (`None` for nil or non-numbers).
pub(crate) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Double(d) => Some(*d as i64),
        Value::Null => None,
        other => {
            let t = text(other)?;
            t.parse::<i64>().ok().or_else(|| t.parse::<f64>().ok().map(|f| f as i64))
        }
    }
}

/// A reply value as raw bytes.
pub(crate) fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        Value::Integer(i) => Some(i.to_string().into_bytes()),
        other => other.as_bytes().map(<[u8]>::to_vec),
    }
}

/// A reply array of strings.
pub(crate) fn strings(v: Value) -> Vec<String> {
    v.into_array().iter().filter_map(text).collect()
}

/// Every field a [`Job`] is built from, in the order `prelude.lua`'s `JOB_FIELDS` lists
/// them (claims return an `HMGET` of these, so no field names travel with each job).
pub(crate) const JOB_FIELDS: [&str; 29] = [
    "q", "t", "p", "pr", "st", "a", "mr", "bb", "bm", "c", "r", "sa", "hb", "f", "w", "res", "e", "u", "m",
    "pg", "to", "cr", "d", "g", "wr", "ws", "cs", "wv", "sc",
];

/// Parses an `HGETALL` reply of a job hash; `None` when empty.
pub(crate) fn job_from_hash(namespace: &str, id: &str, v: Value) -> Result<Option<Job>> {
    let flat = match v {
        Value::Map(m) => {
            let mut out = Vec::new();
            for (k, val) in m.inner() {
                out.push(Value::from(k));
                out.push(val);
            }
            out
        }
        other => other.into_array(),
    };
    if flat.is_empty() || (flat.len() == 1 && flat[0].is_null()) {
        return Ok(None);
    }
    let mut fields: Vec<Value> = vec![Value::Null; JOB_FIELDS.len()];
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        let Some(k) = k.as_bytes() else { continue };
        if let Some(pos) = JOB_FIELDS.iter().position(|f| f.as_bytes() == k) {
            fields[pos] = v;
        }
    }
    job_from_fields(namespace, id, fields)
}

/// Builds a job from values in [`JOB_FIELDS`] order; `None` when the job does not exist.
pub(crate) fn job_from_fields(namespace: &str, id: &str, mut f: Vec<Value>) -> Result<Option<Job>> {
    if f.len() != JOB_FIELDS.len() {
        return Err(shape("job fields"));
    }
    let Some(st) = text(&f[4]) else { return Ok(None) };
    let payload = bytes_owned(f[2].take()).unwrap_or_default();
    let result = bytes_owned(f[15].take());
    let t = |i: usize| text(&f[i]);
    let i = |i: usize| int(&f[i]);
    let attempt = i(5).unwrap_or(0) as u32;
    Ok(Some(Job {
        id: JobId::from_trusted(id),
        namespace: namespace.to_string(),
        queue: t(0).unwrap_or_default(),
        task: t(1).unwrap_or_default(),
        payload,
        priority: i(3).unwrap_or(0) as i32,
        status: status(&st)?,
        attempt,
        max_retries: i(6).unwrap_or(0) as u32,
        backoff: Backoff { base_ms: i(7).unwrap_or(0) as u64, max_ms: i(8).unwrap_or(0) as u64 },
        created_at: i(9).unwrap_or(0),
        run_at: i(10).unwrap_or(0),
        started_at: i(11),
        heartbeat_at: i(12),
        finished_at: i(13),
        worker_id: t(14),
        result,
        last_error: t(16),
        unique_key: t(17),
        metadata: t(18),
        progress: t(19).and_then(|p| p.parse().ok()),
        timeout_ms: i(20).map(|v| v as u64),
        cancel_requested: t(21).as_deref() == Some("1"),
        depends_on: split_ids(t(22).as_deref()).into_iter().map(JobId::from_trusted).collect(),
        group_key: t(23),
        workflow_run_id: t(24),
        workflow_stage_id: t(25),
        workflow_version: t(27),
        claim_seq: claim_seq(&f[26], attempt),
        stall_count: stall_count(&f[28]),
    }))
}

/// A reply value as raw bytes, without copying a bulk string.
fn bytes_owned(v: Value) -> Option<Vec<u8>> {
    match v {
        Value::Bytes(b) => Some(b.to_vec()),
        other => bytes(&other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_reads_job_fields_in_the_same_order() {
        let prelude = include_str!("lua/prelude.lua");
        let start = prelude.find("local JOB_FIELDS = {").expect("JOB_FIELDS in prelude.lua");
        let list = &prelude[start..];
        let list = &list[list.find('{').unwrap() + 1..list.find('}').unwrap()];
        let lua: Vec<&str> = list.split(',').map(|f| f.trim().trim_matches('\'')).collect();
        assert_eq!(lua, JOB_FIELDS);
    }

    #[test]
    fn edges_without_policies_read_as_plain() {
        let plain = edges(Some("a,b"), None).unwrap();
        assert_eq!(
            plain,
            vec![("a".into(), EdgePolicy::CancelDependent), ("b".into(), EdgePolicy::CancelDependent)]
        );
        let mixed = edges(Some("a,b,c"), Some("3,1")).unwrap();
        assert_eq!(mixed[0].1, EdgePolicy::IgnoreDependency);
        assert_eq!(mixed[1].1, EdgePolicy::FailParent);
        assert_eq!(mixed[2].1, EdgePolicy::CancelDependent, "a missing code reads 0");
        assert_eq!(edge_fields(&mixed), (Some("a,b,c".into()), Some("3,1,0".into())));
        assert_eq!(edge_fields(&plain), (Some("a,b".into()), None));
        assert_eq!(edge_fields(&[]), (None, None));
        assert!(edges(Some("a"), Some("9")).is_err());
        assert!(edges(Some("a"), Some("x")).unwrap_err().to_string().contains("job a"));
    }

    #[test]
    fn parses_a_job_hash() {
        let flat: Vec<Value> = [
            ("q", "mail"),
            ("t", "send"),
            ("p", "hi"),
            ("pr", "2"),
            ("st", "1"),
            ("a", "1"),
            ("mr", "3"),
            ("c", "10"),
            ("r", "10"),
            ("sa", "12"),
            ("d", "a,b"),
            ("cr", "1"),
            ("wv", "v3"),
        ]
        .into_iter()
        .flat_map(|(k, v)| [Value::from(k), Value::from(v)])
        .collect();
        let j = job_from_hash("ns", "id1", Value::Array(flat)).unwrap().unwrap();
        assert_eq!(
            (j.queue.as_str(), j.status, j.attempt, j.started_at),
            ("mail", JobStatus::Running, 1, Some(12))
        );
        assert_eq!(j.payload, b"hi");
        assert_eq!(j.depends_on.len(), 2);
        assert!(j.cancel_requested);
        assert_eq!(j.workflow_version.as_deref(), Some("v3"));
        assert!(job_from_hash("ns", "x", Value::Array(vec![])).unwrap().is_none());
    }
}
