// Every duration a caller gives is checked once, in lib/args.cjs `duration`: NaN, infinities,
// negatives and non-numbers are INVALID_ARGUMENT with one message shape naming the argument
// and its unit, whichever option or argument carries it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Queue } from '../index.mjs';
import { rejectsCode } from './helpers.mjs';

const BAD = [
  [NaN, 'NaN'],
  [Infinity, 'Infinity'],
  [-Infinity, '-Infinity'],
  [-1, '-1'],
  ['5', 'the string "5"'],
  [true, 'a boolean'],
  [{}, 'an object'],
];

describe('durations', () => {
  let dir;
  let q;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'flexiq-node-'));
    q = new Queue({ dbPath: join(dir, 'jobs.db') });
    q.task('t', async () => null);
  });
  after(async () => {
    await q.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each place a duration goes: its name in messages, its unit, and a call giving it `v`. */
  const PLACES = [
    ['delay', 'seconds', (v) => q.enqueue('t', null, { delay: v })],
    ['timeout', 'seconds', (v) => q.enqueue('t', null, { timeout: v })],
    ['backoff.base', 'seconds', (v) => q.enqueue('t', null, { backoff: { base: v } })],
    ['backoff.max', 'seconds', (v) => q.enqueueMany([{ task: 't', options: { backoff: { max: v } } }])],
    ['retention.taskLogs', 'seconds', (v) => q.dryRunRetention({ taskLogs: v })],
    ['retention.deadLetter', 'seconds', (v) => new Queue({ dbPath: join(dir, 'other.db'), retention: { deadLetter: v } })],
    ['busyTimeoutMs', 'milliseconds', (v) => Queue.connect({ dbPath: join(dir, 'other.db'), busyTimeoutMs: v })],
    ['lease', 'seconds', (v) => q.worker({ lease: v })],
    ['pollInterval', 'seconds', (v) => q.worker({ pollInterval: v })],
    ['shutdownTimeout', 'seconds', (v) => q.worker({ shutdownTimeout: v })],
    ['archiveAfter', 'seconds', (v) => q.worker({ archiveAfter: v })],
    ['softTimeout', 'seconds', (v) => new Queue({ dbPath: join(dir, 'jobs.db') }).task('s', async () => null, { softTimeout: v }).worker()],
    ['timeoutMs', 'milliseconds', (v) => q.result('01890000-0000-7000-8000-000000000000', { timeoutMs: v })],
    ['pollMs', 'milliseconds', (v) => q.stream('01890000-0000-7000-8000-000000000000', { pollMs: v }).next()],
    ['olderThanMs', 'milliseconds', (v) => q.purgeDead(v)],
    ['olderThanMs', 'milliseconds', (v) => q.purgeCompleted(v)],
    ['sinceMs', 'milliseconds', (v) => q.metrics(null, v)],
    ['bucketMs', 'milliseconds', (v) => q.metricsTimeseries(null, 60_000, v)],
  ];

  for (const [what, unit, call] of PLACES) {
    it(`${what} (${unit})`, async () => {
      for (const [v, shown] of BAD) {
        const err = await rejectsCode(assert, () => call(v), 'INVALID_ARGUMENT');
        assert.ok(
          err.message.endsWith(`${what} must be a finite number of ${unit}, zero or more, got ${shown}`),
          `${what} = ${shown}: ${err.message}`,
        );
      }
    });
  }

  it('a required duration must be given', async () => {
    await rejectsCode(assert, () => q.purgeDead(), 'INVALID_ARGUMENT', /olderThanMs must be a finite number of milliseconds, zero or more, got undefined/);
  });

  it('zero and fractions of a second pass the check', async () => {
    assert.equal(typeof (await q.enqueue('t', null, { delay: 0.25, timeout: 1.5, backoff: { base: 0.5, max: 1.5 } })), 'string');
    assert.equal(await q.purgeDead(0), 0);
  });
});
