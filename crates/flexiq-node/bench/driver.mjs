// flexiq through the Node SDK: the four commands of the side-by-side harness, one JSON line each
// (the Rust driver `flexiq-bench` and the peers in bench/peers answer the same).
//
// - enqueue-single: `await queue.enqueue()` one job at a time, each resolving after its commit.
// - enqueue-batch: `await queue.enqueueMany()` in batches of --batch.
// - drain: --jobs pending jobs run by a worker with a no-op async handler at --concurrency,
//   timed from `worker.run()` until the last handler ran; also the longest gap between two
//   handler starts while jobs were still due.
// - latency: an idle, ready worker; jobs enqueued at --rate per second; from just before
//   `enqueue()` to the handler's first line (p50, p99), and the median awaited enqueue.
//
// Usage: node bench/driver.mjs COMMAND URL [--jobs N] [--batch B] [--concurrency C] [--rate R]
// The caller isolates and cleans up the store the URL names.
import { parseArgs } from 'node:util';

import { Queue } from '../index.mjs';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    jobs: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '1' },
    rate: { type: 'string', default: '100' },
  },
});
const [command, url] = positionals;
const jobs = Number(values.jobs);
const batch = Number(values.batch);
const concurrency = Number(values.concurrency);
const rate = Number(values.rate);
if (url === undefined || !(jobs > 0 && batch > 0 && concurrency > 0 && rate > 0)) {
  console.error('usage: driver.mjs enqueue-single|enqueue-batch|drain|latency URL [--jobs N] [--batch B] [--concurrency C] [--rate R]');
  process.exit(2);
}

const quantile = (xs, q) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * q)];
};
const backend = url.startsWith('postgres') ? 'postgres' : url.startsWith('redis') ? 'redis' : 'sqlite';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fill(q) {
  for (let start = 0; start < jobs; start += batch) {
    const items = [];
    for (let i = start; i < Math.min(start + batch, jobs); i++) items.push({ task: 'noop', payload: { i } });
    await q.enqueueMany(items);
  }
}

async function enqueueSingle(q) {
  const calls = [];
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const t = performance.now();
    await q.enqueue('noop', { i });
    calls.push(performance.now() - t);
  }
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, call_p50_ms: quantile(calls, 0.5) };
}

async function enqueueBatch(q) {
  const t0 = performance.now();
  await fill(q);
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, batch };
}

async function drain(q) {
  await fill(q);
  const starts = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  q.task('noop', async () => {
    starts.push(performance.now());
    if (starts.length === jobs) finished();
  });
  const w = q.worker({ concurrency, maintenance: false });
  const t0 = performance.now();
  const run = w.run();
  await all;
  const secs = (performance.now() - t0) / 1000;
  await w.close();
  await run;
  starts.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < starts.length; i++) gap = Math.max(gap, starts[i] - starts[i - 1]);
  return { secs, rate: jobs / secs, concurrency, max_gap_ms: gap };
}

async function latency(q) {
  const sent = new Array(jobs).fill(0);
  const waits = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  q.task('noop', async ({ i }) => {
    waits.push(performance.now() - sent[i]);
    if (waits.length === jobs) finished();
  });
  const w = q.worker({ concurrency: 1, maintenance: false });
  const run = w.run();
  await w.ready;
  const calls = [];
  const every = 1000 / rate;
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const pause = t0 + i * every - performance.now();
    if (pause > 0) await sleep(pause);
    const t = performance.now();
    sent[i] = t;
    await q.enqueue('noop', { i });
    calls.push(performance.now() - t);
  }
  await all;
  await w.close();
  await run;
  return { rate, p50_ms: quantile(waits, 0.5), p99_ms: quantile(waits, 0.99), enqueue_p50_ms: quantile(calls, 0.5) };
}

const commands = { 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency };
if (!(command in commands)) {
  console.error(`unknown command ${command}: one of ${Object.keys(commands).join(', ')}`);
  process.exit(2);
}
const q = await Queue.connect({ url });
const out = await commands[command](q);
await q.close();
console.log(JSON.stringify({ ...out, system: 'flexiq-node', store: backend, command, jobs }));
