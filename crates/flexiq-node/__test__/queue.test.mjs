// Opening and closing queues, enqueuing, the maxPending cap, queue control, entry points.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import { FlexiqError, Queue } from '../index.mjs';
import { BACKENDS, rejectsCode, storeFixture, throwsCode } from './helpers.mjs';

describe('entry points', () => {
  it('CommonJS and ESM export the same classes', () => {
    const cjs = createRequire(import.meta.url)('../index.cjs');
    assert.equal(cjs.Queue, Queue);
    assert.equal(cjs.FlexiqError, FlexiqError);
    assert.ok(cjs.reservedSettingPrefixes().includes('retention:'));
    assert.equal(typeof cjs.CONTRACT_LEVEL, 'number');
  });

  it('bad queue options are INVALID_ARGUMENT', () => {
    throwsCode(assert, () => new Queue(), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({}), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'a.db', url: 'sqlite://b.db' }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ url: 'mysql://h/db' }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ url: ':memory:' }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', maxPending: 0 }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', maxPending: 1.5 }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', maxPending: NaN }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', dbpath: 'y' }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', retention: { taskLogs: -1 } }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 'x.db', durability: 'sometimes' }), 'INVALID_ARGUMENT');
    throwsCode(assert, () => new Queue({ dbPath: 123 }), 'INVALID_ARGUMENT');
  });

  it('an unreachable server is a BACKEND error, not a hang', async () => {
    await rejectsCode(assert, () => Queue.connect({ url: 'redis://127.0.0.1:1?prefix=nothing' }), 'BACKEND');
  });
});

for (const backend of BACKENDS) {
  describe(`queue on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('opens, reports its backend and namespace, and closes', async () => {
      const q = await store.open({ namespace: 'ns1' });
      assert.equal(q.backend, backend.name);
      assert.equal(q.namespace, 'ns1');
      assert.equal(q.closed, false);
      await q.close();
      await q.close();
      assert.equal(q.closed, true);
      throwsCode(assert, () => q.getJob('01890000-0000-7000-8000-000000000000'), 'CLOSED');
      await rejectsCode(assert, () => q.enqueue('t', 1), 'CLOSED', /closed/);
      throwsCode(assert, () => q.countPendingByQueue('default'), 'CLOSED');
    });

    it('enqueue stores a JSON payload and options', async () => {
      const q = await store.open();
      const before = Date.now();
      const id = await q.enqueue('send', { to: 'a@b.c', n: [1, 2] }, {
        queue: 'mail',
        priority: 5,
        delay: 30,
        maxRetries: 1,
        backoff: { base: 2, max: 10 },
        timeout: 1.5,
        metadata: { tenant: 't1' },
      });
      const job = q.getJob(id);
      assert.deepEqual(job.payload, { to: 'a@b.c', n: [1, 2] });
      assert.equal(job.queue, 'mail');
      assert.equal(job.priority, 5);
      assert.equal(job.status, 'pending');
      assert.equal(job.maxRetries, 1);
      assert.equal(job.backoffBaseMs, 2_000);
      assert.equal(job.backoffMaxMs, 10_000);
      assert.equal(job.timeoutMs, 1_500);
      assert.deepEqual(job.metadata, { tenant: 't1' });
      assert.ok(job.runAt >= before + 30_000 && job.runAt <= Date.now() + 30_000);
      const at = new Date(Date.now() + 60_000);
      const later = await q.enqueue('send', null, { runAt: at });
      assert.equal(q.getJob(later).runAt, at.getTime());
      assert.equal(q.getJob(await q.enqueue('send')).payload, null);
    });

    it('unique keys deduplicate and dependencies wait', async () => {
      const q = await store.open();
      const a = await q.enqueue('t', 1, { uniqueKey: 'k' });
      assert.equal(await q.enqueue('t', 2, { uniqueKey: 'k' }), a);
      const b = await q.enqueue('t', 3, { dependsOn: [a] });
      assert.equal(q.getJob(b).status, 'waiting');
      assert.deepEqual(q.getJob(b).dependsOn, [a]);
    });

    it('bad enqueue input is INVALID_ARGUMENT and writes nothing', async () => {
      const q = await store.open();
      const bad = [
        ['t', 1, { delay: NaN }],
        ['t', 1, { delay: -1 }],
        ['t', 1, { delay: 1, runAt: Date.now() }],
        ['t', 1, { maxRetries: 1.5 }],
        ['t', 1, { maxRetries: -1 }],
        ['t', 1, { priority: 0.5 }],
        ['t', 1, { timeout: 0 }],
        ['t', 1, { timeout: Infinity }],
        ['t', 1, { runAt: -5 }],
        ['t', 1, { queue: '' }],
        ['t', 1, { dependsOn: ['not-a-uuid'] }],
        ['t', 1, { metadata: 'text' }],
        ['t', 1, { backoff: { base: 10, max: 1 } }],
        ['t', 1, { backoff: { bse: 1 } }],
        ['t', 1, { retries: 3 }],
        ['t', 1, 'options'],
        ['', 1],
        [42, 1],
        ['t', 10n],
      ];
      for (const args of bad) await rejectsCode(assert, () => q.enqueue(...args), 'INVALID_ARGUMENT');
      const cyclic = {};
      cyclic.self = cyclic;
      await rejectsCode(assert, () => q.enqueue('t', cyclic), 'INVALID_ARGUMENT');
      assert.equal((await q.stats()).pending, 0);
    });

    it('enqueueMany returns ids in order, all or nothing', async () => {
      const q = await store.open();
      const ids = await q.enqueueMany([
        { task: 'a', payload: 1 },
        { task: 'b', payload: 2, options: { queue: 'other' } },
        { task: 'c' },
      ]);
      assert.equal(ids.length, 3);
      assert.deepEqual(ids.map((id) => q.getJob(id).task), ['a', 'b', 'c']);
      assert.equal(q.getJob(ids[1]).queue, 'other');
      await rejectsCode(assert, () => q.enqueueMany([{ task: 'ok', payload: 1 }, { task: 'bad', options: { delay: NaN } }]), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.enqueueMany([{ task: 'ok' }, { task: '' }]), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.enqueueMany([]), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.enqueueMany('x'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.enqueueMany([null]), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.enqueueMany([{ task: 'x', extra: 1 }]), 'INVALID_ARGUMENT');
      assert.equal((await q.stats()).pending, 3);
    });

    it('maxPending rejects past the cap with QUEUE_FULL, counting countPendingByQueue', async () => {
      const q = await store.open({ maxPending: 3 });
      await q.enqueueMany([{ task: 't' }, { task: 't' }]);
      await q.enqueue('t', 1, { queue: 'other' });
      assert.equal(q.countPendingByQueue('default'), 2);
      await q.enqueue('t');
      assert.equal(q.countPendingByQueue('default'), 3);
      const err = await rejectsCode(assert, () => q.enqueue('t'), 'QUEUE_FULL', /queue default is full/);
      assert.equal(err.queue, 'default');
      assert.equal(err.pending, 3);
      assert.equal(err.maxPending, 3);
      assert.ok(err instanceof FlexiqError && err instanceof Error);
      await rejectsCode(assert, () => q.enqueueMany([{ task: 't' }]), 'QUEUE_FULL');
      assert.equal(q.countPendingByQueue('default'), 3);
      assert.equal(q.countPendingByQueue('other'), 1);
      assert.equal(q.countPendingByQueue('never-used'), 0);
      throwsCode(assert, () => q.countPendingByQueue(''), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.countPendingByQueue(7), 'INVALID_ARGUMENT');
    });

    it('pauses and resumes queues', async () => {
      const q = await store.open();
      assert.deepEqual(q.listPausedQueues(), []);
      q.pauseQueue('b');
      q.pauseQueue('a');
      assert.deepEqual(q.listPausedQueues(), ['a', 'b']);
      q.resumeQueue('b');
      assert.deepEqual(q.listPausedQueues(), ['a']);
      throwsCode(assert, () => q.pauseQueue(''), 'INVALID_ARGUMENT');
    });

    it('namespaces isolate jobs', async () => {
      const a = await store.open({ namespace: 'a' });
      const b = await store.open({ namespace: 'b' });
      const id = await a.enqueue('t', 1);
      assert.equal(b.getJob(id), null);
      assert.equal(a.getJob(id).namespace, 'a');
    });
  });
}
