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
const { OPTION_SETS, DURATIONS, LOG_LEVELS } = require('../lib/options.cjs');

/** Each allowed-option set of lib/options.cjs and the declared type whose keys it must equal. */
const OPTION_TYPES = {
  queue: 'QueueOptions',
  retention: 'RetentionOptions',
  enqueue: 'EnqueueOptions',
  backoff: 'BackoffOptions',
  enqueueItem: 'EnqueueItem',
  listFilter: 'JobFilter',
  listFilterWide: 'JobFilterWide',
  wait: 'WaitOptions',
  task: 'TaskOptions',
  worker: 'WorkerOptions',
  workflow: 'WorkflowJobsOptions',
  workflowJob: 'WorkflowJobSpec',
  dequeue: 'DequeueOptions',
  workflowServes: 'WorkflowServes',
  fence: 'JobFence',
  obliterate: 'ObliterateOptions',
  remove: 'RemoveOptions',
  changePriority: 'ChangePriorityOptions',
  dedup: 'DedupOptions',
  flowNode: 'FlowNode',
  dependencies: 'DependenciesOptions',
};

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

/** The type checker over `index.d.ts` (and the `native.d.ts` it imports). */
function checker() {
  const file = new URL('../index.d.ts', import.meta.url).pathname;
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  });
  const tc = program.getTypeChecker();
  const exports = new Map(tc.getExportsOfModule(tc.getSymbolAtLocation(program.getSourceFile(file))).map((s) => [s.name, s]));
  const resolve = (name) => {
    const s = exports.get(name);
    assert.ok(s, `index.d.ts exports no ${name}`);
    return s.flags & ts.SymbolFlags.Alias ? tc.getAliasedSymbol(s) : s;
  };
  return {
    /** Property names of an exported type, inherited and mapped (`Pick`) ones included. */
    keys: (name) => tc.getPropertiesOfType(tc.getDeclaredTypeOfSymbol(resolve(name))).map((p) => p.name).sort(),
    /** The string literals of parameter `param` of method `method` on class `cls`. */
    literals(cls, method, param) {
      const m = tc.getPropertyOfType(tc.getDeclaredTypeOfSymbol(resolve(cls)), method);
      const sig = tc.getSignaturesOfType(tc.getTypeOfSymbol(m), ts.SignatureKind.Call)[0];
      const p = sig.parameters.find((x) => x.name === param);
      const t = tc.getNonNullableType(tc.getTypeOfSymbol(p));
      return (t.isUnion() ? t.types : [t]).map((x) => x.value).sort();
    },
  };
}

describe('index.d.ts matches the JavaScript layer', () => {
  it('declares exactly the values the package exports', () => {
    assert.deepEqual(declaredValues(), Object.keys(flexiq).sort());
  });

  for (const name of ['Queue', 'Worker', 'JobContext', 'WorkflowJobs']) {
    it(`declares exactly the members of ${name}`, () => {
      assert.deepEqual(declaredMembers(name), runtimeMembers(flexiq[name]));
    });
  }

  describe('each allowed-option set equals its declared type', () => {
    const tc = checker();
    it('covers every set', () => assert.deepEqual(Object.keys(OPTION_TYPES).sort(), Object.keys(OPTION_SETS).sort()));
    for (const [set, type] of Object.entries(OPTION_TYPES)) {
      it(`${set}: ${type}`, () => assert.deepEqual([...OPTION_SETS[set]].sort(), tc.keys(type)));
    }
    it('every duration is an option of its set', () => {
      for (const [set, units] of Object.entries(DURATIONS)) {
        for (const k of Object.keys(units)) assert.ok(OPTION_SETS[set]?.has(k), `DURATIONS.${set}.${k} is no option of ${set}`);
      }
    });
    it('log levels: JobContext.log(level)', () => assert.deepEqual([...LOG_LEVELS].sort(), tc.literals('JobContext', 'log', 'level')));
  });
});
