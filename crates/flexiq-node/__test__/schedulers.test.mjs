// Job schedulers (`upsertJobScheduler`, `getJobScheduler`, `listJobSchedulers`,
// `removeJobScheduler`, `countJobSchedulers`) on every store: the rule and template round
// trip, replacing keeps a scheduler's history, keyset pages, remove and count, bad input
// refused at every entry point with nothing stored, and a worker's elected maintenance firing
// an every-100-ms scheduler exactly as many times as its limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const DAY_MS = 86_400_000;
const EVERY = { everyMs: 60_000 };
const TEMPLATE = { task: 'tick' };

/** `ms` as a weekday and wall time in Berlin (`Mon 09:00:00`). */
function berlin(ms) {
  const f = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Berlin',
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.weekday} ${p.hour}:${p.minute}:${p.second}`;
}

for (const backend of BACKENDS) {
  describe(`job schedulers on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('round-trips a cron rule and its template; replacing keeps its creation and count', async () => {
      const q = await store.open();
      const start = Date.now();
      const end = start + 30 * DAY_MS;
      const repeat = {
        cron: '0 9 * * MON-FRI',
        tz: 'Europe/Berlin',
        limit: 5,
        startAtMs: new Date(start),
        endAtMs: end,
        catchUp: 'all',
        catchUpMax: 7,
      };
      const template = {
        task: 'report.send',
        payload: { to: ['ops'], n: 1 },
        options: { queue: 'reports', priority: 3, maxRetries: 2, backoff: { base: 0.5, max: 30 }, timeout: 1.5, metadata: { tenant: 't1' }, groupKey: 'g1' },
      };
      const s = await q.upsertJobScheduler('report', repeat, template);
      assert.deepEqual(Object.keys(s).sort(), ['createdAt', 'id', 'iterations', 'lastRunMs', 'nextRunMs', 'repeat', 'template', 'updatedAt']);
      assert.equal(s.id, 'report');
      assert.deepEqual(s.repeat, { ...repeat, startAtMs: start, immediately: false });
      assert.deepEqual(s.template, template, 'the template reads back as given, seconds as enqueue takes them');
      assert.equal(typeof s.nextRunMs, 'number');
      assert.ok(s.nextRunMs > start && s.nextRunMs <= end, `next slot ${s.nextRunMs} lies in the window`);
      assert.match(berlin(s.nextRunMs), /^(Mon|Tue|Wed|Thu|Fri) 09:00:00$/, 'the next slot is 09:00 on a weekday in Berlin');
      assert.deepEqual([s.lastRunMs, s.iterations, s.createdAt], [null, 0, s.updatedAt]);
      assert.ok(s.createdAt >= start - 1_000 && s.createdAt <= Date.now() + 1_000);
      assert.deepEqual(await q.getJobScheduler('report'), s);
      assert.equal(await q.getJobScheduler('other'), null);

      // What was read back upserts again as it is.
      const again = await q.upsertJobScheduler(s.id, s.repeat, s.template);
      assert.deepEqual([again.repeat, again.template, again.nextRunMs, again.createdAt], [s.repeat, s.template, s.nextRunMs, s.createdAt]);

      const replaced = await q.upsertJobScheduler('report', EVERY, { task: 'report.send' });
      assert.deepEqual(replaced.repeat, {
        everyMs: 60_000,
        limit: null,
        startAtMs: null,
        endAtMs: null,
        immediately: false,
        catchUp: 'latest',
        catchUpMax: null,
      });
      assert.deepEqual(replaced.template, { task: 'report.send', payload: null, options: {} });
      assert.deepEqual([replaced.createdAt, replaced.iterations, replaced.lastRunMs], [s.createdAt, 0, null]);
      assert.ok(replaced.updatedAt >= s.updatedAt);
      assert.ok(replaced.nextRunMs > replaced.updatedAt && replaced.nextRunMs <= replaced.updatedAt + 60_000);
      assert.deepEqual(await q.getJobScheduler('report'), replaced);
      assert.equal(await q.countJobSchedulers(), 1);
      assert.equal((await q.stats()).pending, 0, 'an upsert enqueues nothing');
    });

    it('places the first slot at startAtMs, or at once with immediately', async () => {
      const q = await store.open();
      const later = Date.now() + DAY_MS;
      const s = await q.upsertJobScheduler('later', { everyMs: 1_000, startAtMs: later }, TEMPLATE);
      assert.equal(s.nextRunMs, later);
      const before = Date.now();
      const now = await q.upsertJobScheduler('now', { everyMs: 60_000, immediately: true, catchUp: 'none' }, TEMPLATE);
      assert.ok(now.nextRunMs >= before - 1_000 && now.nextRunMs <= Date.now() + 1_000, 'immediately: due now');
      assert.deepEqual([now.repeat.immediately, now.repeat.catchUp], [true, 'none']);
      const utc = await q.upsertJobScheduler('utc', { cron: '30 6 * * *' }, TEMPLATE);
      assert.equal(utc.repeat.tz, null, 'no zone reads back as null: UTC');
      const at = new Date(utc.nextRunMs);
      assert.deepEqual([at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()], [6, 30, 0]);
      const ended = await q.upsertJobScheduler('ended', { everyMs: 1_000, startAtMs: 1_000, endAtMs: 2_000 }, TEMPLATE);
      assert.equal(ended.nextRunMs, null, 'a window already over has no slot');
    });

    it('lists by id in keyset pages; the last page has a null cursor and a bad cursor is refused', async () => {
      const q = await store.open();
      for (const id of ['s-03', 's-01', 's-05', 's-02', 's-04']) await q.upsertJobScheduler(id, EVERY, { task: 'tick', payload: { id } });
      const ids = (p) => p.items.map((s) => s.id);
      const first = await q.listJobSchedulers({ limit: 2 });
      assert.deepEqual(ids(first), ['s-01', 's-02']);
      assert.equal(typeof first.nextCursor, 'string');
      assert.deepEqual(first.items[0].template.payload, { id: 's-01' }, 'items are full schedulers');
      const second = await q.listJobSchedulers({ limit: 2, after: first.nextCursor });
      assert.deepEqual(ids(second), ['s-03', 's-04']);
      const last = await q.listJobSchedulers({ limit: 2, after: second.nextCursor });
      assert.deepEqual([ids(last), last.nextCursor], [['s-05'], null]);
      const all = await q.listJobSchedulers();
      assert.deepEqual([ids(all), all.nextCursor], [['s-01', 's-02', 's-03', 's-04', 's-05'], null]);
      assert.deepEqual(all.items[2], await q.getJobScheduler('s-03'));
      const exact = await q.listJobSchedulers({ limit: 5, after: null });
      assert.deepEqual([exact.items.length, exact.nextCursor], [5, null]);

      await rejectsCode(assert, () => q.listJobSchedulers({ after: 'garbage' }), 'INVALID_ARGUMENT', /cursor/);
      await rejectsCode(assert, () => q.listJobSchedulers({ after: '' }), 'INVALID_ARGUMENT', /cursor must not be empty/);
      await q.enqueue('tick', 1);
      await q.enqueue('tick', 2);
      const jobs = await q.listJobsAfter({ limit: 1 });
      await rejectsCode(assert, () => q.listJobSchedulers({ after: jobs.nextCursor }), 'INVALID_ARGUMENT', /cursor/);
      for (const limit of [0, 10_001, 1.5, NaN, '2']) {
        await rejectsCode(assert, () => q.listJobSchedulers({ limit }), 'INVALID_ARGUMENT', /limit/);
      }
    });

    it('removes and counts; a removed scheduler is gone', async () => {
      const q = await store.open();
      assert.equal(await q.countJobSchedulers(), 0);
      await q.upsertJobScheduler('a', EVERY, TEMPLATE);
      await q.upsertJobScheduler('b', { cron: '*/5 * * * *' }, TEMPLATE);
      await q.upsertJobScheduler('a', { everyMs: 5_000 }, TEMPLATE);
      assert.equal(await q.countJobSchedulers(), 2, 'an upsert of an existing id replaces it');
      assert.equal(await q.removeJobScheduler('a'), true);
      assert.equal(await q.removeJobScheduler('a'), false);
      assert.equal(await q.removeJobScheduler('never'), false);
      assert.equal(await q.getJobScheduler('a'), null);
      assert.equal(await q.countJobSchedulers(), 1);
      assert.deepEqual((await q.listJobSchedulers()).items.map((s) => s.id), ['b']);
    });

    it('refuses bad input at every entry point, naming the field, and stores nothing', async () => {
      const q = await store.open();
      const upsert = (repeat, template = TEMPLATE, id = 'x') => () => q.upsertJobScheduler(id, repeat, template);
      const tmpl = (options) => upsert(EVERY, { task: 'tick', options });
      const bad = [
        // the id
        [upsert(EVERY, TEMPLATE, 5), /scheduler id must be a string, got 5/],
        [() => q.upsertJobScheduler(undefined, EVERY, TEMPLATE), /scheduler id must be a string, got undefined/],
        [upsert(EVERY, TEMPLATE, ''), /scheduler id must not be empty/],
        [upsert(EVERY, TEMPLATE, 'a\u0000b'), /scheduler id .* contains control characters/],
        // the rule
        [upsert(null), /repeat must be an object/],
        [upsert('every minute'), /repeat must be an object/],
        [upsert({}), /repeat needs cron .* or everyMs/],
        [upsert({ limit: 3 }), /repeat needs cron .* or everyMs/],
        [upsert({ cron: '* * * * *', everyMs: 5 }), /repeat takes cron or everyMs, not both/],
        [upsert({ everyMs: 5, every: 5 }), /repeat has no option "every"/],
        [upsert({ everyMs: NaN }), /repeat\.everyMs must be a finite number of milliseconds, zero or more, got NaN/],
        [upsert({ everyMs: '5' }), /repeat\.everyMs must be a finite number of milliseconds/],
        [upsert({ everyMs: -5 }), /repeat\.everyMs must be a finite number of milliseconds/],
        [upsert({ everyMs: 0 }), /repeat\.everyMs must be 1 or more, got 0/],
        [upsert({ everyMs: 1.5 }), /repeat\.everyMs must be a whole number/],
        [upsert({ cron: 5 }), /repeat\.cron must be a string, got 5/],
        [upsert({ cron: 'every day at nine' }), /cron pattern "every day at nine" is malformed/],
        [upsert({ cron: '61 * * * *' }), /cron pattern "61 \* \* \* \*" is malformed/],
        [upsert({ cron: '0 9 * * *', tz: 'Mars/Olympus_Mons' }), /unknown time zone "Mars\/Olympus_Mons"/],
        [upsert({ cron: '0 9 * * *', tz: 1 }), /repeat\.tz must be a string/],
        [upsert({ everyMs: 5, tz: 'UTC' }), /repeat\.tz "UTC" applies to cron only/],
        [upsert({ ...EVERY, limit: 0 }), /repeat\.limit must be 1 or more, got 0/],
        [upsert({ ...EVERY, limit: 2.5 }), /repeat\.limit must be an integer, got 2\.5/],
        [upsert({ ...EVERY, limit: NaN }), /repeat\.limit must be an integer, got NaN/],
        [upsert({ ...EVERY, limit: '3' }), /repeat\.limit must be an integer, got the string "3"/],
        [upsert({ ...EVERY, startAtMs: 'tomorrow' }), /repeat\.startAtMs must be Unix ms \(a number\) or a Date/],
        [upsert({ ...EVERY, startAtMs: new Date('no such day') }), /repeat\.startAtMs must be a finite number, got NaN/],
        [upsert({ ...EVERY, startAtMs: -1 }), /repeat\.startAtMs -1 must be between 0/],
        [upsert({ ...EVERY, endAtMs: NaN }), /repeat\.endAtMs must be a finite number, got NaN/],
        [upsert({ ...EVERY, startAtMs: 2_000, endAtMs: 1_000 }), /end_at_ms 1000 is before start_at_ms 2000/],
        [upsert({ ...EVERY, immediately: 'yes' }), /repeat\.immediately must be a boolean/],
        [upsert({ ...EVERY, catchUp: 'sometimes' }), /repeat\.catchUp "sometimes" must be 'latest', 'none' or 'all'/],
        [upsert({ ...EVERY, catchUp: true }), /repeat\.catchUp must be a string/],
        [upsert({ ...EVERY, catchUpMax: 5 }), /repeat\.catchUpMax applies to catchUp 'all' only/],
        [upsert({ ...EVERY, catchUp: 'none', catchUpMax: 5 }), /repeat\.catchUpMax applies to catchUp 'all' only/],
        [upsert({ ...EVERY, catchUp: 'all', catchUpMax: 0 }), /repeat\.catchUpMax 0 must be between 1 and 1000/],
        [upsert({ ...EVERY, catchUp: 'all', catchUpMax: 1_001 }), /repeat\.catchUpMax 1001 must be between 1 and 1000/],
        [upsert({ ...EVERY, catchUp: 'all', catchUpMax: 1.5 }), /repeat\.catchUpMax must be an integer/],
        // the template
        [upsert(EVERY, null), /template must be an object/],
        [upsert(EVERY, 'tick'), /template must be an object/],
        [upsert(EVERY, { payload: 1 }), /template\.task must be a string, got undefined/],
        [upsert(EVERY, { task: '' }), /task name must not be empty/],
        [upsert(EVERY, { task: 'tick', retries: 3 }), /template has no option "retries"/],
        [upsert(EVERY, { task: 'tick', payload: 10n }), /template\.payload is not JSON-serialisable/],
        [tmpl('fast'), /template\.options must be an object/],
        [tmpl({ delay: 5 }), /template\.options cannot set delay: each slot decides it/],
        [tmpl({ runAt: new Date() }), /template\.options cannot set runAt/],
        [tmpl({ uniqueKey: 'k' }), /template\.options cannot set uniqueKey/],
        [tmpl({ dedup: { id: 'k', mode: 'simple' } }), /template\.options cannot set dedup/],
        [tmpl({ dependsOn: [] }), /template\.options cannot set dependsOn/],
        [tmpl({ lifo: false }), /template\.options cannot set lifo/],
        [tmpl({ workflowRunId: 'run-1' }), /template\.options has no option "workflowRunId"/],
        [tmpl({ timeout: -1 }), /template\.options\.timeout must be a finite number of seconds, zero or more, got -1/],
        [tmpl({ timeout: NaN }), /template\.options\.timeout must be a finite number of seconds/],
        [tmpl({ backoff: { base: NaN } }), /template\.options\.backoff\.base must be a finite number of seconds/],
        [tmpl({ backoff: { min: 1 } }), /template\.options\.backoff has no option "min"/],
        [tmpl({ priority: 1.5 }), /priority must be a whole number/],
        [tmpl({ maxRetries: -1 }), /maxRetries -1 must be between 0/],
        [tmpl({ queue: '' }), /queue name must not be empty/],
        // the other entry points
        [() => q.getJobScheduler(5), /scheduler id must be a string, got 5/],
        [() => q.getJobScheduler(''), /scheduler id must not be empty/],
        [() => q.removeJobScheduler(null), /scheduler id must be a string, got null/],
        [() => q.removeJobScheduler(''), /scheduler id must not be empty/],
        [() => q.listJobSchedulers('all'), /listJobSchedulers options must be an object/],
        [() => q.listJobSchedulers({ limit: 2, offset: 2 }), /listJobSchedulers options has no option "offset"/],
        [() => q.listJobSchedulers({ after: 5 }), /after must be a string, got 5/],
      ];
      for (const [call, re] of bad) {
        const pending = call();
        assert.ok(pending instanceof Promise, `${re}: a call rejects rather than throws`);
        await rejectsCode(assert, () => pending, 'INVALID_ARGUMENT', re).catch((e) => {
          e.message = `case ${re}: ${e.message}`;
          throw e;
        });
      }
      assert.equal(await q.countJobSchedulers(), 0);
      assert.deepEqual(await q.listJobSchedulers(), { items: [], nextCursor: null });
      assert.equal(await q.getJobScheduler('x'), null);
      assert.equal((await q.stats()).pending, 0);
    });

    it('a worker fires { everyMs: 100, limit: 3 } exactly three times', async () => {
      const q = await store.open();
      const runs = [];
      q.task('tick', async (payload, ctx) => {
        runs.push({ id: ctx.id, payload });
        return runs.length;
      });
      const s = await q.upsertJobScheduler('ticker', { everyMs: 100, limit: 3 }, { task: 'tick', payload: { from: 'ticker' }, options: { queue: 'ticks' } });
      assert.equal(s.iterations, 0);
      // Maintenance (the default) makes the worker its namespace's cleaner, which fires due
      // slots on its scheduler tick.
      const w = store.work(q, { queues: ['ticks'], pollInterval: 0.05 });
      await w.ready;
      const done = await until(
        async () => {
          const cur = await q.getJobScheduler('ticker');
          const stats = await q.statsByQueue('ticks');
          return cur.iterations === 3 && cur.nextRunMs === null && stats.completed === 3 && cur;
        },
        30_000,
        'three slots fired and their jobs completed',
      );
      assert.equal(runs.length, 3);
      assert.equal(new Set(runs.map((r) => r.id)).size, 3);
      for (const r of runs) assert.deepEqual(r.payload, { from: 'ticker' });
      assert.equal(typeof done.lastRunMs, 'number');
      const jobs = await q.listJobs({ queue: 'ticks', limit: 10 });
      assert.equal(jobs.length, 3);
      for (const j of jobs) {
        assert.equal(j.status, 'completed');
        assert.match(j.uniqueKey, /^scheduler:ticker:\d+$/, 'each job names its scheduler and slot');
      }
      assert.equal(new Set(jobs.map((j) => j.uniqueKey)).size, 3);
      assert.ok(jobs.some((j) => j.uniqueKey === `scheduler:ticker:${done.lastRunMs}`), 'lastRunMs is the newest fired slot');
      assert.equal((await q.stats()).pending + (await q.stats()).running, 0, 'no fourth job');
    });
  });
}
