'use strict';
// Job schedulers of the Queue: create or replace one (a cron or every-N-ms rule and the job
// each slot enqueues), read, list and remove them; `countJobSchedulers` passes through.
// Mirrors the runtime's queue/schedulers.rs; installed on Queue.prototype by lib/queue.cjs.
//
// Here, before the addon sees anything: the rule's and the template's keys are checked
// against their sets (options.cjs), the enqueue options a template may not carry are refused
// by name, `Date`s become Unix ms and the payload and metadata are JSON-encoded. On the way
// back they are decoded and every absent value is `null`, so a scheduler read back can be
// upserted again as it is. The numbers' ranges and the rule itself (pattern, zone, window,
// catch-up) are checked by the addon and core.

const { native, page } = require('./base.cjs');
const { callAsync, invalid } = require('../errors.cjs');
const { encode, decode, shown, integer, options, jobOptions } = require('../args.cjs');
const { OPTION_SETS } = require('../options.cjs');

/** The enqueue options each slot decides (its time, unique key, dependencies, order). */
const SLOT_DECIDES = Object.freeze([...OPTION_SETS.enqueue].filter((k) => !OPTION_SETS.templateOptions.has(k)));

/** How a refused value reads in a message (arrays and null by name). */
function got(v) {
  if (Array.isArray(v)) return 'an array';
  return v === null ? 'null' : shown(v);
}

function object(what, v, shape) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(`${what} must be an object ${shape}, got ${got(v)}`);
  return v;
}

/** A scheduler id: a string (core checks it is a name). */
function schedulerId(v) {
  if (typeof v !== 'string') throw invalid(`scheduler id must be a string, got ${got(v)}`);
  return v;
}

/** An optional value of `type` (`null` counts as absent). */
function optional(what, v, type) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) throw invalid(`${what} must be a ${type}, got ${got(v)}`);
  return v;
}

/** An optional time: Unix ms or a `Date` (the addon checks the number). */
function time(what, v) {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v;
  throw invalid(`${what} must be Unix ms (a number) or a Date, got ${got(v)}`);
}

/** The rule as the addon takes it. */
function repeatRule(r) {
  object('repeat', r, '{ cron, tz } or { everyMs }');
  options('repeat', r, 'repeat', 'repeat.');
  return {
    cron: optional('repeat.cron', r.cron, 'string'),
    tz: optional('repeat.tz', r.tz, 'string'),
    everyMs: r.everyMs ?? undefined,
    limit: integer('repeat.limit', r.limit ?? undefined),
    startAtMs: time('repeat.startAtMs', r.startAtMs),
    endAtMs: time('repeat.endAtMs', r.endAtMs),
    immediately: optional('repeat.immediately', r.immediately, 'boolean'),
    catchUp: optional('repeat.catchUp', r.catchUp, 'string'),
    catchUpMax: integer('repeat.catchUpMax', r.catchUpMax ?? undefined),
  };
}

/** The template as the addon takes it. */
function jobTemplate(t) {
  object('template', t, '{ task, payload, options }');
  options('template', t, 'template');
  if (typeof t.task !== 'string') throw invalid(`template.task must be a string, got ${got(t.task)}`);
  const o = t.options ?? undefined;
  if (o !== null && typeof o === 'object') {
    const refused = SLOT_DECIDES.find((k) => Object.hasOwn(o, k));
    if (refused !== undefined) {
      throw invalid(`template.options cannot set ${refused}: each slot decides it (a template sets ${[...OPTION_SETS.templateOptions].join(', ')})`);
    }
  }
  return {
    task: t.task,
    payload: encode('template.payload', t.payload),
    options: jobOptions(o, 'template.options', 'templateOptions', 'template.options.'),
  };
}

/** A scheduler as the public API has it: payload and metadata decoded, absent values `null`. */
function scheduler(s) {
  const r = s.repeat;
  const repeat = typeof r.cron === 'string' ? { cron: r.cron, tz: r.tz ?? null } : { everyMs: r.everyMs };
  repeat.limit = r.limit ?? null;
  repeat.startAtMs = r.startAtMs ?? null;
  repeat.endAtMs = r.endAtMs ?? null;
  repeat.immediately = r.immediately ?? false;
  repeat.catchUp = r.catchUp ?? 'latest';
  repeat.catchUpMax = r.catchUpMax ?? null;
  const opts = {};
  for (const [k, v] of Object.entries(s.template.options ?? {})) {
    if (v !== undefined && v !== null) opts[k] = k === 'metadata' ? decode(v) : v;
  }
  return {
    id: s.id,
    repeat,
    template: { task: s.template.task, payload: decode(s.template.payload), options: opts },
    nextRunMs: s.nextRunMs ?? null,
    lastRunMs: s.lastRunMs ?? null,
    iterations: s.iterations,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

class SchedulerCalls {
  upsertJobScheduler(id, repeat, template) {
    return callAsync(async () => {
      const args = [schedulerId(id), repeatRule(repeat), jobTemplate(template)];
      return scheduler(await native(this).upsertJobScheduler(...args));
    });
  }

  getJobScheduler(id) {
    return callAsync(async () => {
      const s = await native(this).getJobScheduler(schedulerId(id));
      return s === null || s === undefined ? null : scheduler(s);
    });
  }

  listJobSchedulers(opts) {
    return callAsync(async () => {
      const o = options('listJobSchedulers options', opts, 'listSchedulers') ?? {};
      const query = { limit: integer('limit', o.limit ?? undefined), after: optional('after', o.after, 'string') };
      const p = await page(native(this).listJobSchedulers(query));
      return { items: p.items.map(scheduler), nextCursor: p.nextCursor };
    });
  }

  removeJobScheduler(id) {
    return callAsync(() => native(this).removeJobScheduler(schedulerId(id)));
  }
}

module.exports = { SchedulerCalls };
