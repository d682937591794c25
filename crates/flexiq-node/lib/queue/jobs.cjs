'use strict';
// Job calls of the Queue: enqueuing, fetch, cancellation, the error record and logs,
// replays and the dependency graph. Mirrors the runtime's queue/jobs.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callSync, callAsync, invalid } = require('../errors.cjs');
const { encode, decode, options, jobOptions } = require('../args.cjs');

class JobsCalls {
  publishPartial(id, partial) {
    return callAsync(() => native(this).publishPartial(id, encode('partial', partial)));
  }

  enqueue(task, payload, opts) {
    return callAsync(() => native(this).enqueue(task, encode('payload', payload), jobOptions(opts)));
  }

  enqueueMany(items) {
    return callAsync(() => {
      if (!Array.isArray(items)) throw invalid('enqueueMany takes an array of { task, payload, options }');
      const out = new Array(items.length);
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        if (it === null || typeof it !== 'object') throw invalid(`enqueueMany item ${i} must be an object`);
        options(`enqueueMany item ${i}`, it, 'enqueueItem');
        out[i] = { task: it.task, payload: encode(`payload of item ${i}`, it.payload), options: jobOptions(it.options) };
      }
      return native(this).enqueueMany(out);
    });
  }

  getJob(id) {
    return callSync(() => native(this).getJob(id));
  }

  getResult(id) {
    return decode(callSync(() => native(this).getResult(id)));
  }

  requestCancel(id) {
    return callSync(() => native(this).requestCancel(id));
  }

  isCancelRequested(id) {
    return callSync(() => native(this).isCancelRequested(id));
  }

  cancelJob(id) {
    return callSync(() => native(this).cancelJob(id));
  }

  getJobErrors(id) {
    return callAsync(() => native(this).getJobErrors(id));
  }

  replayJob(id) {
    return callAsync(() => native(this).replayJob(id));
  }

  replay(id) {
    return this.replayJob(id);
  }

  getReplayHistory(id) {
    return callAsync(() => native(this).getReplayHistory(id));
  }

  replayHistory(id) {
    return this.getReplayHistory(id);
  }

  jobDag(id) {
    return callAsync(() => native(this).jobDag(id));
  }

  jobLogs(id) {
    return callAsync(() => native(this).jobLogs(id));
  }
}

module.exports = { JobsCalls };
