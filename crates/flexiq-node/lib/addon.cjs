'use strict';
// The addon, with the type of every argument of every call checked before the addon converts it.
//
// napi converts each argument by its Rust type and, for a value of another type, throws a
// message that names the Rust type but not the parameter ("Failed to convert JavaScript value
// `Number 5 ` into rust type `String`"), and reads a boolean given for a number as nothing the
// caller meant. native-params.cjs, written by scripts/build.mjs from the generated native.d.ts,
// lists the parameters of each method with the kind of value each takes; the methods of the
// addon's classes are wrapped here, once, so a value of another kind is refused first as
// INVALID_ARGUMENT naming the parameter ("id must be a string, got 5"). A value of the right kind
// goes on unchanged: the addon checks numbers (src/args.rs: NaN, infinities, fractions, ranges)
// and napi the fields of objects, naming each (`on JobOptions.queue`). Every module of lib/ and
// the package entry take the addon from here.

const native = require('../native.cjs');
const PARAMS = require('../native-params.cjs');
const { invalid } = require('./errors.cjs');
const { shown } = require('./args.cjs');

/** What each kind of parameter accepts, and how a message names it. */
const KINDS = {
  string: ['a string', (v) => typeof v === 'string'],
  number: ['a number', (v) => typeof v === 'number'],
  boolean: ['a boolean', (v) => typeof v === 'boolean'],
  array: ['an array', (v) => Array.isArray(v)],
  object: ['an object', (v) => v !== null && typeof v === 'object' && !Array.isArray(v)],
  function: ['a function', (v) => typeof v === 'function'],
  any: ['any value', () => true],
};

/** Throws INVALID_ARGUMENT naming the first argument of `args` that `params` does not take. */
function check(params, args) {
  for (let i = 0; i < params.length; i++) {
    const [name, kind, optional] = params[i];
    const v = args[i];
    if (optional && (v === undefined || v === null)) continue;
    const [what, fits] = KINDS[kind] ?? KINDS.any;
    if (!fits(v)) throw invalid(`${name} must be ${what}, got ${Array.isArray(v) ? 'an array' : shown(v)}`);
  }
}

/** `raw` behind the check of its arguments, under the same name. */
function checked(name, params, raw) {
  // A method of an object literal: named `name`, and not constructible, as a class method.
  return {
    [name](...args) {
      check(params, args);
      return raw.apply(this, args);
    },
  }[name];
}

for (const [cls, methods] of Object.entries(PARAMS)) {
  const C = native[cls];
  if (typeof C !== 'function') continue;
  for (const [name, params] of Object.entries(methods)) {
    // The constructors are reached through the JS layer's own checks of their options.
    if (name === 'constructor') continue;
    const holder = Object.hasOwn(C.prototype, name) ? C.prototype : Object.hasOwn(C, name) ? C : undefined;
    const d = holder && Object.getOwnPropertyDescriptor(holder, name);
    // napi defines statics (`NativeQueue.connect`) as fixed properties; the JS layer checks
    // their one options object itself.
    if (d === undefined || typeof d.value !== 'function' || !d.configurable) continue;
    Object.defineProperty(holder, name, { ...d, value: checked(name, params, d.value) });
  }
}

module.exports = native;
