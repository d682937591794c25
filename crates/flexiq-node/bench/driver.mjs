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
// The timing is bench/peers/harness.mjs's, shared with the peers' Node drivers.
//
// Usage: node bench/driver.mjs COMMAND URL [--jobs N] [--batch B] [--concurrency C] [--rate R]
// The caller isolates and cleans up the store the URL names.
import { Queue } from '../index.mjs';
import {
  arrivals,
  commandOf,
  drainResult,
  handlerStarts,
  harnessArgs,
  inBatches,
  timeBatches,
  timeLatency,
  timeSingles,
} from '../../../bench/peers/harness.mjs';

const { command, url, jobs, batch, concurrency, rate } = harnessArgs('driver.mjs');
const backend = url.startsWith('postgres') ? 'postgres' : url.startsWith('redis') ? 'redis' : 'sqlite';

const fill = (q) =>
  inBatches(jobs, batch, (start, end) => {
    const items = [];
    for (let i = start; i < end; i++) items.push({ task: 'noop', payload: { i } });
    return q.enqueueMany(items);
  });

const enqueueSingle = (q) => timeSingles(jobs, (i) => q.enqueue('noop', { i }));

const enqueueBatch = (q) => timeBatches(jobs, batch, () => fill(q));

async function drain(q) {
  await fill(q);
  const { starts, all, started } = handlerStarts(jobs);
  q.task('noop', async () => started());
  const w = q.worker({ concurrency, maintenance: false });
  const t0 = performance.now();
  const run = w.run();
  await all;
  const end = performance.now();
  await w.close();
  await run;
  return drainResult(t0, end, starts, jobs, concurrency);
}

async function latency(q) {
  const seen = arrivals(jobs);
  q.task('noop', async ({ i }) => seen.arrived(i));
  const w = q.worker({ concurrency: 1, maintenance: false });
  const run = w.run();
  await w.ready;
  const out = await timeLatency(jobs, rate, seen, (i) => q.enqueue('noop', { i }));
  await w.close();
  await run;
  return out;
}

const measure = commandOf({ 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency }, command);
const q = await Queue.connect({ url });
const out = await measure(q);
await q.close();
console.log(JSON.stringify({ ...out, system: 'flexiq-node', store: backend, command, jobs }));
