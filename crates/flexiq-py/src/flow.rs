//! The one conversion of a flow tree from Python to the engine's [`FlowNode`].
//!
//! `Queue.add_flow` (`flexiq/_flow.py`) checks the public tree and hands the native one here:
//! nested dicts with `task`, `payload` (bytes), `id`, `namespace`, `on_failure`, `options`
//! (an enqueue options dict, converted by `crate::options`) and `children` (a list of such
//! dicts). The tree is walked without recursion, as core's `plan_flow` walks it, so a deep
//! chain cannot exhaust the stack, and the walk stops past core's node cap, so a dict that
//! contains itself cannot loop. Every error is `InvalidArgument` naming the node by its path
//! from the root (`root.children[1].children[0]`) and, once known, its task.

use flexiq_core::flow::{EdgePolicy, FlowNode, MAX_FLOW_NODES};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::args::{self, type_name, Bytes, FromArg};
use crate::errors::{core_message, invalid};
use crate::options::enqueue_options;

/// Every key a native flow node may carry.
const NODE_KEYS: [&str; 7] = ["task", "payload", "id", "namespace", "on_failure", "options", "children"];

/// The engine's tree from a native flow tree.
pub(crate) fn flow_tree(root: &Bound<'_, PyAny>) -> PyResult<FlowNode> {
    // Pre-order: every node with its parent's index, children left for the second pass.
    let mut flat: Vec<(FlowNode, Option<usize>)> = Vec::new();
    let mut stack = vec![(root.clone(), "root".to_string(), None::<usize>)];
    while let Some((obj, path, parent)) = stack.pop() {
        if flat.len() == MAX_FLOW_NODES {
            return Err(invalid(format!("a flow holds at most {MAX_FLOW_NODES} jobs")));
        }
        let (node, children) = node_at(&obj, &path)?;
        let index = flat.len();
        for (i, c) in children.into_iter().enumerate().rev() {
            stack.push((c, format!("{path}.children[{i}]"), Some(index)));
        }
        flat.push((node, parent));
    }
    // Bottom-up: the last node in pre-order has all its descendants attached already (they
    // come after it), in reverse, so it is put right and handed to its parent, which precedes it.
    while let Some((mut node, parent)) = flat.pop() {
        node.children.reverse();
        match parent {
            Some(p) => flat[p].0.children.push(node),
            None => return Ok(node),
        }
    }
    Err(invalid("a flow needs a root node"))
}

/// One node without its children, and the children to visit.
fn node_at<'py>(obj: &Bound<'py, PyAny>, path: &str) -> PyResult<(FlowNode, Vec<Bound<'py, PyAny>>)> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| invalid(format!("flow node {path} must be a dict, not {}", type_name(obj))))?;
    for k in d.keys() {
        let k = String::from_arg(&format!("flow node {path}: a key"), &k)?;
        if !NODE_KEYS.contains(&k.as_str()) {
            return Err(invalid(format!(
                "flow node {path}: unknown key {k:?} (expected {})",
                NODE_KEYS.join(", ")
            )));
        }
    }
    let task: String = args::item(d, "task", &format!("flow node {path}: the task name"))?
        .ok_or_else(|| invalid(format!("flow node {path} needs a task name")))?;
    let at = format!("flow node {path} (task {task})");
    let payload =
        args::item::<Bytes>(d, "payload", &format!("{at}: payload"))?.map_or_else(Vec::new, |b| b.0);
    let on_failure = text(d, "on_failure", &at)?
        .map(|p| EdgePolicy::parse(&p).map_err(|e| invalid(format!("{at}: {}", core_message(e)))))
        .transpose()?;
    let options = args::item::<Bound<'_, PyDict>>(d, "options", &format!("{at}: options"))?;
    // Every error of the options is about the input: it becomes InvalidArgument naming the node.
    let options = enqueue_options(options.as_ref()).map_err(|e| {
        Python::attach(|py| {
            let m = e.value(py).to_string();
            invalid(format!("{at}: {}", m.strip_prefix("invalid argument: ").unwrap_or(&m)))
        })
    })?;
    let children = args::item::<Bound<'_, PyList>>(d, "children", &format!("{at}: children"))?
        .map_or_else(Vec::new, |c| c.iter().collect());
    let node = FlowNode {
        id: text(d, "id", &at)?,
        namespace: text(d, "namespace", &at)?,
        task,
        payload,
        options,
        on_failure,
        children: Vec::new(),
    };
    Ok((node, children))
}

/// A string value, `None` when absent or `None`.
fn text(d: &Bound<'_, PyDict>, key: &str, at: &str) -> PyResult<Option<String>> {
    args::item(d, key, &format!("{at}: {key}"))
}
