//! Job records as Redis hashes (short field names, payloads and results as raw bytes) and
//! helpers to read replies.

use std::collections::HashMap;

use flexiq_core::{Backoff, Error, Job, JobId, JobStatus, Result};
use fred::types::Value;

use crate::error::shape;

/// The fields the state machine needs, in the order [`STATE_FIELDS`] lists them.
pub(crate) const STATE_FIELDS: [&str; 11] = ["st", "a", "mr", "sa", "bb", "bm", "v", "q", "t", "d", "cr"];

/// A job's state as read for a transition.
#[derive(Debug, Clone)]
pub(crate) struct StateRow {
    pub(crate) id: String,
    pub(crate) status: JobStatus,
    pub(crate) attempt: u32,
    pub(crate) max_retries: u32,
    pub(crate) started_at: Option<i64>,
    pub(crate) backoff: Backoff,
    pub(crate) version: String,
    pub(crate) queue: String,
    pub(crate) task: String,
    pub(crate) depends_on: Vec<String>,
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
        Ok(Some(StateRow {
            id: id.to_string(),
            status: status(&st)?,
            attempt: int(&f[1]).unwrap_or(0) as u32,
            max_retries: int(&f[2]).unwrap_or(0) as u32,
            started_at: int(&f[3]),
            backoff: Backoff {
                base_ms: int(&f[4]).unwrap_or(0) as u64,
                max_ms: int(&f[5]).unwrap_or(0) as u64,
            },
            version: text(&f[6]).unwrap_or_default(),
            queue: text(&f[7]).unwrap_or_default(),
            task: text(&f[8]).unwrap_or_default(),
            depends_on: split_ids(text(&f[9]).as_deref()),
            cancel_requested: text(&f[10]).as_deref() == Some("1"),
        }))
    }

    /// The state-machine view.
    pub(crate) fn state(&self) -> flexiq_core::JobState {
        flexiq_core::JobState {
            id: self.id.clone(),
            status: self.status,
            attempt: self.attempt,
            max_retries: self.max_retries,
            started_at: self.started_at,
            backoff: self.backoff,
        }
    }
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
    let mut f: HashMap<String, Value> = HashMap::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        if let Some(k) = text(&k) {
            f.insert(k, v);
        }
    }
    let t = |k: &str| f.get(k).and_then(text);
    let i = |k: &str| f.get(k).and_then(int);
    let Some(st) = t("st") else { return Ok(None) };
    Ok(Some(Job {
        id: JobId::from_trusted(id),
        namespace: namespace.to_string(),
        queue: t("q").unwrap_or_default(),
        task: t("t").unwrap_or_default(),
        payload: f.get("p").and_then(bytes).unwrap_or_default(),
        priority: i("pr").unwrap_or(0) as i32,
        status: status(&st)?,
        attempt: i("a").unwrap_or(0) as u32,
        max_retries: i("mr").unwrap_or(0) as u32,
        backoff: Backoff { base_ms: i("bb").unwrap_or(0) as u64, max_ms: i("bm").unwrap_or(0) as u64 },
        created_at: i("c").unwrap_or(0),
        run_at: i("r").unwrap_or(0),
        started_at: i("sa"),
        heartbeat_at: i("hb"),
        finished_at: i("f"),
        worker_id: t("w"),
        result: f.get("res").and_then(bytes),
        last_error: t("e"),
        unique_key: t("u"),
        metadata: t("m"),
        progress: t("pg").and_then(|p| p.parse().ok()),
        timeout_ms: i("to").map(|v| v as u64),
        cancel_requested: t("cr").as_deref() == Some("1"),
        depends_on: split_ids(t("d").as_deref()).into_iter().map(JobId::from_trusted).collect(),
        group_key: t("g"),
        workflow_run_id: t("wr"),
        workflow_stage_id: t("ws"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(job_from_hash("ns", "x", Value::Array(vec![])).unwrap().is_none());
    }
}
