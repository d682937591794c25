// Moving jobs that have not started (changeDelay, promote, promoteJobs, changePriority, the
// `lifo` enqueue option) and stalled-job recovery under a queue's stall budget
// (setQueueMaxStalled, clearQueueMaxStalled, `stallCount`), on every store; with the bad
// input each call refuses, and nothing changed when it does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';
const HOUR_S = 3_600;
/** Slack for the queue's clock against this process's, in ms. */
const SLACK = 5_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether a job is due now (a LIFO job's negative runAt included). */
const due = (job) => job.runAt <= Date.now() + SLACK;

/**
 * Runs every job of `queue` with a one-slot worker and resolves to their ids in the order
 * they were claimed, once `count` have run.
 */
async function claimOrder(store, q, queue, count) {
  const order = [];
  q.task('ordered', async (_p, ctx) => {
    order.push(ctx.id);
  });
  const w = store.work(q, { queues: [queue], concurrency: 1, prefetch: 0, pollInterval: 0.05 });
  await until(() => order.length >= count, 15_000, `${count} jobs of ${queue} run`);
  await w.close();
  return order;
}

/** A workflow stage of run `run` on `view`, claimed and left without heartbeats. */
async function claimedStage(view, run) {
  const [id] = await view.enqueueParallel([{ workflowRunId: run, workflowId: 'wf', stageId: 's' }]);
  await until(() => started(view), 10_000, `stage of ${run} claimed`);
  return id;
}

/** Claims the view's next job and reports that the host runs it (a lease renewal records the
 * start: only a started job's lapsed lease is a stall); false when there was none. */
async function started(view) {
  const got = await view.dequeue();
  if (got === null) return false;
  await view.touchJob(got.job.id);
  return true;
}

/** Lets the lease of every running job lapse, then recovers them; resolves to how many. */
async function stall(view) {
  await sleep(30);
  return view.releaseStaleJobs(10);
}

for (const backend of BACKENDS) {
  describe(`reschedule and stalls on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('changeDelay moves a pending job in time and refuses one that is not pending', async () => {
      const q = await store.open();
      const id = await q.enqueue('t', 1, { queue: 'd', delay: HOUR_S });
      assert.equal(await q.changeDelay(id, 0), undefined);
      assert.ok(due(q.getJob(id)), 'due now');
      const before = Date.now();
      await q.changeDelay(id, 600_000);
      const runAt = q.getJob(id).runAt;
      assert.ok(runAt >= before + 600_000 - SLACK && runAt <= Date.now() + 600_000 + SLACK, `runAt ${runAt}`);
      assert.equal(q.getJob(id).status, 'pending');

      const view = q.workflowJobs({ queue: 'd-run' });
      const running = await claimedStage(view, 'run-d');
      await rejectsCode(assert, () => q.changeDelay(running, 1_000), 'CONFLICT', /running/);
      assert.equal(await view.complete(running), 'acknowledged');
      await rejectsCode(assert, () => q.changeDelay(running, 1_000), 'CONFLICT', /completed/);
      await rejectsCode(assert, () => q.changeDelay(UNKNOWN, 1_000), 'NOT_FOUND');
    });

    it('promote makes one delayed job due, and refuses a job that is already due', async () => {
      const q = await store.open();
      const later = await q.enqueue('t', 1, { queue: 'p', delay: HOUR_S });
      const now = await q.enqueue('t', 2, { queue: 'p' });
      assert.ok(!due(q.getJob(later)));
      assert.equal(await q.promote(later), undefined);
      assert.ok(due(q.getJob(later)));
      assert.equal(q.getJob(later).status, 'pending');
      await rejectsCode(assert, () => q.promote(later), 'CONFLICT', /already due/);
      await rejectsCode(assert, () => q.promote(now), 'CONFLICT', new RegExp(now));
      await rejectsCode(assert, () => q.promote(UNKNOWN), 'NOT_FOUND');
    });

    it('promoteJobs makes the delayed jobs of one queue due, a batch at a time', async () => {
      const q = await store.open();
      const items = Array.from({ length: 5 }, (_, n) => ({ task: 't', payload: n, options: { queue: 'later', delay: HOUR_S + n } }));
      const ids = await q.enqueueMany(items);
      const other = await q.enqueue('t', null, { queue: 'other', delay: HOUR_S });
      assert.equal(await q.promoteJobs('later', 2), 2);
      assert.deepEqual(ids.map((id) => due(q.getJob(id))), [true, true, false, false, false], 'soonest first');
      assert.equal(await q.promoteJobs('later'), 3, 'the default count takes the rest');
      assert.equal(await q.promoteJobs('later'), 0);
      for (const id of ids) assert.ok(due(q.getJob(id)));
      assert.ok(!due(q.getJob(other)), 'another queue stays delayed');
      assert.equal(await q.promoteJobs('never-used', 10), 0);
    });

    it('changePriority and the lifo option set the order jobs are claimed in', async () => {
      const q = await store.open();
      const a = await q.enqueue('ordered', 'a', { queue: 'order' });
      const b = await q.enqueue('ordered', 'b', { queue: 'order' });
      const c = await q.enqueue('ordered', 'c', { queue: 'order', lifo: true });
      await sleep(5);
      const d = await q.enqueue('ordered', 'd', { queue: 'order', lifo: true });
      const e = await q.enqueue('ordered', 'e', { queue: 'order', priority: 1 });
      assert.ok(q.getJob(c).runAt < 0, 'a LIFO job sorts ahead of the FIFO ones');
      await sleep(5);
      assert.equal(await q.changePriority(a, 0, { lifo: true }), undefined);
      assert.equal(await q.changePriority(b, 2), undefined);
      assert.equal(q.getJob(b).priority, 2);
      assert.deepEqual(await claimOrder(store, q, 'order', 5), [b, e, a, d, c]);

      const later = await q.enqueue('t', null, { queue: 'idle', delay: HOUR_S });
      await rejectsCode(assert, () => q.changePriority(later, 1, { lifo: true }), 'CONFLICT', /delayed/);
      await q.changePriority(later, -3, { lifo: false });
      assert.equal(q.getJob(later).priority, -3);
      const lifo = await q.enqueue('t', null, { queue: 'idle', lifo: true });
      await q.changeDelay(lifo, 0);
      assert.ok(q.getJob(lifo).runAt > 0, 'a new delay makes a LIFO job FIFO');
      const waiting = await q.enqueue('t', null, { queue: 'idle', dependsOn: [later] });
      await q.changePriority(waiting, 7);
      assert.equal(q.getJob(waiting).priority, 7);
      await rejectsCode(assert, () => q.changePriority(waiting, 7, { lifo: true }), 'CONFLICT', /waiting/);
      const done = q.getJob(a);
      await rejectsCode(assert, () => q.changePriority(a, 9), 'CONFLICT', /completed/);
      assert.equal(q.getJob(a).priority, done.priority);
      await rejectsCode(assert, () => q.changePriority(UNKNOWN, 1), 'NOT_FOUND');
    });

    it('a stalled job is recovered once, then fails with STALLED', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ queue: 'stall' });
      const id = await claimedStage(view, 'run-s');
      assert.equal(q.getJob(id).stallCount, 0);
      assert.equal(await stall(view), 1);
      const recovered = q.getJob(id);
      assert.deepEqual([recovered.status, recovered.attempt, recovered.stallCount], ['pending', 0, 1], 'no attempt spent');
      assert.match(recovered.lastError, /^LEASE_HEARTBEAT_LOST/);
      await until(() => started(view), 10_000, 'the recovered job claimed again');
      assert.equal(await stall(view), 1);
      const dead = q.getJob(id);
      assert.deepEqual([dead.status, dead.stallCount], ['dead', 2]);
      assert.ok(dead.lastError.startsWith('STALLED'), dead.lastError);
      assert.match(dead.lastError, new RegExp(id));
      const [letter] = await q.deadLetters();
      assert.equal(letter.originalJobId, id);
      assert.ok(letter.error.startsWith('STALLED'), letter.error);
    });

    it('setQueueMaxStalled sets a queue budget, clearQueueMaxStalled restores the default', async () => {
      const q = await store.open();
      assert.equal(q.queueConfig('strict').maxStalledCount, null, 'the default applies');
      q.setQueueMaxStalled('strict', 0);
      q.setQueueMaxStalled('lenient', 2);
      assert.equal(q.queueConfig('strict').maxStalledCount, 0);
      assert.deepEqual(q.queueConfig('lenient'), { paused: false, rateLimit: null, concurrency: null, maxStalledCount: 2 });

      const strict = q.workflowJobs({ queue: 'strict' });
      const first = await claimedStage(strict, 'run-0');
      assert.equal(await stall(strict), 1);
      const j = q.getJob(first);
      assert.deepEqual([j.status, j.stallCount], ['dead', 1], 'a budget of 0 fails the first stall');
      assert.ok(j.lastError.startsWith('STALLED'), j.lastError);

      const lenient = q.workflowJobs({ queue: 'lenient' });
      const id = await claimedStage(lenient, 'run-2');
      for (const n of [1, 2]) {
        assert.equal(await stall(lenient), 1);
        assert.deepEqual([q.getJob(id).status, q.getJob(id).stallCount], ['pending', n]);
        await until(() => started(lenient), 10_000, `claim ${n + 1}`);
      }
      assert.equal(await stall(lenient), 1);
      assert.deepEqual([q.getJob(id).status, q.getJob(id).stallCount], ['dead', 3]);

      q.clearQueueMaxStalled('lenient');
      assert.equal(q.queueConfig('lenient').maxStalledCount, null);
      q.clearQueueMaxStalled('never-used');
    });

    it('refuses wrong types and bad values with INVALID_ARGUMENT and changes nothing', async () => {
      const q = await store.open();
      const later = await q.enqueue('t', 1, { queue: 'bad', delay: HOUR_S, priority: 3 });
      const before = q.getJob(later);
      q.setQueueMaxStalled('bad', 4);
      const bad = (fn, re) => rejectsCode(assert, fn, 'INVALID_ARGUMENT', re);
      const badSync = (fn) => throwsCode(assert, fn, 'INVALID_ARGUMENT');
      // Not numbers at all (refused while converting), and numbers that are not whole.
      const notNumbers = ['5', true, false, undefined, null, {}];
      const notWhole = [NaN, Infinity, 1.5];
      for (const v of [...notNumbers, ...notWhole, -1, 2 ** 60]) await bad(() => q.changeDelay(later, v), /delayMs/);
      for (const v of [...notNumbers, ...notWhole]) await bad(() => q.changePriority(later, v), /priority/);
      for (const v of [2_097_153, -2_097_153]) await bad(() => q.changePriority(later, v), /out of range/);
      for (const v of ['5', true, {}, null]) await bad(() => q.promoteJobs('bad', v), /count/);
      for (const v of [...notWhole, 0, -1, 10_001]) await bad(() => q.promoteJobs('bad', v), /count/);
      for (const v of [...notNumbers, ...notWhole]) {
        assert.throws(() => q.setQueueMaxStalled('bad', v), (e) => e.code === 'INVALID_ARGUMENT' && /maxStalledCount/.test(e.message));
      }
      for (const v of [-1, 10_001]) badSync(() => q.setQueueMaxStalled('bad', v));
      for (const opts of [{ lifo: 'yes' }, { lifo: 1 }, 'lifo', true, []]) await bad(() => q.changePriority(later, 1, opts));
      await bad(() => q.changePriority(later, 1, { lifi: true }), /lifi/);
      for (const id of [7, null, undefined, true, 'not-an-id']) {
        await bad(() => q.changeDelay(id, 0));
        await bad(() => q.promote(id));
        await bad(() => q.changePriority(id, 1));
      }
      for (const queue of ['', 7, null, undefined]) {
        await bad(() => q.promoteJobs(queue));
        badSync(() => q.setQueueMaxStalled(queue, 1));
        badSync(() => q.clearQueueMaxStalled(queue));
      }
      await bad(() => q.enqueue('t', null, { queue: 'bad', lifo: 'yes' }));
      await bad(() => q.enqueue('t', null, { queue: 'bad', lifo: true, delay: 5 }), /lifo/);
      await bad(() => q.enqueue('t', null, { queue: 'bad', lifo: true, runAt: Date.now() + 60_000 }), /lifo/);
      assert.deepEqual(q.getJob(later), before, 'nothing changed');
      assert.equal(q.queueConfig('bad').maxStalledCount, 4);
      assert.equal((await q.statsByQueue('bad')).pending, 1, 'nothing enqueued');
    });

    it('every call fails with CLOSED after close()', async () => {
      const q = await store.open();
      await q.close();
      for (const call of [() => q.changeDelay(UNKNOWN, 0), () => q.promote(UNKNOWN), () => q.promoteJobs('q'), () => q.changePriority(UNKNOWN, 1)]) {
        await rejectsCode(assert, call, 'CLOSED');
      }
      throwsCode(assert, () => q.setQueueMaxStalled('q', 1), 'CLOSED');
      throwsCode(assert, () => q.clearQueueMaxStalled('q'), 'CLOSED');
    });
  });
}
