// graphile-worker on PostgreSQL: the four commands of flexiq's side-by-side harness, one JSON
// line each (see bench/driver/src/main.rs for what each measures; the timing is harness.mjs's).
// `cargo xtask bench --peers` copies this file and harness.mjs beside a throwaway
// graphile-worker install and runs it there.
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

import { Logger, makeWorkerUtils, run } from 'graphile-worker';

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

const { command, url, jobs, batch, concurrency, rate } = harnessArgs('graphile.mjs');
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

const fill = (utils) =>
  inBatches(jobs, batch, (start, end) => {
    const specs = [];
    for (let i = start; i < end; i++) specs.push({ identifier: 'noop', payload: { i } });
    return utils.withPgClient((c) =>
      c.query(
        `select 1 from ${quoted}.add_jobs(array(select s from json_populate_recordset(null::${quoted}.job_spec, $1::json) s))`,
        [JSON.stringify(specs)],
      ),
    );
  });

const enqueueSingle = (utils) => timeSingles(jobs, (i) => utils.addJob('noop', { i }));

const enqueueBatch = (utils) => timeBatches(jobs, batch, () => fill(utils));

async function drain(utils) {
  await fill(utils);
  const { starts, all, started } = handlerStarts(jobs);
  const t0 = performance.now();
  const runner = await run({ ...shared, concurrency, taskList: { noop: async () => started() } });
  await all;
  const end = performance.now();
  await runner.stop();
  return drainResult(t0, end, starts, jobs, concurrency);
}

async function latency(utils) {
  const seen = arrivals(jobs);
  // Ready: the listening connection is up and the worker's first fetch found nothing.
  const events = new EventEmitter();
  const ready = Promise.all(
    ['pool:listen:success', 'worker:getJob:empty'].map((e) => new Promise((r) => events.once(e, r))),
  );
  const runner = await run({
    ...shared,
    events,
    concurrency: 1,
    taskList: { noop: async (payload) => seen.arrived(payload.i) },
  });
  await ready;
  await sleep(200);
  const out = await timeLatency(jobs, rate, seen, (i) => utils.addJob('noop', { i }));
  await runner.stop();
  return out;
}

const measure = commandOf({ 'enqueue-single': enqueueSingle, 'enqueue-batch': enqueueBatch, drain, latency }, command);
const utils = await makeWorkerUtils(shared);
let out;
try {
  await utils.migrate();
  out = await measure(utils);
} finally {
  await utils.withPgClient((c) => c.query(`drop schema if exists ${quoted} cascade`));
  await utils.release();
}
console.log(JSON.stringify({ ...out, system: 'graphile-worker', store: 'postgres', command, jobs }));
