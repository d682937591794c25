// Types of the `flexiq` package. Data shapes (Job, Stats, DeadJob, ...) and option objects
// are generated from the addon's Rust doc comments into `native.d.ts`; this file types the
// JavaScript layer on top (the Queue, workers, contexts and errors). Queue methods that
// pass through to the addon unchanged (`isJobInState`, `countJobSchedulers`, `lastEventId`,
// `eventsEnabled`, `setEventsEnabled`, ...) are typed from `native.d.ts` as well, by the interface merged into `Queue` (see `forwarded.d.ts`).
//
// Units: options a caller configures take seconds (fractions allowed) unless the name ends
// in `Ms`; every timestamp reported back is Unix milliseconds and every window milliseconds.

import type {
  ChangePriorityOptions,
  DeadJob,
  DedupOptions,
  EnqueueOutcome,
  DeadJobPage,
  EffectiveRetention,
  EventsOptions,
  Job,
  JobDag,
  JobError,
  JobPage,
  ListFilter,
  LogEntry,
  Metric,
  MetricBucket,
  MigrationSummary,
  NativeQueue,
  ObliterateOptions,
  PublishEventOptions,
  QueueEvent,
  QueueOptions,
  ReadEventsOptions,
  RemoveOptions,
  ReplayEntry,
  RetentionOptions,
  RetentionPreview,
  Stats,
  TaskMetrics,
  TrimEventsOptions,
  WorkerInfo,
  WorkerOptions,
  WorkerStats,
} from './native';

export type {
  ChangePriorityOptions,
  DeadJob,
  DedupOptions,
  EnqueueOutcome,
  DagEdge,
  DagNode,
  EffectiveRetention,
  EventsOptions,
  Job,
  JobDag,
  JobError,
  LogEntry,
  Metric,
  MetricBucket,
  MigrationSummary,
  ObliterateOptions,
  PublishEventOptions,
  QueueEvent,
  QueueOptions,
  ReadEventsOptions,
  RemoveOptions,
  ReplayEntry,
  RetentionCounts,
  RetentionOptions,
  RetentionPreview,
  RetentionWindows,
  Stats,
  TaskMetrics,
  TrimEventsOptions,
  WorkerInfo,
  WorkerOptions,
  WorkerStats,
} from './native';

import type { Dependencies, DependenciesOptions, FlowNode } from './flows';
import type { InternalMethod, ReshapedMethod } from './forwarded';
import type { JobScheduler, JobTemplate, ListJobSchedulersOptions, RepeatOptions } from './schedulers';
import type { EventKind, EventName, EventStream, QueueErrorListener, QueueEventListener } from './events';

export type { ChildDependency, Dependencies, DependenciesOptions, FlowNode, FlowPolicy } from './flows';
export type {
  CatchUp,
  JobScheduler,
  JobSchedulerRepeat,
  JobTemplate,
  JobTemplateOptions,
  ListJobSchedulersOptions,
  RepeatOptions,
} from './schedulers';
export type { EventKind, EventName, EventStream, QueueErrorListener, QueueEventListener } from './events';
import type {
  Dequeued,
  DequeueOptions,
  JobAckOutcome,
  JobFence,
  WorkflowJob,
  WorkflowJobSpec,
  WorkflowJobsOptions,
  WorkflowServes,
} from './workflow';
export type {
  Dequeued,
  DequeueOptions,
  JobAckOutcome,
  JobFence,
  WorkflowJob,
  WorkflowJobSpec,
  WorkflowJobsOptions,
  WorkflowServes,
} from './workflow';

/** A job's status. */
export type JobStatus = Job['status'];

/** The statuses `clean` removes by (every one but `running`: cancel or obliterate those). */
export type CleanStatus = Exclude<JobStatus, 'running'>;

/** The statuses `retryJobs` moves back to pending. */
export type RetryStatus = Extract<JobStatus, 'failed' | 'dead' | 'completed'>;

/** A queue's persisted controls (`queueConfig`). */
export interface QueueControls {
  /** Whether the queue is paused. */
  paused: boolean;
  /** Its rate limit, `"N/s"`, `"N/m"` or `"N/h"`; `null` when unlimited. */
  rateLimit: string | null;
  /** Most of its jobs running at once across all workers; `null` when uncapped. */
  concurrency: number | null;
  /** Stalls (lapsed leases) a job of it recovers from before it fails with `STALLED`; `null`: the default of 1. */
  maxStalledCount: number | null;
}

/** One keyset page: pass `nextCursor` back as `after`; `null` means that was the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Listing filter of `listJobs` / `listJobsAfter`. */
export type JobFilter = Pick<ListFilter, 'status' | 'queue' | 'task' | 'limit' | 'offset'>;

/** Listing filter of `listJobsFiltered` / `listJobsFilteredAfter`: adds substrings and a created-at range. */
export interface JobFilterWide extends JobFilter {
  /** Metadata JSON text contains this substring. */
  metadataContains?: string;
  /** Last error contains this substring. */
  errorContains?: string;
  /** Created at or after (Unix ms or a Date). */
  createdAfter?: number | Date;
  /** Created before (Unix ms or a Date). */
  createdBefore?: number | Date;
}

/** Retry backoff in seconds: the first retry waits `base`, each next twice as long, capped at `max`. */
export interface BackoffOptions {
  /** Delay before the first retry (s, default 1). */
  base?: number;
  /** Upper bound of a retry delay (s, default 3600). */
  max?: number;
}

/** Options of one enqueued job. */
export interface EnqueueOptions {
  /** Queue name (default `"default"`). */
  queue?: string;
  /** Higher runs first (a whole number, default 0). */
  priority?: number;
  /** Run no earlier than this many seconds from now. Exclusive with `runAt`. */
  delay?: number;
  /** Run no earlier than this time (Unix ms or a Date). Exclusive with `delay`. */
  runAt?: number | Date;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Retry backoff (seconds). */
  backoff?: BackoffOptions;
  /** Hard timeout of one attempt (s): `ctx.signal` aborts with `TIMEOUT` and the attempt fails. */
  timeout?: number;
  /** While a live job holds this key, enqueue resolves to that job's id instead. */
  uniqueKey?: string;
  /** A JSON object stored with the job (searchable with `metadataContains`). */
  metadata?: Record<string, unknown>;
  /** Ids of jobs (same namespace) that must complete first. */
  dependsOn?: string[];
  /** Fairness group. */
  groupKey?: string;
  /** Claim it ahead of the FIFO jobs of its priority, the newest LIFO job first. Exclusive with `delay` and `runAt`. */
  lifo?: boolean;
  /** Deduplication by key and mode (`ttlMs` in milliseconds). Exclusive with `uniqueKey`. */
  dedup?: DedupOptions;
}

/** The dedup modes: what an enqueue does while its dedup key is held. */
export type DedupMode = DedupOptions['mode'];

/** One job of an `enqueueMany` batch. */
export interface EnqueueItem {
  task: string;
  payload?: unknown;
  options?: EnqueueOptions;
}

/** How long `result` / `stream` wait. */
export interface WaitOptions {
  /** Give up after this many ms with a `TIMEOUT` error (default: wait forever). */
  timeoutMs?: number;
  /** Longest single wait on the store between checks (ms, default 1000). */
  pollMs?: number;
}

/** Options of a registered task, in seconds. */
export interface TaskOptions {
  /** Hard timeout of an attempt when the job carries none (s). */
  timeout?: number;
  /**
   * Soft timeout (s): when it passes, `ctx.signal` aborts with reason code `SOFT_TIMEOUT` so
   * the handler can wrap up; the attempt keeps running (until `timeout`, if set, which must
   * be longer).
   */
  softTimeout?: number;
}

/** Error codes flexiq raises. */
export type FlexiqErrorCode =
  | 'NOT_FOUND'
  | 'INVALID_ARGUMENT'
  | 'CONFLICT'
  | 'SUPERSEDED'
  | 'UNSUPPORTED'
  | 'CONTRACT_TOO_OLD'
  | 'CLOSED'
  | 'TIMEOUT'
  | 'QUEUE_FULL'
  | 'TASK_REVOKED'
  | 'BACKEND'
  | 'JOB_FAILED'
  | 'JOB_CANCELLED'
  | 'LEASE_LOST'
  | 'SHUTDOWN'
  | 'SOFT_TIMEOUT';

/** The reason codes `ctx.signal.reason.code` takes. */
export type AbortReasonCode = 'JOB_CANCELLED' | 'TIMEOUT' | 'LEASE_LOST' | 'SHUTDOWN' | 'SOFT_TIMEOUT';

/** Every error flexiq raises. `cause` carries the chain (for `JOB_FAILED`, the job's own error and stack). */
export declare class FlexiqError extends Error {
  constructor(code: FlexiqErrorCode | string, message: string, details?: { cause?: unknown } & Record<string, unknown>);
  readonly name: 'FlexiqError';
  /** What went wrong. */
  readonly code: FlexiqErrorCode | string;
  /** The job involved (`JOB_FAILED`, `JOB_CANCELLED`, `NOT_FOUND` of a job, `SUPERSEDED`). */
  readonly jobId?: string;
  /** The job's terminal status (`JOB_FAILED`, `JOB_CANCELLED`). */
  readonly status?: JobStatus;
  /** The job's last error (`JOB_FAILED`, `JOB_CANCELLED`). */
  readonly jobError?: string;
  /** The full queue (`QUEUE_FULL`). */
  readonly queue?: string;
  /** Pending jobs counted (`QUEUE_FULL`). */
  readonly pending?: number;
  /** The cap in force (`QUEUE_FULL`). */
  readonly maxPending?: number;
  /** Whether repeating the call may succeed (`BACKEND`). */
  readonly retryable?: boolean;
  /** The revoked task (`TASK_REVOKED`). */
  readonly task?: string;
}

/** One attempt of one job, as a handler sees it. */
export declare class JobContext {
  private constructor();
  /** The job's id. */
  readonly id: string;
  /** This attempt's number (1-based). */
  readonly attempt: number;
  /** The task name. */
  readonly task: string;
  /** The queue the job came from. */
  readonly queue: string;
  /**
   * Aborts when the attempt should stop: `requestCancel` (reason code `JOB_CANCELLED`), its
   * timeout (`TIMEOUT`), a lost lease (`LEASE_LOST`), a shutdown past its deadline
   * (`SHUTDOWN`), or its task's soft timeout (`SOFT_TIMEOUT`: a hint to wrap up, the attempt
   * keeps running). `signal.reason` is a `FlexiqError` whose `code` is one of these
   * (`AbortReasonCode`); a signal aborts once, with the first.
   */
  readonly signal: AbortSignal;
  /** Publishes a partial result (any JSON value); resolves to its sequence number (1, 2, ...). */
  publish(partial: unknown): Promise<number>;
  /** Appends a log line to the job. */
  log(message: string, level?: 'debug' | 'info' | 'warn' | 'error'): Promise<void>;
  /** Records progress, 0 to 100. */
  setProgress(progress: number): Promise<void>;
  /**
   * The results of this job's completed children (a flow's parent, or any job with
   * dependencies) by child id, JSON-decoded as `getResult` decodes them (`null` for a child
   * that completed without a result).
   */
  childrenValues<R = unknown>(): Promise<Record<string, R>>;
  /** The children whose failure was ignored (`ignore_dependency`), by child id, with their last error. */
  ignoredFailures(): Promise<Record<string, string>>;
}

/** A job handler: resolves to the job's result (JSON-serialised) or throws to fail the attempt. */
export type Handler<P = any, R = unknown> = (payload: P, ctx: JobContext) => R | Promise<R>;

/** A worker serving the tasks registered on its queue. */
export declare class Worker {
  private constructor();
  /** The worker's id (stamped on the jobs it claims). */
  readonly id: string;
  /** Where it serves `GET /metrics` (the port chosen for port 0) once `ready` resolved; `null` without `metricsBind`. */
  readonly metricsAddr: string | null;
  /**
   * Resolves once the running worker is live: registered in the worker registry, and its
   * first claim reached the store, so a job enqueued from now on is picked up without
   * waiting for a poll. Rejects with `CLOSED` (naming the worker) when it stopped first:
   * closed before `run()`, its queue closed, the store unreachable. Pending until `run()` or
   * `close()` is called.
   */
  readonly ready: Promise<void>;
  /** Runs until `close()`; resolves with the worker's counters once it has shut down. */
  run(): Promise<WorkerStats>;
  /**
   * Stops claiming, lets running handlers finish within `shutdownTimeout` (then aborts their
   * `ctx.signal` with `SHUTDOWN` and gives their jobs back), writes every pending ack and
   * resolves once stopped. Safe before `run()` (the worker never starts) and more than once.
   */
  close(): Promise<void>;
  /** `close()`, resolving with the worker's counters (`undefined` when it never ran). */
  stop(): Promise<WorkerStats | undefined>;
}

/**
 * The job queue of a workflow engine over one queue of a flexiq store
 * (`queue.workflowJobs(options)`): stages are jobs whose task is the workflow id, at most
 * one row per (run, stage), claimed fairly across `fairnessGroupBy` groups under
 * `fairnessCap`. Every method but `adoptWorkerId` returns a Promise.
 */
export declare class WorkflowJobs {
  private constructor();
  /** The dotted payload path the fairness cap groups by, or `null` when fairness is off. */
  readonly fairnessGroupBy: string | null;
  /** Most running jobs per fairness group across every worker, or `null` without a cap. */
  readonly fairnessCap: number | null;
  /** The queue the view enqueues to and claims from (default `"workflow"`). */
  readonly queueName: string;
  /** The id stamped on the jobs this view claims. */
  readonly workerId: string;
  /**
   * Offers a host's worker id; a view configured with its own `workerId` keeps it. Returns
   * the id the view stamps from now on. Synchronous.
   */
  adoptWorkerId(workerId: string): string;
  /**
   * Enqueues stages in one transaction; a (run, stage) pair that already has a row gets it
   * replaced in place (same id; status pending, attempt 0, no worker, lease or error).
   * Resolves to the ids in order.
   */
  enqueueParallel(jobs: WorkflowJobSpec[]): Promise<string[]>;
  /** Claims one job (fairly under the cap), or resolves to `null` when none is claimable. */
  dequeue(options?: DequeueOptions | null): Promise<Dequeued | null>;
  /** Marks a job completed. Unfenced: acknowledged whatever the job's state (a non-running job is left alone). */
  complete(jobId: string, fence?: JobFence | null): Promise<JobAckOutcome>;
  /** Fails the attempt; retried after a backoff while attempts remain only when `shouldRetry` (default `false`). */
  fail(jobId: string, error: string, shouldRetry?: boolean | null, fence?: JobFence | null): Promise<JobAckOutcome>;
  /** Suspends the job until `nextPollAt`. */
  suspend(jobId: string, nextPollAt: Date | number, fence?: JobFence | null): Promise<JobAckOutcome>;
  /** Gives a claimed job back until `nextPollAt` without counting the attempt; `reason` becomes its last error. */
  defer(jobId: string, nextPollAt: Date | number, reason: string, fence?: JobFence | null): Promise<JobAckOutcome>;
  /** Refreshes a running job's lease (a no-op when it is not running). */
  touchJob(jobId: string): Promise<void>;
  /** Releases running jobs whose lease is older than `staleThresholdMs` (default 60,000); resolves to how many. */
  releaseStaleJobs(staleThresholdMs?: number | null): Promise<number>;
  /** Fails running jobs claimed more than `absoluteTimeoutMs` ago, heartbeats or not; resolves to how many. */
  expireRunawayJobs(absoluteTimeoutMs: number): Promise<number>;
  /** Cancels the run's jobs that have not started (pending, waiting, suspended); resolves to how many. */
  cancelByRun(workflowRunId: string): Promise<number>;
  /** Deletes the job rows of these stages of the run, whatever their status; resolves to how many. */
  deleteByRunAndStages(workflowRunId: string, stageIds: string[]): Promise<number>;
  /** Every job row of the run, any status, oldest first. */
  getJobsByWorkflowRun(workflowRunId: string): Promise<WorkflowJob[]>;
}

/** A handle on one namespace of a store: SQLite file, PostgreSQL or Redis. */
export declare class Queue {
  /**
   * Opens any store without blocking the event loop: connecting, creating and migrating run
   * on the addon's threads. `{ dbPath }` for an SQLite file, or `{ url }` (`postgres://`,
   * `redis://`, `sqlite://`), plus `namespace`, `autoMigrate`, `maxPending`, `retention`
   * (seconds). Rejects with `INVALID_ARGUMENT` for bad options and `BACKEND` for an
   * unreachable server.
   */
  static connect(options: QueueOptions): Promise<Queue>;
  /**
   * Opens an SQLite file synchronously (`{ dbPath }` or a `sqlite://` url): a local file
   * opens in milliseconds. PostgreSQL and Redis throw `INVALID_ARGUMENT` here: use
   * `await Queue.connect(options)`, which never blocks the event loop.
   */
  constructor(options: QueueOptions);
  /** `"sqlite"`, `"postgres"` or `"redis"`. */
  readonly backend: string;
  /** The namespace every call is scoped to. */
  readonly namespace: string;
  /** Whether `close()` was called. */
  readonly closed: boolean;
  /** Releases the connections; later calls throw `CLOSED`. Idempotent. */
  close(): Promise<void>;

  /** Enqueues a job (payload JSON-serialised); resolves to its id. `QUEUE_FULL` past `maxPending`. */
  enqueue(task: string, payload?: unknown, options?: EnqueueOptions): Promise<string>;
  /** Enqueues a batch in one transaction (all or none); resolves to the ids in order. */
  enqueueMany(items: EnqueueItem[]): Promise<string[]>;

  /** A job's current state, or `null`. Synchronous. */
  getJob(id: string): Job | null;
  /** The deserialised result of a completed job, or `undefined` if not yet ready. Synchronous. */
  getResult<R = unknown>(id: string): R | undefined;
  /** Awaits a job's terminal result; rejects with `JOB_FAILED`, `JOB_CANCELLED` or `TIMEOUT`. */
  result<R = unknown>(id: string, options?: WaitOptions): Promise<R | undefined>;
  /** Async-iterates a job's published partials until it is terminal. */
  stream<T = unknown>(id: string, options?: WaitOptions): AsyncGenerator<T, void, undefined>;
  /** Requests cooperative cancellation of a running job (a pending one is cancelled outright). Synchronous. */
  requestCancel(id: string): boolean;
  /** Whether cancellation has been requested. Synchronous. */
  isCancelRequested(id: string): boolean;
  /** Cancels a pending job; `false` when it is running or terminal. Synchronous. */
  cancelJob(id: string): boolean;
  /** Forces a stuck running job back to pending, keeping its retry budget. Synchronous. */
  requeueJob(id: string): boolean;

  /** Jobs by status, queue or task, newest first (limit default 50). */
  listJobs(filter?: JobFilter): Promise<Job[]>;
  /** `listJobs` plus metadata / error substrings and a created-at range. */
  listJobsFiltered(filter?: JobFilterWide): Promise<Job[]>;
  /** Keyset-paginated `listJobs`; the filter's `offset` is ignored. */
  listJobsAfter(filter?: JobFilter | null, after?: string | null): Promise<Page<Job>>;
  /** Keyset-paginated `listJobsFiltered`. */
  listJobsFilteredAfter(filter?: JobFilterWide | null, after?: string | null): Promise<Page<Job>>;
  /** Every failed attempt, oldest first. */
  getJobErrors(id: string): Promise<JobError[]>;
  /** Re-enqueues a copy of a job (fresh id and retry budget); resolves to the new id. */
  replayJob(id: string): Promise<string>;
  /** Alias of `replayJob`. */
  replay(id: string): Promise<string>;
  /** Every replay of a job, newest first. */
  getReplayHistory(id: string): Promise<ReplayEntry[]>;
  /** Alias of `getReplayHistory`. */
  replayHistory(id: string): Promise<ReplayEntry[]>;
  /** The dependency graph reachable from a job: edges point dependency -> dependent. */
  jobDag(id: string): Promise<JobDag>;
  /** The archive, newest first (limit default 50). */
  listArchived(limit?: number, offset?: number): Promise<Job[]>;
  /** Keyset twin of `listArchived`, by completed time. */
  listArchivedAfter(limit?: number, after?: string | null): Promise<Page<Job>>;

  /** Counts by status over the namespace. */
  stats(): Promise<Stats>;
  /** Counts by status on one queue. */
  statsByQueue(queue: string): Promise<Stats>;
  /** `statsByQueue(queue)` under the Rust Queue's name. */
  statsForQueue(queue: string): Promise<Stats>;
  /**
   * Publishes a partial result (any JSON value) for a job from outside its handler; resolves to
   * its sequence number (1, 2, ...). Rejects `NOT_FOUND` for an unknown job, `INVALID_ARGUMENT`
   * for a malformed id or a value JSON cannot encode.
   */
  publishPartial(id: string, partial: unknown): Promise<number>;
  /** Counts by status per known queue, empty queues included. */
  statsAllQueues(): Promise<Record<string, Stats>>;
  /** Raw per-execution metric rows recorded at or after `sinceMs` (Unix ms). */
  getMetrics(sinceMs: number, task?: string): Promise<Metric[]>;
  /** Pending jobs on one queue: the number `maxPending` is compared against. Synchronous. */
  countPendingByQueue(queue: string): number;

  /** Dead letters, newest first (limit default 10). */
  deadLetters(limit?: number, offset?: number): Promise<DeadJob[]>;
  /** Dead letters of one task. */
  deadLettersByTask(taskName: string, limit?: number, offset?: number): Promise<DeadJob[]>;
  /** Keyset-paginated `deadLetters`, by failed time. */
  deadLettersAfter(limit?: number, after?: string | null): Promise<Page<DeadJob>>;
  /** Re-enqueues a dead letter as a new job; resolves to its id. Takes the dead-letter id. */
  retryDead(deadId: string): Promise<string>;
  /** Discards one dead letter; `false` when unknown. */
  deleteDead(deadId: string): Promise<boolean>;
  /** Deletes dead letters older than `olderThanMs` ms; resolves to how many. */
  purgeDead(olderThanMs: number): Promise<number>;
  /** Deletes every dead letter of one task; resolves to how many. */
  purgeDeadByTask(taskName: string): Promise<number>;

  /** Pauses a queue for every worker of the namespace. */
  pauseQueue(queue: string): void;
  /** Resumes a paused queue. */
  resumeQueue(queue: string): void;
  /** Paused queues, sorted. */
  listPausedQueues(): string[];
  /** `pauseQueue(queue)` under the Rust Queue's name. */
  pause(queue: string): void;
  /** `resumeQueue(queue)` under the Rust Queue's name. */
  resume(queue: string): void;
  /** `listPausedQueues()` under the Rust Queue's name. */
  pausedQueues(): string[];
  /** Deletes completed jobs that finished more than `olderThanMs` ms ago; resolves to how many. */
  purgeCompleted(olderThanMs: number): Promise<number>;

  /** What the elected cleaner last applied (windows ms, `reportedAt` Unix ms); `null` before any sweep. */
  effectiveRetention(): EffectiveRetention | null;
  /** Counts what a purge would delete now with `retention` (seconds) or the configured windows. */
  dryRunRetention(retention?: RetentionOptions): Promise<RetentionPreview>;

  /** A setting, or `null` when never set. */
  getSetting(key: string): string | null;
  /** Inserts or overwrites a setting. */
  setSetting(key: string, value: string): void;
  /** Compare-and-set (`expected` `null`: must be unset); `false` when another writer got there first. */
  setSettingIf(key: string, expected: string | null, value: string): boolean;
  /** Removes a setting; `false` when it did not exist. */
  deleteSetting(key: string): boolean;
  /** Every setting, runtime-owned keys included. */
  listSettings(): Record<string, string>;

  /** Applies pending schema changes; idempotent. */
  migrate(): Promise<MigrationSummary>;
  /** The lowest contract level that may open this storage. */
  minContract(): number;
  /** Moves the contract floor; a level this build does not speak is refused. */
  setMinContract(level: number): void;

  /**
   * Limits claims from a queue across all workers: `"N/s"`, `"N/m"` or `"N/h"` (N a whole
   * number, 1 or more). Checked by the scheduler before per-task limits. Persisted. Synchronous.
   */
  setQueueRateLimit(queue: string, rateLimit: string): void;
  /** Removes a queue's rate limit. Synchronous. */
  clearQueueRateLimit(queue: string): void;
  /**
   * Caps the jobs of a queue running at once across all workers (a whole number, 1 to
   * 1,000,000). Checked before per-task limits. Persisted. Synchronous.
   */
  setQueueConcurrency(queue: string, maxConcurrent: number): void;
  /** Removes a queue's concurrency cap. Synchronous. */
  clearQueueConcurrency(queue: string): void;
  /**
   * Sets how many stalls (lapsed leases: a worker died or hung) a job of a queue recovers
   * from, each putting it back to pending without spending an attempt, before it fails with
   * an error starting `STALLED` (a whole number, 0 to 10,000; 0 fails the first stall).
   * Persisted. Synchronous.
   */
  setQueueMaxStalled(queue: string, maxStalledCount: number): void;
  /** Restores a queue's stall budget to the default (1). Synchronous. */
  clearQueueMaxStalled(queue: string): void;
  /** A queue's pause flag, rate limit, concurrency cap and stall budget (`null`: none set). Synchronous. */
  queueConfig(queue: string): QueueControls;
  /**
   * Cancels every pending job of a queue; resolves to how many. Cancelled, not deleted: the
   * rows and their history stay. Running jobs are untouched.
   */
  purge(queue: string): Promise<number>;
  /** Alias of `purge`. */
  purgeQueue(queue: string): Promise<number>;
  /**
   * Prevents every future enqueue of a task (also `retryDead` and `replay` of its jobs):
   * they reject with `TASK_REVOKED`. Jobs of the task already pending are not affected and
   * still run. Synchronous.
   */
  revokeTask(taskName: string): void;
  /** Lifts a revocation; `false` when the task was not revoked. Synchronous. */
  unrevokeTask(taskName: string): boolean;
  /** The revoked task names of the namespace, sorted. Synchronous. */
  revokedTasks(): string[];

  /**
   * Removes up to `limit` (1 to 10,000, default 1,000) jobs of `status` in `queue` that
   * finished (completed, failed, dead, cancelled) or were created (the other statuses) at
   * least `graceMs` **milliseconds** ago, oldest first, with their history; resolves to their
   * ids. Jobs waiting on a removed job drop that dependency. Call again until it resolves to
   * `[]`.
   */
  clean(queue: string, status: CleanStatus, graceMs: number, limit?: number): Promise<string[]>;
  /**
   * Removes the pending jobs of `queue` that are due, and with `includeDelayed` (default
   * `false`) the delayed ones too; resolves to how many. Waiting, suspended and running jobs
   * stay.
   */
  drain(queue: string, includeDelayed?: boolean): Promise<number>;
  /**
   * Removes up to `count` (default 1,000) jobs of `queue` whatever their status, with their
   * dead letters and archived copies; resolves to how many are left, and once none are the
   * queue's controls and counts go too. Call again until 0. Rejects with `CONFLICT` naming
   * the queue while jobs of it run, unless `force` (their late acks are then superseded).
   */
  obliterate(queue: string, options?: ObliterateOptions): Promise<number>;
  /** Removes history rows and records no job owns any more; resolves to how many. */
  removeOrphans(): Promise<number>;
  /**
   * Moves up to `count` (1 to 10,000, default 1,000) jobs of `status` (default `"failed"`)
   * in `queue`, oldest finished first, back to pending now with a fresh retry budget and the
   * same ids; resolves to how many moved (0: none left).
   */
  retryJobs(queue: string, status?: RetryStatus, count?: number): Promise<number>;
  /**
   * Removes a job with its history, and with `removeChildren` (default `true`) the jobs it
   * waits on (transitively) that no other job waits on; resolves to every id removed, the job
   * first. `NOT_FOUND` for an unknown id; `CONFLICT` naming the job when it or a child to
   * remove is running, and then nothing is removed.
   */
  remove(jobId: string, options?: RemoveOptions): Promise<string[]>;
  /** Whether `queue` has a concurrency cap and as many jobs running as it allows. */
  isMaxed(queue: string): Promise<boolean>;
  /** Milliseconds until `queue`'s rate limit grants another claim (0 without a limit or when one is free now). */
  rateLimitTtl(queue: string): Promise<number>;

  /**
   * Makes a pending job due `delayMs` **milliseconds** from now, whatever its delay was (a
   * LIFO job becomes FIFO). `NOT_FOUND` for an unknown id; `CONFLICT` naming the status for a
   * job that is not pending.
   */
  changeDelay(jobId: string, delayMs: number): Promise<void>;
  /** Makes a delayed pending job due now. `CONFLICT` when it is not pending, or already due. */
  promote(jobId: string): Promise<void>;
  /**
   * Makes up to `count` (1 to 10,000, default 1,000) delayed jobs of `queue` due now,
   * soonest first; resolves to how many. Call again until it resolves to 0.
   */
  promoteJobs(queue: string, count?: number): Promise<number>;
  /**
   * Gives a pending, waiting or suspended job a new priority (a whole number within
   * ±2,097,152; higher runs first). With `lifo` (default `false`) a due pending job is placed
   * ahead of the FIFO jobs of that priority, the newest LIFO job first. `CONFLICT` naming the
   * status for a job that started or finished.
   */
  changePriority(jobId: string, priority: number, options?: ChangePriorityOptions): Promise<void>;

  /**
   * Creates the job scheduler `id`, or replaces the rule and template of the existing one
   * (keeping its creation time, count and last slot: a slot it fired never fires again).
   * `repeat` is `{ cron, tz }` (a zone's daylight saving followed) or `{ everyMs }`, with
   * `limit`, `startAtMs` / `endAtMs` (Unix ms or Dates), `immediately` and `catchUp`;
   * `template` is `{ task, payload, options }`, the options those of `enqueue` but the ones
   * each slot decides. Resolves to the stored scheduler with its next slot. A worker elected
   * its namespace's cleaner (`maintenance`, the default) fires the due slots, each one job
   * whose unique key names the scheduler and slot. `INVALID_ARGUMENT` naming the field for
   * bad input (a malformed pattern, an unknown zone, both or neither of `cron` and
   * `everyMs`, an option a template may not set), and nothing is stored.
   */
  upsertJobScheduler(id: string, repeat: RepeatOptions, template: JobTemplate): Promise<JobScheduler>;
  /** The scheduler `id`, or `null` when there is none. */
  getJobScheduler(id: string): Promise<JobScheduler | null>;
  /**
   * One keyset page of the namespace's schedulers by id: `limit` 1 to 10,000 (default 100),
   * `after` the previous page's `nextCursor`, which is `null` on the last page.
   */
  listJobSchedulers(options?: ListJobSchedulersOptions): Promise<Page<JobScheduler>>;
  /** Removes the scheduler `id` (the jobs it fired stay); `false` when there was none. */
  removeJobScheduler(id: string): Promise<boolean>;

  /**
   * Inserts a flow in one transaction (one script on Redis): `tree` and all its descendants,
   * each a job on its own queue, every parent `waiting` until its children finish, a child's
   * failure handled by its `onFailure`. Resolves to the ids in the order the nodes were given
   * (the root, then each child's subtree in turn). A bad node (a cycle, another namespace, a
   * unique key or dedup, a bad option, over 10,000 nodes) rejects with `INVALID_ARGUMENT`
   * naming it, and nothing is written. `QUEUE_FULL` past `maxPending`.
   */
  addFlow(tree: FlowNode): Promise<string[]>;
  /**
   * One page of a job's dependencies by outcome, by child id after `after` (the previous
   * page's `nextAfter`); `limit` 1 to 10,000 (default 100). `NOT_FOUND` for an unknown job,
   * `INVALID_ARGUMENT` for a bad id, cursor or limit.
   */
  getDependencies(jobId: string, options?: DependenciesOptions): Promise<Dependencies>;
  /**
   * Detaches an unfinished child from the jobs waiting on it; a parent left with nothing open
   * becomes claimable. `false` for a finished child or one nothing waits on; `NOT_FOUND` for
   * an unknown id.
   */
  removeChildDependency(childId: string): Promise<boolean>;
  /**
   * Enqueues a job like `enqueue` and says what happened: `deduplicated` when a unique key or
   * dedup key returned an existing job (whose id `id` is).
   */
  enqueueOutcome(task: string, payload?: unknown, options?: EnqueueOptions): Promise<EnqueueOutcome>;
  /** The job holding dedup key `key` now; `null` when the key is free. */
  dedupJobId(key: string): Promise<string | null>;
  /** Deletes dedup key `key` (the holding job is left alone); `false` when it did not exist. */
  deleteDedupKey(key: string): Promise<boolean>;

  /**
   * The namespace's events in order, from every process: each job's state changes
   * (`enqueued`, `active`, `completed`, ...), queues paused and resumed, and custom events.
   * Without `after` or `fromStart`, only events after the newest one readable at this call
   * (on PostgreSQL an event is readable once every transaction older than its own has ended,
   * so one committed just before the call may still come); with `after` (an event's `id`,
   * saved earlier, perhaps by another process), every later event once, none repeated and
   * none lost; with `fromStart`, from the oldest event kept. `kinds` keeps the
   * named kinds and custom events (`'custom'`: every custom event). The iterator never ends
   * by itself: `break` out of `for await` (or `return()`) or the queue's `close()` stops it.
   * Synchronous: reads where the stream stands and checks the options now, throwing
   * `INVALID_ARGUMENT` for a bad option or an id that is not one of this store's.
   */
  events(options?: EventsOptions): EventStream;
  /**
   * Up to `limit` (1 to 10,000, default 100) events after `after` (default: from the oldest
   * kept), in order. With `blockMs` (0 to 300,000 **milliseconds**, default 0), waits that
   * long for one when there are none yet and resolves to what arrived, possibly `[]`; the
   * queue's `close()` ends the wait with `CLOSED`.
   */
  readEvents(options?: ReadEventsOptions): Promise<QueueEvent[]>;
  /**
   * Appends a custom event named `name` (1 to 200 bytes, not a kind's name) carrying `data`
   * (any JSON value, at most 64 KiB encoded; default `null`), optionally about a job and a
   * queue; resolves to its id. Readers filter it by its name or `'custom'`. `CONFLICT` while
   * events are switched off (`setEventsEnabled(false)`).
   */
  publishEvent(name: string, data?: unknown, options?: PublishEventOptions): Promise<string>;
  /**
   * Keeps the newest `maxLen` events (0 keeps none) and, with `maxAgeMs`, none older than that
   * many **milliseconds**; resolves to how many were dropped. A worker elected its
   * namespace's cleaner trims every round (`eventsMaxLen`, default 10,000; `eventsMaxAgeMs`).
   */
  trimEvents(maxLen: number, options?: TrimEventsOptions): Promise<number>;
  /**
   * Calls `listener` with every event of kind `name` (or custom event of that name; `'custom'`:
   * every custom event) committed from now on, by any process. The first listener opens one
   * reader of the stream for the queue; it stops when the last is removed (`off`) or the
   * queue closes, so listening does not keep the process alive after that. What a listener
   * throws (or its Promise rejects with) and failed reads go to the `'error'` listeners, and
   * the reader goes on; without one they are thrown as uncaught exceptions, as an
   * EventEmitter's. Returns the queue. `INVALID_ARGUMENT` for a bad name, `CLOSED` on a closed
   * queue.
   */
  on(name: 'error', listener: QueueErrorListener): this;
  on(name: EventName, listener: QueueEventListener): this;
  /** `on`, for the next matching event only. */
  once(name: 'error', listener: QueueErrorListener): this;
  once(name: EventName, listener: QueueEventListener): this;
  /** Removes the most recently added `listener` of `name`; the last event listener removed stops the reader. Returns the queue. */
  off(name: 'error', listener: QueueErrorListener): this;
  off(name: EventName, listener: QueueEventListener): this;
  /**
   * Per-task aggregates over executions of the last `sinceMs` **milliseconds** (default
   * 3,600,000: one hour), keyed by task name; durations in ms. Every attempt counts (a job
   * that ran three times contributes three). `taskName` `null`/omitted: every task.
   */
  metrics(taskName?: string | null, sinceMs?: number): Promise<Record<string, TaskMetrics>>;
  /**
   * The same executions in `bucketMs`-**millisecond** buckets (default 60,000), oldest first,
   * over the last `sinceMs` ms (default one hour); `timestamp` is the bucket start (Unix ms).
   * An empty bucket is absent rather than zero-filled.
   */
  metricsTimeseries(taskName?: string | null, sinceMs?: number, bucketMs?: number): Promise<MetricBucket[]>;
  /** Workers registered in the namespace (`startedAt`, `heartbeatAt` Unix ms) and the ids of the jobs each runs now (`currentJobs`). */
  listWorkers(): Promise<WorkerInfo[]>;
  /** A job's log lines, oldest first (`loggedAt` Unix ms). */
  jobLogs(id: string): Promise<LogEntry[]>;

  /**
   * The workflow view of this queue: the job queue a workflow engine drives, on `queue`
   * (default `"workflow"`), fair across `fairnessGroupBy` groups under `fairnessCap`.
   * `INVALID_ARGUMENT` for a bad path or a cap below 1. Synchronous.
   */
  workflowJobs(options?: WorkflowJobsOptions | null): WorkflowJobs;

  /** Registers a handler for `name`; workers created afterwards run it. Returns the queue. */
  task<P = any, R = unknown>(name: string, handler: Handler<P, R>, options?: TaskOptions): this;
  /** A worker for every task registered so far; `run()` starts it. */
  worker(options?: WorkerOptions): Worker;
  /**
   * Stops every worker made by this queue (each as `worker.close()` does), then closes the
   * queue. The in-process way to stop, besides signals.
   */
  shutdown(): Promise<void>;
}

// Every other member of the addon's NativeQueue reaches the Queue as it is (forwarded by
// lib/queue/forward.cjs) and is typed by this interface, merged into the class above with
// the addon's parameters, result and doc comment (native.d.ts); a member the class declares
// keeps its own declaration. The names left out are listed in forwarded.d.ts.
export interface Queue extends Omit<NativeQueue, InternalMethod | ReshapedMethod> {}

/** The settings prefixes the runtime owns (`auth:`, `contract:`, `retention:`, ...). */
export declare function reservedSettingPrefixes(): string[];

/** The storage contract level this build speaks. */
export declare const CONTRACT_LEVEL: number;

/** Every event kind, the built-in ones then `'custom'`. */
export declare const EVENT_KINDS: readonly EventKind[];
