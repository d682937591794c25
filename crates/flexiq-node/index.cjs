'use strict';
// flexiq for Node: `const { Queue } = require('flexiq')`.

const native = require('./lib/addon.cjs');
const { Queue } = require('./lib/queue.cjs');
const { Worker, JobContext } = require('./lib/worker.cjs');
const { FlexiqError } = require('./lib/errors.cjs');
const { WorkflowJobs } = require('./lib/queue/workflow.cjs');

/** The settings prefixes the runtime owns (`auth:`, `contract:`, `retention:`, ...). */
function reservedSettingPrefixes() {
  return native.reservedSettingPrefixes();
}

/** The storage contract level this build speaks. */
const CONTRACT_LEVEL = native.contractLevel();

/** Every event kind, the built-in ones then `'custom'`. */
const EVENT_KINDS = Object.freeze(native.eventKinds());

module.exports = { Queue, Worker, JobContext, WorkflowJobs, FlexiqError, reservedSettingPrefixes, CONTRACT_LEVEL, EVENT_KINDS };
