'use strict';
// Counts, execution metrics and the worker registry. Mirrors the runtime's queue/stats.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callSync, callAsync } = require('../errors.cjs');
const { duration } = require('../args.cjs');

class StatsCalls {
  stats() {
    return callAsync(() => native(this).stats());
  }

  statsByQueue(queue) {
    return callAsync(() => native(this).statsByQueue(queue));
  }

  /** The Rust Queue's name for `statsByQueue(queue)`. */
  statsForQueue(queue) {
    return this.statsByQueue(queue);
  }

  statsAllQueues() {
    return callAsync(() => native(this).statsAllQueues());
  }

  getMetrics(sinceMs, task) {
    return callAsync(() => native(this).getMetrics(sinceMs, task));
  }

  countPendingByQueue(queue) {
    return callSync(() => native(this).countPendingByQueue(queue));
  }

  metrics(taskName, sinceMs) {
    return callAsync(() => native(this).metrics(taskName, duration('sinceMs', sinceMs, 'ms')));
  }

  metricsTimeseries(taskName, sinceMs, bucketMs) {
    return callAsync(() => native(this).metricsTimeseries(taskName, duration('sinceMs', sinceMs, 'ms'), duration('bucketMs', bucketMs, 'ms')));
  }

  listWorkers() {
    return callAsync(() => native(this).listWorkers());
  }
}

module.exports = { StatsCalls };
