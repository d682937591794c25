'use strict';
// Verifying flexiq webhook deliveries on the receiving side: `require('flexiq/webhooks')`.
//
// Every delivery is a JSON POST whose `flexiq-signature` header reads
// `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: each `v1` is the HMAC-SHA256 of `"<t>.<body>"` under
// one of the hook's secrets (two while a secret is being rotated). Only node:crypto is used;
// signatures are compared in constant time, and a timestamp more than `toleranceSecs` from now
// is refused, so a captured delivery cannot be replayed later. Pure JavaScript: receivers need
// not load the native addon.

const { createHmac, timingSafeEqual } = require('node:crypto');
const { FlexiqError } = require('./errors.cjs');

/** The header carrying the signature. */
const SIGNATURE_HEADER = 'flexiq-signature';

/** Seconds the signed timestamp may differ from now by default. */
const DEFAULT_TOLERANCE_SECS = 300;

const invalid = (message) => new FlexiqError('INVALID_ARGUMENT', message);

function toBuffer(value, what) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw invalid(`${what} must be a string, Buffer or Uint8Array`);
}

function parse(header) {
  if (typeof header !== 'string') throw invalid('signature header must be a string');
  let timestamp;
  const signatures = [];
  for (const part of header.split(',')) {
    const p = part.trim();
    const eq = p.indexOf('=');
    if (eq < 0) throw invalid(`signature header part ${JSON.stringify(part)} is not key=value`);
    const key = p.slice(0, eq);
    const value = p.slice(eq + 1);
    if (key === 't') {
      if (!/^-?\d+$/.test(value)) throw invalid(`signature timestamp ${JSON.stringify(value)} is not a number`);
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-fA-F]*$/.test(value) || value.length % 2 !== 0) throw invalid(`signature ${JSON.stringify(value)} is not hex`);
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === undefined) throw invalid('signature header has no timestamp t=');
  if (signatures.length === 0) throw invalid('signature header has no v1= signature');
  return { timestamp, signatures };
}

/**
 * Checks a delivery: `payload` is the raw request body, `header` the `flexiq-signature` value,
 * `secrets` one secret or several (any may match). Returns the signed timestamp (Unix seconds);
 * throws a FlexiqError with code INVALID_ARGUMENT saying which check failed.
 * @param {string | Uint8Array} payload
 * @param {string} header
 * @param {string | Uint8Array | Array<string | Uint8Array>} secrets
 * @param {{ toleranceSecs?: number, nowSecs?: number }} [options]
 * @returns {number}
 */
function verifySignature(payload, header, secrets, options = {}) {
  const toleranceSecs = options.toleranceSecs ?? DEFAULT_TOLERANCE_SECS;
  if (!Number.isFinite(toleranceSecs) || toleranceSecs < 0) throw invalid(`toleranceSecs ${toleranceSecs} must be a number of seconds, not negative`);
  const keys = (Array.isArray(secrets) ? secrets : [secrets]).map((s) => toBuffer(s, 'secret'));
  if (keys.length === 0) throw invalid('no secret given to verify against');
  const body = toBuffer(payload, 'payload');
  const { timestamp, signatures } = parse(header);
  const now = Math.floor(options.nowSecs ?? Date.now() / 1000);
  if (Math.abs(now - timestamp) > toleranceSecs) {
    throw invalid(`signature timestamp ${timestamp} is more than ${toleranceSecs} s from now (${now})`);
  }
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`, 'ascii'), body]);
  const expected = keys.map((k) => createHmac('sha256', k).update(signed).digest());
  let matched = false;
  // Every pair is compared, so the time taken does not tell which secret matched.
  for (const sig of signatures) {
    for (const want of expected) {
      if (sig.length === want.length && timingSafeEqual(sig, want)) matched = true;
    }
  }
  if (!matched) throw invalid('no signature matches any of the secrets');
  return timestamp;
}

module.exports = { SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECS, verifySignature };
