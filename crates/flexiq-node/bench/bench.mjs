// Node SDK throughput on SQLite, this machine: enqueue one at a time (awaited), enqueueMany,
// and draining jobs with a no-op async handler at concurrency 8. Each figure is the median of
// five runs, each on a fresh database file. Run with `cargo xtask bench --node` (which builds
// the addon in release mode first) or `node bench/bench.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Queue } from '../index.mjs';

const RUNS = 5;
const ONE_BY_ONE = 20_000;
const MANY = 100_000;
const BATCH = 10_000;
const DRAIN = 20_000;

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'flexiq-bench-'));
  return { q: new Queue({ dbPath: join(dir, 'bench.db') }), dir };
}

async function enqueueOne() {
  const { q, dir } = fresh();
  const t = performance.now();
  for (let i = 0; i < ONE_BY_ONE; i++) await q.enqueue('noop', { i });
  const rate = ONE_BY_ONE / ((performance.now() - t) / 1000);
  await q.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

async function enqueueMany() {
  const { q, dir } = fresh();
  const batches = [];
  for (let b = 0; b < MANY / BATCH; b++) batches.push(Array.from({ length: BATCH }, (_, i) => ({ task: 'noop', payload: { i: b * BATCH + i } })));
  const t = performance.now();
  for (const batch of batches) await q.enqueueMany(batch);
  const rate = MANY / ((performance.now() - t) / 1000);
  await q.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

async function drain() {
  const { q, dir } = fresh();
  for (let i = 0; i < DRAIN; i += BATCH) {
    await q.enqueueMany(Array.from({ length: BATCH }, (_, k) => ({ task: 'noop', payload: { i: i + k } })));
  }
  let done = 0;
  let finished;
  const all = new Promise((r) => (finished = r));
  q.task('noop', async () => {
    if (++done === DRAIN) finished();
  });
  const w = q.worker({ concurrency: 8, maintenance: false });
  const t = performance.now();
  const run = w.run();
  await all;
  // Every ack written: the queue holds no pending or running job.
  for (;;) {
    const s = await q.stats();
    if (s.completed === DRAIN) break;
    await new Promise((r) => setTimeout(r, 1));
  }
  const rate = DRAIN / ((performance.now() - t) / 1000);
  await w.close();
  await run;
  await q.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const [name, fn, target] of [
  ['enqueue (awaited, one at a time)', enqueueOne, 20_000],
  ['enqueueMany (10,000 per call)', enqueueMany, 300_000],
  ['drain, no-op async handler, concurrency 8', drain, 25_000],
]) {
  const rates = [];
  for (let r = 0; r < RUNS; r++) rates.push(await fn());
  const m = median(rates);
  console.log(
    `${name}: median ${Math.round(m).toLocaleString('en-US')} jobs/s over ${RUNS} runs ` +
      `(${rates.map((x) => Math.round(x)).join(', ')}); target ${target.toLocaleString('en-US')} jobs/s`,
  );
}
