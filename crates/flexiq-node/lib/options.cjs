'use strict';
// Every option object the package takes, each named once: the keys it accepts and the unit
// of each duration among them. Validation (`args.options`) refuses any other key, so a misspelt option is an error rather than
// silently ignored, and `__test__/surface.test.mjs` holds each set equal to the keys of the
// type `index.d.ts` / `native.d.ts` declares for it (named beside each set). A new option is
// added here and to that type; the test fails until both agree.

/** @param {string[]} keys */
const keys = (...names) => new Set(names);

const OPTION_SETS = Object.freeze({
  /** `new Queue(options)` / `Queue.connect(options)`: QueueOptions. */
  queue: keys(
    'dbPath',
    'url',
    'namespace',
    'autoMigrate',
    'maxPending',
    'retention',
    'durability',
    'readConnections',
    'busyTimeoutMs',
    'poolSize',
  ),
  /** `retention` of the queue options and `dryRunRetention(retention)`: RetentionOptions. */
  retention: keys('archivedJobs', 'deadLetter', 'taskLogs', 'taskMetrics', 'jobErrors'),
  /** `enqueue(task, payload, options)` and an `enqueueMany` item's `options`: EnqueueOptions. */
  enqueue: keys(
    'queue',
    'priority',
    'delay',
    'runAt',
    'maxRetries',
    'backoff',
    'timeout',
    'uniqueKey',
    'metadata',
    'dependsOn',
    'groupKey',
    'lifo',
    'dedup',
  ),
  /** `dedup` of the enqueue options: DedupOptions. */
  dedup: keys('id', 'mode', 'ttlMs', 'extend', 'replace'),
  /** One node of `addFlow(tree)`: FlowNode. */
  flowNode: keys('task', 'payload', 'id', 'namespace', 'onFailure', 'options', 'children'),
  /** `getDependencies(jobId, options)`: DependenciesOptions. */
  dependencies: keys('after', 'limit'),
  /** `backoff` of the enqueue options: BackoffOptions. */
  backoff: keys('base', 'max'),
  /** One item of `enqueueMany(items)`: EnqueueItem. */
  enqueueItem: keys('task', 'payload', 'options'),
  /** `listJobs` / `listJobsAfter` filter: JobFilter. */
  listFilter: keys('status', 'queue', 'task', 'limit', 'offset'),
  /** `listJobsFiltered` / `listJobsFilteredAfter` filter: JobFilterWide. */
  listFilterWide: keys(
    'status',
    'queue',
    'task',
    'limit',
    'offset',
    'metadataContains',
    'errorContains',
    'createdAfter',
    'createdBefore',
  ),
  /** `result(id, options)` / `stream(id, options)`: WaitOptions. */
  wait: keys('timeoutMs', 'pollMs'),
  /** `queue.task(name, handler, options)`: TaskOptions. */
  task: keys('timeout', 'softTimeout'),
  /** `queue.worker(options)`: WorkerOptions. */
  worker: keys(
    'concurrency',
    'queues',
    'workerId',
    'prefetch',
    'lease',
    'pollInterval',
    'shutdownTimeout',
    'maintenance',
    'archiveAfter',
    'eventsMaxLen',
    'eventsMaxAgeMs',
    'metricsBind',
  ),
  /** `queue.workflowJobs(options)`: WorkflowJobsOptions. */
  workflow: keys('fairnessGroupBy', 'fairnessCap', 'workerId', 'queue', 'claimAhead'),
  /** One stage of `workflowJobs.enqueueParallel(jobs)`: WorkflowJobSpec. */
  workflowJob: keys(
    'workflowRunId',
    'workflowId',
    'stageId',
    'definitionVersion',
    'payload',
    'priority',
    'nextPollAt',
    'maxAttempts',
  ),
  /** `workflowJobs.dequeue(options)`: DequeueOptions. */
  dequeue: keys('serves', 'queues'),
  /** One item of the dequeue options' `serves`: WorkflowServes. */
  workflowServes: keys('workflowId', 'definitionVersion'),
  /** The fence of a workflow job's claim (`dequeue` gives it, the acks take it): JobFence. */
  fence: keys('jobId', 'attempt', 'startedAt', 'claimSeq'),
  /** `obliterate(queue, options)`: ObliterateOptions. */
  obliterate: keys('force', 'count'),
  /** `remove(jobId, options)`: RemoveOptions. */
  remove: keys('removeChildren'),
  /** `changePriority(jobId, priority, options)`: ChangePriorityOptions. */
  changePriority: keys('lifo'),
  /** `upsertJobScheduler(id, repeat, template)`'s rule: RepeatOptions. */
  repeat: keys('cron', 'tz', 'everyMs', 'limit', 'startAtMs', 'endAtMs', 'immediately', 'catchUp', 'catchUpMax'),
  /** `upsertJobScheduler(id, repeat, template)`'s job: JobTemplate. */
  template: keys('task', 'payload', 'options'),
  /**
   * `options` of a scheduler's template: JobTemplateOptions, the enqueue options but those
   * each slot decides (the rest of `enqueue`, refused by name).
   */
  templateOptions: keys('queue', 'priority', 'maxRetries', 'backoff', 'timeout', 'metadata', 'groupKey'),
  /** `listJobSchedulers(options)`: ListJobSchedulersOptions. */
  listSchedulers: keys('limit', 'after'),
  /** `events(options)`: EventsOptions. */
  events: keys('after', 'kinds', 'fromStart', 'blockMs', 'batch'),
  /** `readEvents(options)`: ReadEventsOptions. */
  readEvents: keys('after', 'blockMs', 'limit'),
  /** `trimEvents(maxLen, options)`: TrimEventsOptions. */
  trimEvents: keys('maxAgeMs'),
  /** `publishEvent(name, data, options)`: PublishEventOptions. */
  publishEvent: keys('jobId', 'queue'),
});

/**
 * The durations among those options and their unit (`s`: seconds, fractions allowed; `ms`:
 * milliseconds), checked by `args.duration` before the addon converts them.
 */
const DURATIONS = Object.freeze({
  queue: { busyTimeoutMs: 'ms' },
  retention: { archivedJobs: 's', deadLetter: 's', taskLogs: 's', taskMetrics: 's', jobErrors: 's' },
  enqueue: { delay: 's', timeout: 's' },
  dedup: { ttlMs: 'ms' },
  backoff: { base: 's', max: 's' },
  wait: { timeoutMs: 'ms', pollMs: 'ms' },
  task: { timeout: 's', softTimeout: 's' },
  worker: { lease: 's', pollInterval: 's', shutdownTimeout: 's', archiveAfter: 's', eventsMaxAgeMs: 'ms' },
  repeat: { everyMs: 'ms' },
  templateOptions: { timeout: 's' },
  events: { blockMs: 'ms' },
  readEvents: { blockMs: 'ms' },
  trimEvents: { maxAgeMs: 'ms' },
});

/** The `level` values `ctx.log(message, level)` takes. */
const LOG_LEVELS = keys('debug', 'info', 'warn', 'error');

module.exports = { OPTION_SETS, DURATIONS, LOG_LEVELS };
