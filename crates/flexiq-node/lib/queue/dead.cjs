'use strict';
// The dead-letter queue: listings, retry, delete and purges. Mirrors the runtime's queue/dead.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native, page } = require('./base.cjs');
const { callAsync } = require('../errors.cjs');
const { duration } = require('../args.cjs');

class DeadCalls {
  deadLetters(limit, offset) {
    return callAsync(() => native(this).deadLetters(limit, offset));
  }

  deadLettersByTask(taskName, limit, offset) {
    return callAsync(() => native(this).deadLettersByTask(taskName, limit, offset));
  }

  deadLettersAfter(limit, after) {
    return page(callAsync(() => native(this).deadLettersAfter(limit, after)));
  }

  retryDead(deadId) {
    return callAsync(() => native(this).retryDead(deadId));
  }

  deleteDead(deadId) {
    return callAsync(() => native(this).deleteDead(deadId));
  }

  purgeDead(olderThanMs) {
    return callAsync(() => native(this).purgeDead(duration('olderThanMs', olderThanMs, 'ms', true)));
  }

  purgeDeadByTask(taskName) {
    return callAsync(() => native(this).purgeDeadByTask(taskName));
  }
}

module.exports = { DeadCalls };
