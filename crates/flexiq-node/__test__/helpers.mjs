// Shared test fixtures: one isolated store per test on each backend, and ways to wait.
//
// SQLite gets a fresh file in a temp dir; PostgreSQL a fresh schema in database `test`,
// dropped afterwards; Redis a fresh key prefix, whose keys are deleted afterwards with
// SCAN + UNLINK. An unreachable server fails the test: nothing is skipped. The servers are
// FLEXIQ_PG_URL and FLEXIQ_REDIS_URL, as in the Rust and Python suites (the old
// FLEXIQ_TEST_PG / FLEXIQ_TEST_REDIS are still read when those are unset).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { afterEach, beforeEach } from 'node:test';

import { Queue } from '../index.mjs';

/**
 * The server URL in `name` (the Rust and Python suites' name), else in the deprecated
 * `deprecated` (this suite's old name), else `fallback`; an empty variable counts as unset.
 */
export function serverUrl(name, deprecated, fallback, env = process.env) {
  return env[name] || env[deprecated] || fallback;
}

const PG = serverUrl('FLEXIQ_PG_URL', 'FLEXIQ_TEST_PG', 'postgres://postgres@127.0.0.1:5432/test');
const REDIS = serverUrl('FLEXIQ_REDIS_URL', 'FLEXIQ_TEST_REDIS', 'redis://127.0.0.1:6379');

function pgTarget() {
  const u = new URL(PG);
  return { host: u.hostname, port: u.port || '5432', user: decodeURIComponent(u.username) || 'postgres', db: u.pathname.slice(1) };
}

function redisTarget() {
  const u = new URL(REDIS);
  return { host: u.hostname, port: u.port || '6379' };
}

const tag = () => `fqn_${randomBytes(6).toString('hex')}`;

/** Each backend: `open(opts)` gives a Queue on a fresh store; `url` names that store. */
export const BACKENDS = [
  {
    name: 'sqlite',
    fresh() {
      const dir = mkdtempSync(join(tmpdir(), 'flexiq-node-'));
      const url = `sqlite://${join(dir, 'jobs.db')}`;
      return { url, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    fresh() {
      const schema = tag();
      const url = `${PG}?schema=${schema}`;
      const t = pgTarget();
      return {
        url,
        cleanup: () =>
          execFileSync('psql', ['-h', t.host, '-p', t.port, '-U', t.user, '-d', t.db, '-q', '-c', `DROP SCHEMA IF EXISTS "${schema}" CASCADE`], {
            stdio: 'pipe',
          }),
      };
    },
  },
  {
    name: 'redis',
    fresh() {
      const prefix = tag();
      const url = `${REDIS}?prefix=${prefix}`;
      const t = redisTarget();
      const cli = (...a) => execFileSync('redis-cli', ['-h', t.host, '-p', t.port, ...a], { encoding: 'utf8' });
      return {
        url,
        cleanup: () => {
          // Keys are `{prefix:namespace}:...` and `{prefix}:...`.
          const keys = cli('--scan', '--pattern', `{${prefix}*`).split('\n').filter(Boolean);
          for (let i = 0; i < keys.length; i += 500) cli('UNLINK', ...keys.slice(i, i + 500));
        },
      };
    },
  },
];

/**
 * Registers hooks on the current `describe` giving each test a fresh store: returns an
 * object whose `await open(opts)` makes a Queue on it (closed afterwards) and whose `url` names it.
 */
export function storeFixture(backend) {
  const state = { queues: [], workers: [], store: null };
  beforeEach(() => {
    state.store = backend.fresh();
    state.queues = [];
    state.workers = [];
  });
  afterEach(async () => {
    for (const w of state.workers) await w.close();
    for (const q of state.queues) await q.close();
    state.store.cleanup();
  });
  return {
    get url() {
      return state.store.url;
    },
    /** Runs `q.worker(opts)` until the test ends. */
    work(q, opts) {
      const w = q.worker(opts);
      state.workers.unshift(w);
      w.run();
      return w;
    },
    /** A Queue on the store, opened with `Queue.connect` (closed when the test ends). */
    async open(opts = {}) {
      const q = await Queue.connect({ url: state.store.url, ...opts });
      state.queues.push(q);
      return q;
    },
  };
}

/** Polls `fn` until it returns a truthy value (or throws after `ms`). */
export async function until(fn, ms = 10_000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Asserts that `fn` throws (or rejects with) a FlexiqError of `code`. */
export async function rejectsCode(assert, fn, code, re) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ${code} error, nothing was thrown`);
  assert.equal(err.name, 'FlexiqError', `expected a FlexiqError, got ${err}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (re) assert.match(err.message, re);
  return err;
}

/** Asserts that `fn` throws synchronously a FlexiqError of `code`. */
export function throwsCode(assert, fn, code) {
  assert.throws(fn, (e) => e.name === 'FlexiqError' && e.code === code);
}
