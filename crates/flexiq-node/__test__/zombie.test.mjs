// The zombie worker, end to end through the Node worker on every store: a handler held past
// the point where its claim was taken away, another worker re-claims the job and finishes it,
// then the first handler finishes late. Its ack must be refused as superseded and the stored
// result must stay the second worker's.
//
// In process, the claim is taken by an operator's requeueJob of the running job. From the
// outside, worker A is a process of its own (zombie-host.mjs) frozen with SIGSTOP mid-attempt:
// its heartbeats stop, its lease lapses and worker B (this process, the namespace's cleaner)
// rescues the job, re-claims it and completes it; A is then resumed with SIGCONT. A runs
// without maintenance: a frozen cleaner would hold the cleaner lease, not the case under test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

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

const HOST = new URL('./zombie-host.mjs', import.meta.url).pathname;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Worker A's process, with its output collected; `exited` settles when it has exited. */
function spawnWorkerA(url, markers) {
  const child = spawn(process.execPath, [HOST, url, markers], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, out, exited };
}

/** Kills worker A (SIGKILL ends a stopped process too) unless it has exited. */
async function killWorkerA(a) {
  if (a.child.exitCode === null && a.child.signalCode === null) {
    a.child.kill('SIGKILL');
    await a.exited;
  }
}

/**
 * Stops A outside a store write. On SQLite a process stopped inside a write transaction keeps
 * the database's write lock until it resumes, so every other process waits for it (an outage
 * of its own, not the case under test): a probe write must get through while A is stopped, or
 * A runs on for a moment and is stopped again.
 */
async function freeze(a, q, sqlite) {
  for (let i = 0; i < 20; i++) {
    a.child.kill('SIGSTOP');
    if (!sqlite) return;
    const probe = q.setEventsEnabled(true);
    const blocked = await Promise.race([probe.then(() => false), sleep(500).then(() => true)]);
    if (!blocked) return;
    a.child.kill('SIGCONT');
    await probe;
    await sleep(30);
  }
  throw new Error(`worker A was stopped inside a write transaction 20 times running: ${a.out.stderr}`);
}

/**
 * Waits for two lease renewals of the running attempt after `seen` (its heartbeat when the
 * handler was seen running): the second was sent after the handler started, so the store has
 * recorded the start, and a lapsed lease is a stall of a started attempt.
 */
async function reportedStarted(q, id, seen) {
  let last = seen ?? null;
  for (const renewal of ['first', 'second']) {
    await until(() => {
      const beat = q.getJob(id)?.heartbeatAt ?? null;
      return beat !== null && beat !== last;
    }, 30_000, `the ${renewal} lease renewal of job ${id}`);
    last = q.getJob(id)?.heartbeatAt ?? null;
  }
}

/** The worker ids of the job's `active` events (one per claim), in order. */
async function claimedBy(q, id) {
  const events = await q.readEvents({ limit: 1000 });
  return events.filter((e) => e.kind === 'active' && e.jobId === id).map((e) => e.data.worker_id);
}

for (const backend of BACKENDS) {
  describe(`zombie worker process on ${backend.name}`, () => {
    const store = storeFixture(backend);
    const dirs = [];
    after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

    it('a frozen worker process resumed after a re-claim has its late ack superseded', async () => {
      const markers = mkdtempSync(join(tmpdir(), 'flexiq-zombie-'));
      dirs.push(markers);
      const q = await store.open();
      q.task('zombie.work', async () => ({ by: 'zombie-b' }));
      const id = await q.enqueue('zombie.work', { n: 1 });
      const a = spawnWorkerA(store.url, markers);
      let rescuer;
      try {
        await until(() => existsSync(join(markers, 'started')), 60_000, `worker A starting the job (${a.out.stderr})`);
        const first = q.getJob(id);
        assert.equal(first.status, 'running');
        assert.equal(first.workerId, 'zombie-a');
        assert.equal(first.claimSeq, 1);
        await reportedStarted(q, id, first.heartbeatAt);

        // Frozen mid-attempt: no heartbeats, no ack.
        await freeze(a, q, backend.name === 'sqlite');
        rescuer = q.worker({ workerId: 'zombie-b', concurrency: 1, prefetch: 0, lease: 1 });
        const rescuerRun = rescuer.run();
        await until(() => q.getJob(id)?.status === 'completed', 30_000, "worker B completing the job after A's lease lapsed");
        const done = q.getJob(id);
        assert.deepEqual(done.result, { by: 'zombie-b' });
        assert.equal(done.claimSeq, 2);
        assert.equal(done.stallCount, 1);
        assert.deepEqual(await claimedBy(q, id), ['zombie-a', 'zombie-b'], `the workers that claimed job ${id}`);
        const errors = await q.getJobErrors(id);
        assert.ok(
          errors.some((e) => e.error.startsWith('LEASE_HEARTBEAT_LOST')),
          `job ${id} was not rescued from a lapsed lease: ${JSON.stringify(errors)}`,
        );

        // Resumed: A's handler finishes late and its worker acks the stale attempt.
        writeFileSync(join(markers, 'release'), '');
        a.child.kill('SIGCONT');
        const timeout = sleep(60_000).then(() => ({ code: 'timeout' }));
        const exit = await Promise.race([a.exited, timeout]);
        assert.equal(exit.code, 0, `worker A failed (${JSON.stringify(exit)}): ${a.out.stderr}`);
        const z = JSON.parse(a.out.stdout.trim().split('\n').pop());
        assert.equal(z.succeeded, 1, `A's handler ran to the end: ${JSON.stringify(z)}`);
        assert.equal(z.superseded, 1, `A's late ack was not superseded: ${JSON.stringify(z)}`);
        assert.equal(z.acknowledged, 0, `A's late ack was applied: ${JSON.stringify(z)}`);
        assert.equal(z.ackErrors, 0, JSON.stringify(z));

        assert.deepEqual(q.getJob(id), done, `A's late ack changed job ${id}`);
        assert.deepEqual(q.getResult(id), { by: 'zombie-b' });
        const rows = (await q.getMetrics(0, 'zombie.work')).filter((r) => r.jobId === id && r.success);
        assert.equal(rows.length, 1, `job ${id} has ${rows.length} success metric rows: ${JSON.stringify(rows)}`);
        const events = await q.readEvents({ limit: 1000 });
        const completions = events.filter((e) => e.kind === 'completed' && e.jobId === id);
        assert.equal(completions.length, 1, `job ${id}'s completed events: ${JSON.stringify(completions)}`);
        assert.deepEqual(await claimedBy(q, id), ['zombie-a', 'zombie-b'], `the workers that claimed job ${id}`);

        const b = await rescuer.stop();
        rescuer = undefined;
        assert.equal(b.acknowledged, 1, JSON.stringify(b));
        assert.equal(b.superseded, 0, JSON.stringify(b));
        await rescuerRun;
      } finally {
        if (rescuer) await rescuer.stop();
        await killWorkerA(a);
      }
    });
  });
}
