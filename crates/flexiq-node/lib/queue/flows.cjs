'use strict';
// Flows of the Queue: inserting a tree of jobs across queues in one transaction, reading a
// parent's children by outcome, and detaching a child. Mirrors the runtime's
// queue/flows.rs; installed on Queue.prototype by lib/queue.cjs.
//
// The tree is walked here without recursion into the list the addon takes (pre-order, each
// node naming its parent's index), so a deep chain cannot exhaust the stack and a tree that
// contains itself stops at the node cap instead of looping.

const { native } = require('./base.cjs');
const { callAsync, invalid } = require('../errors.cjs');
const { encode, integer, jobOptions, options } = require('../args.cjs');

/** Most jobs one flow may hold (the engine's cap). */
const MAX_FLOW_NODES = 10_000;

/** The nodes of `tree` in pre-order, as the addon's `addFlow` takes them. */
function flowNodes(tree) {
  const out = [];
  const stack = [[tree, undefined]];
  while (stack.length > 0) {
    const [node, parent] = stack.pop();
    const index = out.length;
    if (index === MAX_FLOW_NODES) throw invalid(`a flow holds at most ${MAX_FLOW_NODES} jobs`);
    const what = `flow node ${index}`;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      const got = Array.isArray(node) ? 'an array' : node === null ? 'null' : typeof node;
      throw invalid(`${what} must be an object { task, payload, options, children, ... }, got ${got}`);
    }
    options(what, node, 'flowNode');
    if (typeof node.task !== 'string') throw invalid(`${what} needs a task name (a string)`);
    const named = `${what} (task ${node.task})`;
    out.push({
      parent,
      task: node.task,
      payload: encode(`payload of ${named}`, node.payload),
      id: node.id ?? undefined,
      namespace: node.namespace ?? undefined,
      onFailure: node.onFailure ?? undefined,
      options: jobOptions(node.options, `options of ${named}`),
    });
    const children = node.children ?? [];
    if (!Array.isArray(children)) throw invalid(`children of ${named} must be an array`);
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], index]);
  }
  return out;
}

/** A child as the public API has it (`error: null` when it has none). */
function child(c) {
  return { id: c.id, queue: c.queue, task: c.task, status: c.status, policy: c.policy, result: c.result, error: c.error ?? null };
}

class FlowCalls {
  addFlow(tree) {
    return callAsync(() => native(this).addFlow(flowNodes(tree)));
  }

  getDependencies(jobId, opts) {
    return callAsync(async () => {
      const o = options('getDependencies options', opts, 'dependencies');
      const page = o === undefined ? undefined : { after: o.after ?? undefined, limit: integer('limit', o.limit ?? undefined) };
      const d = await native(this).getDependencies(jobId, page);
      return {
        processed: d.processed.map(child),
        unprocessed: d.unprocessed.map(child),
        ignored: d.ignored.map(child),
        failed: d.failed.map(child),
        nextAfter: d.nextAfter ?? null,
      };
    });
  }

  removeChildDependency(childId) {
    return callAsync(() => native(this).removeChildDependency(childId));
  }
}

module.exports = { FlowCalls };
