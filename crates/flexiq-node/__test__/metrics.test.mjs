// Execution metrics (aggregates and time series, windows in ms), the worker registry and job
// logs, on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const WAIT = { timeoutMs: 15_000 };
const UNKNOWN = '01890000-0000-7000-8000-000000000000';

for (const backend of BACKENDS) {
  describe(`metrics, workers and logs on ${backend.name}`, () => {
    const store = storeFixture(backend);

    /** Runs three successes of `ok` and one failure of `bad`; resolves once all four are recorded. */
    async function executions(q) {
      q.task('ok', async (n) => n).task('bad', async () => {
        throw new Error('broken');
      });
      const ok = await q.enqueueMany([1, 2, 3].map((n) => ({ task: 'ok', payload: n })));
      const bad = await q.enqueue('bad', null, { maxRetries: 0 });
      store.work(q, { queues: ['default'] });
      for (const id of ok) await q.result(id, WAIT);
      await rejectsCode(assert, () => q.result(bad, WAIT), 'JOB_FAILED');
      await until(async () => (await q.getMetrics(0)).length === 4, 15_000, 'four metric rows');
    }

    it('metrics aggregates per task over the last sinceMs', async () => {
      const q = await store.open();
      assert.deepEqual(await q.metrics(), {});
      await executions(q);
      const all = await q.metrics();
      assert.deepEqual(Object.keys(all).sort(), ['bad', 'ok']);
      assert.equal(all.ok.count, 3);
      assert.equal(all.ok.successCount, 3);
      assert.equal(all.ok.failureCount, 0);
      assert.equal(all.bad.count, 1);
      assert.equal(all.bad.failureCount, 1);
      for (const m of Object.values(all)) {
        for (const k of ['avgMs', 'p50Ms', 'p95Ms', 'p99Ms', 'minMs', 'maxMs']) assert.equal(typeof m[k], 'number', k);
        assert.ok(m.minMs <= m.p50Ms && m.p50Ms <= m.p95Ms && m.p95Ms <= m.p99Ms && m.p99Ms <= m.maxMs);
      }
      assert.deepEqual(Object.keys(await q.metrics('ok')), ['ok']);
      assert.deepEqual(await q.metrics('ok', 3_600_000), { ok: all.ok });
      assert.deepEqual(await q.metrics(null, 3_600_000), all);
      assert.deepEqual(await q.metrics('never-ran'), {});
    });

    it('metricsTimeseries buckets by bucketMs, oldest first', async () => {
      const q = await store.open();
      assert.deepEqual(await q.metricsTimeseries(), []);
      await executions(q);
      const minute = await q.metricsTimeseries();
      assert.ok(minute.length >= 1);
      assert.equal(minute.reduce((n, b) => n + b.count, 0), 4);
      assert.equal(minute.reduce((n, b) => n + b.failure, 0), 1);
      for (const b of minute) {
        assert.equal(b.timestamp % 60_000, 0);
        assert.equal(b.success + b.failure, b.count);
        assert.ok(b.count > 0, 'empty buckets are absent');
      }
      const fine = await q.metricsTimeseries(null, 3_600_000, 1);
      assert.equal(fine.reduce((n, b) => n + b.count, 0), 4);
      const stamps = fine.map((b) => b.timestamp);
      assert.deepEqual(stamps, [...stamps].sort((a, b) => a - b));
      assert.equal((await q.metricsTimeseries('ok', 3_600_000, 3_600_000)).reduce((n, b) => n + b.count, 0), 3);
    });

    it('metrics refuse bad windows and task names with INVALID_ARGUMENT', async () => {
      const q = await store.open();
      for (const bad of [0, -1, NaN, Infinity, 1.5, '60000', {}]) {
        await rejectsCode(assert, () => q.metrics(null, bad), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => q.metricsTimeseries(null, bad), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => q.metricsTimeseries(null, 60_000, bad), 'INVALID_ARGUMENT');
      }
      for (const bad of ['', 5, { task: 'x' }]) {
        await rejectsCode(assert, () => q.metrics(bad), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => q.metricsTimeseries(bad), 'INVALID_ARGUMENT');
      }
    });

    it('listWorkers shows a running worker as it registered', async () => {
      const q = await store.open();
      assert.deepEqual(await q.listWorkers(), []);
      q.task('t', async () => 1);
      const w = store.work(q, { workerId: 'node-w1', queues: ['alpha', 'beta'], concurrency: 3 });
      await w.ready;
      const workers = await q.listWorkers();
      const me = workers.find((x) => x.id === 'node-w1');
      assert.ok(me, `node-w1 among ${workers.map((x) => x.id)}`);
      assert.deepEqual(me.queues, ['alpha', 'beta']);
      assert.equal(me.concurrency, 3);
      assert.equal(me.pid, process.pid);
      assert.equal(typeof me.host, 'string');
      assert.ok(me.startedAt > 0 && me.heartbeatAt >= me.startedAt);
    });

    it('jobLogs returns what the handler logged, oldest first', async () => {
      const q = await store.open();
      q.task('chatty', async (p, ctx) => {
        await ctx.log('starting');
        await ctx.log('careful now', 'warn');
        await ctx.log('details', 'debug');
        return 'done';
      });
      const id = await q.enqueue('chatty', null);
      const quiet = await q.enqueue('never-runs', null, { queue: 'idle' });
      store.work(q, { queues: ['default'] });
      await q.result(id, WAIT);
      const logs = await q.jobLogs(id);
      assert.deepEqual(logs.map((l) => [l.level, l.message]), [['info', 'starting'], ['warn', 'careful now'], ['debug', 'details']]);
      assert.ok(logs.every((l) => l.jobId === id && typeof l.loggedAt === 'number'));
      assert.ok(logs[0].loggedAt <= logs[2].loggedAt);
      assert.deepEqual(await q.jobLogs(quiet), []);
      assert.deepEqual(await q.jobLogs(UNKNOWN), []);
      for (const bad of ['garbage', '', 7, null]) await rejectsCode(assert, () => q.jobLogs(bad), 'INVALID_ARGUMENT');
    });
  });
}
