'use strict';
// Listings of the Queue: jobs (offset and keyset, plain and filtered) and the archive. Mirrors the runtime's queue/listing.rs;
// installed on Queue.prototype by lib/queue.cjs.

const { native, page } = require('./base.cjs');
const { callAsync } = require('../errors.cjs');
const { options } = require('../args.cjs');

/** A filter with `Date`s of the created-at range as Unix ms. */
function createdRange(f) {
  if (f === undefined) return undefined;
  if (!(f.createdAfter instanceof Date) && !(f.createdBefore instanceof Date)) return f;
  const out = { ...f };
  if (f.createdAfter instanceof Date) out.createdAfter = f.createdAfter.getTime();
  if (f.createdBefore instanceof Date) out.createdBefore = f.createdBefore.getTime();
  return out;
}

class ListingCalls {
  listJobs(filter) {
    return callAsync(() => native(this).listJobs(options('listJobs filter', filter, 'listFilter')));
  }

  listJobsFiltered(filter) {
    return callAsync(() =>
      native(this).listJobsFiltered(createdRange(options('listJobsFiltered filter', filter, 'listFilterWide'))),
    );
  }

  listJobsAfter(filter, after) {
    return page(callAsync(() => native(this).listJobsAfter(options('listJobsAfter filter', filter, 'listFilter'), after)));
  }

  listJobsFilteredAfter(filter, after) {
    return page(
      callAsync(() =>
        native(this).listJobsFilteredAfter(
          createdRange(options('listJobsFilteredAfter filter', filter, 'listFilterWide')),
          after,
        ),
      ),
    );
  }

  listArchived(limit, offset) {
    return callAsync(() => native(this).listArchived(limit, offset));
  }

  listArchivedAfter(limit, after) {
    return page(callAsync(() => native(this).listArchivedAfter(limit, after)));
  }
}

module.exports = { ListingCalls };
