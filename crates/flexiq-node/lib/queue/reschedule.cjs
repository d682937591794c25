'use strict';
// Moving jobs that have not started: a new delay, promotion of one delayed job or a batch of
// them, a new priority with optional LIFO placement. Mirrors the runtime's
// queue/reschedule.rs; installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callAsync } = require('../errors.cjs');
const { duration, integer, options } = require('../args.cjs');

class RescheduleCalls {
  changeDelay(jobId, delayMs) {
    return callAsync(() => native(this).changeDelay(jobId, duration('delayMs', delayMs, 'ms', true)));
  }

  promote(jobId) {
    return callAsync(() => native(this).promote(jobId));
  }

  promoteJobs(queue, count) {
    return callAsync(() => native(this).promoteJobs(queue, integer('count', count)));
  }

  changePriority(jobId, priority, opts) {
    return callAsync(() =>
      native(this).changePriority(jobId, integer('priority', priority, true), options('changePriority options', opts, 'changePriority')),
    );
  }
}

module.exports = { RescheduleCalls };
