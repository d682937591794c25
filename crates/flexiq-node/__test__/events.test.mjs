// The events stream (`events`, `on` / `once` / `off`, `readEvents`, `publishEvent`,
// `trimEvents`, `lastEventId`, `setEventsEnabled`, the worker's `eventsMaxLen`) on every
// store: an iterator sees a job run by a worker on another handle, a stream resumed after a
// saved id repeats and loses nothing, the kinds filter, custom events, listeners seeing a job
// another process completed, `off` and `close` letting a process exit, listener errors, the
// elected cleaner's trim, and bad input refused before anything is read or written.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { describe, it } from 'node:test';

import { EVENT_KINDS } from '../index.mjs';
import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const HOST = new URL('./events-host.mjs', import.meta.url);

/** Longest a child process may take to finish its part and exit by itself. */
const CHILD_DEADLINE_MS = 60_000;

/**
 * Runs events-host.mjs in `mode` on the store at `url`: `next(key)` waits for the first
 * message holding `key`; `exited` resolves to the exit code, and rejects when the child has
 * not exited within the deadline (it is then killed: something held its event loop).
 */
function host(mode, url) {
  const child = fork(HOST, [mode, url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  const waiters = [];
  child.on('message', (m) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`events-host ${mode} did not exit within ${CHILD_DEADLINE_MS} ms`));
    }, CHILD_DEADLINE_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
  });
  const next = async (key) => {
    for (;;) {
      const m = messages.find((x) => key in x);
      if (m) return m[key];
      await Promise.race([new Promise((r) => waiters.push(r)), exited.then((c) => assert.fail(`events-host ${mode} exited (${c}) before sending ${key}`))]);
    }
  };
  return { next, exited };
}

/** The next `n` events of `iterator`, failing if it ends first. */
async function take(iterator, n) {
  const out = [];
  while (out.length < n) {
    const r = await iterator.next();
    assert.equal(r.done, false, `the stream ended after ${out.length} of ${n} events`);
    out.push(r.value);
  }
  return out;
}

/** The events of job `id` from `iterator`, up to and including the first of kind `last`. */
async function jobEvents(iterator, id, last) {
  const seen = [];
  for await (const ev of iterator) {
    if (ev.jobId !== id) continue;
    seen.push(ev);
    if (ev.kind === last) break;
  }
  return seen;
}

for (const backend of BACKENDS) {
  describe(`events stream on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('an iterator sees only what follows it: a job run by a worker on another handle, enqueued to completed', async () => {
      const q = await store.open();
      const other = await store.open();
      const before = await other.enqueue('greet', { n: 0 }, { queue: 'later' });
      const events = q.events();
      other.task('greet', async (p) => ({ hello: p.n }));
      store.work(other, { concurrency: 1, queues: ['default'], maintenance: false });
      const id = await other.enqueue('greet', { n: 1 });

      const seen = await jobEvents(events, id, 'completed');
      assert.deepEqual(
        seen.map((e) => e.kind),
        ['enqueued', 'active', 'completed'],
      );
      const [enqueued, active, completed] = seen;
      assert.deepEqual(Object.keys(enqueued).sort(), ['atMs', 'attempt', 'data', 'id', 'jobId', 'kind', 'name', 'queue', 'task']);
      assert.deepEqual([enqueued.name, enqueued.queue, enqueued.task, enqueued.attempt], ['enqueued', 'default', 'greet', 0]);
      assert.equal(enqueued.data.status, 'pending');
      assert.equal(typeof enqueued.data.run_at, 'number');
      assert.equal(active.attempt, 1);
      assert.equal(typeof active.data.worker_id, 'string');
      assert.deepEqual(completed.data, { result_size: JSON.stringify({ hello: 1 }).length });
      assert.ok(completed.atMs >= enqueued.atMs && completed.atMs <= Date.now() + 1_000);
      assert.equal(new Set(seen.map((e) => e.id)).size, 3);

      const all = await q.readEvents({ limit: 100 });
      assert.ok(all.some((e) => e.jobId === before), 'the job enqueued first is in the stream, before the iterator');
      assert.deepEqual(await events.next(), { value: undefined, done: true }, 'break stopped the iterator');
    });

    it('a stream resumed after a saved id, on another handle, repeats nothing and loses nothing', async () => {
      const q = await store.open();
      for (let n = 0; n < 5; n++) await q.enqueue('t', n);
      const seen = [];
      for await (const ev of q.events({ fromStart: true, batch: 2 })) {
        seen.push(ev);
        if (seen.length === 3) break;
      }
      const saved = seen.at(-1).id;
      for (let n = 5; n < 7; n++) await q.enqueue('t', n);

      const other = await store.open();
      const resumed = other.events({ after: saved, blockMs: 1_000 });
      seen.push(...(await take(resumed, 4)));
      const sentinel = await q.publishEvent('sentinel');
      const [next] = await take(resumed, 1);
      assert.equal(next.id, sentinel, 'nothing came between the seventh enqueue and the sentinel');
      await resumed.return();

      const whole = (await q.readEvents({ limit: 100 })).map((e) => e.id);
      assert.deepEqual([...seen.map((e) => e.id), sentinel], whole, 'seven enqueues and the sentinel, each once and in order');
      assert.deepEqual(
        seen.map((e) => e.kind),
        Array(7).fill('enqueued'),
      );
      assert.equal(await q.lastEventId(), sentinel);
    });

    it('filters by kind and by custom event name; custom events carry their data, job and queue', async () => {
      const q = await store.open();
      const filtered = q.events({ kinds: ['deploy.done', 'cancelled'] });
      const customs = q.events({ kinds: ['custom'] });
      const id = await q.enqueue('t', 'x');
      const other = await q.publishEvent('other', 1);
      const published = await q.publishEvent('deploy.done', { v: 7 }, { jobId: id, queue: 'default' });
      const bare = await q.publishEvent('bare');
      assert.ok(q.cancelJob(id));

      const [custom, cancelled] = await take(filtered, 2);
      assert.deepEqual(custom, {
        id: published,
        kind: 'custom',
        name: 'deploy.done',
        jobId: id,
        queue: 'default',
        task: null,
        attempt: null,
        atMs: custom.atMs,
        data: { v: 7 },
      });
      assert.deepEqual([cancelled.kind, cancelled.jobId, cancelled.name], ['cancelled', id, 'cancelled']);
      assert.deepEqual(
        (await take(customs, 3)).map((e) => [e.id, e.name, e.data, e.jobId]),
        [
          [other, 'other', 1, null],
          [published, 'deploy.done', { v: 7 }, id],
          [bare, 'bare', null, null],
        ],
      );
      assert.equal(await q.lastEventId(), cancelled.id);
      await filtered.return();
      await customs.return();
    });

    it('readEvents pages after an id and waits for another handle with blockMs', async () => {
      const q = await store.open();
      assert.equal(await q.lastEventId(), null, 'a fresh store has no events');
      assert.deepEqual(await q.readEvents(), []);
      for (let n = 0; n < 3; n++) await q.enqueue('t', n);
      // PostgreSQL shows an event once every transaction older than its own has ended.
      const [a, b, c] = await until(async () => {
        const all = await q.readEvents();
        return all.length === 3 && all;
      }, 30_000, 'three events readable');
      assert.deepEqual(await q.readEvents({ after: a.id, limit: 1 }), [b]);
      assert.deepEqual(await q.readEvents({ after: c.id }), []);

      const other = await store.open();
      const waiting = q.readEvents({ after: c.id, blockMs: 60_000 });
      const id = await other.enqueue('t', 3);
      const got = await waiting;
      assert.deepEqual(
        got.map((e) => [e.kind, e.jobId]),
        [['enqueued', id]],
      );
    });

    it('queue.on sees jobs another process completes; once fires once; off stops delivery', async () => {
      const q = await store.open();
      const completed = [];
      const onceSeen = [];
      const listener = (ev) => completed.push(ev);
      assert.equal(q.on('completed', listener), q, 'on returns the queue');
      q.once('completed', (ev) => onceSeen.push(ev.jobId));

      const child = host('run', store.url);
      const id = await child.next('id');
      await until(() => completed.some((e) => e.jobId === id), 30_000, 'the completed event of the child’s job');
      assert.equal(await child.exited, 0);
      assert.deepEqual(onceSeen, [id]);
      const ev = completed.find((e) => e.jobId === id);
      assert.deepEqual([ev.kind, ev.task, ev.queue], ['completed', 'greet', 'default']);

      // Off: a later completion is not delivered, while another listener keeps the reader on.
      const customs = [];
      q.on('custom', (e) => customs.push(e.name));
      assert.equal(q.off('completed', listener), q);
      const other = await store.open();
      other.task('t', async () => null);
      store.work(other, { concurrency: 1, maintenance: false });
      const later = await other.enqueue('t', 1);
      await other.result(later, { timeoutMs: 30_000 });
      await q.publishEvent('sentinel');
      await until(() => customs.includes('sentinel'), 30_000, 'the sentinel');
      assert.equal(completed.filter((e) => e.jobId === later).length, 0, 'no delivery after off');
      assert.deepEqual(onceSeen, [id], 'once fired once');
    });

    it('a process that removed its last listener, or closed its queue with reads waiting, exits by itself', async () => {
      const off = host('off', store.url);
      assert.deepEqual((await off.next('got')).sort(), ['on:ping', 'once:ping']);
      assert.equal(await off.exited, 0);

      const closed = host('close', store.url);
      assert.deepEqual(await closed.next('next'), { done: true }, 'a waiting iterator ends when its queue closes');
      assert.equal(await closed.next('read'), 'CLOSED', 'a waiting readEvents rejects with CLOSED');
      assert.equal(await closed.exited, 0);
    });

    it('close stops the listeners and iterators of this process: later reads are CLOSED', async () => {
      const q = await store.open();
      q.on('enqueued', () => {});
      const iterator = q.events();
      const pending = iterator.next();
      await q.close();
      assert.deepEqual(await pending, { value: undefined, done: true });
      assert.deepEqual(await iterator.next(), { value: undefined, done: true });
      await rejectsCode(assert, () => q.events(), 'CLOSED');
      await rejectsCode(assert, () => q.on('completed', () => {}), 'CLOSED');
      await rejectsCode(assert, () => q.readEvents(), 'CLOSED');
      await rejectsCode(assert, () => q.lastEventId(), 'CLOSED');
    });

    it('a listener that throws or rejects reaches the error listeners, and the reader goes on', async () => {
      const q = await store.open();
      const errors = [];
      const seen = [];
      q.on('error', (e) => errors.push(e.message));
      q.on('enqueued', (ev) => {
        throw new Error(`sync ${ev.jobId}`);
      });
      q.on('enqueued', async (ev) => {
        throw new Error(`async ${ev.jobId}`);
      });
      q.on('enqueued', (ev) => seen.push(ev.jobId));
      const a = await q.enqueue('t', 1);
      const b = await q.enqueue('t', 2);
      await until(() => seen.length === 2 && errors.length === 4, 30_000, 'both events and four errors');
      assert.deepEqual(seen, [a, b]);
      assert.deepEqual(errors.sort(), [`async ${a}`, `async ${b}`, `sync ${a}`, `sync ${b}`].sort());
    });

    it('switched off, nothing is written and publishEvent is CONFLICT; trimEvents keeps the newest', async () => {
      const q = await store.open();
      assert.equal(await q.eventsEnabled(), true);
      await q.setEventsEnabled(false);
      assert.equal(await q.eventsEnabled(), false);
      await q.enqueue('t', 'quiet');
      assert.equal(await q.lastEventId(), null);
      await rejectsCode(assert, () => q.publishEvent('x'), 'CONFLICT');
      await q.setEventsEnabled(true);

      for (let n = 0; n < 6; n++) await q.enqueue('t', n);
      const all = await until(async () => {
        const events = await q.readEvents();
        return events.length === 6 && events;
      }, 30_000, 'six events readable');
      assert.equal(await q.trimEvents(2), 4);
      assert.deepEqual(await q.readEvents(), all.slice(4));
      assert.equal(await q.trimEvents(10, { maxAgeMs: 3_600_000 }), 0);
      assert.equal(await q.trimEvents(0), 2);
      assert.deepEqual(await q.readEvents(), []);
    });

    it('a worker elected cleaner trims the stream to eventsMaxLen', async () => {
      const q = await store.open();
      for (let n = 0; n < 8; n++) await q.enqueue('t', n);
      q.task('other', async () => null);
      store.work(q, { queues: ['elsewhere'], eventsMaxLen: 3, eventsMaxAgeMs: 3_600_000 });
      await until(async () => (await q.readEvents()).length === 3, 30_000, 'the stream trimmed to 3');
    });

    it('refuses bad input before anything is read or written', async () => {
      const q = await store.open();
      await q.enqueue('t', 1);
      const tail = await until(() => q.lastEventId(), 30_000, 'the enqueue readable');
      const bad = (fn, re) => rejectsCode(assert, fn, 'INVALID_ARGUMENT', re);

      await bad(() => q.events('now'), /events options must be an object/);
      await bad(() => q.events({ fromstart: true }), /no option "fromstart"/);
      await bad(() => q.events({ kinds: 'completed' }), /kinds must be an array/);
      await bad(() => q.events({ kinds: [1] }), /kinds\[0\] must be a string/);
      await bad(() => q.events({ kinds: [''] }));
      await bad(() => q.events({ kinds: ['a\nb'] }));
      await bad(() => q.events({ after: 'garbage' }));
      await bad(() => q.events({ after: 42 }), /after must be a string/);
      await bad(() => q.events({ after: tail, fromStart: true }), /exclusive/);
      await bad(() => q.events({ fromStart: 'yes' }), /fromStart must be a boolean/);
      for (const blockMs of [-1, Number.NaN, Infinity, '5', 0, 1.5, 300_001]) await bad(() => q.events({ blockMs }), /blockMs/);
      for (const batch of [0, -1, 1.5, 10_001, '2', Number.NaN]) await bad(() => q.events({ batch }), /batch/);

      await bad(() => q.readEvents({ limt: 1 }), /no option "limt"/);
      await bad(() => q.readEvents({ after: 'garbage' }));
      for (const limit of [0, -3, 1.5, 10_001, Number.NaN]) await bad(() => q.readEvents({ limit }), /limit/);
      for (const blockMs of [-1, Number.NaN, 300_001]) await bad(() => q.readEvents({ blockMs }), /blockMs/);

      for (const maxLen of [-1, 1.5, Number.NaN, '3', undefined]) await bad(() => q.trimEvents(maxLen), /maxLen/);
      await bad(() => q.trimEvents(10, { maxAgeMs: -5 }), /maxAgeMs/);
      await bad(() => q.trimEvents(10, { maxAge: 5 }), /no option "maxAge"/);

      await bad(() => q.publishEvent('completed'), /built-in event kind/);
      await bad(() => q.publishEvent('custom'));
      await bad(() => q.publishEvent(''));
      await bad(() => q.publishEvent(5), /event name must be a string/);
      await bad(() => q.publishEvent('x'.repeat(201)));
      await bad(() => q.publishEvent('x', 1, { jobId: 'not-a-job-id' }));
      await bad(() => q.publishEvent('x', 1, { queue: '' }));
      await bad(() => q.publishEvent('x', 1, { job: 'x' }), /no option "job"/);
      await bad(() => q.publishEvent('x', 10n), /not JSON-serialisable/);
      await bad(() => q.publishEvent('x', 'y'.repeat(70_000)), /over/);
      await bad(() => q.setEventsEnabled('yes'));

      const listener = () => {};
      await bad(() => q.on(5, listener), /event name must be a string/);
      await bad(() => q.on('', listener));
      await bad(() => q.on('completed', 'not a function'), /must be a function/);
      await bad(() => q.once('a\u0000b', listener));

      q.task('t', async () => null);
      for (const opts of [
        { eventsMaxLen: -1 },
        { eventsMaxLen: 1.5 },
        { eventsMaxAgeMs: -1 },
        { eventsMaxAgeMs: 10 },
        { maintenance: false, eventsMaxLen: 5 },
      ]) {
        await bad(() => q.worker(opts));
      }

      assert.equal(await q.lastEventId(), tail, 'nothing refused was written');
      assert.deepEqual(
        [...EVENT_KINDS].sort(),
        [
          'active',
          'cancelled',
          'completed',
          'custom',
          'dead',
          'deduplicated',
          'enqueued',
          'failed',
          'paused',
          'progress',
          'released',
          'removed',
          'requeued',
          'resumed',
          'retried',
          'stalled',
          'suspended',
        ],
      );
    });
  });
}
