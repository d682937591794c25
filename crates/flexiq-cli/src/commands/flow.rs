//! `flexiq flow add FILE|-`: inserts a flow (a tree of jobs across queues, parents waiting on
//! their children) from a JSON file or stdin, and prints the ids in order.
//!
//! The file has the shape the Node SDK's `addFlow` takes: a node is `{ task, payload, id,
//! namespace, onFailure, options, children }` with `options` the Node enqueue options
//! (camelCase; `delay`, `timeout` and `backoff` in seconds, `runAt` Unix ms). The CLI has no
//! payload format of its own, so a payload (any JSON value, `null` when absent) is stored as
//! its JSON text, as the SDKs store theirs. The whole file is read and checked before the
//! store is opened: bad JSON, an unknown key or a bad value exits 2 naming the line or the
//! node, and the engine writes the tree in one transaction or not at all, so a refused flow
//! leaves nothing behind.

use std::io::Read as _;
use std::marker::PhantomData;

use clap::Subcommand;
use flexiq::core::options::DEFAULT_QUEUE;
use flexiq::{Backoff, DedupMode, DedupOptions, EdgePolicy, EnqueueOptions, FlowNode};
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{table, Output};

/// Largest whole number a JSON reader in any SDK keeps exactly (2^53 - 1).
const MAX_SAFE_MS: f64 = 9_007_199_254_740_991.0;

/// `flexiq flow ...`
#[derive(Debug, Subcommand)]
pub enum FlowCmd {
    /// Insert a flow from a JSON tree of jobs (a file, or - for stdin); prints the ids in order.
    Add {
        /// The JSON file, or - to read stdin.
        file: String,
    },
}

/// `T` read from a JSON object only: serde's derived structs also take an array of their
/// fields in order, which would make `["r", null]` a node.
#[derive(Debug)]
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectOnly(PhantomData)).map(Obj)
    }
}

/// One node of the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NodeSpec {
    task: String,
    #[serde(default)]
    payload: Value,
    id: Option<String>,
    namespace: Option<String>,
    on_failure: Option<String>,
    options: Option<Obj<OptionsSpec>>,
    children: Option<Vec<Obj<NodeSpec>>>,
}

/// A node's enqueue options, as the Node SDK names them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OptionsSpec {
    queue: Option<String>,
    priority: Option<i32>,
    delay: Option<f64>,
    run_at: Option<i64>,
    max_retries: Option<u32>,
    backoff: Option<Obj<BackoffSpec>>,
    timeout: Option<f64>,
    unique_key: Option<String>,
    metadata: Option<Value>,
    depends_on: Option<Vec<String>>,
    group_key: Option<String>,
    lifo: Option<bool>,
    dedup: Option<Obj<DedupSpec>>,
}

/// Retry backoff in seconds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BackoffSpec {
    base: Option<f64>,
    max: Option<f64>,
}

/// The `dedup` option (flows refuse it, as the engine says; it is read so the file has the
/// SDK's shape).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DedupSpec {
    id: String,
    mode: String,
    ttl_ms: Option<u64>,
    extend: Option<bool>,
    replace: Option<bool>,
}

/// One job of the flow as printed, in the order of the ids.
#[derive(Debug, Clone, Serialize)]
struct FlowJobView {
    id: String,
    queue: String,
    task: String,
    /// Index (in this list) of the job waiting on this one; `None` for the root.
    parent: Option<usize>,
}

/// What `flow add` prints with `--json`.
#[derive(Debug, Serialize)]
struct FlowView {
    root: String,
    ids: Vec<String>,
    jobs: Vec<FlowJobView>,
}

/// Runs a `flow` subcommand.
pub async fn run(g: &GlobalArgs, cmd: FlowCmd, out: Output) -> CliResult {
    match cmd {
        FlowCmd::Add { file } => add(g, &file, out).await,
    }
}

async fn add(g: &GlobalArgs, file: &str, out: Output) -> CliResult {
    let text = read(file)?;
    let source = if file == "-" { "the flow on stdin".to_string() } else { format!("flow file {file}") };
    let Obj(spec): Obj<NodeSpec> =
        serde_json::from_str(&text).map_err(|e| CliError::invalid(format!("{source}: {e}")))?;
    let mut jobs = Vec::new();
    let tree = node(spec, None, &mut jobs)?;
    let q = open(g, Open::Existing).await?;
    let ids = q.add_flow(tree).await?;
    for (job, id) in jobs.iter_mut().zip(&ids) {
        job.id = id.to_string();
    }
    let view = FlowView { root: jobs[0].id.clone(), ids: jobs.iter().map(|j| j.id.clone()).collect(), jobs };
    out.emit(&view, || print_flow(&view))
}

/// The file's text (stdin for `-`).
fn read(file: &str) -> CliResult<String> {
    if file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::invalid(format!("cannot read the flow from stdin: {e}")))?;
        return Ok(text);
    }
    std::fs::read_to_string(file).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CliError::not_found(format!("flow file {file} does not exist")),
        _ => CliError::other(format!("cannot read flow file {file}: {e}")),
    })
}

/// The engine's node for `spec` (index `jobs.len()` in pre-order), its subtree after it.
fn node(spec: NodeSpec, parent: Option<usize>, jobs: &mut Vec<FlowJobView>) -> CliResult<FlowNode> {
    let index = jobs.len();
    let what = format!("flow node {index} (task {})", spec.task);
    let options = spec.options.map(|Obj(o)| enqueue_options(o, &what)).transpose()?.unwrap_or_default();
    let on_failure = spec.on_failure.as_deref().map(EdgePolicy::parse).transpose()?;
    let payload = serde_json::to_vec(&spec.payload)
        .map_err(|e| CliError::invalid(format!("{what}: payload cannot be encoded: {e}")))?;
    let queue = options.queue.clone().unwrap_or_else(|| DEFAULT_QUEUE.to_string());
    jobs.push(FlowJobView { id: String::new(), queue, task: spec.task.clone(), parent });
    let children = spec
        .children
        .unwrap_or_default()
        .into_iter()
        .map(|Obj(c)| node(c, Some(index), jobs))
        .collect::<CliResult<Vec<_>>>()?;
    Ok(FlowNode {
        id: spec.id,
        namespace: spec.namespace,
        task: spec.task,
        payload,
        options,
        on_failure,
        children,
    })
}

fn enqueue_options(o: OptionsSpec, what: &str) -> CliResult<EnqueueOptions> {
    let secs = |name: &str, v: f64| secs_to_ms(&format!("{what}: {name}"), v);
    let backoff = o
        .backoff
        .map(|Obj(b)| -> CliResult<Backoff> {
            let d = Backoff::default();
            Ok(Backoff {
                base_ms: b.base.map_or(Ok(d.base_ms), |s| secs("backoff.base", s))?,
                max_ms: b.max.map_or(Ok(d.max_ms), |s| secs("backoff.max", s))?,
            })
        })
        .transpose()?;
    if let Some(t) = o.run_at.filter(|t| *t < 0) {
        return Err(CliError::invalid(format!("{what}: runAt {t} must be a Unix ms time, zero or more")));
    }
    let dedup = o
        .dedup
        .map(|Obj(d)| -> CliResult<DedupOptions> {
            Ok(DedupOptions {
                mode: DedupMode::parse(&d.mode)?,
                ttl_ms: d.ttl_ms,
                extend: d.extend.unwrap_or(false),
                replace: d.replace.unwrap_or(false),
                id: d.id,
            })
        })
        .transpose()?;
    Ok(EnqueueOptions {
        queue: o.queue,
        priority: o.priority,
        delay_ms: o.delay.map(|d| secs("delay", d)).transpose()?,
        run_at: o.run_at,
        max_retries: o.max_retries,
        backoff,
        timeout_ms: o.timeout.map(|t| secs("timeout", t)).transpose()?,
        unique_key: o.unique_key,
        metadata: o.metadata.filter(|m| !m.is_null()).map(|m| m.to_string()),
        depends_on: o.depends_on.unwrap_or_default(),
        group_key: o.group_key,
        lifo: o.lifo.unwrap_or(false),
        dedup,
        ..Default::default()
    })
}

/// Seconds (fractions allowed, zero or more) as whole milliseconds.
fn secs_to_ms(what: &str, secs: f64) -> CliResult<u64> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(CliError::invalid(format!(
            "{what} must be a number of seconds, zero or more, got {secs}"
        )));
    }
    let ms = (secs * 1_000.0).round();
    if ms > MAX_SAFE_MS {
        return Err(CliError::invalid(format!("{what} {secs} s is too large")));
    }
    Ok(ms as u64)
}

fn print_flow(v: &FlowView) {
    let mut t = table(["#", "id", "queue", "task", "waited on by"]);
    for (i, j) in v.jobs.iter().enumerate() {
        let parent = j.parent.map_or_else(|| "-".to_string(), |p| format!("#{p}"));
        t.add_row(vec![i.to_string(), j.id.clone(), j.queue.clone(), j.task.clone(), parent]);
    }
    outln!("{t}");
    outln!("added a flow of {} jobs; root job {}", v.jobs.len(), v.root);
}
