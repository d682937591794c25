'use strict';
// Workers and the `ctx` a handler receives.
//
// The addon runs the worker (claims, heartbeats, timeouts, acks) and calls one dispatch
// function per claimed job; dispatch routes it to the registered handler and turns whatever
// the handler returned or threw into an outcome object, so no user code ever runs inside
// the addon's callback. Cancellation reaches `ctx.signal` through the abort callback.

const { FlexiqError, invalid, callSync, callAsync } = require('./errors.cjs');
const { encode, decode, durations, options, shown } = require('./args.cjs');
const { LOG_LEVELS } = require('./options.cjs');


/** The message and stack of whatever a handler threw. */
function describe(err) {
  if (err instanceof Error) {
    const stack = typeof err.stack === 'string' ? err.stack : '';
    return stack.includes(err.message) ? stack : `${err.name}: ${err.message}${stack ? `\n${stack}` : ''}`;
  }
  try {
    return typeof err === 'string' ? err : JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** One attempt of one job, as a handler sees it. */
class JobContext {
  #n;
  #controllers;
  #signal;

  constructor(nativeCtx, controllers) {
    this.#n = nativeCtx;
    this.#controllers = controllers;
  }

  /** The job's id. */
  get id() {
    return this.#n.id;
  }

  /** This attempt's number (1-based). */
  get attempt() {
    return this.#n.attempt;
  }

  /** The task name. */
  get task() {
    return this.#n.task;
  }

  /** The queue the job came from. */
  get queue() {
    return this.#n.queue;
  }

  /**
   * Aborts when the attempt should stop: a `requestCancel` (reason code `JOB_CANCELLED`),
   * its timeout (`TIMEOUT`), a lost lease (`LEASE_LOST`), a worker shutdown past its
   * deadline (`SHUTDOWN`), or its task's soft timeout (`SOFT_TIMEOUT`: a hint to wrap up,
   * the attempt keeps running). `signal.reason` is a FlexiqError with that code; a signal
   * aborts once, with the first of these.
   */
  get signal() {
    if (this.#signal === undefined) {
      const c = new AbortController();
      this.#signal = c.signal;
      const reason = this.#n.cancelReason();
      if (reason) {
        c.abort(abortReason(this.id, reason));
      } else {
        this.#controllers.set(this.#n.token, { controller: c, id: this.id });
        this.#n.watchCancel();
      }
    }
    return this.#signal;
  }

  /** Publishes a partial result (any JSON value); resolves to its sequence number. */
  publish(partial) {
    return callAsync(() => this.#n.publish(encode('partial', partial)));
  }

  /** Appends a log line to the job (`level`: debug, info, warn or error; default info). */
  log(message, level = 'info') {
    return callAsync(() => {
      if (typeof message !== 'string') throw invalid('log message must be a string');
      if (!LOG_LEVELS.has(level)) throw invalid(`log level ${JSON.stringify(level)} must be debug, info, warn or error`);
      return this.#n.log(level, message);
    });
  }

  /**
   * The results of this job's completed children (a flow's parent, or any job with
   * dependencies), JSON-decoded as `getResult` decodes them, by child id (`null` for a child
   * that completed without a result).
   */
  childrenValues() {
    return callAsync(() => this.#n.childrenValues());
  }

  /** The children whose failure was ignored (`ignore_dependency`), by child id, with their last error. */
  ignoredFailures() {
    return callAsync(() => this.#n.ignoredFailures());
  }

  /** Records progress, 0 to 100 (fenced: `SUPERSEDED` once another attempt owns the job). */
  setProgress(progress) {
    return callAsync(() => this.#n.setProgress(progress));
  }
}

function abortReason(id, code) {
  const what = {
    JOB_CANCELLED: 'cancellation was requested',
    TIMEOUT: 'the attempt timed out',
    LEASE_LOST: 'the worker lost its lease',
    SHUTDOWN: 'the worker is shutting down',
    SOFT_TIMEOUT: 'the attempt passed its soft timeout',
  }[code];
  return new FlexiqError(code, `job ${id}: ${what ?? code}`, { jobId: id });
}

class Worker {
  #native;
  #handlers;
  #running;
  #ready;
  #onStopped;

  constructor(nativeQueue, tasks, opts, onStopped) {
    const o = options('worker options', opts, 'worker');
    const bind = o?.metricsBind;
    if (bind !== undefined && bind !== null && typeof bind !== 'string') {
      throw invalid(`metricsBind must be a string such as "127.0.0.1:9100", got ${shown(bind)}`);
    }
    if (tasks.size === 0) throw invalid('a worker needs at least one task: register handlers with queue.task()');
    const specs = [...tasks].map(([name, t]) => ({ name, timeout: t.timeout, softTimeout: t.softTimeout }));
    for (const spec of specs) durations(spec, 'task');
    this.#native = callSync(() => nativeQueue.createWorker(o, specs));
    this.#handlers = new Map([...tasks].map(([name, t]) => [name, t.handler]));
    this.#onStopped = onStopped;
  }

  /** The worker's id (stamped on the jobs it claims). */
  get id() {
    return this.#native.id;
  }

  /**
   * Where the running worker serves `GET /metrics` (`"127.0.0.1:9100"`; the chosen port when
   * `metricsBind` asked for port 0), once `ready` resolved; `null` without `metricsBind`.
   */
  get metricsAddr() {
    return this.#native.metricsAddr ?? null;
  }

  /**
   * Resolves once the running worker is live: registered, and its first claim reached the
   * store, so a job enqueued from now on is picked up without waiting for a poll. Rejects
   * with `CLOSED` naming the worker when it stopped first (closed before `run()`, a closed
   * queue, an unreachable store). Stays pending until `run()` or `close()` is called.
   */
  get ready() {
    if (this.#ready === undefined) this.#ready = callAsync(() => this.#native.ready());
    return this.#ready;
  }

  /**
   * Runs until `close()`: claims jobs and runs their handlers. Resolves with the worker's
   * counters once it has shut down.
   */
  run() {
    if (this.#running) return this.#running;
    const handlers = this.#handlers;
    const controllers = new Map();
    const attempt = async (nctx) => {
      const token = nctx.token;
      try {
        const handler = handlers.get(nctx.task);
        if (handler === undefined) return { ok: false, error: `no handler for task ${nctx.task}`, retryable: true };
        const ctx = new JobContext(nctx, controllers);
        const value = await handler(decode(nctx.payload), ctx);
        const result = value === undefined ? undefined : JSON.stringify(value);
        return { ok: true, result };
      } catch (err) {
        return { ok: false, error: describe(err), retryable: err?.retryable === false ? false : undefined };
      } finally {
        controllers.delete(token);
      }
    };
    // The outcome goes back through `settle` rather than as a returned Promise (see worker.rs).
    const settle = (nctx, outcome) => {
      try {
        nctx.settle(outcome);
      } catch (err) {
        nctx.settle({ ok: false, error: `cannot report the handler's outcome: ${describe(err)}` });
      }
    };
    const dispatch = (nctx) => {
      attempt(nctx).then(
        (outcome) => settle(nctx, outcome),
        (err) => settle(nctx, { ok: false, error: describe(err) }),
      );
    };
    const abort = (event) => {
      const entry = controllers.get(event.token);
      if (entry) entry.controller.abort(abortReason(entry.id, event.reason));
    };
    const onStopped = this.#onStopped;
    this.#running = callAsync(() => this.#native.run(dispatch, abort)).finally(() => onStopped?.());
    return this.#running;
  }

  /**
   * Stops claiming, lets running handlers finish (see `shutdownTimeout`), gives the rest
   * back and resolves once stopped. Safe to call before `run()` (the worker then never
   * starts) and more than once.
   */
  async close() {
    this.#native.close();
    if (this.#running) await this.#running;
    else this.#onStopped?.();
  }

  /** `close()`, resolving with the worker's counters (`undefined` if it never ran). */
  async stop() {
    await this.close();
    return this.#running === undefined ? undefined : this.#running;
  }
}

module.exports = { Worker, JobContext };
