'use strict';
// Retention, settings, schema and the contract floor. Mirrors the runtime's queue/admin.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native } = require('./base.cjs');
const { callSync, callAsync } = require('../errors.cjs');
const { retention } = require('./base.cjs');

class AdminCalls {
  effectiveRetention() {
    return callSync(() => native(this).effectiveRetention());
  }

  dryRunRetention(windows) {
    return callAsync(() => native(this).dryRunRetention(retention(windows)));
  }

  getSetting(key) {
    return callSync(() => native(this).getSetting(key));
  }

  setSetting(key, value) {
    callSync(() => native(this).setSetting(key, value));
  }

  setSettingIf(key, expected, value) {
    return callSync(() => native(this).setSettingIf(key, expected, value));
  }

  deleteSetting(key) {
    return callSync(() => native(this).deleteSetting(key));
  }

  listSettings() {
    return callSync(() => native(this).listSettings());
  }

  migrate() {
    return callAsync(() => native(this).migrate());
  }

  minContract() {
    return callSync(() => native(this).minContract());
  }

  setMinContract(level) {
    callSync(() => native(this).setMinContract(level));
  }
}

module.exports = { AdminCalls };
