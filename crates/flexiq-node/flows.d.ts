// Types of flows (`addFlow`, `getDependencies`, `ctx.childrenValues`): the tree a caller
// passes in and the dependency pages read back. Re-exported by `index.d.ts`, which types the
// Queue methods that take and return them; the addon's own shapes are in `native.d.ts`
// (`FlowNodeInput`, `ChildDependencyRecord`, `DependenciesRecord`), held equal to these by
// `__test__/surface-types.ts`.

import type { EnqueueOptions, JobStatus } from './index';

/** What a flow child's failure (failed, dead or cancelled) does to its parent. */
export type FlowPolicy = 'fail_parent' | 'continue_parent' | 'ignore_dependency' | 'remove_dependency';

/** One node of `addFlow(tree)`: a job, its options, and the children it waits for. */
export interface FlowNode {
  /** Task name. */
  task: string;
  /** Any JSON value (default `null`). */
  payload?: unknown;
  /** Pre-assigned job id (a UUID); one is made when absent. */
  id?: string;
  /** The namespace the node is meant for; when given it must be the queue's own. */
  namespace?: string;
  /** What this node's failure does to its parent (default `'fail_parent'`); refused on the root. */
  onFailure?: FlowPolicy;
  /** Enqueue options; the queue is the node's own. `uniqueKey` and `dedup` are refused. */
  options?: EnqueueOptions;
  /** Jobs this one waits for, each on its own queue. */
  children?: FlowNode[];
}

/** One dependency (child) of a job. */
export interface ChildDependency {
  /** The child's id. */
  id: string;
  /** Its queue. */
  queue: string;
  /** Its task. */
  task: string;
  /** Its status. */
  status: JobStatus;
  /** What its failure does to the parent (`'cancel_dependent'` for a plain `dependsOn` edge). */
  policy: FlowPolicy | 'cancel_dependent';
  /** The JSON-decoded result of a completed child (`null` without one). */
  result: unknown;
  /** The last error of a child that failed; `null` otherwise. */
  error: string | null;
}

/** Which page of a job's dependencies `getDependencies` reads. */
export interface DependenciesOptions {
  /** Only children after this one: the previous page's `nextAfter` (`null`: the first page). */
  after?: string | null;
  /** Page size, 1 to 10,000 (default 100). */
  limit?: number | null;
}

/** One page of a job's dependencies by outcome; pass `nextAfter` back as `after`. */
export interface Dependencies {
  /** Completed children, with their results. */
  processed: ChildDependency[];
  /** Children not finished. */
  unprocessed: ChildDependency[];
  /** Children that failed under `ignore_dependency`. */
  ignored: ChildDependency[];
  /** Children that failed under any other policy. */
  failed: ChildDependency[];
  /** The cursor of the next page; `null` on the last page. */
  nextAfter: string | null;
}
