// Workers: handlers, failures, the ctx (partials, logs, progress, signal), timeouts,
// cancellation, and interop with a Rust worker and a Rust producer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const WORKSPACE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Runs the Rust interop example (`examples/interop.rs`) and returns its stdout. */
function rust(...args) {
  return execFileSync('cargo', ['run', '-q', '-p', 'flexiq-node', '--example', 'interop', '--', ...args], {
    cwd: WORKSPACE,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

const ONLY_DEFAULT = { queues: ['default'] };

for (const backend of BACKENDS) {
  describe(`worker on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('runs handlers and records results, failures with stack, and fatal errors', async () => {
      const q = await store.open();
      q.task('sum', async (p) => p.a + p.b)
        .task('plain', (p) => p * 3)
        .task('sync-throw', () => {
          throw new TypeError('bad input');
        })
        .task('fatal', async () => {
          const e = new Error('never retry');
          e.retryable = false;
          throw e;
        })
        .task('throws-string', async () => {
          throw 'just a string';
        })
        .task('unencodable', async () => 10n);
      store.work(q, { concurrency: 4, ...ONLY_DEFAULT });
      assert.equal(await q.result(await q.enqueue('sum', { a: 2, b: 3 }), { timeoutMs: 10_000 }), 5);
      assert.equal(await q.result(await q.enqueue('plain', 7), { timeoutMs: 10_000 }), 21);
      const st = await q.enqueue('sync-throw', 1, { maxRetries: 0 });
      const e1 = await rejectsCode(assert, () => q.result(st, { timeoutMs: 10_000 }), 'JOB_FAILED', /TypeError: bad input/);
      assert.match(e1.cause.stack, /TypeError: bad input\n\s+at /);
      const fatal = await q.enqueue('fatal', 1, { maxRetries: 5 });
      await rejectsCode(assert, () => q.result(fatal, { timeoutMs: 10_000 }), 'JOB_FAILED', /never retry/);
      assert.equal(q.getJob(fatal).status, 'failed');
      assert.equal(q.getJob(fatal).attempt, 1);
      const str = await q.enqueue('throws-string', 1, { maxRetries: 0 });
      await rejectsCode(assert, () => q.result(str, { timeoutMs: 10_000 }), 'JOB_FAILED', /just a string/);
      // A result JSON cannot encode fails the attempt with the encoder's message (no retries left: dead).
      const big = await q.enqueue('unencodable', 1, { maxRetries: 0 });
      await rejectsCode(assert, () => q.result(big, { timeoutMs: 10_000 }), 'JOB_FAILED', /BigInt/);
      assert.equal(q.getJob(big).status, 'dead');
    });

    it('ctx exposes id and attempt, publishes, logs and reports progress', async () => {
      const q = await store.open();
      let seen;
      q.task('ctx', async (p, ctx) => {
        seen = { id: ctx.id, attempt: ctx.attempt, task: ctx.task, queue: ctx.queue };
        assert.equal(await ctx.publish({ half: true }), 1);
        await ctx.log('halfway');
        await ctx.log('careful', 'warn');
        await ctx.setProgress(50);
        await rejectsCode(assert, () => ctx.setProgress(150), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => ctx.log('x', 'loud'), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => ctx.publish(10n), 'INVALID_ARGUMENT');
        return 'ok';
      });
      store.work(q, ONLY_DEFAULT);
      const id = await q.enqueue('ctx', null);
      assert.equal(await q.result(id, { timeoutMs: 10_000 }), 'ok');
      assert.deepEqual(seen, { id, attempt: 1, task: 'ctx', queue: 'default' });
      assert.equal(q.getJob(id).progress, 50);
      const partials = [];
      for await (const p of q.stream(id)) partials.push(p);
      assert.deepEqual(partials, [{ half: true }]);
    });

    it('requestCancel aborts ctx.signal with JOB_CANCELLED', async () => {
      const q = await store.open();
      let reason;
      q.task('long', async (p, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reason = ctx.signal.reason;
        throw ctx.signal.reason;
      });
      store.work(q, { lease: 3, ...ONLY_DEFAULT });
      const id = await q.enqueue('long', 1, { maxRetries: 0 });
      await until(() => q.getJob(id).status === 'running', 10_000, 'job running');
      assert.equal(q.requestCancel(id), true);
      assert.equal(q.isCancelRequested(id), true);
      await rejectsCode(assert, () => q.result(id, { timeoutMs: 15_000 }), 'JOB_CANCELLED');
      assert.equal(reason.code, 'JOB_CANCELLED');
      assert.equal(reason.jobId, id);
    });

    it('a timeout aborts ctx.signal with TIMEOUT and fails the attempt', async () => {
      const q = await store.open();
      let reason;
      q.task('slow', async (p, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reason = ctx.signal.reason;
      });
      store.work(q, ONLY_DEFAULT);
      const id = await q.enqueue('slow', 1, { timeout: 0.2, maxRetries: 0 });
      await rejectsCode(assert, () => q.result(id, { timeoutMs: 10_000 }), 'JOB_FAILED');
      await until(() => reason, 5_000, 'abort seen by the handler');
      assert.equal(reason.code, 'TIMEOUT');
    });

    it('a soft timeout aborts ctx.signal with SOFT_TIMEOUT and the attempt runs on', async () => {
      const q = await store.open();
      let reason;
      let aborted;
      q.task('wrap-up', async (p, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        aborted = ctx.signal.aborted;
        reason = ctx.signal.reason;
        // Still running after the soft timeout: finish and return a result.
        await ctx.log('wrapping up');
        return { wrapped: p };
      }, { softTimeout: 0.1, timeout: 60 });
      store.work(q, ONLY_DEFAULT);
      const id = await q.enqueue('wrap-up', 7, { maxRetries: 0 });
      assert.deepEqual(await q.result(id, { timeoutMs: 15_000 }), { wrapped: 7 });
      assert.equal(aborted, true);
      assert.equal(reason.name, 'FlexiqError');
      assert.equal(reason.code, 'SOFT_TIMEOUT');
      assert.equal(reason.jobId, id);
      assert.match(reason.message, /soft timeout/);
      for (const other of ['TIMEOUT', 'JOB_CANCELLED', 'SHUTDOWN', 'LEASE_LOST']) assert.notEqual(reason.code, other);
      assert.equal(q.getJob(id).attempt, 1);
      for (const bad of [-1, NaN, 0, '1', { s: 1 }]) {
        const fresh = await store.open();
        fresh.task('bad-soft', async () => {}, { softTimeout: bad });
        throwsCode(assert, () => fresh.worker(), 'INVALID_ARGUMENT');
      }
    });

    it('runs handlers concurrently up to the limit', async () => {
      const q = await store.open();
      let running = 0;
      let peak = 0;
      q.task('nap', async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 50));
        running--;
      });
      store.work(q, { concurrency: 4, ...ONLY_DEFAULT });
      const ids = await q.enqueueMany(Array.from({ length: 12 }, () => ({ task: 'nap' })));
      for (const id of ids) await q.result(id, { timeoutMs: 10_000 });
      assert.ok(peak > 1 && peak <= 4, `peak concurrency ${peak}`);
    });

    it('refuses bad worker and task options', async () => {
      const q = await store.open();
      assert.throws(() => q.worker(), (e) => e.code === 'INVALID_ARGUMENT' && /at least one task/.test(e.message));
      throwsCode(assert, () => q.task('', async () => {}), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.task('t', 'not a function'), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.task('t', async () => {}, { timeout: -1, x: 1 }), 'INVALID_ARGUMENT');
      q.task('t', async () => {});
      throwsCode(assert, () => q.task('t', async () => {}), 'INVALID_ARGUMENT');
      for (const bad of [{ concurrency: 0 }, { concurrency: 1.5 }, { concurrency: NaN }, { queues: [''] }, { lease: -1 }, { conc: 2 }]) {
        throwsCode(assert, () => q.worker(bad), 'INVALID_ARGUMENT');
      }
      q.task('u', async () => {}, { timeout: 1, softTimeout: 2 });
      throwsCode(assert, () => q.worker(), 'INVALID_ARGUMENT');
    });

    it('interoperates with Rust: Node enqueues for a Rust worker, and the reverse', async () => {
      const q = await store.open();
      const forRust = await q.enqueue('interop.rust', { n: 21 });
      assert.equal(rust('work', store.url, 'interop.rust', '1'), '1');
      assert.deepEqual(await q.result(forRust, { timeoutMs: 10_000 }), { handledBy: 'rust', payload: { n: 21 } });

      // A Python task's payload is {"args": [...], "kwargs": {...}}; any SDK may produce it.
      const fromRust = rust('enqueue', store.url, 'interop.node', JSON.stringify({ args: [2, 3], kwargs: { scale: 10 } }));
      q.task('interop.node', async ({ args, kwargs }) => (args[0] + args[1]) * kwargs.scale);
      store.work(q, ONLY_DEFAULT);
      assert.equal(await q.result(fromRust, { timeoutMs: 10_000 }), 50);
    });
  });
}
