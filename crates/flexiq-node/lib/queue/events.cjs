'use strict';
// The events stream of the Queue: publish a custom event, read and trim the stream, iterate it
// (`events(options)`) and listen to it (`on` / `once` / `off`). Mirrors the runtime's
// queue/events.rs; installed on Queue.prototype by lib/queue.cjs. `lastEventId`,
// `setEventsEnabled` and `eventsEnabled` pass through (forward.cjs).
//
// Both readers sit on the addon's NativeEventStream, which hands out batches of events and
// resolves `null` once stopped (its own `close()`, or the queue's). A waiting read is a
// pending Promise, which keeps Node's event loop alive; so the iterator stops its stream on
// `return()` (a `break` out of `for await`) and the listeners share one stream per Queue,
// opened when the first event listener is added and stopped when the last one is removed or
// the queue closes. Listeners read the store's stream, so they see what every process does.

const nativeModule = require('../addon.cjs');
const { native } = require('./base.cjs');
const { callSync, callAsync, invalid } = require('../errors.cjs');
const { encode, shown, integer, options } = require('../args.cjs');

/** The name under which listener and reader errors are emitted, as an EventEmitter's. */
const ERROR = 'error';

/** Waits between attempts to reopen the listeners' stream after a failed read (ms). */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;

const DONE = Object.freeze({ value: undefined, done: true });

/** How a refused value reads in a message (arrays and null by name). */
function got(v) {
  if (Array.isArray(v)) return 'an array';
  return v === null ? 'null' : shown(v);
}

/** An optional value of `type` (`null` counts as absent). */
function optional(what, v, type) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) throw invalid(`${what} must be a ${type}, got ${got(v)}`);
  return v;
}

/** The kinds filter: an array of names (checked by the addon against core's rules). */
function kindNames(v) {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(`kinds must be an array of event kind names, got ${got(v)}`);
  v.forEach((k, i) => {
    if (typeof k !== 'string') throw invalid(`kinds[${i}] must be a string, got ${got(k)}`);
  });
  return [...v];
}

/** `events(options)` as the addon takes them. */
function streamOptions(opts) {
  const o = options('events options', opts, 'events') ?? {};
  return {
    after: optional('after', o.after, 'string'),
    kinds: kindNames(o.kinds),
    fromStart: optional('fromStart', o.fromStart, 'boolean'),
    blockMs: o.blockMs ?? undefined,
    batch: integer('batch', o.batch ?? undefined),
  };
}

/**
 * The async iterator `queue.events()` returns: the events of a NativeEventStream one by one.
 * Calls to `next()` are served in order, one read at a time, so events never come out of
 * order whoever awaits them; `return()` stops the stream at once, a pending read included.
 */
class EventStream {
  /** The NativeEventStream, or `null` once stopped. */
  #stream;
  #batch = [];
  #at = 0;
  /** The previous `next()`, settled; each one starts after it. */
  #tail = Promise.resolve();

  constructor(stream) {
    this.#stream = stream;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** The next event; `{ done: true }` once stopped. A failed read rejects and stops the stream. */
  next() {
    const step = this.#tail.then(() => this.#step());
    this.#tail = step.then(
      () => undefined,
      () => undefined,
    );
    return step;
  }

  /** Stops reading (a `break` out of `for await` calls it); the events not yet taken are dropped. */
  return() {
    this.#stop();
    return Promise.resolve(DONE);
  }

  async #step() {
    if (this.#at < this.#batch.length) return { value: this.#batch[this.#at++], done: false };
    const stream = this.#stream;
    if (stream === null) return DONE;
    let batch;
    try {
      batch = await callAsync(() => stream.next());
    } catch (e) {
      this.#stop();
      // The queue closed under the read: the end of the stream, as a stop is.
      if (e.code === 'CLOSED') return DONE;
      throw e;
    }
    if (batch === null || this.#stream === null) {
      this.#stop();
      return DONE;
    }
    this.#batch = batch;
    this.#at = 1;
    return { value: batch[0], done: false };
  }

  #stop() {
    if (this.#stream !== null) {
      this.#stream.close();
      this.#stream = null;
    }
    this.#batch = [];
    this.#at = 0;
  }
}

/** The listeners of each Queue that has had one, by Queue. */
const hubs = new WeakMap();

/**
 * The listeners of one Queue and the reader feeding them: one NativeEventStream over every
 * event, open while at least one listener of an event (not `'error'`) is registered.
 */
class Hub {
  #queue;
  /** Listener entries `{ fn, once }` by name; each array is replaced, never changed, so a dispatch in progress is unaffected. */
  #listeners = new Map();
  /** Listeners of events (not `'error'`). */
  #count = 0;
  /** The running reader `{ stream, stopped, timer, wake }`, or `null`. */
  #reader = null;

  constructor(queue) {
    this.#queue = queue;
  }

  add(name, fn, once) {
    if (typeof name !== 'string') throw invalid(`an event name must be a string, got ${got(name)}`);
    if (typeof fn !== 'function') throw invalid(`the listener of ${JSON.stringify(name)} must be a function, got ${got(fn)}`);
    if (name !== ERROR) {
      callSync(() => nativeModule.checkEventKinds([name]));
      // Opened before the listener is kept, so a closed queue throws and keeps nothing.
      if (this.#reader === null) this.#start();
      this.#count++;
    }
    this.#listeners.set(name, [...(this.#listeners.get(name) ?? []), { fn, once }]);
  }

  /** Removes the most recently added listener `fn` of `name`, as an EventEmitter does. */
  remove(name, fn) {
    const list = this.#listeners.get(name);
    if (list === undefined) return;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i].fn === fn) {
        this.#drop(name, list[i]);
        return;
      }
    }
  }

  /** Stops the reader (the queue is closing); the listeners stay registered. */
  stop() {
    const r = this.#reader;
    if (r === null) return;
    this.#reader = null;
    r.stopped = true;
    clearTimeout(r.timer);
    r.wake?.();
    r.stream.close();
  }

  #drop(name, entry) {
    const list = this.#listeners.get(name);
    const i = list?.indexOf(entry) ?? -1;
    if (i < 0) return;
    const rest = list.filter((_, j) => j !== i);
    if (rest.length === 0) this.#listeners.delete(name);
    else this.#listeners.set(name, rest);
    if (name !== ERROR && --this.#count === 0) this.stop();
  }

  #start() {
    const stream = callSync(() => native(this.#queue).events());
    const r = { stream, stopped: false, timer: undefined, wake: undefined };
    this.#reader = r;
    this.#pump(r).catch((err) => this.#fail(err));
  }

  async #pump(r) {
    let failures = 0;
    while (!r.stopped) {
      let batch;
      try {
        batch = await callAsync(() => r.stream.next());
      } catch (err) {
        if (r.stopped) return;
        if (err.code === 'CLOSED') return this.#ended(r);
        this.#fail(err);
        if (!(await this.#reopen(r, ++failures))) return;
        continue;
      }
      if (batch === null) return this.#ended(r);
      failures = 0;
      for (const ev of batch) {
        if (r.stopped) return;
        // A custom event named "error" is not an error: only `'custom'` listeners get it.
        if (ev.name !== ERROR) this.#emit(ev.name, ev);
        if (ev.kind === 'custom') this.#emit('custom', ev);
      }
    }
  }

  /**
   * After a failed read: waits, then reopens the stream after the last event delivered (off
   * the event loop), doubling the wait while it fails. `false` once the reader stopped.
   */
  async #reopen(r, failures) {
    for (;;) {
      const wait = Math.min(RETRY_FIRST_MS * 2 ** (failures - 1), RETRY_MAX_MS);
      // `stop()` ends the wait early, so a stopped reader leaves nothing behind.
      await new Promise((resolve) => {
        r.wake = resolve;
        r.timer = setTimeout(resolve, wait);
      });
      if (r.stopped) return false;
      try {
        await callAsync(() => r.stream.resume());
        return !r.stopped;
      } catch (err) {
        if (r.stopped) return false;
        if (err.code === 'CLOSED') {
          this.#ended(r);
          return false;
        }
        this.#fail(err);
        failures++;
      }
    }
  }

  /** The stream stopped under the reader (the queue closed). */
  #ended(r) {
    r.stopped = true;
    if (this.#reader === r) this.#reader = null;
  }

  #emit(name, arg) {
    const list = this.#listeners.get(name);
    if (list === undefined) return;
    for (const entry of list) {
      if (entry.once) this.#drop(name, entry);
      this.#call(entry.fn, arg);
    }
  }

  /** Calls a listener; what it throws or its Promise rejects with goes to the `'error'` listeners. */
  #call(fn, ev) {
    try {
      const r = fn.call(this.#queue, ev);
      if (r !== null && (typeof r === 'object' || typeof r === 'function') && typeof r.then === 'function') {
        r.then(undefined, (e) => this.#fail(e));
      }
    } catch (e) {
      this.#fail(e);
    }
  }

  /**
   * Emits `err` on the `'error'` listeners. Without one it is thrown out of band, an uncaught
   * exception, as an EventEmitter's unhandled `'error'` is; the reader goes on either way.
   */
  #fail(err) {
    const list = this.#listeners.get(ERROR);
    if (list === undefined) {
      process.nextTick(() => {
        throw err;
      });
      return;
    }
    for (const entry of list) {
      if (entry.once) this.#drop(ERROR, entry);
      try {
        entry.fn.call(this.#queue, err);
      } catch (e) {
        process.nextTick(() => {
          throw e;
        });
      }
    }
  }
}

function hub(queue) {
  native(queue);
  let h = hubs.get(queue);
  if (h === undefined) {
    h = new Hub(queue);
    hubs.set(queue, h);
  }
  return h;
}

/** Stops the listeners' reader of `queue` (from `close()`). */
function stopListening(queue) {
  hubs.get(queue)?.stop();
}

class EventCalls {
  publishEvent(name, data, opts) {
    return callAsync(() => {
      if (typeof name !== 'string') throw invalid(`an event name must be a string, got ${got(name)}`);
      const o = options('publishEvent options', opts, 'publishEvent') ?? {};
      const about = { jobId: optional('jobId', o.jobId, 'string'), queue: optional('queue', o.queue, 'string') };
      return native(this).publishEvent(name, encode(`data of event ${name}`, data), about);
    });
  }

  readEvents(opts) {
    return callAsync(() => {
      const o = options('readEvents options', opts, 'readEvents') ?? {};
      const read = { after: optional('after', o.after, 'string'), blockMs: o.blockMs ?? undefined, limit: integer('limit', o.limit ?? undefined) };
      return native(this).readEvents(read);
    });
  }

  trimEvents(maxLen, opts) {
    return callAsync(() => {
      const o = options('trimEvents options', opts, 'trimEvents') ?? {};
      return native(this).trimEvents(integer('maxLen', maxLen, true), { maxAgeMs: o.maxAgeMs ?? undefined });
    });
  }

  events(opts) {
    const o = streamOptions(opts);
    return new EventStream(callSync(() => native(this).events(o)));
  }

  on(name, listener) {
    hub(this).add(name, listener, false);
    return this;
  }

  once(name, listener) {
    hub(this).add(name, listener, true);
    return this;
  }

  off(name, listener) {
    hubs.get(this)?.remove(name, listener);
    return this;
  }
}

module.exports = { EventCalls, stopListening };
