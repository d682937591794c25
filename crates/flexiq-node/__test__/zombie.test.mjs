// The zombie worker, end to end through the Node worker on every store: a handler held past
// the point where its claim was taken away (an operator's requeueJob of a running job),
// another worker re-claims the job and finishes it, then the first handler finishes late. Its
// ack must be refused as superseded and the stored result must stay the second worker's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, storeFixture, until } from './helpers.mjs';

const WAIT = { timeoutMs: 15_000 };

for (const backend of BACKENDS) {
  describe(`zombie worker on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('a late finish after a re-claim is superseded and changes nothing', async () => {
      const first = await store.open();
      const second = await store.open();
      let release;
      const gate = new Promise((r) => (release = r));
      let started = false;
      let lost;
      first.task('report', async (payload, ctx) => {
        started = true;
        ctx.signal.addEventListener('abort', () => (lost = ctx.signal.reason), { once: true });
        await gate;
        return { by: 'first' };
      });
      second.task('report', async () => ({ by: 'second' }));

      // One slot and no prefetch: while its handler is held, the first worker claims nothing.
      // A short lease makes its heartbeats (every 100 ms) notice the lost claim soon.
      const zombie = first.worker({ queues: ['default'], concurrency: 1, prefetch: 0, lease: 0.3, maintenance: false });
      const zombieRun = zombie.run();
      await zombie.ready;
      const id = await first.enqueue('report', { n: 1 });
      await until(() => started, 15_000, 'the first handler running');
      const claimed = first.getJob(id);
      assert.equal(claimed.status, 'running');
      assert.equal(claimed.workerId, zombie.id);
      assert.equal(claimed.claimSeq, 1);

      // requeueJob on a running job: back to pending, retry budget kept.
      assert.equal(first.requeueJob(id), true);
      const requeued = first.getJob(id);
      assert.equal(requeued.status, 'pending');
      assert.equal(requeued.attempt, claimed.attempt - 1);
      assert.equal(first.requeueJob(id), false, 'a pending job is not running');

      const rescuer = second.worker({ queues: ['default'], maintenance: false });
      const rescuerRun = rescuer.run();
      assert.deepEqual(await second.result(id, WAIT), { by: 'second' });
      assert.equal(second.getJob(id).claimSeq, 2);

      // The first worker's heartbeat is refused: its handler's signal aborts with LEASE_LOST.
      await until(() => lost, 15_000, 'the first handler told its lease was lost');
      assert.equal(lost.code, 'LEASE_LOST');
      assert.equal(lost.jobId, id);

      // The zombie finishes late; its ack is superseded.
      release();
      const z = await zombie.stop();
      assert.equal(z.succeeded, 1, 'the first handler itself succeeded');
      assert.equal(z.superseded, 1);
      assert.equal(z.acknowledged, 0);
      const r = await rescuer.stop();
      assert.equal(r.succeeded, 1);
      assert.equal(r.acknowledged, 1);
      assert.equal(r.superseded, 0);
      assert.deepEqual(await zombieRun, z);
      assert.deepEqual(await rescuerRun, r);

      const after = first.getJob(id);
      assert.equal(after.status, 'completed');
      assert.deepEqual(after.result, { by: 'second' });
      assert.deepEqual(first.getResult(id), { by: 'second' });
      assert.equal((await first.stats()).completed, 1);
    });
  });
}
