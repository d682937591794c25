// Which members of the addon's `NativeQueue` (the generated `native.d.ts`) the `Queue` type
// takes as they are. `index.d.ts` merges `Omit<NativeQueue, InternalMethod | ReshapedMethod>`
// into its `Queue` class, so a pass-through operation of the addon is typed on the Queue,
// with its Rust doc comment as JSDoc, without a declaration of its own; lib/queue/forward.cjs
// installs the matching forwarders at run time. `__test__/surface-types.ts` and
// `__test__/surface.test.mjs` hold these lists against the addon and the JavaScript layer.

/**
 * Addon methods that are not public: the keys of `INTERNAL` in lib/queue/forward.cjs, which
 * gives the reason for each.
 */
export type InternalMethod = 'createWorker';

/**
 * Queue methods whose arguments or results the JavaScript layer converts (payloads and
 * results JSON-encoded or decoded, `Date`s to Unix ms, option objects to positional values,
 * absent `nextCursor` / controls to `null`): written in lib/queue/<module>.cjs and declared
 * in `index.d.ts` with their own types, which differ from the addon's. Every other addon
 * method keeps the addon's signature, whether `index.d.ts` declares it or not.
 */
export type ReshapedMethod =
  | 'enqueue'
  | 'enqueueMany'
  | 'publishPartial'
  | 'getResult'
  | 'result'
  | 'stream'
  | 'listJobsFiltered'
  | 'listJobsAfter'
  | 'listJobsFilteredAfter'
  | 'listArchivedAfter'
  | 'deadLettersAfter'
  | 'queueConfig'
  | 'workflowJobs'
  | 'addFlow'
  | 'getDependencies'
  | 'enqueueOutcome'
  | 'upsertJobScheduler'
  | 'getJobScheduler'
  | 'listJobSchedulers'
  | 'publishEvent'
  | 'events';
