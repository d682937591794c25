'use strict';
// Waiting on a job: its terminal result and the async iterator of its partial results. Mirrors the runtime's queue/wait.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callSync, callAsync } = require('../errors.cjs');
const { decode, options } = require('../args.cjs');

/** The decoded partials of a native stream, until the job is terminal. */
async function* partials(s) {
  for (;;) {
    const p = await callAsync(() => s.next());
    if (p === null || p === undefined) return;
    yield decode(p.data);
  }
}

class WaitCalls {
  async result(id, opts) {
    const o = options('result options', opts, 'wait') ?? {};
    return decode(await callAsync(() => native(this).result(id, o.timeoutMs, o.pollMs)));
  }

  stream(id, opts) {
    const o = options('stream options', opts, 'wait') ?? {};
    const s = callSync(() => native(this).stream(id, o.timeoutMs, o.pollMs));
    return partials(s);
  }
}

module.exports = { WaitCalls };
