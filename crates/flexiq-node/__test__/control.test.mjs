// Queue limits (rate limit, concurrency cap), purge and task revocation, on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const WAIT = { timeoutMs: 15_000 };

/** Resolves after `ms` (used only to give a worker time to do something it must not do). */
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

for (const backend of BACKENDS) {
  describe(`queue control on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('sets, reads back and clears rate limits and concurrency caps', async () => {
      const q = await store.open();
      assert.deepEqual(q.queueConfig('mail'), { paused: false, rateLimit: null, concurrency: null, maxStalledCount: null });
      q.setQueueRateLimit('mail', '10/s');
      q.setQueueConcurrency('mail', 3);
      assert.deepEqual(q.queueConfig('mail'), { paused: false, rateLimit: '10/s', concurrency: 3, maxStalledCount: null });
      q.setQueueRateLimit('mail', ' 5 / m ');
      assert.equal(q.queueConfig('mail').rateLimit, '5/m');
      q.setQueueRateLimit('mail', '7/h');
      assert.equal(q.queueConfig('mail').rateLimit, '7/h');
      q.clearQueueRateLimit('mail');
      assert.deepEqual(q.queueConfig('mail'), { paused: false, rateLimit: null, concurrency: 3, maxStalledCount: null });
      q.clearQueueConcurrency('mail');
      assert.deepEqual(q.queueConfig('mail'), { paused: false, rateLimit: null, concurrency: null, maxStalledCount: null });
      // Clearing what was never set is fine.
      q.clearQueueRateLimit('never');
      q.clearQueueConcurrency('never');
      // Another handle on the same store sees the same controls: they are persisted.
      q.setQueueConcurrency('shared', 2);
      const other = await store.open();
      assert.equal(other.queueConfig('shared').concurrency, 2);
    });

    it('refuses bad limits with INVALID_ARGUMENT and changes nothing', async () => {
      const q = await store.open();
      q.setQueueRateLimit('q', '3/s');
      for (const bad of ['10/d', 'x/s', '0/s', '-1/s', '1.5/s', '', '10', '/s', 'ten per second']) {
        throwsCode(assert, () => q.setQueueRateLimit('q', bad), 'INVALID_ARGUMENT');
      }
      for (const bad of [10, null, undefined, { n: 1 }]) throwsCode(assert, () => q.setQueueRateLimit('q', bad), 'INVALID_ARGUMENT');
      assert.equal(q.queueConfig('q').rateLimit, '3/s');
      for (const bad of [0, -1, 1.5, NaN, Infinity, 1_000_001, '3', null]) {
        throwsCode(assert, () => q.setQueueConcurrency('q', bad), 'INVALID_ARGUMENT');
      }
      assert.equal(q.queueConfig('q').concurrency, null);
      for (const bad of ['', 7, null]) {
        throwsCode(assert, () => q.setQueueRateLimit(bad, '1/s'), 'INVALID_ARGUMENT');
        throwsCode(assert, () => q.setQueueConcurrency(bad, 1), 'INVALID_ARGUMENT');
        throwsCode(assert, () => q.clearQueueRateLimit(bad), 'INVALID_ARGUMENT');
        throwsCode(assert, () => q.clearQueueConcurrency(bad), 'INVALID_ARGUMENT');
        throwsCode(assert, () => q.queueConfig(bad), 'INVALID_ARGUMENT');
      }
      const err = await rejectsCode(assert, () => q.setQueueRateLimit('q', '10/d'), 'INVALID_ARGUMENT');
      assert.match(err.message, /10\/d/);
    });

    it('a concurrency cap holds across a worker with more slots', async () => {
      const q = await store.open();
      q.setQueueConcurrency('capped', 1);
      let running = 0;
      let peak = 0;
      q.task('nap', async () => {
        running++;
        peak = Math.max(peak, running);
        await pause(30);
        running--;
      });
      const ids = await q.enqueueMany(Array.from({ length: 4 }, () => ({ task: 'nap', options: { queue: 'capped' } })));
      store.work(q, { concurrency: 4, queues: ['capped'], pollInterval: 0.05 });
      for (const id of ids) await q.result(id, WAIT);
      assert.equal(peak, 1);
    });

    it('a rate limit holds back claims until it is cleared', async () => {
      const q = await store.open();
      q.setQueueRateLimit('slow', '2/h');
      q.task('ok', async (n) => n);
      const ids = await q.enqueueMany([1, 2, 3].map((n) => ({ task: 'ok', payload: n, options: { queue: 'slow' } })));
      store.work(q, { queues: ['slow'], pollInterval: 0.05 });
      await until(async () => (await q.statsByQueue('slow')).completed === 2, 15_000, 'two jobs within the limit');
      // The worker polls every 50 ms; several polls later the third is still held back.
      await pause(300);
      const held = (await q.listJobs({ queue: 'slow', status: 'pending' })).map((j) => j.id);
      assert.equal(held.length, 1);
      assert.ok(ids.includes(held[0]));
      q.clearQueueRateLimit('slow');
      assert.equal(await q.result(held[0], WAIT), 3);
    });

    it('purge cancels the pending jobs of one queue and keeps their rows', async () => {
      const q = await store.open();
      const ids = await q.enqueueMany([1, 2, 3].map((n) => ({ task: 't', payload: n, options: { queue: 'backlog' } })));
      const later = await q.enqueue('t', 4, { queue: 'backlog', delay: 60 });
      const other = await q.enqueue('t', 5, { queue: 'other' });
      assert.equal(await q.purge('backlog'), 4);
      for (const id of [...ids, later]) assert.equal(q.getJob(id).status, 'cancelled');
      assert.equal(q.getJob(other).status, 'pending');
      assert.equal((await q.statsByQueue('backlog')).cancelled, 4);
      assert.equal(await q.purgeQueue('backlog'), 0);
      assert.equal(await q.purgeQueue('never-used'), 0);
      for (const bad of ['', 3, null]) await rejectsCode(assert, () => q.purge(bad), 'INVALID_ARGUMENT');
    });

    it('purge leaves running jobs alone', async () => {
      const q = await store.open();
      let release;
      const gate = new Promise((r) => (release = r));
      let started = false;
      q.task('held', async () => {
        started = true;
        await gate;
        return 'finished';
      });
      const running = await q.enqueue('held', null, { queue: 'p' });
      store.work(q, { queues: ['p'], concurrency: 1, prefetch: 0 });
      await until(() => started, 15_000, 'the job running');
      const waiting = await q.enqueue('held', null, { queue: 'p' });
      assert.equal(await q.purge('p'), 1);
      assert.equal(q.getJob(waiting).status, 'cancelled');
      assert.equal(q.getJob(running).status, 'running');
      release();
      assert.equal(await q.result(running, WAIT), 'finished');
    });

    it('a revoked task refuses enqueues with TASK_REVOKED; its pending jobs still run', async () => {
      const q = await store.open();
      const before = await q.enqueueMany([1, 2].map((n) => ({ task: 'legacy', payload: n })));
      assert.deepEqual(q.revokedTasks(), []);
      q.revokeTask('legacy');
      q.revokeTask('legacy');
      q.revokeTask('older');
      assert.deepEqual(q.revokedTasks(), ['legacy', 'older']);
      const err = await rejectsCode(assert, () => q.enqueue('legacy', 3), 'TASK_REVOKED', /legacy/);
      assert.equal(err.task, 'legacy');
      await rejectsCode(assert, () => q.enqueueMany([{ task: 'fine' }, { task: 'legacy' }]), 'TASK_REVOKED');
      assert.equal((await q.stats()).pending, 2, 'a refused batch writes nothing');
      await q.enqueue('fine', 1);

      q.task('legacy', async (n) => n * 10).task('fine', async () => 'ok');
      store.work(q, { queues: ['default'] });
      assert.deepEqual(await Promise.all(before.map((id) => q.result(id, WAIT))), [10, 20]);
      await rejectsCode(assert, () => q.replay(before[0]), 'TASK_REVOKED');

      assert.equal(q.unrevokeTask('legacy'), true);
      assert.equal(q.unrevokeTask('legacy'), false);
      assert.deepEqual(q.revokedTasks(), ['older']);
      assert.equal(await q.result(await q.enqueue('legacy', 4), WAIT), 40);
      for (const bad of ['', 5, null, undefined]) {
        throwsCode(assert, () => q.revokeTask(bad), 'INVALID_ARGUMENT');
        throwsCode(assert, () => q.unrevokeTask(bad), 'INVALID_ARGUMENT');
      }
    });

    it('retrying a dead letter of a revoked task is TASK_REVOKED', async () => {
      const q = await store.open();
      q.task('doomed', async () => {
        throw new Error('always');
      });
      const id = await q.enqueue('doomed', 1, { maxRetries: 0 });
      store.work(q, { queues: ['default'] });
      await rejectsCode(assert, () => q.result(id, WAIT), 'JOB_FAILED');
      const [dead] = await until(async () => {
        const d = await q.deadLetters();
        return d.length === 1 && d;
      }, 15_000, 'a dead letter');
      q.revokeTask('doomed');
      await rejectsCode(assert, () => q.retryDead(dead.id), 'TASK_REVOKED');
      assert.equal((await q.deadLetters()).length, 1, 'the entry stays');
    });
  });
}
