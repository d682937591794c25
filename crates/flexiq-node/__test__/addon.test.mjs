// lib/addon.cjs: every argument of every addon call is checked against its declared kind before
// napi converts it. native-params.cjs (written by scripts/build.mjs) must read native.d.ts as the
// TypeScript parser does, and a value of another kind is refused naming the parameter while a
// value of the right kind, or null for an optional one, reaches the addon.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const native = require('../lib/addon.cjs');
const PARAMS = require('../native-params.cjs');
const { FlexiqError } = require('../lib/errors.cjs');

/** Each class's methods and constructor in native.d.ts: parameter names and optionality. */
function declared() {
  const file = new URL('../native.d.ts', import.meta.url).pathname;
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out = {};
  for (const s of src.statements) {
    if (!ts.isClassDeclaration(s)) continue;
    const methods = (out[s.name.text] = {});
    for (const m of s.members) {
      if (!ts.isMethodDeclaration(m) && !ts.isConstructorDeclaration(m)) continue;
      const name = ts.isConstructorDeclaration(m) ? 'constructor' : m.name.text;
      methods[name] = m.parameters.map((p) => {
        const type = p.type.getText(src);
        return [p.name.text, p.questionToken !== undefined || /\|\s*(undefined|null)/.test(type)];
      });
    }
  }
  return out;
}

/** The error `fn` throws synchronously (failing when it returns). */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('nothing was thrown');
}

describe('native-params.cjs', () => {
  it('names every parameter of every addon method as native.d.ts declares it', () => {
    const generated = Object.fromEntries(
      Object.entries(PARAMS).map(([cls, methods]) => [
        cls,
        Object.fromEntries(Object.entries(methods).map(([m, ps]) => [m, ps.map(([name, , optional]) => [name, optional])])),
      ]),
    );
    assert.deepEqual(generated, declared());
  });
});

describe('the checked addon', () => {
  let dir;
  let q;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'flexiq-addon-'));
    q = new native.NativeQueue({ dbPath: join(dir, 'jobs.db') });
  });
  after(async () => {
    await q.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a value of another kind naming the parameter, before the addon converts it', () => {
    for (const [call, says] of [
      [() => q.getJob(5), 'id must be a string, got 5'],
      [() => q.pauseQueue(null), 'queue must be a string, got null'],
      [() => q.setQueueConcurrency('q', '3'), 'maxConcurrent must be a number, got the string "3"'],
      [() => q.drain('q', 1), 'includeDelayed must be a boolean, got 1'],
      [() => q.listJobs([]), 'filter must be an object, got an array'],
    ]) {
      const e = thrown(call);
      assert.ok(e instanceof FlexiqError, String(e));
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.equal(e.message, `invalid argument: ${says}`);
    }
  });

  it('lets an optional parameter be absent or null, and a right value through to the addon', async () => {
    assert.deepEqual(await q.listJobs(null), []);
    assert.deepEqual(await q.listArchived(undefined, null), []);
    assert.equal(q.getJob('0190b6a0-0000-7000-8000-000000000000'), null);
    // The addon still checks the value itself: a NaN is a number, refused by src/args.rs.
    await assert.rejects(q.listArchived(NaN), /limit must be a finite number/);
  });
});
