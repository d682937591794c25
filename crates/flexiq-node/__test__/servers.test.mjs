// The test servers' variables: FLEXIQ_PG_URL / FLEXIQ_REDIS_URL first, the old names after.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { serverUrl } from './helpers.mjs';

describe('test server variables', () => {
  it('the shared name wins over the old one', () => {
    const env = { FLEXIQ_PG_URL: 'postgres://new/test', FLEXIQ_TEST_PG: 'postgres://old/test' };
    assert.equal(serverUrl('FLEXIQ_PG_URL', 'FLEXIQ_TEST_PG', 'postgres://default', env), 'postgres://new/test');
  });

  it('the old name is read when the shared one is unset or empty', () => {
    assert.equal(serverUrl('FLEXIQ_REDIS_URL', 'FLEXIQ_TEST_REDIS', 'x', { FLEXIQ_TEST_REDIS: 'redis://old' }), 'redis://old');
    assert.equal(serverUrl('FLEXIQ_REDIS_URL', 'FLEXIQ_TEST_REDIS', 'x', { FLEXIQ_REDIS_URL: '', FLEXIQ_TEST_REDIS: 'redis://old' }), 'redis://old');
  });

  it('the default when neither is set', () => {
    assert.equal(serverUrl('FLEXIQ_PG_URL', 'FLEXIQ_TEST_PG', 'postgres://default', {}), 'postgres://default');
  });
});
