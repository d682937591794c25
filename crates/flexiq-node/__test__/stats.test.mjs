// Stats, metrics, dead letters, cleanup, retention, settings, schema and the contract floor.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CONTRACT_LEVEL, reservedSettingPrefixes } from '../index.mjs';
import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';
const ONLY_DEFAULT = { queues: ['default'] };

for (const backend of BACKENDS) {
  describe(`stats, dead letters, retention and settings on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('counts by status and queue, and records metrics', async () => {
      const q = await store.open();
      const started = Date.now();
      q.task('ok', async () => 1);
      await q.enqueueMany([{ task: 'ok' }, { task: 'ok' }, { task: 'idle', options: { queue: 'b' } }]);
      store.work(q, ONLY_DEFAULT);
      await until(async () => (await q.stats()).completed === 2, 10_000, 'two completed');
      const s = await q.stats();
      assert.equal(s.pending, 1);
      assert.equal((await q.statsByQueue('b')).pending, 1);
      assert.equal((await q.statsByQueue('default')).completed, 2);
      // Configured queues with no jobs are listed too, with zero counts.
      q.pauseQueue('paused-only');
      q.setQueueRateLimit('limited-only', '5/s');
      const all = await q.statsAllQueues();
      assert.equal(all.default.completed, 2);
      assert.equal(all.b.pending, 1);
      const zero = { pending: 0, running: 0, completed: 0, failed: 0, dead: 0, cancelled: 0, suspended: 0, waiting: 0 };
      assert.deepEqual(all['paused-only'], zero);
      assert.deepEqual(all['limited-only'], zero);
      assert.deepEqual(await q.statsByQueue('paused-only'), zero);
      await rejectsCode(assert, () => q.statsByQueue(''), 'INVALID_ARGUMENT');
      const metrics = await until(async () => {
        const m = await q.getMetrics(started);
        return m.length === 2 && m;
      }, 10_000, 'two metric rows');
      assert.ok(metrics.every((m) => m.task === 'ok' && m.success && m.recordedAt >= started && typeof m.durationMs === 'number'));
      assert.equal((await q.getMetrics(started, 'idle')).length, 0);
      assert.equal((await q.getMetrics(Date.now() + 60_000)).length, 0);
      for (const bad of [-1, NaN, 1.5]) await rejectsCode(assert, () => q.getMetrics(bad), 'INVALID_ARGUMENT');
    });

    it('dead letters: list, page, retry, delete, purge', async () => {
      const q = await store.open();
      q.task('die', async () => {
        throw new Error('dead on arrival');
      });
      const ids = await q.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ task: 'die', payload: i, options: { maxRetries: 0 } })));
      store.work(q, ONLY_DEFAULT);
      for (const id of ids) await rejectsCode(assert, () => q.result(id, { timeoutMs: 10_000 }), 'JOB_FAILED');
      const dead = await until(async () => {
        const d = await q.deadLetters(100);
        return d.length === 5 && d;
      }, 10_000, 'five dead letters');
      assert.equal((await q.deadLetters()).length, 5);
      assert.equal((await q.deadLetters(2, 1)).length, 2);
      assert.ok(dead.every((d) => d.taskName === 'die' && /dead on arrival/.test(d.error) && typeof d.failedAt === 'number'));
      assert.deepEqual(dead.map((d) => d.originalJobId).sort(), [...ids].sort());
      assert.equal((await q.deadLettersByTask('die', 3)).length, 3);
      assert.equal((await q.deadLettersByTask('other')).length, 0);
      const walked = [];
      let after = null;
      do {
        const p = await q.deadLettersAfter(2, after);
        walked.push(...p.items.map((d) => d.id));
        after = p.nextCursor;
      } while (after);
      assert.deepEqual([...walked].sort(), dead.map((d) => d.id).sort());
      await rejectsCode(assert, () => q.deadLettersAfter(2, 'garbage'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.deadLetters(0), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.deadLetters(5, -1), 'INVALID_ARGUMENT');

      // Paused, so the retried job stays pending instead of dying again mid-test.
      q.pauseQueue('default');
      const retried = await q.retryDead(dead[0].id);
      assert.equal(q.getJob(retried).task, 'die');
      await rejectsCode(assert, () => q.retryDead(UNKNOWN), 'NOT_FOUND');
      await rejectsCode(assert, () => q.retryDead('nope'), 'INVALID_ARGUMENT');
      assert.equal(await q.deleteDead(dead[1].id), true);
      assert.equal(await q.deleteDead(dead[1].id), false);
      assert.equal(await q.purgeDead(60_000), 0);
      await rejectsCode(assert, () => q.purgeDead(-1), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.purgeDead(0.5), 'INVALID_ARGUMENT');
      const left = (await q.deadLetters(100)).filter((d) => d.originalJobId !== dead[0].originalJobId).length;
      assert.ok(left >= 3);
      const before = (await q.deadLetters(100)).length;
      assert.equal(await q.purgeDeadByTask('die'), before);
      assert.equal((await q.deadLetters(100)).length, 0);
      await rejectsCode(assert, () => q.purgeDeadByTask(''), 'INVALID_ARGUMENT');
    });

    it('purgeCompleted drops completed jobs older than the given ms', async () => {
      const q = await store.open();
      q.task('ok', async () => 1);
      const ids = await q.enqueueMany([{ task: 'ok' }, { task: 'ok' }]);
      store.work(q, ONLY_DEFAULT);
      for (const id of ids) await q.result(id, { timeoutMs: 10_000 });
      assert.equal(await q.purgeCompleted(3_600_000), 0);
      await new Promise((r) => setTimeout(r, 5));
      assert.equal(await q.purgeCompleted(0), 2);
      assert.equal(q.getJob(ids[0]), null);
      await rejectsCode(assert, () => q.purgeCompleted(NaN), 'INVALID_ARGUMENT');
    });

    it('retention: nothing effective before a sweep, previews in ms from seconds', async () => {
      const q = await store.open({ retention: { taskLogs: 60, deadLetter: 120 } });
      assert.equal(q.effectiveRetention(), null);
      const configured = await q.dryRunRetention();
      assert.equal(configured.defaulted, false);
      assert.equal(configured.enabled, true);
      assert.equal(configured.windows.taskLogs, 60_000);
      assert.equal(configured.windows.deadLetter, 120_000);
      assert.equal(configured.total, 0);
      assert.equal(configured.namespace, 'default');
      assert.ok(Math.abs(configured.referenceTime - Date.now()) < 60_000);
      const candidate = await q.dryRunRetention({ jobErrors: 3_600 });
      assert.equal(candidate.windows.jobErrors, 3_600_000);
      assert.equal(candidate.counts.jobErrors, 0);
      const defaults = await (await store.open({ namespace: 'other' })).dryRunRetention();
      assert.equal(defaults.defaulted, true);
      for (const bad of [{ taskLogs: 0 }, { taskLogs: -5 }, { taskLogs: 1.5 }, { taskLogs: NaN }, { logs: 1 }]) {
        await rejectsCode(assert, () => q.dryRunRetention(bad), 'INVALID_ARGUMENT');
      }
    });

    it('a worker publishes the retention it applies', async () => {
      const q = await store.open({ retention: { taskLogs: 60 } });
      q.task('ok', async () => 1);
      store.work(q, { lease: 1, ...ONLY_DEFAULT });
      const eff = await until(() => q.effectiveRetention(), 15_000, 'an effective retention');
      assert.equal(eff.enabled, true);
      assert.equal(eff.namespace, 'default');
      assert.equal(eff.windows.taskLogs, 60_000);
      assert.equal(typeof eff.reportedAt, 'number');
    });

    it('settings with compare-and-set', async () => {
      const q = await store.open();
      assert.equal(q.getSetting('theme'), null);
      q.setSetting('theme', 'dark');
      assert.equal(q.getSetting('theme'), 'dark');
      assert.equal(q.setSettingIf('theme', 'light', 'blue'), false);
      assert.equal(q.setSettingIf('theme', 'dark', 'blue'), true);
      assert.equal(q.setSettingIf('fresh', null, '1'), true);
      assert.equal(q.setSettingIf('fresh', null, '2'), false);
      assert.deepEqual(q.listSettings(), { theme: 'blue', fresh: '1' });
      assert.equal(q.deleteSetting('theme'), true);
      assert.equal(q.deleteSetting('theme'), false);
      throwsCode(assert, () => q.getSetting(''), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.setSetting('k', 5), 'INVALID_ARGUMENT');
      // Every prefix the spec lists as the runtime's, and no other.
      const spec = ['auth:', 'contract:', 'middleware:disabled:', 'quota:', 'retention:', 'webhook:', 'webhooks:', 'flexiq.webhooks'];
      assert.deepEqual([...reservedSettingPrefixes()].sort(), [...spec].sort());
      // Settings do no filtering: a reserved key is stored like any other.
      q.setSetting('quota:tenant-1', '10');
      assert.equal(q.getSetting('quota:tenant-1'), '10');
      assert.equal(q.deleteSetting('quota:tenant-1'), true);
    });

    it('migrate is idempotent and the contract floor is guarded', async () => {
      const q = await store.open();
      const m = await q.migrate();
      assert.deepEqual(m.applied, []);
      assert.equal(typeof m.schemaless, 'boolean');
      assert.equal(q.minContract() <= CONTRACT_LEVEL, true);
      q.setMinContract(CONTRACT_LEVEL);
      assert.equal(q.minContract(), CONTRACT_LEVEL);
      throwsCode(assert, () => q.setMinContract(CONTRACT_LEVEL + 1), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.setMinContract(0), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.setMinContract(1.5), 'INVALID_ARGUMENT');
    });

    it('autoMigrate false opens migrated storage and works at once', async () => {
      await (await store.open()).enqueue('t', 1);
      const q = await store.open({ autoMigrate: false });
      assert.deepEqual((await q.migrate()).applied, []);
      await q.enqueue('t', 1);
      assert.equal(q.countPendingByQueue('default'), 2);
    });
  });
}
