// graphile-worker on PostgreSQL: the four commands of flexiq's side-by-side harness, one JSON
// line each (see bench/driver/src/main.rs for what each measures). `cargo xtask bench --peers`
// copies this file beside a throwaway graphile-worker install and runs it there.
//
// Usage: node graphile.mjs COMMAND postgres://USER@HOST:PORT/DB?schema=TAG [--jobs N]
//        [--batch B] [--concurrency C] [--rate R]
// graphile-worker installs itself in schema TAG (its `schema` option) and this driver drops
// that schema when it is done; the caller's own `DROP SCHEMA IF EXISTS` then finds nothing.
//
// Settings are graphile-worker's defaults: an idle worker is woken by LISTEN/NOTIFY (every
// `add_job` notifies `jobs:insert`), `pollInterval` stays at its 2 s default, the pool at 10
// connections, prepared statements on. Enqueues go through `WorkerUtils.addJob`; 0.16 has no
// bulk JavaScript call, so `enqueue-batch` calls its documented bulk SQL function
// `add_jobs(job_spec[])` once per batch through `WorkerUtils.withPgClient`.
import { EventEmitter } from 'node:events';
import { parseArgs } from 'node:util';

import { Logger, makeWorkerUtils, run } from 'graphile-worker';

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
const schema = u.searchParams.get('schema') ?? 'graphile_worker';
u.search = '';
const connectionString = u.toString();
const quoted = `"${schema.replaceAll('"', '""')}"`;
// Warnings and errors to stderr; stdout carries the JSON line only.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});
const shared = { connectionString, schema, logger, noHandleSignals: true };

const quantile = (xs, q) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * q)];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fill(utils) {
  for (let start = 0; start < jobs; start += batch) {
    const specs = [];
    for (let i = start; i < Math.min(start + batch, jobs); i++) specs.push({ identifier: 'noop', payload: { i } });
    await utils.withPgClient((c) =>
      c.query(
        `select 1 from ${quoted}.add_jobs(array(select s from json_populate_recordset(null::${quoted}.job_spec, $1::json) s))`,
        [JSON.stringify(specs)],
      ),
    );
  }
}

async function enqueueSingle(utils) {
  const calls = [];
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const t = performance.now();
    await utils.addJob('noop', { i });
    calls.push(performance.now() - t);
  }
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, call_p50_ms: quantile(calls, 0.5) };
}

async function enqueueBatch(utils) {
  const t0 = performance.now();
  await fill(utils);
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, batch };
}

async function drain(utils) {
  await fill(utils);
  const starts = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  const t0 = performance.now();
  const runner = await run({
    ...shared,
    concurrency,
    taskList: {
      noop: async () => {
        starts.push(performance.now());
        if (starts.length === jobs) finished();
      },
    },
  });
  await all;
  const secs = (performance.now() - t0) / 1000;
  await runner.stop();
  starts.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < starts.length; i++) gap = Math.max(gap, starts[i] - starts[i - 1]);
  return { secs, rate: jobs / secs, concurrency, max_gap_ms: gap };
}

async function latency(utils) {
  const sent = new Array(jobs).fill(0);
  const waits = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  // Ready: the listening connection is up and the worker's first fetch found nothing.
  const events = new EventEmitter();
  const ready = Promise.all(
    ['pool:listen:success', 'worker:getJob:empty'].map((e) => new Promise((r) => events.once(e, r))),
  );
  const runner = await run({
    ...shared,
    events,
    concurrency: 1,
    taskList: {
      noop: async (payload) => {
        waits.push(performance.now() - sent[payload.i]);
        if (waits.length === jobs) finished();
      },
    },
  });
  await ready;
  await sleep(200);
  const calls = [];
  const every = 1000 / rate;
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const pause = t0 + i * every - performance.now();
    if (pause > 0) await sleep(pause);
    const t = performance.now();
    sent[i] = t;
    await utils.addJob('noop', { i });
    calls.push(performance.now() - t);
  }
  await all;
  await runner.stop();
  return { rate, p50_ms: quantile(waits, 0.5), p99_ms: quantile(waits, 0.99), enqueue_p50_ms: quantile(calls, 0.5) };
}

const commands = { 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency };
if (!(command in commands)) {
  console.error(`unknown command ${command}: one of ${Object.keys(commands).join(', ')}`);
  process.exit(2);
}
const utils = await makeWorkerUtils(shared);
let out;
try {
  await utils.migrate();
  out = await commands[command](utils);
} finally {
  await utils.withPgClient((c) => c.query(`drop schema if exists ${quoted} cascade`));
  await utils.release();
}
console.log(JSON.stringify({ ...out, system: 'graphile-worker', store: 'postgres', command, jobs }));
