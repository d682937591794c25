// Bulk removal and re-running (clean, drain, obliterate, remove, retryJobs, removeOrphans),
// the limit probes (isMaxed, rateLimitTtl) and the jobs a worker runs now, on every store;
// with the bad input each call refuses, and nothing removed when it does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';
const WAIT = { timeoutMs: 15_000 };

/** Every job of `queue`, whatever its status. */
async function total(q, queue) {
  return Object.values(await q.statsByQueue(queue)).reduce((a, b) => a + b, 0);
}

/**
 * Registers task `held` on `q`, whose jobs run until `release()` (or until their worker
 * stops), and starts a worker for `queue`; `started(id)` resolves once that job runs.
 */
function holdJobs(store, q, queue) {
  let release;
  const gate = new Promise((r) => (release = r));
  const running = new Set();
  q.task('held', async (_p, ctx) => {
    running.add(ctx.id);
    await Promise.race([gate, new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }))]);
  });
  const worker = store.work(q, { queues: [queue], concurrency: 4, prefetch: 0, pollInterval: 0.05 });
  return {
    worker,
    release,
    started: (id) => until(() => running.has(id) && q.getJob(id)?.status === 'running', 15_000, `job ${id} running`),
  };
}

for (const backend of BACKENDS) {
  describe(`clean and limits on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('clean removes the jobs of a status past the grace, oldest first, a page at a time', async () => {
      const q = await store.open();
      q.task('ok', async (n) => n);
      store.work(q, { queues: ['done'], pollInterval: 0.05 });
      const done = [];
      for (const n of [1, 2, 3]) {
        const id = await q.enqueue('ok', n, { queue: 'done' });
        await q.result(id, WAIT);
        done.push(id);
      }
      const pending = await q.enqueue('ok', 4, { queue: 'idle' });
      assert.deepEqual(await q.clean('done', 'completed', 3_600_000), [], 'none finished an hour ago');
      assert.deepEqual(await q.clean('done', 'completed', 0, 2), done.slice(0, 2));
      assert.deepEqual(await q.clean('done', 'completed', 0), done.slice(2));
      assert.deepEqual(await q.clean('done', 'completed', 0), []);
      for (const id of done) assert.equal(q.getJob(id), null);
      assert.deepEqual(await q.clean('idle', 'completed', 0), [], 'another status stays');
      assert.deepEqual(await q.clean('idle', 'pending', 0), [pending]);
      assert.equal(await total(q, 'idle'), 0);
      assert.deepEqual(await q.clean('never-used', 'dead', 0), []);
    });

    it('drain removes due pending jobs, and delayed ones when asked', async () => {
      const q = await store.open();
      const due = await q.enqueueMany([1, 2].map((n) => ({ task: 't', payload: n, options: { queue: 'backlog' } })));
      const later = await q.enqueue('t', 3, { queue: 'backlog', delay: 3_600 });
      const other = await q.enqueue('t', 4, { queue: 'other' });
      assert.equal(await q.drain('backlog'), 2);
      for (const id of due) assert.equal(q.getJob(id), null);
      assert.equal(q.getJob(later).status, 'pending');
      assert.equal(await q.drain('backlog', false), 0);
      assert.equal(await q.drain('backlog', true), 1);
      assert.equal(q.getJob(later), null);
      assert.equal(q.getJob(other).status, 'pending');
      assert.equal(await q.drain('never-used', true), 0);
    });

    it('obliterate pages through a queue, refusing running jobs unless forced', async () => {
      const q = await store.open();
      const held = holdJobs(store, q, 'gone');
      try {
        await q.enqueueMany(Array.from({ length: 25 }, (_, n) => ({ task: 'later', payload: n, options: { queue: 'gone', delay: 3_600 } })));
        const running = await q.enqueue('held', null, { queue: 'gone' });
        await held.started(running);
        const keep = await q.enqueue('t', null, { queue: 'kept' });
        q.setQueueConcurrency('gone', 4);
        const err = await rejectsCode(assert, () => q.obliterate('gone'), 'CONFLICT', /gone/);
        assert.ok(err.message.length > 0);
        assert.equal(await total(q, 'gone'), 26, 'nothing removed');
        assert.equal(await q.obliterate('gone', { force: true, count: 10 }), 16);
        assert.equal(await q.obliterate('gone', { force: true, count: 10 }), 6);
        assert.equal(await q.obliterate('gone', { force: true }), 0);
        assert.equal(await total(q, 'gone'), 0);
        assert.equal(q.getJob(running), null);
        assert.equal(q.queueConfig('gone').concurrency, null, 'its controls are gone');
        assert.equal(q.getJob(keep).status, 'pending');
        assert.equal(await q.obliterate('never-used'), 0);
      } finally {
        held.release();
      }
    });

    it('remove takes a job and the children only it waits on, and refuses running ones', async () => {
      const q = await store.open();
      const shared = await q.enqueue('child', 'shared', { queue: 'dag', delay: 3_600 });
      const own = await q.enqueue('child', 'own', { queue: 'dag', delay: 3_600 });
      const parent = await q.enqueue('parent', null, { queue: 'dag', dependsOn: [own, shared] });
      const sibling = await q.enqueue('parent', null, { queue: 'dag', dependsOn: [shared] });
      assert.deepEqual(await q.remove(parent), [parent, own]);
      assert.equal(q.getJob(shared).status, 'pending', 'another job waits on it');
      await rejectsCode(assert, () => q.remove(parent), 'NOT_FOUND', new RegExp(parent));
      assert.deepEqual(await q.remove(sibling, { removeChildren: false }), [sibling]);
      assert.equal(q.getJob(shared).status, 'pending', 'kept without removeChildren');
      assert.deepEqual(await q.remove(shared, {}), [shared]);
      await rejectsCode(assert, () => q.remove(UNKNOWN), 'NOT_FOUND');

      const held = holdJobs(store, q, 'busy');
      try {
        const running = await q.enqueue('held', null, { queue: 'busy' });
        await held.started(running);
        await rejectsCode(assert, () => q.remove(running), 'CONFLICT', new RegExp(running));
        const waiting = await q.enqueue('t', null, { queue: 'idle', dependsOn: [running] });
        await rejectsCode(assert, () => q.remove(waiting), 'CONFLICT');
        assert.equal(q.getJob(waiting).status, 'waiting', 'nothing removed');
        assert.equal(q.getJob(running).status, 'running');
      } finally {
        held.release();
      }
    });

    it('retryJobs moves failed, dead and completed jobs back to pending with the same ids', async () => {
      const q = await store.open();
      q.task('fatal', async () => {
        const e = new Error('never retry');
        e.retryable = false;
        throw e;
      });
      q.task('boom', async () => {
        throw new Error('boom');
      });
      const w = store.work(q, { queues: ['r'], pollInterval: 0.05 });
      const failed = [];
      for (const n of [1, 2, 3]) failed.push(await q.enqueue('fatal', n, { queue: 'r', maxRetries: 0 }));
      const dead = await q.enqueue('boom', 0, { queue: 'r', maxRetries: 0 });
      for (const id of [...failed, dead]) await rejectsCode(assert, () => q.result(id, WAIT), 'JOB_FAILED');
      await w.close();
      assert.equal(await q.retryJobs('r', 'failed', 2), 2);
      assert.equal(await q.retryJobs('r'), 1, 'failed is the default status');
      assert.equal(await q.retryJobs('r'), 0);
      for (const id of failed) assert.equal(q.getJob(id).status, 'pending');
      assert.equal(await q.retryJobs('r', 'dead'), 1);
      assert.equal(q.getJob(dead).status, 'pending');
      assert.deepEqual(await q.deadLetters(), []);
      const st = await q.statsByQueue('r');
      assert.deepEqual([st.pending, st.failed, st.dead], [4, 0, 0]);
      assert.equal(await q.retryJobs('r', 'completed'), 0);
      assert.equal(await q.removeOrphans(), 0);
    });

    it('isMaxed, rateLimitTtl and the jobs each worker runs now', async () => {
      const q = await store.open();
      assert.equal(await q.isMaxed('capped'), false, 'no cap');
      assert.equal(await q.rateLimitTtl('capped'), 0, 'no limit');
      q.setQueueConcurrency('capped', 1);
      q.setQueueRateLimit('capped', '1/h');
      assert.equal(await q.isMaxed('capped'), false, 'nothing running');
      const held = holdJobs(store, q, 'capped');
      try {
        const running = await q.enqueue('held', null, { queue: 'capped' });
        await held.started(running);
        assert.equal(await q.isMaxed('capped'), true, 'one running under a cap of 1');
        const ttl = await q.rateLimitTtl('capped');
        assert.ok(ttl > 0 && ttl <= 3_600_000, `a claim was taken this hour: ${ttl} ms left`);
        const me = (await q.listWorkers()).find((x) => x.id === held.worker.id);
        assert.ok(me, `worker ${held.worker.id} is registered`);
        assert.deepEqual(me.currentJobs, [running]);
        q.clearQueueConcurrency('capped');
        assert.equal(await q.isMaxed('capped'), false, 'no cap any more');
        held.release();
        await until(() => q.getJob(running).status === 'completed', 15_000, `job ${running} completed`);
        const after = (await q.listWorkers()).find((x) => x.id === held.worker.id);
        assert.deepEqual(after.currentJobs, []);
      } finally {
        held.release();
      }
    });

    it('refuses bad input with INVALID_ARGUMENT and removes nothing', async () => {
      const q = await store.open();
      const a = await q.enqueue('t', 1, { queue: 'default' });
      const b = await q.enqueue('t', 2, { queue: 'default', dependsOn: [a] });
      const bad = (fn, re) => rejectsCode(assert, fn, 'INVALID_ARGUMENT', re);
      await bad(() => q.clean('default', 'running', 0), /running/);
      await bad(() => q.clean('default', 'nonsense', 0), /nonsense/);
      for (const grace of [-1, NaN, Infinity, '0', null, undefined, true]) await bad(() => q.clean('default', 'pending', grace), /graceMs/);
      await bad(() => q.clean('default', 'pending', 1.5), /graceMs/);
      for (const limit of [0, -5, 10_001, 1.5, NaN]) await bad(() => q.clean('default', 'pending', 0, limit), /limit/);
      for (const limit of ['10', true, {}]) await bad(() => q.clean('default', 'pending', 0, limit));
      for (const queue of ['', 7, null, undefined]) {
        await bad(() => q.clean(queue, 'pending', 0));
        await bad(() => q.drain(queue, true));
        await bad(() => q.obliterate(queue, { force: true }));
        await bad(() => q.retryJobs(queue, 'pending'));
        await bad(() => q.isMaxed(queue));
        await bad(() => q.rateLimitTtl(queue));
      }
      for (const status of [7, null]) await bad(() => q.clean('default', status, 0));
      for (const flag of ['yes', 1, {}]) await bad(() => q.drain('default', flag));
      for (const count of [0, -1, 10_001, 2.5, NaN]) await bad(() => q.obliterate('default', { force: true, count }), /count/);
      await bad(() => q.obliterate('default', { force: true, count: '5' }));
      await bad(() => q.obliterate('default', { force: 'yes' }));
      await bad(() => q.obliterate('default', { forse: true }), /forse/);
      await bad(() => q.obliterate('default', true));
      await bad(() => q.retryJobs('default', 'pending'), /pending/);
      await bad(() => q.retryJobs('default', 'nonsense'), /nonsense/);
      for (const count of [0, -1, 10_001, 0.5, '3']) await bad(() => q.retryJobs('default', 'dead', count));
      await bad(() => q.remove('not-an-id'));
      for (const id of [7, null, undefined]) await bad(() => q.remove(id));
      await bad(() => q.remove(b, { removeChildren: 'no' }));
      await bad(() => q.remove(b, { children: false }), /children/);
      await bad(() => q.remove(b, 'all'));
      assert.equal(q.getJob(a).status, 'pending', 'nothing removed');
      assert.equal(q.getJob(b).status, 'waiting', 'nothing removed');
      assert.equal(await total(q, 'default'), 2);
    });

    it('every call rejects with CLOSED after close()', async () => {
      const q = await store.open();
      await q.close();
      const calls = [
        () => q.clean('default', 'completed', 0),
        () => q.drain('default'),
        () => q.obliterate('default'),
        () => q.removeOrphans(),
        () => q.retryJobs('default'),
        () => q.remove(UNKNOWN),
        () => q.isMaxed('default'),
        () => q.rateLimitTtl('default'),
      ];
      for (const call of calls) await rejectsCode(assert, call, 'CLOSED');
    });
  });
}
