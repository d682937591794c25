// flexiq/webhooks: verifySignature against the vector the Rust signer produces.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';

import { verifySignature, SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECS } from 'flexiq/webhooks';

const require = createRequire(import.meta.url);

// Produced by the Rust signer (flexiq_runtime::webhooks::sign) with secrets "old-secret" and
// "new-secret" at t=1700000000; the Rust and Python tests check the same vector.
const BODY = '{"hook":"orders","event":{"id":"42","name":"completed"}}';
const HEADER =
  't=1700000000,' +
  'v1=3113ed6bf24849df546b6c1ec7093607e7a8fff64df020e4203134875819bed1,' +
  'v1=a3fb9b8c1f60182307ef3388c405eb6aebd8967f5d3c0bd1afd8eec32dae2a3b';
const T = 1_700_000_000;

const refused = (fn, pattern) =>
  assert.throws(fn, (e) => e.name === 'FlexiqError' && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message));

describe('verifySignature', () => {
  it('accepts the Rust vector with either secret of a rotation', () => {
    assert.equal(SIGNATURE_HEADER, 'flexiq-signature');
    assert.equal(DEFAULT_TOLERANCE_SECS, 300);
    assert.equal(verifySignature(BODY, HEADER, 'old-secret', { nowSecs: T }), T);
    assert.equal(verifySignature(Buffer.from(BODY), HEADER, 'new-secret', { nowSecs: T + 299 }), T);
    assert.equal(verifySignature(new TextEncoder().encode(BODY), HEADER, ['unknown', 'new-secret'], { nowSecs: T }), T);
  });

  it('refuses a wrong secret or a changed body', () => {
    refused(() => verifySignature(BODY, HEADER, 'another-secret', { nowSecs: T }), /no signature matches/);
    refused(() => verifySignature(BODY + ' ', HEADER, 'old-secret', { nowSecs: T }), /no signature matches/);
  });

  it('refuses a timestamp outside the tolerance', () => {
    refused(() => verifySignature(BODY, HEADER, 'old-secret', { nowSecs: T + 301 }), /more than 300 s/);
    refused(() => verifySignature(BODY, HEADER, 'old-secret', { nowSecs: T - 11, toleranceSecs: 10 }), /more than 10 s/);
  });

  it('verifies a fresh signature against the wall clock', () => {
    const t = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', 'k'.repeat(16)).update(`${t}.${BODY}`).digest('hex');
    assert.equal(verifySignature(BODY, `t=${t},v1=${sig}`, 'k'.repeat(16)), t);
  });

  it('names what is wrong with a malformed header', () => {
    for (const [header, reason] of [
      ['v1=00', /no timestamp/],
      ['t=1700000000', /no v1/],
      ['t=soon,v1=00', /not a number/],
      ['t=1700000000,v1=zz', /not hex/],
      ['garbage', /key=value/],
    ]) {
      refused(() => verifySignature(BODY, header, 'old-secret', { nowSecs: T }), reason);
    }
    refused(() => verifySignature(BODY, HEADER, [], { nowSecs: T }), /no secret/);
    refused(() => verifySignature(42, HEADER, 'old-secret', { nowSecs: T }), /payload must be/);
  });

  it('is the same module through require', () => {
    assert.equal(require('flexiq/webhooks').verifySignature, verifySignature);
  });
});
