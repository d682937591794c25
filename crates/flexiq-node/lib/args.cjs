'use strict';
// Argument shaping the addon cannot express: JSON encoding of payloads, results and
// metadata, refusal of option keys flexiq does not know (the sets are in options.cjs; a
// misspelt option would otherwise be silently ignored), and the one check of every duration
// (`duration`: a finite number, zero or more, in the unit its name or options.cjs gives).
// The addon converts seconds to milliseconds (one function, `args::secs_to_ms`) and checks
// the remaining number rules (whole counts, ranges).

const { invalid } = require('./errors.cjs');
const { OPTION_SETS, DURATIONS } = require('./options.cjs');

/** JSON text of a payload, partial or result (`undefined` encodes as `null`). */
function encode(what, value) {
  let text;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    throw invalid(`${what} is not JSON-serialisable: ${e.message}`, e);
  }
  if (text === undefined) throw invalid(`${what} is not JSON-serialisable (a ${typeof value})`);
  return text;
}

/** Parses stored JSON text; text that is not JSON is returned as is. */
function decode(text) {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const UNITS = { s: 'seconds', ms: 'milliseconds' };

/** How a refused value reads in a message. */
function shown(v) {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (v === null || v === undefined) return String(v);
  return /^[aeiou]/.test(typeof v) ? `an ${typeof v}` : `a ${typeof v}`;
}

/**
 * Checks a duration the caller gives in `unit` (`s` or `ms`): a finite number, zero or
 * more. Every duration of the package goes through here, so NaN, infinities, negatives and
 * non-numbers all read `<what> must be a finite number of <unit>, zero or more, got <v>`.
 * `undefined` and `null` (option absent) pass unless `required`.
 */
function duration(what, v, unit, required = false) {
  if ((v === undefined || v === null) && !required) return v;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  throw invalid(`${what} must be a finite number of ${UNITS[unit]}, zero or more, got ${shown(v)}`);
}

/**
 * Checks a count, priority or budget: a whole number (the engine checks its range), so NaN,
 * fractions, strings and booleans read `<what> must be an integer, got <v>` with the argument
 * named. `undefined` (argument omitted) passes unless `required`.
 */
function integer(what, v, required = false) {
  if (v === undefined && !required) return v;
  if (Number.isInteger(v)) return v;
  throw invalid(`${what} must be an integer, got ${shown(v)}`);
}

/**
 * Checks that `value` is an object (or absent) with no keys outside the option set `kind`
 * of options.cjs, and (unless `checkDurations` is false) that its durations are durations
 * (`prefix` names them in messages).
 */
function options(what, value, kind, prefix = '', checkDurations = true) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${what} must be an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  const allowed = OPTION_SETS[kind];
  for (const k in value) {
    if (!allowed.has(k)) throw invalid(`${what} has no option ${JSON.stringify(k)} (known: ${[...allowed].join(', ')})`);
  }
  if (checkDurations) durations(value, kind, prefix);
  return value;
}

/** Checks the durations of an option object of set `kind` (see `duration`). */
function durations(value, kind, prefix = '') {
  for (const [k, unit] of Object.entries(DURATIONS[kind] ?? {})) duration(`${prefix}${k}`, value[k], unit);
}

/**
 * Enqueue options as the addon takes them (`what` names them in messages). `kind` is their
 * option set (`enqueue`, or a subset such as a scheduler template's `templateOptions`) and
 * `prefix` names the nested options in messages (`template.options.`).
 */
function jobOptions(opts, what = 'enqueue options', kind = 'enqueue', prefix = '') {
  const o = options(what, opts, kind, prefix);
  if (o === undefined) return undefined;
  if (o.backoff !== undefined) options(`${prefix}backoff`, o.backoff, 'backoff', `${prefix}backoff.`);
  if (o.dedup !== undefined) options(`${prefix}dedup`, o.dedup, 'dedup', `${prefix}dedup.`);
  if (o.metadata === undefined && !(o.runAt instanceof Date)) return o;
  const out = { ...o };
  if (o.runAt instanceof Date) out.runAt = o.runAt.getTime();
  if (o.metadata !== undefined && o.metadata !== null) out.metadata = encode('metadata', o.metadata);
  else delete out.metadata;
  return out;
}

module.exports = { encode, decode, shown, duration, durations, integer, options, jobOptions };
