// BullMQ on Redis: the four commands of flexiq's side-by-side harness, one JSON line each
// (see bench/driver/src/main.rs for what each measures). `cargo xtask bench --peers` copies
// this file beside a throwaway BullMQ install and runs it there.
//
// Usage: node bullmq.mjs COMMAND redis://HOST:PORT?prefix=TAG [--jobs N] [--batch B]
//        [--concurrency C] [--rate R]
// Keys go under the prefix TAG; the caller deletes them afterwards.
import { parseArgs } from 'node:util';

import { Queue, Worker } from 'bullmq';

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
const u = new URL(url);
const connection = { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
const prefix = u.searchParams.get('prefix') ?? 'bull';
const NAME = 'bench';

const quantile = (xs, q) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * q)];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fill(q) {
  for (let start = 0; start < jobs; start += batch) {
    const items = [];
    for (let i = start; i < Math.min(start + batch, jobs); i++) items.push({ name: 'noop', data: { i } });
    await q.addBulk(items);
  }
}

async function enqueueSingle(q) {
  const calls = [];
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const t = performance.now();
    await q.add('noop', { i });
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
  const t0 = performance.now();
  const w = new Worker(
    NAME,
    async () => {
      starts.push(performance.now());
      if (starts.length === jobs) finished();
    },
    { connection, prefix, concurrency },
  );
  await all;
  const secs = (performance.now() - t0) / 1000;
  await w.close();
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
  const w = new Worker(
    NAME,
    async (job) => {
      waits.push(performance.now() - sent[job.data.i]);
      if (waits.length === jobs) finished();
    },
    { connection, prefix, concurrency: 1 },
  );
  await w.waitUntilReady();
  await sleep(200);
  const calls = [];
  const every = 1000 / rate;
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const pause = t0 + i * every - performance.now();
    if (pause > 0) await sleep(pause);
    const t = performance.now();
    sent[i] = t;
    await q.add('noop', { i });
    calls.push(performance.now() - t);
  }
  await all;
  await w.close();
  return { rate, p50_ms: quantile(waits, 0.5), p99_ms: quantile(waits, 0.99), enqueue_p50_ms: quantile(calls, 0.5) };
}

const commands = { 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency };
if (!(command in commands)) {
  console.error(`unknown command ${command}: one of ${Object.keys(commands).join(', ')}`);
  process.exit(2);
}
const q = new Queue(NAME, { connection, prefix });
await q.waitUntilReady();
const out = await commands[command](q);
await q.close();
console.log(JSON.stringify({ ...out, system: 'bullmq', store: 'redis', command, jobs }));
