'use strict';
// The workflow view of a Queue: `queue.workflowJobs(options)` and the `WorkflowJobs` it
// returns, the job queue a workflow engine drives (the spec's JobQueue, camelCase). Mirrors
// the runtime's queue/workflow.rs; `workflowJobs` is installed on Queue.prototype by
// lib/queue.cjs.
//
// The addon does the work; this layer reshapes what crosses it: payloads JSON-encoded in and
// decoded out (the addon decodes them), `Date`s to Unix ms in and Unix ms to `Date`s out, a
// fence's `startedAt` likewise, absent optional fields as `null` (out) and `null` options as
// absent (in), and option objects checked against their sets in options.cjs so a misspelt
// key is an error.

const { native } = require('./base.cjs');
const { callSync, callAsync, invalid } = require('../errors.cjs');
const { encode, duration, options } = require('../args.cjs');

/** Lets `queue.workflowJobs` hand the addon's view to the constructor. */
const MADE = Symbol('flexiq.workflowJobs');

/** A time given as a `Date` or Unix ms, as Unix ms (`undefined` stays when not `required`). */
function time(what, v, required) {
  if (v === undefined && !required) return undefined;
  if (v instanceof Date) {
    const t = v.getTime();
    if (Number.isNaN(t)) throw invalid(`${what} is an invalid Date`);
    return t;
  }
  if (typeof v === 'number') return v;
  throw invalid(`${what} must be a Date (or Unix ms), got ${v === null ? 'null' : typeof v}`);
}

/** A copy of an option object without its `null` values (the addon takes absent ones). */
function withoutNulls(o) {
  if (o === undefined) return undefined;
  const out = {};
  for (const [k, v] of Object.entries(o)) if (v !== null) out[k] = v;
  return out;
}

const date = (ms) => (ms === undefined || ms === null ? null : new Date(ms));
const orNull = (v) => (v === undefined ? null : v);

/** A record from the addon with `Date` times and `null` for what it lacks. */
function record(r) {
  return {
    id: r.id,
    queue: r.queue,
    workflowRunId: r.workflowRunId,
    workflowId: r.workflowId,
    stageId: r.stageId,
    definitionVersion: orNull(r.definitionVersion),
    groupKey: orNull(r.groupKey),
    status: r.status,
    attempt: r.attempt,
    maxAttempts: r.maxAttempts,
    workerId: orNull(r.workerId),
    lockedAt: date(r.lockedAt),
    startedAt: date(r.startedAt),
    nextPollAt: date(r.nextPollAt),
    lastError: orNull(r.lastError),
    payload: orNull(r.payload),
    createdAt: date(r.createdAt),
    updatedAt: date(r.updatedAt),
  };
}

/** A fence from the addon, `startedAt` a `Date`. */
function fenceOut(f) {
  return { jobId: f.jobId, attempt: f.attempt, startedAt: new Date(f.startedAt), claimSeq: f.claimSeq };
}

/** A caller's fence for the addon (`undefined`/`null`: unfenced), `startedAt` as Unix ms. */
function fenceIn(f) {
  const o = options('fence', f, 'fence');
  if (o === undefined) return undefined;
  return { jobId: o.jobId, attempt: o.attempt, startedAt: time('fence.startedAt', o.startedAt, true), claimSeq: o.claimSeq };
}

/** One stage of `enqueueParallel` for the addon. */
function jobSpec(j, i) {
  const what = `enqueueParallel jobs[${i}]`;
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw invalid(`${what} must be an object`);
  options(what, j, 'workflowJob');
  const out = withoutNulls(j);
  out.payload = encode(`payload of ${what}`, j.payload);
  if (out.nextPollAt !== undefined) out.nextPollAt = time(`${what}.nextPollAt`, out.nextPollAt, true);
  return out;
}

/** Checked `dequeue` options. */
function dequeueOptions(opts) {
  const o = withoutNulls(options('dequeue options', opts, 'dequeue'));
  if (o === undefined || o.serves === undefined) return o;
  if (!Array.isArray(o.serves)) throw invalid('dequeue serves must be an array of { workflowId, definitionVersion }');
  o.serves = o.serves.map((s, i) => {
    if (s === null || typeof s !== 'object') throw invalid(`dequeue serves[${i}] must be an object`);
    return withoutNulls(options(`dequeue serves[${i}]`, s, 'workflowServes'));
  });
  return o;
}

/** The job queue of a workflow engine over one queue of a flexiq store. */
class WorkflowJobs {
  #native;

  constructor(token, nativeView) {
    if (token !== MADE) throw new TypeError('WorkflowJobs is made by queue.workflowJobs(options)');
    this.#native = nativeView;
  }

  /** The dotted payload path the fairness cap groups by, or `null` when fairness is off. */
  get fairnessGroupBy() {
    return orNull(this.#native.fairnessGroupBy);
  }

  /** Most running jobs per fairness group across every worker, or `null` without a cap. */
  get fairnessCap() {
    return orNull(this.#native.fairnessCap);
  }

  /** The queue the view enqueues to and claims from. */
  get queueName() {
    return this.#native.queueName;
  }

  /** The id stamped on the jobs this view claims. */
  get workerId() {
    return this.#native.workerId;
  }

  /**
   * Offers a host's worker id; a view configured with its own `workerId` keeps it. Returns
   * the id the view stamps from now on. Synchronous.
   */
  adoptWorkerId(workerId) {
    return callSync(() => this.#native.adoptWorkerId(workerId));
  }

  /** Enqueues stages in one transaction, replacing each (run, stage) pair's row; the ids in order. */
  enqueueParallel(jobs) {
    return callAsync(() => {
      if (!Array.isArray(jobs)) throw invalid('enqueueParallel takes an array of { workflowRunId, workflowId, stageId, ... }');
      return this.#native.enqueueParallel(jobs.map(jobSpec));
    });
  }

  /** Claims one job: `{ job, fence }`, or `null` when none is claimable. */
  async dequeue(opts) {
    const d = await callAsync(() => this.#native.dequeue(dequeueOptions(opts)));
    return d === null || d === undefined ? null : { job: record(d.job), fence: fenceOut(d.fence) };
  }

  /** Marks a job completed: `"acknowledged"`, or `"superseded"` when the fence lost. */
  complete(jobId, fence) {
    return callAsync(() => this.#native.complete(jobId, fenceIn(fence)));
  }

  /** Fails the attempt; retried while attempts remain only when `shouldRetry` (default `false`). */
  fail(jobId, error, shouldRetry, fence) {
    return callAsync(() => this.#native.fail(jobId, error, shouldRetry ?? undefined, fenceIn(fence)));
  }

  /** Suspends the job until `nextPollAt`. */
  suspend(jobId, nextPollAt, fence) {
    return callAsync(() => this.#native.suspend(jobId, time('nextPollAt', nextPollAt, true), fenceIn(fence)));
  }

  /** Gives a claimed job back until `nextPollAt` without counting the attempt. */
  defer(jobId, nextPollAt, reason, fence) {
    return callAsync(() => this.#native.defer(jobId, time('nextPollAt', nextPollAt, true), reason, fenceIn(fence)));
  }

  /** Refreshes a running job's lease. */
  touchJob(jobId) {
    return callAsync(() => this.#native.touchJob(jobId));
  }

  /** Releases running jobs whose lease is older than `staleThresholdMs` (default 60,000); how many. */
  releaseStaleJobs(staleThresholdMs) {
    return callAsync(() => this.#native.releaseStaleJobs(duration('staleThresholdMs', staleThresholdMs, 'ms') ?? undefined));
  }

  /** Fails running jobs claimed more than `absoluteTimeoutMs` ago, heartbeats or not; how many. */
  expireRunawayJobs(absoluteTimeoutMs) {
    return callAsync(() => this.#native.expireRunawayJobs(duration('absoluteTimeoutMs', absoluteTimeoutMs, 'ms', true)));
  }

  /** Cancels the run's jobs that have not started; how many. */
  cancelByRun(workflowRunId) {
    return callAsync(() => this.#native.cancelByRun(workflowRunId));
  }

  /** Deletes the job rows of these stages of the run, any status; how many. */
  deleteByRunAndStages(workflowRunId, stageIds) {
    return callAsync(() => this.#native.deleteByRunAndStages(workflowRunId, stageIds));
  }

  /** Every job row of the run, any status, oldest first. */
  async getJobsByWorkflowRun(workflowRunId) {
    const rows = await callAsync(() => this.#native.getJobsByWorkflowRun(workflowRunId));
    return rows.map(record);
  }
}

class WorkflowCalls {
  workflowJobs(opts) {
    const o = withoutNulls(options('workflowJobs options', opts, 'workflow'));
    return new WorkflowJobs(MADE, callSync(() => native(this).workflowJobs(o)));
  }
}

module.exports = { WorkflowCalls, WorkflowJobs };
