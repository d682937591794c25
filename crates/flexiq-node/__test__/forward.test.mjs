// The forwarders of lib/queue/forward.cjs, which give the Queue every NativeQueue method it
// does not define itself. Installed here on a throwaway class with an empty prototype over a
// real SQLite NativeQueue, so every addon method goes through them and they are exercised
// whether or not the Queue forwards anything today.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { FlexiqError, Queue } from '../index.mjs';
import { rejectsCode, throwsCode } from './helpers.mjs';

const require = createRequire(import.meta.url);
const { NativeQueue } = require('../native.cjs');
const { INTERNAL, installForwarders } = require('../lib/queue/forward.cjs');
const { bind } = require('../lib/queue/base.cjs');

/** A class with nothing of its own: every NativeQueue member but the internal ones is forwarded. */
class Bare {}
const INSTALLED = installForwarders(Bare.prototype);

/** The error `fn` throws synchronously (failing when it returns). */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('expected a synchronous throw');
}

/** The error `promise` rejects with (failing when it resolves). */
async function rejected(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

describe('forwarders over a NativeQueue', () => {
  let dir;
  let nq;
  let bare;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'flexiq-node-'));
    nq = new NativeQueue({ dbPath: join(dir, 'jobs.db') });
    bare = new Bare();
    bind(bare, nq);
  });

  afterEach(async () => {
    await nq.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs every NativeQueue member but the internal ones', () => {
    const members = Object.getOwnPropertyNames(NativeQueue.prototype).filter((n) => n !== 'constructor');
    assert.deepEqual(INSTALLED, members.filter((n) => !INTERNAL.has(n)).sort());
    for (const name of INTERNAL.keys()) assert.equal(bare[name], undefined, `${name} is internal`);
  });

  it('leaves alone a member the class defines', () => {
    class Own {
      revokedTasks() {
        return 'own';
      }
    }
    assert.ok(!installForwarders(Own.prototype).includes('revokedTasks'));
    const own = new Own();
    bind(own, nq);
    assert.equal(own.revokedTasks(), 'own');
  });

  it('returns what a synchronous call returns', () => {
    nq.revokeTask('mail');
    nq.revokeTask('audit');
    assert.deepEqual(bare.revokedTasks(), ['audit', 'mail']);
    assert.equal(bare.unrevokeTask('mail'), true);
    assert.deepEqual(bare.revokedTasks(), nq.revokedTasks());
  });

  it('resolves to what an asynchronous call resolves to', async () => {
    bare.revokeTask('mail');
    const p = bare.stats();
    assert.ok(p instanceof Promise);
    assert.deepEqual(await p, await nq.stats());
    assert.equal(await bare.dedupJobId('free'), null);
    assert.equal(await bare.isMaxed('mail'), false);
  });

  it('reads the getters', () => {
    assert.equal(bare.backend, 'sqlite');
    assert.equal(bare.namespace, nq.namespace);
    assert.equal(bare.closed, false);
  });

  it('throws a synchronous call’s error as a FlexiqError with its code', async () => {
    throwsCode(assert, () => bare.getJob('not-a-uuid'), 'INVALID_ARGUMENT');
    // An argument of the wrong type, refused before the call naming the parameter.
    const e = thrown(() => bare.revokeTask(42));
    assert.ok(e instanceof FlexiqError);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /taskName must be a string, got 42/);
    await bare.close();
    throwsCode(assert, () => bare.revokedTasks(), 'CLOSED');
  });

  it('rejects, never throws, with an asynchronous call’s error', async () => {
    // napi refuses an argument it cannot convert by throwing, even from an async method.
    let p;
    assert.doesNotThrow(() => {
      p = bare.isMaxed(42);
    });
    await rejectsCode(assert, () => p, 'INVALID_ARGUMENT');
    await rejectsCode(assert, () => bare.jobLogs('not-a-uuid'), 'INVALID_ARGUMENT');
    await bare.close();
    assert.equal(bare.closed, true);
    await rejectsCode(assert, () => bare.stats(), 'CLOSED');
  });

  it('maps errors as the hand-written Queue methods do', async () => {
    const q = new Queue({ dbPath: join(dir, 'other.db') });
    try {
      for (const [name, args] of [
        ['getJob', ['not-a-uuid']],
        ['getJob', [42]],
        ['revokeTask', [42]],
        ['cancelJob', [null]],
      ]) {
        const mine = thrown(() => bare[name](...args));
        const theirs = thrown(() => q[name](...args));
        assert.deepEqual([mine.name, mine.code, mine.message], [theirs.name, theirs.code, theirs.message], name);
      }
      for (const [name, args] of [
        ['isMaxed', [42]],
        ['jobLogs', ['not-a-uuid']],
        ['getJobErrors', [{}]],
      ]) {
        const mine = await rejected(bare[name](...args));
        const theirs = await rejected(q[name](...args));
        assert.deepEqual([mine.name, mine.code, mine.message], [theirs.name, theirs.code, theirs.message], name);
      }
    } finally {
      await q.close();
    }
  });
});
