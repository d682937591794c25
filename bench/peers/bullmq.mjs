// BullMQ on Redis: the four commands of flexiq's side-by-side harness, one JSON line each
// (see bench/driver/src/main.rs for what each measures; the timing is harness.mjs's, shared
// with the other Node drivers). `cargo xtask bench --peers` copies this file and harness.mjs
// beside a throwaway BullMQ install and runs it there.
//
// Usage: node bullmq.mjs COMMAND redis://HOST:PORT?prefix=TAG [--jobs N] [--batch B]
//        [--concurrency C] [--rate R]
// Keys go under the prefix TAG; the caller deletes them afterwards.
import { Queue, Worker } from 'bullmq';

import {
  arrivals,
  commandOf,
  drainResult,
  handlerStarts,
  harnessArgs,
  inBatches,
  sleep,
  timeBatches,
  timeLatency,
  timeSingles,
} from './harness.mjs';

const { command, url, jobs, batch, concurrency, rate } = harnessArgs('bullmq.mjs');
const u = new URL(url);
const connection = { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
const prefix = u.searchParams.get('prefix') ?? 'bull';
const NAME = 'bench';

const fill = (q) =>
  inBatches(jobs, batch, (start, end) => {
    const items = [];
    for (let i = start; i < end; i++) items.push({ name: 'noop', data: { i } });
    return q.addBulk(items);
  });

const enqueueSingle = (q) => timeSingles(jobs, (i) => q.add('noop', { i }));

const enqueueBatch = (q) => timeBatches(jobs, batch, () => fill(q));

async function drain(q) {
  await fill(q);
  const { starts, all, started } = handlerStarts(jobs);
  const t0 = performance.now();
  const w = new Worker(NAME, async () => started(), { connection, prefix, concurrency });
  await all;
  const end = performance.now();
  await w.close();
  return drainResult(t0, end, starts, jobs, concurrency);
}

async function latency(q) {
  const seen = arrivals(jobs);
  const w = new Worker(NAME, async (job) => seen.arrived(job.data.i), { connection, prefix, concurrency: 1 });
  await w.waitUntilReady();
  await sleep(200);
  const out = await timeLatency(jobs, rate, seen, (i) => q.add('noop', { i }));
  await w.close();
  return out;
}

const run = commandOf({ 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency }, command);
const q = new Queue(NAME, { connection, prefix });
await q.waitUntilReady();
const out = await run(q);
await q.close();
console.log(JSON.stringify({ ...out, system: 'bullmq', store: 'redis', command, jobs }));
