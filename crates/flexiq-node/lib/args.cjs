'use strict';
// Argument shaping the addon cannot express: JSON encoding of payloads, results and
// metadata, and refusal of option keys flexiq does not know (the sets are in options.cjs;
// a misspelt option would otherwise be silently ignored). Numbers are checked by the addon.

const { invalid } = require('./errors.cjs');
const { OPTION_SETS } = require('./options.cjs');

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

/** Checks that `value` is an object (or absent) with no keys outside `allowed`. */
function options(what, value, allowed) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${what} must be an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  for (const k in value) {
    if (!allowed.has(k)) throw invalid(`${what} has no option ${JSON.stringify(k)} (known: ${[...allowed].join(', ')})`);
  }
  return value;
}

/** Enqueue options as the addon takes them. */
function jobOptions(opts) {
  const o = options('enqueue options', opts, OPTION_SETS.enqueue);
  if (o === undefined) return undefined;
  if (o.backoff !== undefined) options('backoff', o.backoff, OPTION_SETS.backoff);
  if (o.metadata === undefined && !(o.runAt instanceof Date)) return o;
  const out = { ...o };
  if (o.runAt instanceof Date) out.runAt = o.runAt.getTime();
  if (o.metadata !== undefined && o.metadata !== null) out.metadata = encode('metadata', o.metadata);
  else delete out.metadata;
  return out;
}

module.exports = { encode, decode, options, jobOptions };
