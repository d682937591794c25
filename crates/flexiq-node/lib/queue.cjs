'use strict';
// The public Queue: a thin wrapper over the addon's NativeQueue that JSON-encodes payloads,
// decodes results, maps errors to FlexiqError and keeps the task registry for workers.
// Opening, closing and the worker side live here; the calls live in lib/queue/, one file
// per module of the runtime's queue/ (jobs, listing, control, dead, stats, admin, clean,
// reschedule, schedulers, flows, dedup, wait, events, workflow), each a class whose methods are
// installed on Queue.prototype. Every other NativeQueue method is then forwarded as it is
// (forward.cjs).

const native = require('./addon.cjs');
const { FlexiqError, invalid, callSync, callAsync } = require('./errors.cjs');
const { options } = require('./args.cjs');
const { Worker } = require('./worker.cjs');
const { bind, native: nativeOf, retention } = require('./queue/base.cjs');
const { installForwarders } = require('./queue/forward.cjs');
const { stopListening } = require('./queue/events.cjs');

/** The call files, in the order of the runtime's queue/ modules. */
const CALLS = [
  require('./queue/jobs.cjs').JobsCalls,
  require('./queue/listing.cjs').ListingCalls,
  require('./queue/control.cjs').ControlCalls,
  require('./queue/dead.cjs').DeadCalls,
  require('./queue/stats.cjs').StatsCalls,
  require('./queue/admin.cjs').AdminCalls,
  require('./queue/clean.cjs').CleanCalls,
  require('./queue/reschedule.cjs').RescheduleCalls,
  require('./queue/schedulers.cjs').SchedulerCalls,
  require('./queue/flows.cjs').FlowCalls,
  require('./queue/dedup.cjs').DedupCalls,
  require('./queue/wait.cjs').WaitCalls,
  require('./queue/events.cjs').EventCalls,
  require('./queue/workflow.cjs').WorkflowCalls,
];

/** Lets `Queue.connect` hand an opened native queue to the constructor. */
const OPENED = Symbol('flexiq.opened');

function queueOptions(opts, how) {
  if (opts === undefined || opts === null) throw invalid(`${how} needs options: { dbPath } or { url }`);
  const o = options('queue options', opts, 'queue');
  if (o.retention !== undefined) retention(o.retention);
  return o;
}

class Queue {
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
      bind(this, opts[OPENED]);
      return;
    }
    const o = queueOptions(opts, 'new Queue()');
    bind(this, callSync(() => new native.NativeQueue(o)));
  }

  /** `"sqlite"`, `"postgres"` or `"redis"`. */
  get backend() {
    return nativeOf(this).backend;
  }

  /** The namespace every call is scoped to. */
  get namespace() {
    return nativeOf(this).namespace;
  }

  /** Whether `close()` was called. */
  get closed() {
    return nativeOf(this).closed;
  }

  /**
   * Releases the connections and stops the events listeners' reader and every events
   * iterator; later calls throw `CLOSED`. Idempotent.
   */
  close() {
    stopListening(this);
    return callAsync(() => nativeOf(this).close());
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
    if (nativeOf(this).closed) throw new FlexiqError('CLOSED', `closed: queue on namespace ${this.namespace} is closed`);
    const w = new Worker(nativeOf(this), new Map(this.#tasks), opts, () => this.#workers.delete(w));
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

for (const calls of CALLS) {
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(calls.prototype))) {
    if (name === 'constructor') continue;
    if (Object.hasOwn(Queue.prototype, name)) throw new Error(`Queue.${name} is defined twice (${calls.name})`);
    Object.defineProperty(Queue.prototype, name, d);
  }
}

/** The NativeQueue members the Queue forwards unchanged, sorted. */
const FORWARDED = Object.freeze(installForwarders(Queue.prototype));

module.exports = { Queue, FORWARDED };
