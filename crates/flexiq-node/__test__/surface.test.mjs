// The hand-written `index.d.ts` against what the JavaScript layer really exports: every
// declared value and class member exists at run time and nothing undeclared is exported.
// (`surface-types.ts`, checked by tsc, holds `index.d.ts` against the addon's generated
// `native.d.ts`.) Read with the TypeScript parser, so formatting does not matter.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const flexiq = require('../index.cjs');

const dts = ts.createSourceFile('index.d.ts', readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8'), ts.ScriptTarget.Latest);

const exported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
const isStatic = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword) ?? false;

/** Names of the values (classes, functions, constants) `index.d.ts` exports. */
function declaredValues() {
  const names = [];
  for (const s of dts.statements) {
    if (!exported(s)) continue;
    if (ts.isClassDeclaration(s) || ts.isFunctionDeclaration(s)) names.push(s.name.text);
    else if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) names.push(d.name.text);
  }
  return names.sort();
}

function declaredClass(name) {
  const c = dts.statements.find((s) => ts.isClassDeclaration(s) && s.name?.text === name);
  assert.ok(c, `index.d.ts declares no class ${name}`);
  return c;
}

/** Instance and static member names of a declared class (constructors left out). */
function declaredMembers(name) {
  const instance = new Set();
  const statics = new Set();
  for (const m of declaredClass(name).members) {
    if (ts.isConstructorDeclaration(m) || !m.name) continue;
    (isStatic(m) ? statics : instance).add(m.name.text);
  }
  return { instance: [...instance].sort(), statics: [...statics].sort() };
}

/** Instance (prototype) and static member names of a runtime class. */
function runtimeMembers(cls) {
  const instance = Object.getOwnPropertyNames(cls.prototype).filter((n) => n !== 'constructor');
  const statics = Object.getOwnPropertyNames(cls).filter((n) => !['length', 'name', 'prototype'].includes(n));
  return { instance: instance.sort(), statics: statics.sort() };
}

describe('index.d.ts matches the JavaScript layer', () => {
  it('declares exactly the values the package exports', () => {
    assert.deepEqual(declaredValues(), Object.keys(flexiq).sort());
  });

  for (const name of ['Queue', 'Worker', 'JobContext']) {
    it(`declares exactly the members of ${name}`, () => {
      assert.deepEqual(declaredMembers(name), runtimeMembers(flexiq[name]));
    });
  }
});
