// Opening without blocking (Queue.connect), the SQLite-only constructor, worker readiness and
// the in-process ways to stop (worker.close / stop, queue.shutdown), on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Queue } from '../index.mjs';
import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const WAIT = { timeoutMs: 15_000 };

describe('Queue.connect and the constructor', () => {
  it('connect refuses bad options by rejecting with INVALID_ARGUMENT, never throwing', async () => {
    for (const bad of [undefined, null, {}, 'sqlite://x.db', { url: 'mysql://h/db' }, { dbPath: 5 }, { dbPath: 'a.db', url: 'sqlite://b.db' }, { url: 'sqlite://x.db', poolSize: -1 }, { url: 'sqlite://x.db', nope: 1 }]) {
      const p = Queue.connect(bad);
      assert.ok(p instanceof Promise);
      await rejectsCode(assert, () => p, 'INVALID_ARGUMENT');
    }
  });

  it('connect to an unreachable server rejects with BACKEND', async () => {
    await rejectsCode(assert, () => Queue.connect({ url: 'redis://127.0.0.1:1?prefix=nothing' }), 'BACKEND');
    await rejectsCode(assert, () => Queue.connect({ url: 'postgres://postgres@127.0.0.1:1/test?schema=nothing' }), 'BACKEND');
  });

  it('the constructor opens SQLite only and points elsewhere to Queue.connect', () => {
    for (const url of ['postgres://postgres@127.0.0.1:5432/test?schema=x', 'redis://127.0.0.1:6379?prefix=x']) {
      throwsCode(assert, () => new Queue({ url }), 'INVALID_ARGUMENT');
      assert.throws(() => new Queue({ url }), /Queue\.connect/);
    }
  });
});

for (const backend of BACKENDS) {
  describe(`lifecycle on ${backend.name}`, () => {
    const store = storeFixture(backend);

    if (backend.name !== 'sqlite') {
      it('connecting and migrating a fresh store leaves the event loop turning', async () => {
        let ticks = 0;
        const timer = setInterval(() => ticks++, 1);
        try {
          const q = await store.open();
          assert.ok(ticks > 0, 'the timer fired while connecting');
          assert.equal(q.backend, backend.name);
          assert.deepEqual((await q.migrate()).applied, [], 'connect migrated');
        } finally {
          clearInterval(timer);
        }
      });
    } else {
      it('the constructor opens the same file Queue.connect does', async () => {
        const a = await store.open();
        const id = await a.enqueue('t', 1);
        const b = new Queue({ url: store.url });
        try {
          assert.equal(b.getJob(id).task, 't');
        } finally {
          await b.close();
        }
      });
    }

    it('worker.ready resolves once the worker is live; jobs enqueued then run', async () => {
      const q = await store.open();
      q.task('t', async (n) => n + 1);
      const w = q.worker({ queues: ['default'] });
      const running = w.run();
      await w.ready;
      assert.equal(w.ready, w.ready, 'one Promise');
      assert.ok((await q.listWorkers()).some((x) => x.id === w.id), 'registered when ready');
      assert.equal(await q.result(await q.enqueue('t', 1), WAIT), 2);
      const counters = await w.stop();
      assert.equal(counters.succeeded, 1);
      assert.deepEqual(await running, counters);
      await w.ready;
    });

    it('worker.ready rejects with CLOSED when the worker was closed before it ran', async () => {
      const q = await store.open();
      q.task('t', async () => 1);
      const w = q.worker();
      assert.equal(await w.stop(), undefined);
      await rejectsCode(assert, () => w.ready, 'CLOSED', new RegExp(`worker ${w.id} was closed before it ran`));
      // A later run starts and stops at once.
      const counters = await w.run();
      assert.equal(counters.claimed, 0);
    });

    it('worker.ready rejects with CLOSED when its queue was closed first', async () => {
      const q = await store.open();
      q.task('t', async () => 1);
      const w = q.worker();
      await q.close();
      const outcome = w.run().then(
        () => null,
        (e) => e,
      );
      await rejectsCode(assert, () => w.ready, 'CLOSED', new RegExp(`worker ${w.id}`));
      const err = await outcome;
      assert.ok(err && err.name === 'FlexiqError', `run() rejects: ${err}`);
    });

    it('worker.close lets a running handler finish, then no more jobs are claimed', async () => {
      const q = await store.open();
      let release;
      const gate = new Promise((r) => (release = r));
      let started = false;
      q.task('held', async () => {
        started = true;
        await gate;
        return 'finished';
      });
      const w = q.worker({ queues: ['default'], concurrency: 1, prefetch: 0 });
      const running = w.run();
      await w.ready;
      const id = await q.enqueue('held', null);
      await until(() => started, 15_000, 'the handler running');
      const closing = w.close();
      release();
      await closing;
      assert.equal(q.getJob(id).status, 'completed');
      assert.equal((await running).succeeded, 1);
      const after = await q.enqueue('held', null);
      assert.equal(q.getJob(after).status, 'pending');
    });

    it('queue.shutdown stops every worker of the queue, then closes it', async () => {
      const q = await store.open();
      q.task('t', async (n) => n);
      const a = q.worker({ queues: ['default'] });
      const b = q.worker({ queues: ['default'] });
      const never = q.worker({ queues: ['default'] });
      const runs = [a.run(), b.run()];
      await Promise.all([a.ready, b.ready]);
      const id = await q.enqueue('t', 5);
      assert.equal(await q.result(id, WAIT), 5);
      await q.shutdown();
      assert.equal(q.closed, true);
      const [ca, cb] = await Promise.all(runs);
      assert.equal(ca.succeeded + cb.succeeded, 1);
      await rejectsCode(assert, () => never.ready, 'CLOSED');
      await q.shutdown();
      throwsCode(assert, () => q.worker(), 'CLOSED');
    });
  });
}
