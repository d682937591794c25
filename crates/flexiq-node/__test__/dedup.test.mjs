// Dedup modes through the `dedup` enqueue option (simple, throttle, debounce,
// keep_last_if_active), `enqueueOutcome`, `dedupJobId` and `deleteDedupKey`, on every store:
// what each mode does with a duplicate, a burst of 200 concurrent debounced enqueues leaving
// one job, and the bad input refused with nothing written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const HOUR_S = 3_600;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const backend of BACKENDS) {
  describe(`dedup on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('simple: a duplicate returns the holder until it finishes', async () => {
      const q = await store.open();
      const dedup = { id: 'report:7', mode: 'simple' };
      const first = await q.enqueueOutcome('report', { n: 1 }, { queue: 'dd', dedup });
      assert.deepEqual(Object.keys(first).sort(), ['deduplicated', 'id']);
      assert.equal(first.deduplicated, false);
      assert.deepEqual(await q.enqueueOutcome('report', { n: 2 }, { queue: 'dd', dedup }), { id: first.id, deduplicated: true });
      assert.equal(await q.enqueue('report', { n: 3 }, { queue: 'dd', dedup }), first.id, 'enqueue takes the option too');
      assert.deepEqual(q.getJob(first.id).payload, { n: 1 }, 'simple never replaces');
      assert.equal(await q.dedupJobId('report:7'), first.id);
      assert.equal(q.cancelJob(first.id), true);
      assert.equal(await q.dedupJobId('report:7'), null, 'a finished holder frees the key');
      const next = await q.enqueueOutcome('report', { n: 4 }, { queue: 'dd', dedup });
      assert.equal(next.deduplicated, false);
      assert.notEqual(next.id, first.id);
      assert.equal((await q.statsByQueue('dd')).pending, 1);
      // A unique key reports its duplicates the same way.
      const u = await q.enqueueOutcome('report', 1, { uniqueKey: 'u1' });
      assert.deepEqual(await q.enqueueOutcome('report', 2, { uniqueKey: 'u1' }), { id: u.id, deduplicated: true });
    });

    it('throttle: duplicates are ignored for ttlMs, whatever the holder does', async () => {
      const q = await store.open();
      const dedup = { id: 'ping', mode: 'throttle', ttlMs: 700 };
      const first = await q.enqueueOutcome('ping', 1, { dedup });
      q.cancelJob(first.id);
      assert.deepEqual(await q.enqueueOutcome('ping', 2, { dedup }), { id: first.id, deduplicated: true }, 'still in the window');
      await sleep(900);
      const later = await q.enqueueOutcome('ping', 3, { dedup });
      assert.equal(later.deduplicated, false, 'the window passed');
      assert.equal(await q.dedupJobId('ping'), later.id);
    });

    it('debounce: replace gives the holder the newest payload, extend restarts the window', async () => {
      const q = await store.open();
      const replace = { id: 'search', mode: 'debounce', ttlMs: 60_000, replace: true };
      const first = await q.enqueueOutcome('search', { term: 'a' }, { dedup: replace, delay: 60, priority: 1 });
      const second = await q.enqueueOutcome('search', { term: 'ab' }, { dedup: replace, delay: 60, priority: 4 });
      assert.deepEqual(second, { id: first.id, deduplicated: true });
      const job = q.getJob(first.id);
      assert.deepEqual([job.payload, job.priority], [{ term: 'ab' }, 4], 'payload and options replaced');
      const keep = { id: 'keep', mode: 'debounce', ttlMs: 60_000 };
      const held = await q.enqueueOutcome('search', { term: 'x' }, { dedup: keep });
      await q.enqueueOutcome('search', { term: 'y' }, { dedup: keep });
      assert.deepEqual(q.getJob(held.id).payload, { term: 'x' }, 'without replace the holder keeps its payload');

      const extend = { id: 'ext', mode: 'debounce', ttlMs: 1_000, extend: true };
      const plain = { id: 'plain', mode: 'debounce', ttlMs: 1_000 };
      const e = await q.enqueueOutcome('t', 1, { dedup: extend });
      const p = await q.enqueueOutcome('t', 1, { dedup: plain });
      await sleep(600);
      assert.equal((await q.enqueueOutcome('t', 2, { dedup: extend })).deduplicated, true);
      assert.equal((await q.enqueueOutcome('t', 2, { dedup: plain })).deduplicated, true);
      await sleep(600);
      assert.deepEqual(await q.enqueueOutcome('t', 3, { dedup: extend }), { id: e.id, deduplicated: true }, 'the window restarted');
      const fresh = await q.enqueueOutcome('t', 3, { dedup: plain });
      assert.equal(fresh.deduplicated, false, 'the first window passed');
      assert.notEqual(fresh.id, p.id);
    });

    it('keep_last_if_active: one running, one waiting with the newest payload', async () => {
      const q = await store.open();
      const ran = [];
      let open;
      const gate = new Promise((r) => {
        open = r;
      });
      q.task('sync', async (p) => {
        ran.push(p);
        if (p.n === 1) await gate;
        return p.n;
      });
      const dedup = { id: 'sync:acme', mode: 'keep_last_if_active' };
      const first = await q.enqueueOutcome('sync', { n: 0 }, { queue: 'klia', dedup });
      assert.deepEqual(await q.enqueueOutcome('sync', { n: 1 }, { queue: 'klia', dedup }), { id: first.id, deduplicated: true });
      assert.deepEqual(q.getJob(first.id).payload, { n: 1 }, 'a pending holder takes the newest payload');
      store.work(q, { queues: ['klia'], concurrency: 2, prefetch: 0, pollInterval: 0.05 });
      await until(() => q.getJob(first.id).status === 'running', 10_000, 'the holder running');
      const behind = await q.enqueueOutcome('sync', { n: 2 }, { queue: 'klia', dedup });
      assert.equal(behind.deduplicated, false, 'a running holder gets one job queued behind it');
      assert.equal(q.getJob(behind.id).status, 'waiting');
      assert.equal(await q.dedupJobId('sync:acme'), behind.id);
      assert.deepEqual(await q.enqueueOutcome('sync', { n: 3 }, { queue: 'klia', dedup }), { id: behind.id, deduplicated: true });
      assert.deepEqual(q.getJob(behind.id).payload, { n: 3 });
      open();
      assert.equal(await q.result(behind.id, { timeoutMs: 15_000 }), 3);
      assert.deepEqual(ran, [{ n: 1 }, { n: 3 }]);
    });

    it('200 concurrent debounced enqueues leave one job, and the last one in gives it its payload', async () => {
      const q = await store.open();
      const dedup = { id: 'burst', mode: 'debounce', ttlMs: 60_000, replace: true };
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, n) => q.enqueueOutcome('burst', { n }, { queue: 'burst', delay: 60, dedup })),
      );
      const created = outcomes.filter((o) => !o.deduplicated);
      assert.equal(created.length, 1, 'exactly one inserted');
      const [{ id }] = created;
      assert.ok(outcomes.every((o) => o.id === id), 'every duplicate names it');
      assert.equal((await q.statsByQueue('burst')).pending, 1);
      const { n } = q.getJob(id).payload;
      assert.ok(Number.isInteger(n) && n >= 0 && n < 200, `a payload of the burst, got ${n}`);
      assert.deepEqual(await q.enqueueOutcome('burst', { n: 'last' }, { queue: 'burst', delay: 60, dedup }), { id, deduplicated: true });
      assert.deepEqual(q.getJob(id).payload, { n: 'last' });
      assert.equal(await q.dedupJobId('burst'), id);
    });

    it('deleteDedupKey frees a key and leaves its holder alone', async () => {
      const q = await store.open();
      const dedup = { id: 'k', mode: 'simple' };
      const first = await q.enqueueOutcome('t', 1, { dedup });
      assert.equal(await q.deleteDedupKey('k'), true);
      assert.equal(await q.dedupJobId('k'), null);
      assert.equal(q.getJob(first.id).status, 'pending');
      assert.equal(await q.deleteDedupKey('k'), false);
      assert.equal(await q.deleteDedupKey('never'), false);
      const second = await q.enqueueOutcome('t', 2, { dedup });
      assert.equal(second.deduplicated, false);
      assert.equal(await q.dedupJobId('k'), second.id);
    });

    it('refuses bad dedup options and keys with INVALID_ARGUMENT and writes nothing', async () => {
      const q = await store.open();
      const bad = (dedup, re, extra = {}) =>
        rejectsCode(assert, () => q.enqueueOutcome('t', null, { queue: 'bad', dedup, ...extra }), 'INVALID_ARGUMENT', re);
      for (const d of ['k', 5, true, []]) await bad(d, /dedup/);
      await bad({ mode: 'simple' });
      await bad({ id: 5, mode: 'simple' });
      await bad({ id: '', mode: 'simple' }, /dedup id/);
      await bad({ id: 'k' });
      await bad({ id: 'k', mode: 'often' }, /often/);
      await bad({ id: 'k', mode: 7 });
      await bad({ id: 'k', mode: 'simple', ttl: 5 }, /ttl/);
      for (const ttlMs of [0, NaN, Infinity, -1, 1.5, '5', true]) await bad({ id: 'k', mode: 'throttle', ttlMs }, /ttlMs/);
      await bad({ id: 'k', mode: 'throttle' }, /needs ttl/);
      await bad({ id: 'k', mode: 'debounce' }, /needs ttl/);
      await bad({ id: 'k', mode: 'simple', ttlMs: 5 }, /takes no ttl/);
      await bad({ id: 'k', mode: 'keep_last_if_active', ttlMs: 5 }, /takes no ttl/);
      await bad({ id: 'k', mode: 'throttle', ttlMs: 5, extend: true }, /debounce/);
      await bad({ id: 'k', mode: 'simple', replace: true }, /debounce/);
      await bad({ id: 'k', mode: 'debounce', ttlMs: 5, extend: 'yes' });
      await bad({ id: 'k', mode: 'simple' }, /unique key/, { uniqueKey: 'u' });
      const dep = await q.enqueue('t', null, { queue: 'other' });
      await bad({ id: 'k', mode: 'keep_last_if_active' }, /dependencies/, { dependsOn: [dep] });
      await rejectsCode(
        assert,
        () => q.enqueue('t', null, { queue: 'bad', dedup: { id: 'k', mode: 'throttle', ttlMs: -5 } }),
        'INVALID_ARGUMENT',
        /ttlMs/,
      );
      await rejectsCode(
        assert,
        () => q.enqueueMany([{ task: 't', options: { queue: 'bad', dedup: { id: 'k', mode: 'nope' } } }]),
        'INVALID_ARGUMENT',
        /nope/,
      );
      for (const key of ['', 5, null, undefined]) {
        await rejectsCode(assert, () => q.dedupJobId(key), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => q.deleteDedupKey(key), 'INVALID_ARGUMENT');
      }
      assert.equal(await q.dedupJobId('k'), null);
      assert.equal((await q.statsByQueue('bad')).pending, 0, 'nothing enqueued');
    });

    it('every dedup call fails with CLOSED after close()', async () => {
      const q = await store.open();
      await q.close();
      for (const call of [
        () => q.enqueueOutcome('t', 1, { dedup: { id: 'k', mode: 'simple' } }),
        () => q.dedupJobId('k'),
        () => q.deleteDedupKey('k'),
      ]) {
        await rejectsCode(assert, call, 'CLOSED');
      }
    });
  });
}
