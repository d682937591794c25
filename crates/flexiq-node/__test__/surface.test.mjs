// The hand-written `index.d.ts` against what the JavaScript layer really exports: every
// declared value and class member exists at run time and nothing undeclared is exported;
// the Queue's other members are the NativeQueue methods it forwards (lib/queue/forward.cjs),
// typed from `native.d.ts` by the interface merged into it. (`surface-types.ts`, checked by
// tsc, holds `index.d.ts` against the addon's generated `native.d.ts`.) Read with the
// TypeScript parser and checker, so formatting does not matter.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const flexiq = require('../index.cjs');
const { OPTION_SETS, DURATIONS, LOG_LEVELS } = require('../lib/options.cjs');
const { FORWARDED } = require('../lib/queue.cjs');
const { INTERNAL } = require('../lib/queue/forward.cjs');
const { NativeQueue } = require('../native.cjs');
const ASYNC = require('../native-async.cjs');

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
  repeat: 'RepeatOptions',
  template: 'JobTemplate',
  templateOptions: 'JobTemplateOptions',
  listSchedulers: 'ListJobSchedulersOptions',
  events: 'EventsOptions',
  readEvents: 'ReadEventsOptions',
  trimEvents: 'TrimEventsOptions',
  publishEvent: 'PublishEventOptions',
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

const INDEX_DTS = new URL('../index.d.ts', import.meta.url).pathname;
const NATIVE_DTS = new URL('../native.d.ts', import.meta.url).pathname;
const FORWARDED_DTS = new URL('../forwarded.d.ts', import.meta.url).pathname;

/**
 * The type checker over `index.d.ts` (and the `native.d.ts` and `forwarded.d.ts` it imports).
 * `nativeExtra`, when given, is spliced into `NativeQueue` of `native.d.ts` as if the addon
 * declared it.
 */
function checker(nativeExtra) {
  const options = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  if (nativeExtra !== undefined) {
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (name, target, ...rest) => {
      if (name !== NATIVE_DTS) return read(name, target, ...rest);
      const text = readFileSync(name, 'utf8').replace(/^export declare class NativeQueue \{\n/m, (open) => open + nativeExtra);
      return ts.createSourceFile(name, text, target);
    };
  }
  const program = ts.createProgram([INDEX_DTS], options, host);
  const tc = program.getTypeChecker();
  const moduleExports = (file) => new Map(tc.getExportsOfModule(tc.getSymbolAtLocation(program.getSourceFile(file))).map((s) => [s.name, s]));
  const modules = { [INDEX_DTS]: moduleExports(INDEX_DTS), [NATIVE_DTS]: moduleExports(NATIVE_DTS), [FORWARDED_DTS]: moduleExports(FORWARDED_DTS) };
  const resolve = (name, file = INDEX_DTS) => {
    const s = modules[file].get(name);
    assert.ok(s, `${file.split('/').pop()} exports no ${name}`);
    return s.flags & ts.SymbolFlags.Alias ? tc.getAliasedSymbol(s) : s;
  };
  const typeOf = (name, file) => tc.getDeclaredTypeOfSymbol(resolve(name, file));
  return {
    /** Errors tsc reports over the program. */
    diagnostics: () =>
      ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    /** Property names of an exported type, inherited and mapped (`Pick`) ones included. */
    keys: (name, file) => tc.getPropertiesOfType(typeOf(name, file)).map((p) => p.name).sort(),
    /** The string literals of an exported union of them. */
    union: (name, file) => {
      const t = typeOf(name, file);
      return (t.isUnion() ? t.types : [t]).map((x) => x.value).sort();
    },
    /** Member `member` of an exported type: its type as tsc prints it, its doc, the file declaring it. */
    member(name, member, file) {
      const p = tc.getPropertyOfType(typeOf(name, file), member);
      if (p === undefined) return undefined;
      return {
        type: tc.typeToString(tc.getTypeOfSymbol(p)),
        doc: ts.displayPartsToString(p.getDocumentationComment(tc)),
        file: p.declarations[0].getSourceFile().fileName,
      };
    },
    /** Whether method `member` of an exported type returns a Promise. */
    returnsPromise(name, member, file) {
      const p = tc.getPropertyOfType(typeOf(name, file), member);
      const sig = tc.getSignaturesOfType(tc.getTypeOfSymbol(p), ts.SignatureKind.Call)[0];
      return tc.getReturnTypeOfSignature(sig).getSymbol()?.name === 'Promise';
    },
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

  for (const name of ['Worker', 'JobContext', 'WorkflowJobs']) {
    it(`declares exactly the members of ${name}`, () => {
      assert.deepEqual(declaredMembers(name), runtimeMembers(flexiq[name]));
    });
  }

  it('declares exactly the members of Queue but the forwarded ones', () => {
    const runtime = runtimeMembers(flexiq.Queue);
    assert.deepEqual(declaredMembers('Queue'), {
      instance: runtime.instance.filter((n) => !FORWARDED.includes(n)),
      statics: runtime.statics,
    });
  });

  describe('the Queue has every NativeQueue member: declared, forwarded or internal', () => {
    const tc = checker();
    const members = Object.getOwnPropertyNames(NativeQueue.prototype).filter((n) => n !== 'constructor').sort();
    const declared = new Set(declaredMembers('Queue').instance);

    it('each member is exactly one of them', () => {
      for (const name of members) {
        const kinds = [declared.has(name) && 'declared', FORWARDED.includes(name) && 'forwarded', INTERNAL.has(name) && 'internal'];
        assert.equal(kinds.filter(Boolean).length, 1, `NativeQueue.${name} is ${kinds.filter(Boolean).join(' and ') || 'none'}`);
      }
      for (const name of FORWARDED) assert.ok(members.includes(name), `Queue forwards ${name}, which NativeQueue lacks`);
    });

    it('internal members are the addon’s, not the Queue’s, each with its reason', () => {
      for (const [name, why] of INTERNAL) {
        assert.ok(members.includes(name), `INTERNAL names ${name}, which NativeQueue lacks`);
        assert.ok(!(name in flexiq.Queue.prototype), `INTERNAL names ${name}, which the Queue has`);
        assert.ok(typeof why === 'string' && why.length > 0, `INTERNAL gives no reason for ${name}`);
      }
    });

    it('forwarded.d.ts leaves out of the Queue type the internal members of lib/queue/forward.cjs', () => {
      assert.deepEqual(tc.union('InternalMethod', FORWARDED_DTS), [...INTERNAL.keys()].sort());
    });

    it('the Queue type has exactly the members the Queue has at run time', () => {
      assert.deepEqual(tc.keys('Queue'), runtimeMembers(flexiq.Queue).instance);
    });

    it('a member is typed by index.d.ts when declared there, else by native.d.ts', () => {
      for (const name of tc.keys('Queue')) {
        assert.equal(tc.member('Queue', name).file, declared.has(name) ? INDEX_DTS : NATIVE_DTS, name);
      }
    });

    it('a new addon method is typed on the Queue with the addon’s signature and doc', () => {
      const extra = '  /** Counts the probes of `queue`. */\n  countProbes(queue: string, limit?: number | undefined | null): Promise<number>\n';
      const grown = checker(extra);
      assert.deepEqual(grown.diagnostics(), []);
      const added = grown.member('Queue', 'countProbes');
      assert.deepEqual(added, grown.member('NativeQueue', 'countProbes', NATIVE_DTS));
      assert.equal(added.doc, 'Counts the probes of `queue`.');
      assert.match(added.type, /^\(queue: string, limit\?: .*\) => Promise<number>$/);
      assert.equal(tc.member('Queue', 'countProbes'), undefined);
    });

    it('native-async.cjs names exactly the NativeQueue methods that return a Promise', () => {
      const methods = members.filter((n) => typeof Object.getOwnPropertyDescriptor(NativeQueue.prototype, n).value === 'function');
      assert.deepEqual(
        [...ASYNC.NativeQueue].sort(),
        methods.filter((n) => tc.returnsPromise('NativeQueue', n, NATIVE_DTS)),
      );
    });
  });

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

  it('EventKind holds exactly the kinds the engine names (EVENT_KINDS)', () => {
    assert.deepEqual(checker().union('EventKind'), [...flexiq.EVENT_KINDS].sort());
  });
});
