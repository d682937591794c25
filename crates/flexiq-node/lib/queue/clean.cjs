'use strict';
// Bulk removal and re-running: clean by status and age, drain, obliterate in pages, remove
// one job (with its children), retry finished jobs, orphan removal and the two limit probes.
// Mirrors the runtime's queue/clean.rs; installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callAsync } = require('../errors.cjs');
const { duration, options } = require('../args.cjs');

class CleanCalls {
  clean(queue, status, graceMs, limit) {
    return callAsync(() => native(this).clean(queue, status, duration('graceMs', graceMs, 'ms', true), limit));
  }

  drain(queue, includeDelayed) {
    return callAsync(() => native(this).drain(queue, includeDelayed));
  }

  obliterate(queue, opts) {
    return callAsync(() => native(this).obliterate(queue, options('obliterate options', opts, 'obliterate')));
  }

  removeOrphans() {
    return callAsync(() => native(this).removeOrphans());
  }

  retryJobs(queue, status, count) {
    return callAsync(() => native(this).retryJobs(queue, status, count));
  }

  remove(jobId, opts) {
    return callAsync(() => native(this).remove(jobId, options('remove options', opts, 'remove')));
  }

  isMaxed(queue) {
    return callAsync(() => native(this).isMaxed(queue));
  }

  rateLimitTtl(queue) {
    return callAsync(() => native(this).rateLimitTtl(queue));
  }
}

module.exports = { CleanCalls };
