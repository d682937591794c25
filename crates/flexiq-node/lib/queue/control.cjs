'use strict';
// Queue control: pause and resume, limits, stall budgets, purges, task revocation and
// forcing a stuck job back to pending. Mirrors the runtime's queue/control.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callSync, callAsync } = require('../errors.cjs');
const { duration, integer } = require('../args.cjs');

class ControlCalls {
  requeueJob(id) {
    return callSync(() => native(this).requeueJob(id));
  }

  pauseQueue(queue) {
    callSync(() => native(this).pauseQueue(queue));
  }

  resumeQueue(queue) {
    callSync(() => native(this).resumeQueue(queue));
  }

  listPausedQueues() {
    return callSync(() => native(this).listPausedQueues());
  }

  // The Rust Queue's names for the same three controls.
  pause(queue) {
    this.pauseQueue(queue);
  }

  resume(queue) {
    this.resumeQueue(queue);
  }

  pausedQueues() {
    return this.listPausedQueues();
  }

  purgeCompleted(olderThanMs) {
    return callAsync(() => native(this).purgeCompleted(duration('olderThanMs', olderThanMs, 'ms', true)));
  }

  setQueueRateLimit(queue, rateLimit) {
    callSync(() => native(this).setQueueRateLimit(queue, rateLimit));
  }

  clearQueueRateLimit(queue) {
    callSync(() => native(this).clearQueueRateLimit(queue));
  }

  setQueueConcurrency(queue, maxConcurrent) {
    callSync(() => native(this).setQueueConcurrency(queue, maxConcurrent));
  }

  clearQueueConcurrency(queue) {
    callSync(() => native(this).clearQueueConcurrency(queue));
  }

  setQueueMaxStalled(queue, maxStalledCount) {
    callSync(() => native(this).setQueueMaxStalled(queue, integer('maxStalledCount', maxStalledCount, true)));
  }

  clearQueueMaxStalled(queue) {
    callSync(() => native(this).clearQueueMaxStalled(queue));
  }

  queueConfig(queue) {
    const c = callSync(() => native(this).queueConfig(queue));
    return {
      paused: c.paused,
      rateLimit: c.rateLimit ?? null,
      concurrency: c.concurrency ?? null,
      maxStalledCount: c.maxStalledCount ?? null,
    };
  }

  purge(queue) {
    return callAsync(() => native(this).purge(queue));
  }

  purgeQueue(queue) {
    return this.purge(queue);
  }

  revokeTask(taskName) {
    callSync(() => native(this).revokeTask(taskName));
  }

  unrevokeTask(taskName) {
    return callSync(() => native(this).unrevokeTask(taskName));
  }

  revokedTasks() {
    return callSync(() => native(this).revokedTasks());
  }
}

module.exports = { ControlCalls };
