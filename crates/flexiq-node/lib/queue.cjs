'use strict';
// The public Queue: a thin wrapper over the addon's NativeQueue that JSON-encodes payloads,
// decodes results, maps errors to FlexiqError and keeps the task registry for workers.

const native = require('../native.cjs');
const { FlexiqError, invalid, callSync, callAsync } = require('./errors.cjs');
const { encode, decode, duration, options, jobOptions } = require('./args.cjs');
const { Worker } = require('./worker.cjs');

function retention(value) {
  return options('retention', value, 'retention', 'retention.');
}

function createdRange(f) {
  if (f === undefined) return undefined;
  if (!(f.createdAfter instanceof Date) && !(f.createdBefore instanceof Date)) return f;
  const out = { ...f };
  if (f.createdAfter instanceof Date) out.createdAfter = f.createdAfter.getTime();
  if (f.createdBefore instanceof Date) out.createdBefore = f.createdBefore.getTime();
  return out;
}

/** Lets `Queue.connect` hand an opened native queue to the constructor. */
const OPENED = Symbol('flexiq.opened');

function queueOptions(opts, how) {
  if (opts === undefined || opts === null) throw invalid(`${how} needs options: { dbPath } or { url }`);
  const o = options('queue options', opts, 'queue');
  if (o.retention !== undefined) retention(o.retention);
  return o;
}

class Queue {
  #native;
  #tasks = new Map();
  #workers = new Set();

  /**
   * Opens any store without blocking the event loop: connecting, creating and migrating run
   * on the addon's threads. `{ dbPath }` for an SQLite file, or `{ url }` for
   * `postgres://...`, `redis://...` or `sqlite://...`; plus `namespace`, `autoMigrate`,
   * `maxPending`, `retention` (seconds) and backend tuning.
   */
  static async connect(opts) {
    const o = await callAsync(async () => queueOptions(opts, 'Queue.connect()'));
    const n = await callAsync(() => native.NativeQueue.connect(o));
    return new Queue({ [OPENED]: n });
  }

  /**
   * Opens an SQLite file synchronously (`{ dbPath }` or a `sqlite://` url): a local file
   * opens in milliseconds. PostgreSQL and Redis go through `await Queue.connect(opts)`.
   */
  constructor(opts) {
    if (opts !== null && typeof opts === 'object' && opts[OPENED] !== undefined) {
      this.#native = opts[OPENED];
      return;
    }
    const o = queueOptions(opts, 'new Queue()');
    this.#native = callSync(() => new native.NativeQueue(o));
  }

  /** `"sqlite"`, `"postgres"` or `"redis"`. */
  get backend() {
    return this.#native.backend;
  }

  /** The namespace every call is scoped to. */
  get namespace() {
    return this.#native.namespace;
  }

  /** Whether `close()` was called. */
  get closed() {
    return this.#native.closed;
  }

  /** Releases the connections; later calls throw `CLOSED`. Idempotent. */
  close() {
    return callAsync(() => this.#native.close());
  }

  // ---- producing ----

  enqueue(task, payload, opts) {
    return callAsync(() => this.#native.enqueue(task, encode('payload', payload), jobOptions(opts)));
  }

  enqueueMany(items) {
    return callAsync(() => {
      if (!Array.isArray(items)) throw invalid('enqueueMany takes an array of { task, payload, options }');
      const out = new Array(items.length);
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        if (it === null || typeof it !== 'object') throw invalid(`enqueueMany item ${i} must be an object`);
        options(`enqueueMany item ${i}`, it, 'enqueueItem');
        out[i] = { task: it.task, payload: encode(`payload of item ${i}`, it.payload), options: jobOptions(it.options) };
      }
      return this.#native.enqueueMany(out);
    });
  }

  // ---- jobs ----

  getJob(id) {
    return callSync(() => this.#native.getJob(id));
  }

  getResult(id) {
    return decode(callSync(() => this.#native.getResult(id)));
  }

  async result(id, opts) {
    const o = options('result options', opts, 'wait') ?? {};
    return decode(await callAsync(() => this.#native.result(id, o.timeoutMs, o.pollMs)));
  }

  stream(id, opts) {
    const o = options('stream options', opts, 'wait') ?? {};
    const s = callSync(() => this.#native.stream(id, o.timeoutMs, o.pollMs));
    return partials(s);
  }

  requestCancel(id) {
    return callSync(() => this.#native.requestCancel(id));
  }

  isCancelRequested(id) {
    return callSync(() => this.#native.isCancelRequested(id));
  }

  cancelJob(id) {
    return callSync(() => this.#native.cancelJob(id));
  }

  requeueJob(id) {
    return callSync(() => this.#native.requeueJob(id));
  }

  listJobs(filter) {
    return callAsync(() => this.#native.listJobs(options('listJobs filter', filter, 'listFilter')));
  }

  listJobsFiltered(filter) {
    return callAsync(() =>
      this.#native.listJobsFiltered(createdRange(options('listJobsFiltered filter', filter, 'listFilterWide'))),
    );
  }

  listJobsAfter(filter, after) {
    return page(callAsync(() => this.#native.listJobsAfter(options('listJobsAfter filter', filter, 'listFilter'), after)));
  }

  listJobsFilteredAfter(filter, after) {
    return page(
      callAsync(() =>
        this.#native.listJobsFilteredAfter(
          createdRange(options('listJobsFilteredAfter filter', filter, 'listFilterWide')),
          after,
        ),
      ),
    );
  }

  getJobErrors(id) {
    return callAsync(() => this.#native.getJobErrors(id));
  }

  replayJob(id) {
    return callAsync(() => this.#native.replayJob(id));
  }

  replay(id) {
    return this.replayJob(id);
  }

  getReplayHistory(id) {
    return callAsync(() => this.#native.getReplayHistory(id));
  }

  replayHistory(id) {
    return this.getReplayHistory(id);
  }

  jobDag(id) {
    return callAsync(() => this.#native.jobDag(id));
  }

  listArchived(limit, offset) {
    return callAsync(() => this.#native.listArchived(limit, offset));
  }

  listArchivedAfter(limit, after) {
    return page(callAsync(() => this.#native.listArchivedAfter(limit, after)));
  }

  // ---- stats and dead letters ----

  stats() {
    return callAsync(() => this.#native.stats());
  }

  statsByQueue(queue) {
    return callAsync(() => this.#native.statsByQueue(queue));
  }

  statsAllQueues() {
    return callAsync(() => this.#native.statsAllQueues());
  }

  getMetrics(sinceMs, task) {
    return callAsync(() => this.#native.getMetrics(sinceMs, task));
  }

  countPendingByQueue(queue) {
    return callSync(() => this.#native.countPendingByQueue(queue));
  }

  deadLetters(limit, offset) {
    return callAsync(() => this.#native.deadLetters(limit, offset));
  }

  deadLettersByTask(taskName, limit, offset) {
    return callAsync(() => this.#native.deadLettersByTask(taskName, limit, offset));
  }

  deadLettersAfter(limit, after) {
    return page(callAsync(() => this.#native.deadLettersAfter(limit, after)));
  }

  retryDead(deadId) {
    return callAsync(() => this.#native.retryDead(deadId));
  }

  deleteDead(deadId) {
    return callAsync(() => this.#native.deleteDead(deadId));
  }

  purgeDead(olderThanMs) {
    return callAsync(() => this.#native.purgeDead(duration('olderThanMs', olderThanMs, 'ms', true)));
  }

  purgeDeadByTask(taskName) {
    return callAsync(() => this.#native.purgeDeadByTask(taskName));
  }

  // ---- control, cleanup, retention, settings, schema ----

  pauseQueue(queue) {
    callSync(() => this.#native.pauseQueue(queue));
  }

  resumeQueue(queue) {
    callSync(() => this.#native.resumeQueue(queue));
  }

  listPausedQueues() {
    return callSync(() => this.#native.listPausedQueues());
  }

  purgeCompleted(olderThanMs) {
    return callAsync(() => this.#native.purgeCompleted(duration('olderThanMs', olderThanMs, 'ms', true)));
  }

  effectiveRetention() {
    return callSync(() => this.#native.effectiveRetention());
  }

  dryRunRetention(windows) {
    return callAsync(() => this.#native.dryRunRetention(retention(windows)));
  }

  getSetting(key) {
    return callSync(() => this.#native.getSetting(key));
  }

  setSetting(key, value) {
    callSync(() => this.#native.setSetting(key, value));
  }

  setSettingIf(key, expected, value) {
    return callSync(() => this.#native.setSettingIf(key, expected, value));
  }

  deleteSetting(key) {
    return callSync(() => this.#native.deleteSetting(key));
  }

  listSettings() {
    return callSync(() => this.#native.listSettings());
  }

  migrate() {
    return callAsync(() => this.#native.migrate());
  }

  minContract() {
    return callSync(() => this.#native.minContract());
  }

  setMinContract(level) {
    callSync(() => this.#native.setMinContract(level));
  }

  // ---- limits, purges, revocation, metrics, workers ----

  setQueueRateLimit(queue, rateLimit) {
    callSync(() => this.#native.setQueueRateLimit(queue, rateLimit));
  }

  clearQueueRateLimit(queue) {
    callSync(() => this.#native.clearQueueRateLimit(queue));
  }

  setQueueConcurrency(queue, maxConcurrent) {
    callSync(() => this.#native.setQueueConcurrency(queue, maxConcurrent));
  }

  clearQueueConcurrency(queue) {
    callSync(() => this.#native.clearQueueConcurrency(queue));
  }

  queueConfig(queue) {
    const c = callSync(() => this.#native.queueConfig(queue));
    return { paused: c.paused, rateLimit: c.rateLimit ?? null, concurrency: c.concurrency ?? null };
  }

  purge(queue) {
    return callAsync(() => this.#native.purge(queue));
  }

  purgeQueue(queue) {
    return this.purge(queue);
  }

  revokeTask(taskName) {
    callSync(() => this.#native.revokeTask(taskName));
  }

  unrevokeTask(taskName) {
    return callSync(() => this.#native.unrevokeTask(taskName));
  }

  revokedTasks() {
    return callSync(() => this.#native.revokedTasks());
  }

  metrics(taskName, sinceMs) {
    return callAsync(() => this.#native.metrics(taskName, duration('sinceMs', sinceMs, 'ms')));
  }

  metricsTimeseries(taskName, sinceMs, bucketMs) {
    return callAsync(() => this.#native.metricsTimeseries(taskName, duration('sinceMs', sinceMs, 'ms'), duration('bucketMs', bucketMs, 'ms')));
  }

  listWorkers() {
    return callAsync(() => this.#native.listWorkers());
  }

  jobLogs(id) {
    return callAsync(() => this.#native.jobLogs(id));
  }

  // ---- workers ----

  /**
   * Registers `handler(payload, ctx)` for `name`; workers made after this run it. Returns
   * the queue, so registrations chain.
   */
  task(name, handler, opts) {
    if (typeof name !== 'string' || name.length === 0) throw invalid('task name must be a non-empty string');
    if (typeof handler !== 'function') throw invalid(`handler of task ${name} must be a function`);
    // Its timeouts are checked when a worker is made, as the addon always has.
    const o = options(`options of task ${name}`, opts, 'task', '', false) ?? {};
    if (this.#tasks.has(name)) throw invalid(`task ${name} is already registered`);
    // An async wrapper, so a handler that throws synchronously or returns a plain value
    // still yields a Promise.
    const wrapped = async (payload, ctx) => handler(payload, ctx);
    this.#tasks.set(name, { handler: wrapped, timeout: o.timeout, softTimeout: o.softTimeout });
    return this;
  }

  /** A worker serving every task registered so far; `run()` starts it. */
  worker(opts) {
    if (this.#native.closed) throw new FlexiqError('CLOSED', `closed: queue on namespace ${this.namespace} is closed`);
    const w = new Worker(this.#native, new Map(this.#tasks), opts, () => this.#workers.delete(w));
    this.#workers.add(w);
    return w;
  }

  /**
   * Stops every worker made by this queue (each gracefully, as `worker.close()` does), then
   * closes the queue. Resolves once all of it is done; a worker that failed does not stop
   * the others from being closed.
   */
  async shutdown() {
    const workers = [...this.#workers];
    this.#workers.clear();
    await Promise.allSettled(workers.map((w) => w.close()));
    await this.close();
  }
}

/** A keyset page with `nextCursor: null` on the last page. */
async function page(p) {
  const r = await p;
  return { items: r.items, nextCursor: r.nextCursor ?? null };
}

async function* partials(s) {
  for (;;) {
    const p = await callAsync(() => s.next());
    if (p === null || p === undefined) return;
    yield decode(p.data);
  }
}

module.exports = { Queue };
