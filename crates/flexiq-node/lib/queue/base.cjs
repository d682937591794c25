'use strict';
// What the Queue's call files (one per module of the runtime's queue/) share: the native
// queue behind each public Queue, kept out of reach of user code, and small converters.

const { options } = require('../args.cjs');

/** The NativeQueue behind each Queue. */
const natives = new WeakMap();

/** The NativeQueue behind `queue`. */
function native(queue) {
  const n = natives.get(queue);
  if (n === undefined) throw new TypeError('not a flexiq Queue');
  return n;
}

/** Ties `queue` to its NativeQueue (once, from the constructor). */
function bind(queue, n) {
  natives.set(queue, n);
}

/** A keyset page with `nextCursor: null` on the last page. */
async function page(p) {
  const r = await p;
  return { items: r.items, nextCursor: r.nextCursor ?? null };
}

/** Checked retention windows (seconds), or `undefined`. */
function retention(value) {
  return options('retention', value, 'retention', 'retention.');
}

module.exports = { native, bind, page, retention };
