// The awaited enqueue calls run their store work without holding up the event loop: on
// SQLite, a write lock another process holds is waited for off the loop, while timers keep
// firing; many calls in flight settle each with its own outcome; a call racing `close()`
// settles; a process whose calls are all settled exits on its own; and worker threads that
// each load the addon in turn, exiting with calls in flight, neither crash nor lose a call
// that resolved.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { Queue } from '../index.mjs';
import { BACKENDS, storeFixture } from './helpers.mjs';

const INDEX = fileURLToPath(new URL('../index.mjs', import.meta.url));
const THREADS_HOST = fileURLToPath(new URL('./threads-host.mjs', import.meta.url));

/** A Python child holding SQLite's write lock on `file` until it reads a line. */
async function holdWriteLock(file) {
  const script = [
    'import sqlite3, sys',
    'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
    'c.execute("BEGIN IMMEDIATE")',
    'print("locked", flush=True)',
    'sys.stdin.readline()',
    'c.execute("COMMIT")',
  ].join('\n');
  const child = spawn('python3', ['-c', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(child.stdout, 'data');
  assert.equal(line.toString().trim(), 'locked');
  return {
    async release() {
      child.stdin.end('\n');
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
    },
  };
}

describe('awaited calls on sqlite', () => {
  const store = storeFixture(BACKENDS.find((b) => b.name === 'sqlite'));

  it('wait for another process write lock off the event loop', async () => {
    const q = await store.open({ busyTimeoutMs: 30_000 });
    await q.enqueue('t', { warm: true });
    const lock = await holdWriteLock(store.url.slice('sqlite://'.length));
    let settled = false;
    const call = q.enqueue('t', { during: 'lock' }).finally(() => {
      settled = true;
    });
    // Were the lock waited for on this thread, the call above would not have returned and
    // these timers would run only after the busy timeout.
    let ticks = 0;
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 5));
      ticks++;
    }
    assert.equal(ticks, 10);
    assert.equal(settled, false, 'the enqueue cannot commit while the lock is held');
    await lock.release();
    const id = await call;
    assert.equal(q.getJob(id).status, 'pending');
    assert.equal(q.countPendingByQueue('default'), 2);
  });
});

for (const backend of BACKENDS) {
  describe(`awaited calls on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('many in flight settle each with its own outcome', async () => {
      const q = await store.open({ maxPending: 150 });
      const calls = [];
      for (let i = 0; i < 200; i++) {
        if (i % 3 === 0) calls.push(q.enqueueMany([{ task: 't', payload: { i } }]).then(([id]) => id));
        else if (i % 3 === 1) calls.push(q.enqueueOutcome('t', { i }).then((o) => o.id));
        else calls.push(q.enqueue('t', { i }));
      }
      const outcomes = await Promise.allSettled(calls);
      const ids = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
      const refused = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(ids.length, 150, 'the cap admits exactly 150');
      assert.equal(new Set(ids).size, 150);
      assert.ok(refused.every((o) => o.reason.code === 'QUEUE_FULL'));
      assert.equal(q.countPendingByQueue('default'), 150);
      for (const id of ids) assert.equal(q.getJob(id).status, 'pending');
    });

    it('a call racing close() settles, committed or CLOSED', async () => {
      const q = await Queue.connect({ url: store.url });
      const calls = [q.enqueue('t', 1), q.enqueueOutcome('t', 2), q.enqueueMany([{ task: 't' }])];
      await q.close();
      const outcomes = await Promise.allSettled(calls);
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.equal(o.reason.code, 'CLOSED');
      }
      await assert.rejects(() => q.enqueue('t', 3), (e) => e.code === 'CLOSED');
    });

    it('a process with no call pending exits on its own', () => {
      const script = `
        const { Queue } = await import(${JSON.stringify(INDEX)});
        const q = await Queue.connect({ url: ${JSON.stringify(store.url)} });
        const id = await q.enqueue('t', { from: 'child' });
        console.log(id);
      `;
      // A reference left on the event loop would keep the child alive until the timeout.
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
      const id = out.toString().trim();
      assert.match(id, /^[0-9a-f-]{36}$/);
    });

    it('worker threads loading the addon one after another exit cleanly, calls in flight', async () => {
      const out = execFileSync(process.execPath, [THREADS_HOST, store.url], { timeout: 60_000 });
      const { ids } = JSON.parse(out.toString().trim().split('\n').pop());
      assert.equal(ids.length, 60);
      assert.equal(new Set(ids).size, 60);
      const q = await store.open();
      for (const id of ids) assert.equal(q.getJob(id).status, 'pending');
      // The calls left in flight either committed or not: never more than were started.
      const pending = q.countPendingByQueue('default');
      assert.ok(pending >= 60 && pending <= 90, `pending ${pending}`);
    });
  });
}
