// Fetching jobs, awaiting results, streams, cancellation, listings, errors, replays, graphs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';

for (const backend of BACKENDS) {
  describe(`jobs on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('getJob and getResult of unknown, pending and malformed ids', async () => {
      const q = await store.open();
      assert.equal(q.getJob(UNKNOWN), null);
      throwsCode(assert, () => q.getJob('garbage'), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.getJob(), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.getResult(UNKNOWN), 'NOT_FOUND');
      const id = await q.enqueue('t', 1);
      assert.equal(q.getResult(id), undefined);
    });

    it('isJobInState follows the job and refuses bad input', async () => {
      const q = await store.open();
      const id = await q.enqueue('never-registered', 1, { queue: 'idle' });
      assert.equal(await q.isJobInState(id, 'pending'), true);
      assert.equal(await q.isJobInState(id, 'running'), false);
      assert.equal(q.cancelJob(id), true);
      assert.equal(await q.isJobInState(id, 'cancelled'), true);
      assert.equal(await q.isJobInState(UNKNOWN, 'pending'), false);
      await rejectsCode(assert, () => q.isJobInState(id, 'PENDING'), 'INVALID_ARGUMENT', /unknown status/);
      await rejectsCode(assert, () => q.isJobInState('garbage', 'pending'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.isJobInState(id, 7), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.isJobInState(id), 'INVALID_ARGUMENT');
      assert.equal(q.getJob(id).status, 'cancelled');
    });

    it('result resolves, rejects JOB_FAILED with the cause, and times out', async () => {
      const q = await store.open();
      q.task('ok', async (p) => ({ doubled: p * 2 }));
      q.task('boom', async () => {
        throw new Error('kaput');
      });
      store.work(q, { concurrency: 2, queues: ['default'] });
      const ok = await q.enqueue('ok', 21);
      assert.deepEqual(await q.result(ok, { timeoutMs: 10_000, pollMs: 50 }), { doubled: 42 });
      assert.deepEqual(q.getResult(ok), { doubled: 42 });
      assert.deepEqual(q.getJob(ok).result, { doubled: 42 });
      const bad = await q.enqueue('boom', null, { maxRetries: 0 });
      const err = await rejectsCode(assert, () => q.result(bad, { timeoutMs: 10_000 }), 'JOB_FAILED', /kaput/);
      assert.equal(err.jobId, bad);
      assert.ok(err.cause instanceof Error);
      assert.match(err.cause.stack, /kaput/);
      const waiting = await q.enqueue('never-registered', 1, { queue: 'idle' });
      await rejectsCode(assert, () => q.result(waiting, { timeoutMs: 100 }), 'TIMEOUT');
      await rejectsCode(assert, () => q.result(UNKNOWN, { timeoutMs: 100 }), 'NOT_FOUND');
      await rejectsCode(assert, () => q.result(ok, { timeoutMs: -1 }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.result(ok, { pollMs: 0 }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.result(ok, { poll: 5 }), 'INVALID_ARGUMENT');
    });

    it('cancelJob cancels a pending job and result rejects JOB_CANCELLED', async () => {
      const q = await store.open();
      const id = await q.enqueue('t', 1, { delay: 60 });
      assert.equal(q.isCancelRequested(id), false);
      assert.equal(q.cancelJob(id), true);
      assert.equal(q.getJob(id).status, 'cancelled');
      assert.equal(q.cancelJob(id), false);
      await rejectsCode(assert, () => q.result(id, { timeoutMs: 1_000 }), 'JOB_CANCELLED');
      assert.equal(q.requestCancel(id), false);
      throwsCode(assert, () => q.cancelJob(UNKNOWN), 'NOT_FOUND');
      throwsCode(assert, () => q.requestCancel('nope'), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.isCancelRequested(UNKNOWN), 'NOT_FOUND');
      assert.equal(q.requeueJob(UNKNOWN), false);
    });

    it('stream yields published partials in order, then ends', async () => {
      const q = await store.open();
      q.task('steps', async (n, ctx) => {
        for (let i = 1; i <= n; i++) await ctx.publish({ step: i });
        return 'done';
      });
      const id = await q.enqueue('steps', 3);
      store.work(q, { queues: ['default'] });
      const seen = [];
      for await (const p of q.stream(id, { timeoutMs: 10_000, pollMs: 50 })) seen.push(p);
      assert.deepEqual(seen, [{ step: 1 }, { step: 2 }, { step: 3 }]);
      assert.equal(await q.result(id), 'done');
      throwsCode(assert, () => q.stream('garbage'), 'INVALID_ARGUMENT');
      const idle = await q.enqueue('nobody', 1, { queue: 'idle' });
      await rejectsCode(assert, async () => {
        for await (const _ of q.stream(idle, { timeoutMs: 100 })) assert.fail('no partials expected');
      }, 'TIMEOUT');
    });

    it('publishPartial records partials from outside a handler, and the Rust names alias the controls', async () => {
      const q = await store.open();
      const id = await q.enqueue('outside', 1, { queue: 'side' });
      assert.equal(await q.publishPartial(id, { step: 1 }), 1);
      assert.equal(await q.publishPartial(id, [2]), 2);
      await rejectsCode(assert, () => q.publishPartial(UNKNOWN, 1), 'NOT_FOUND');
      await rejectsCode(assert, () => q.publishPartial('nope', 1), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.publishPartial(id, 10n), 'INVALID_ARGUMENT');
      q.pause('side');
      assert.deepEqual(q.pausedQueues(), ['side']);
      assert.deepEqual(q.listPausedQueues(), ['side']);
      q.resume('side');
      assert.deepEqual(q.pausedQueues(), []);
      throwsCode(assert, () => q.pause(''), 'INVALID_ARGUMENT');
      const one = await q.statsForQueue('side');
      assert.equal(one.pending, 1);
      assert.deepEqual(one, await q.statsByQueue('side'));
    });

    it('lists jobs with filters, offsets and keyset pages', async () => {
      const q = await store.open();
      const ids = [];
      for (let i = 0; i < 7; i++) ids.push(await q.enqueue(i % 2 ? 'odd' : 'even', i, { queue: i < 5 ? 'a' : 'b', metadata: { i } }));
      const all = await q.listJobs();
      assert.deepEqual(all.map((j) => j.id), [...ids].reverse());
      assert.equal((await q.listJobs({ task: 'odd' })).length, 3);
      assert.equal((await q.listJobs({ queue: 'b', status: 'pending' })).length, 2);
      assert.deepEqual((await q.listJobs({ limit: 2, offset: 1 })).map((j) => j.id), [ids[5], ids[4]]);
      const seen = [];
      let after = null;
      do {
        const page = await q.listJobsAfter({ limit: 3 }, after);
        seen.push(...page.items.map((j) => j.id));
        after = page.nextCursor;
      } while (after);
      assert.deepEqual(seen, [...ids].reverse());
      const wide = await q.listJobsFiltered({ metadataContains: '"i":3' });
      assert.deepEqual(wide.map((j) => j.id), [ids[3]]);
      const page = await q.listJobsFilteredAfter({ createdAfter: 0, createdBefore: new Date(Date.now() + 60_000), limit: 50 });
      assert.equal(page.items.length, 7);
      assert.equal(page.nextCursor, null);
      for (const f of [{ limit: 0 }, { limit: -1 }, { limit: 1.5 }, { limit: NaN }, { limit: 10_001 }, { offset: -1 }, { offset: 0.5 }, { status: 'bogus' }, { stat: 'x' }]) {
        await rejectsCode(assert, () => q.listJobs(f), 'INVALID_ARGUMENT');
      }
      await rejectsCode(assert, () => q.listJobs({ metadataContains: 'x' }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listJobsAfter({ limit: 3 }, 'garbage-cursor'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listJobsAfter({ limit: 3 }, ''), 'INVALID_ARGUMENT');
      const first = await q.listJobsAfter({ limit: 2, task: 'odd' });
      assert.ok(first.nextCursor);
      await rejectsCode(assert, () => q.listJobsAfter({ limit: 2, task: 'even' }, first.nextCursor), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listJobsFiltered({ createdAfter: NaN }), 'INVALID_ARGUMENT');
    });

    it('records every failed attempt, replays and the graph', async () => {
      const q = await store.open();
      q.task('flaky', async () => {
        throw new Error('nope');
      });
      const id = await q.enqueue('flaky', 1, { maxRetries: 1, backoff: { base: 0, max: 0 } });
      store.work(q, { queues: ['default'] });
      await rejectsCode(assert, () => q.result(id, { timeoutMs: 10_000 }), 'JOB_FAILED');
      const errors = await q.getJobErrors(id);
      assert.equal(errors.length, 2);
      assert.deepEqual(errors.map((e) => e.attempt), [1, 2]);
      assert.match(errors[0].error, /Error: nope\n\s+at /);
      await rejectsCode(assert, () => q.getJobErrors(UNKNOWN), 'NOT_FOUND');
      const again = await q.replay(id);
      assert.notEqual(again, id);
      const history = await q.replayHistory(id);
      assert.equal(history.length, 1);
      assert.equal(history[0].replayJobId, again);
      assert.equal(history[0].originalJobId, id);
      assert.equal(typeof history[0].replayedAt, 'number');
      assert.deepEqual(await q.getReplayHistory(id), history);
      await rejectsCode(assert, () => q.replayJob(UNKNOWN), 'NOT_FOUND');

      const parent = await q.enqueue('x', 1, { queue: 'idle' });
      const child = await q.enqueue('y', 2, { queue: 'idle', dependsOn: [parent] });
      const dag = await q.jobDag(child);
      assert.deepEqual(dag.nodes.map((n) => n.id).sort(), [parent, child].sort());
      assert.deepEqual(dag.edges, [{ from: parent, to: child }]);
      await rejectsCode(assert, () => q.jobDag(UNKNOWN), 'NOT_FOUND');
    });

    it('lists the archive, offset and keyset', async () => {
      const q = await store.open();
      assert.deepEqual(await q.listArchived(), []);
      assert.deepEqual(await q.listArchived(5, 0), []);
      assert.deepEqual(await q.listArchivedAfter(5), { items: [], nextCursor: null });
      await rejectsCode(assert, () => q.listArchived(0), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listArchived(5, -2), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listArchived(5, 0.5), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listArchived('5'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listArchivedAfter(5, 'garbage'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => q.listArchivedAfter(NaN), 'INVALID_ARGUMENT');

      // Seven finished jobs, then a worker whose cleaner archives at its first round.
      q.task('done', async (n) => n * 2);
      const ids = await q.enqueueMany(Array.from({ length: 7 }, (_, i) => ({ task: 'done', payload: i })));
      const runner = store.work(q, { queues: ['default'], maintenance: false });
      for (const id of ids) await q.result(id, { timeoutMs: 15_000 });
      await runner.close();
      const live = await q.listJobs({ status: 'completed', limit: 100 });
      assert.equal(live.length, 7);
      store.work(q, { queues: ['default'], archiveAfter: 0 });
      const archived = await until(async () => {
        const a = await q.listArchived(100);
        return a.length === 7 && a;
      }, 20_000, 'seven archived jobs');
      assert.deepEqual(archived.map((j) => j.id).sort(), [...ids].sort());
      assert.ok(archived.every((j) => j.status === 'completed' && j.task === 'done'));
      assert.equal((await q.listJobs({ status: 'completed' })).length, 0, 'moved out of the jobs table');
      // Newest first, so an offset page is a slice of the full listing.
      const finished = archived.map((j) => j.finishedAt);
      assert.deepEqual(finished, [...finished].sort((a, b) => b - a));
      assert.deepEqual((await q.listArchived(3, 2)).map((j) => j.id), archived.slice(2, 5).map((j) => j.id));
      assert.deepEqual(await q.listArchived(5, 7), []);
      // A keyset walk in pages of 3 sees every archived job once.
      const walked = [];
      const sizes = [];
      let after = null;
      do {
        const page = await q.listArchivedAfter(3, after);
        walked.push(...page.items.map((j) => j.id));
        sizes.push(page.items.length);
        after = page.nextCursor;
      } while (after);
      assert.deepEqual([...walked].sort(), [...ids].sort());
      assert.equal(new Set(walked).size, 7);
      assert.deepEqual(sizes.slice(0, 2), [3, 3]);
      const first = await q.listArchivedAfter(3);
      assert.ok(first.nextCursor);
      await rejectsCode(assert, () => q.listArchivedAfter(0, first.nextCursor), 'INVALID_ARGUMENT');
      // Archived jobs are no longer counted as live ones.
      assert.equal((await q.stats()).completed, 0);
    });

    it('scan-heavy calls do not block the event loop', async () => {
      const q = await store.open();
      const n = 5_000;
      for (let i = 0; i < n; i += 1_000) {
        await q.enqueueMany(Array.from({ length: 1_000 }, (_, k) => ({ task: 'bulk', payload: { i: i + k, pad: 'x'.repeat(200) } })));
      }
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      const started = Date.now();
      const calls = [q.listJobs({ limit: 10_000 }), q.purgeCompleted(0), q.stats(), q.listJobs({ limit: 10_000, task: 'bulk' })];
      // The calls are in flight; the loop keeps turning while they scan.
      await new Promise((r) => setTimeout(r, 5));
      const ticksWhileRunning = ticks;
      const [jobs] = await Promise.all(calls);
      clearInterval(timer);
      assert.equal(jobs.length, n);
      assert.ok(ticksWhileRunning >= 1, 'the timer fired while the scans were in flight');
      const elapsed = Date.now() - started;
      assert.ok(ticks >= 1 && (elapsed < 20 || ticks > 1), `timer fired ${ticks} times over ${elapsed} ms`);
    });
  });
}
