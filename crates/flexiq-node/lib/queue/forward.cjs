'use strict';
// Pass-through operations: every member of the addon's NativeQueue that the Queue does not
// define itself (in lib/queue.cjs or a call file of lib/queue/) and that is not INTERNAL is
// installed on Queue.prototype as a forwarder, typed on the Queue by the interface merged
// into it in index.d.ts.
//
// Why: an operation whose arguments and result cross the addon unchanged needs no JavaScript
// of its own and no hand-written declaration: its `#[napi]` method (whose doc comment
// becomes the type's JSDoc in native.d.ts) and a test are enough. A forwarder maps errors
// as a hand-written call does: a method that returns a Promise goes through `callAsync`, so
// it rejects and never throws, any other through `callSync`. Which is which comes from
// native-async.cjs, written by scripts/build.mjs from the generated native.d.ts; the call
// cannot tell, since napi throws synchronously for an argument it cannot convert, from an
// async method too.

const native = require('../addon.cjs');
const ASYNC = require('../../native-async.cjs');
const { native: nativeOf } = require('./base.cjs');
const { callSync, callAsync } = require('../errors.cjs');

/**
 * NativeQueue members that are deliberately not public, each with the reason. The same names
 * make up `InternalMethod` in forwarded.d.ts, which keeps them off the Queue type;
 * __test__/surface.test.mjs checks that the two agree, that each is a NativeQueue member and
 * that the Queue has none of them.
 */
const INTERNAL = new Map([
  [
    'createWorker',
    'takes the task specs the JS layer builds from the handlers registered with queue.task(); ' +
      'wrapped by queue.worker(options), which returns a Worker',
  ],
]);

/** A method calling `name` on the NativeQueue behind `this`, with its error mapping. */
function forwardMethod(name, isAsync) {
  const call = isAsync ? callAsync : callSync;
  // A method of an object literal, so it is named `name` and cannot be called with `new`,
  // as a class method.
  return {
    [name](...args) {
      return call(() => nativeOf(this)[name](...args));
    },
  }[name];
}

/** A getter reading `name` off the NativeQueue behind `this`. */
function forwardGetter(name) {
  return {
    get [name]() {
      return callSync(() => nativeOf(this)[name]);
    },
  };
}

/**
 * Installs on `proto` a forwarder for every member of NativeQueue that `proto` lacks, those
 * of INTERNAL aside; returns the names installed, sorted. Each forwarder reaches the addon
 * through the NativeQueue bound to its receiver (lib/queue/base.cjs).
 */
function installForwarders(proto) {
  const source = native.NativeQueue.prototype;
  const isAsync = new Set(ASYNC.NativeQueue ?? []);
  const installed = [];
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(source))) {
    if (name === 'constructor' || INTERNAL.has(name) || Object.hasOwn(proto, name)) continue;
    if (typeof d.value === 'function') {
      Object.defineProperty(proto, name, {
        value: forwardMethod(name, isAsync.has(name)),
        writable: true,
        enumerable: false,
        configurable: true,
      });
    } else if (typeof d.get === 'function') {
      const { get } = Object.getOwnPropertyDescriptor(forwardGetter(name), name);
      Object.defineProperty(proto, name, { get, enumerable: false, configurable: true });
    } else {
      continue;
    }
    installed.push(name);
  }
  return installed.sort();
}

module.exports = { INTERNAL, installForwarders };
