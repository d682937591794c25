'use strict';
// Deduplicated enqueues and the dedup keys behind them: `enqueueOutcome` says whether the job
// was inserted or an existing one returned, `dedupJobId` who holds a key, `deleteDedupKey`
// frees one. Mirrors the runtime's queue/dedup.rs; installed on Queue.prototype by
// lib/queue.cjs. The `dedup` option itself is checked with the other enqueue options.

const { native } = require('./base.cjs');
const { callAsync } = require('../errors.cjs');
const { encode, jobOptions } = require('../args.cjs');

class DedupCalls {
  enqueueOutcome(task, payload, opts) {
    return callAsync(() => native(this).enqueueOutcome(task, encode('payload', payload), jobOptions(opts)));
  }

  dedupJobId(key) {
    return callAsync(async () => (await native(this).dedupJobId(key)) ?? null);
  }

  deleteDedupKey(key) {
    return callAsync(() => native(this).deleteDedupKey(key));
  }
}

module.exports = { DedupCalls };
