// The bad-input catalogue (tests/catalogue/bad_input.json at the repository root) on every
// store: each case that names Node is called on a queue of a shared world and must reject (or
// throw) a FlexiqError with the documented `code`, and leave the store as it was, compared by
// a snapshot of its counts and listings taken before and after.
//
// The world is built once per store (the calls fail before writing, so the cases can share it,
// and a case that wrote would show in its own snapshot); the Rust and Python suites read the
// same file, so a case added there reaches all three languages.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { FlexiqError, Queue } from '../index.mjs';
import { BACKENDS, until } from './helpers.mjs';

const CATALOGUE = JSON.parse(readFileSync(new URL('../../../tests/catalogue/bad_input.json', import.meta.url), 'utf8'));
const CASES = CATALOGUE.cases.filter((c) => 'node' in c);
const UNKNOWN_ID = '0190b6a0-0000-7000-8000-000000000000';

/** A store with the records the cases refer to, and the handles they are called on. */
async function buildWorld(url) {
  const q = await Queue.connect({ url });
  q.task('cat.fail', async () => {
    throw new Error('catalogue');
  });
  await q.enqueue('cat.fail', null, { queue: 'cat-dead', maxRetries: 0 });
  const w = q.worker({ queues: ['cat-dead'], maintenance: false });
  const running = w.run();
  const [dead] = await until(async () => {
    const d = await q.deadLetters();
    return d.length === 1 && d;
  }, 15_000, 'a dead letter');
  await w.close();
  await running;
  const job = await q.enqueue('cat.task', [1], { queue: 'cat', metadata: { n: 1 } });
  const job2 = await q.enqueue('cat.task', [2], { queue: 'cat', metadata: { n: 2 } });
  const cancelled = await q.enqueue('cat.task', [3], { queue: 'cat' });
  assert.equal(q.cancelJob(cancelled), true);
  for (const id of ['cat.sched.a', 'cat.sched.b']) {
    await q.upsertJobScheduler(id, { everyMs: 3_600_000 }, { task: 'cat.task' });
  }
  const other = await Queue.connect({ url, namespace: 'cat-other' });
  const otherJob = await other.enqueue('cat.task', null, { queue: 'cat' });
  const closed = await Queue.connect({ url });
  await closed.close();
  const refs = {
    url,
    job,
    job2,
    cancelled_job: cancelled,
    dead: dead.id,
    dead_job: dead.originalJobId,
    other_job: otherJob,
    jobs_cursor: (await q.listJobsAfter({ limit: 1 })).nextCursor,
    schedulers_cursor: (await q.listJobSchedulers({ limit: 1 })).nextCursor,
    event_id: await q.lastEventId(),
    unknown_id: UNKNOWN_ID,
  };
  for (const [k, v] of Object.entries(refs)) assert.ok(v !== null && v !== undefined, `world ref ${k} is missing`);
  return { queue: q, other, closed, refs };
}

/** A catalogue value as the JavaScript value it names. */
function value(v, refs) {
  if (Array.isArray(v)) return v.map((x) => value(x, refs));
  if (v === null || typeof v !== 'object') return v;
  if ('$ref' in v) return refs[v.$ref];
  if ('$' in v) {
    switch (v.$) {
      case 'nan':
        return NaN;
      case 'inf':
        return Infinity;
      case '-inf':
        return -Infinity;
      case 'pow2':
        return 2 ** v.exp;
      case 'text':
        return v.char.repeat(v.len);
      case 'object':
        return {};
      case 'function':
        return () => {};
      case 'bigint':
        return BigInt(v.value);
      case 'undefined':
        return undefined;
      case 'date':
        return new Date(v.ms ?? NaN);
      default:
        throw new Error(`value ${JSON.stringify(v)} has no JavaScript form`);
    }
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, value(x, refs)]));
}

const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/** Makes the case's call (which should throw or reject). */
async function call(world, c) {
  const args = value(c.node, world.refs);
  const q = c.on === 'closed' ? world.closed : world.queue;
  if (c.op === 'connect') {
    await (await Queue.connect(...args)).close();
    return;
  }
  if (c.op.startsWith('workflow_jobs.')) {
    const view = q.workflowJobs();
    return view[camel(c.op.slice('workflow_jobs.'.length))](...args);
  }
  const out = await q[camel(c.op)](...args);
  // A stream or events iterator that opened must not be left reading.
  if (out && typeof out.return === 'function') await out.return();
  return out;
}

/** Every count and listing a refused call must leave as it was. */
async function snapshot(world) {
  const q = world.queue;
  return {
    stats: await q.stats(),
    queues: await q.statsAllQueues(),
    jobs: await q.listJobs({ limit: 10_000 }),
    dead: await q.deadLetters(10_000),
    settings: q.listSettings(),
    schedulers: (await q.listJobSchedulers({ limit: 10_000 })).items,
    paused: q.pausedQueues(),
    revoked: q.revokedTasks(),
    config: q.queueConfig('cat'),
    lastEvent: await q.lastEventId(),
    eventsEnabled: await q.eventsEnabled(),
    otherJobs: await world.other.listJobs({ limit: 10_000 }),
  };
}

/** Why the case is known to fail in Node on `store`, or undefined. */
function skipReason(c, store) {
  const failing = c.known_failing ?? {};
  return failing.node ?? failing.all ?? failing[store];
}

/** The text the error message must contain, if the case says. */
function mention(c) {
  return c.mentions !== null && typeof c.mentions === 'object' ? c.mentions.node : c.mentions;
}

describe('the catalogue', () => {
  it('keeps at least 150 live cases', () => {
    const live = CASES.filter((c) => skipReason(c) === undefined);
    assert.ok(live.length >= 150, `${live.length} live Node cases`);
  });
});

for (const backend of BACKENDS) {
  describe(`bad input on ${backend.name}`, () => {
    let store;
    let world;
    before(async () => {
      store = backend.fresh();
      world = await buildWorld(store.url);
    });
    after(async () => {
      await world?.queue.close();
      await world?.other.close();
      store?.cleanup();
    });

    for (const c of CASES) {
      const reason = skipReason(c, backend.name);
      it(c.id, { skip: reason && `known failing: ${reason}` }, async () => {
        const before = await snapshot(world);
        let err;
        try {
          await call(world, c);
        } catch (e) {
          err = e;
        }
        assert.ok(err !== undefined, 'the call was not refused');
        assert.ok(err instanceof FlexiqError, `${err?.name} is not a FlexiqError: ${err?.message}`);
        assert.equal(err.code, CATALOGUE.errors[c.expect].node, err.message);
        const m = mention(c);
        if (m !== undefined) assert.ok(err.message.includes(m), `the message does not name ${m}: ${err.message}`);
        assert.deepEqual(await snapshot(world), before, 'the refused call changed the store');
      });
    }
  });
}
