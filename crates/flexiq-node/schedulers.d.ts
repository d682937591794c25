// Types of job schedulers (`upsertJobScheduler`, `getJobScheduler`, `listJobSchedulers`):
// the rule and template a caller passes in and the scheduler read back. Re-exported by
// `index.d.ts`, which types the Queue methods that take and return them; the addon's own
// shapes are in `native.d.ts` (`SchedulerRepeat`, `SchedulerTemplate`,
// `SchedulerTemplateOptions`, `JobSchedulerRecord`, `ListJobSchedulersOptions`), held equal
// to these by `__test__/surface-types.ts`.
//
// A scheduler read back can be passed to `upsertJobScheduler` again as it is: its `repeat`
// is a `RepeatOptions` and its `template` a `JobTemplate`.

import type { EnqueueOptions } from './index';

/**
 * What a round does with slots missed while no worker was elected to fire them: `'latest'`
 * fires only the newest, `'none'` skips them all, `'all'` fires each, oldest first, at most
 * `catchUpMax` a round.
 */
export type CatchUp = 'latest' | 'none' | 'all';

/** When a scheduler fires: exactly one of `cron` or `everyMs`, with bounds and catch-up. */
export interface RepeatOptions {
  /** A cron pattern: five fields, or six with seconds first (`'0 9 * * MON-FRI'`). */
  cron?: string;
  /** The IANA zone `cron` is read in (`'Europe/Berlin'`; default UTC). Cron only. */
  tz?: string | null;
  /** Fire every this many **milliseconds** (a whole number, 1 or more) from `startAtMs` or the creation. */
  everyMs?: number;
  /** Fire at most this many jobs in all (a whole number, 1 or more; default no limit). */
  limit?: number | null;
  /** No slot before this time (Unix ms or a Date). */
  startAtMs?: number | Date | null;
  /** No slot after this time (Unix ms or a Date). */
  endAtMs?: number | Date | null;
  /** Fire once at once (at the upsert, or at `startAtMs`), then follow the rule (default `false`). */
  immediately?: boolean | null;
  /** Missed slots (default `'latest'`). */
  catchUp?: CatchUp | null;
  /** With `catchUp: 'all'`, most slots fired per round (1 to 1,000, default 100). */
  catchUpMax?: number | null;
}

/**
 * The enqueue options a template carries, in `enqueue`'s units (`timeout` and `backoff` in
 * seconds). The others (`delay`, `runAt`, `uniqueKey`, `dedup`, `dependsOn`, `lifo`) are
 * each slot's to decide and refused with `INVALID_ARGUMENT` naming them.
 */
export type JobTemplateOptions = Pick<EnqueueOptions, 'queue' | 'priority' | 'maxRetries' | 'backoff' | 'timeout' | 'metadata' | 'groupKey'>;

/** The job each slot of a scheduler enqueues. */
export interface JobTemplate {
  /** Task name. */
  task: string;
  /** Any JSON value (default `null`). */
  payload?: unknown;
  /** Its enqueue options. */
  options?: JobTemplateOptions | null;
}

/** A scheduler's rule as stored: `cron` (with `tz`) or `everyMs`, and every other field, `null` when unset. */
export interface JobSchedulerRepeat {
  /** The cron pattern (cron schedulers). */
  cron?: string;
  /** Its zone; `null`: UTC (cron schedulers). */
  tz?: string | null;
  /** The period in ms (every-N-ms schedulers). */
  everyMs?: number;
  /** Most jobs fired in all; `null`: no limit. */
  limit: number | null;
  /** No slot before (Unix ms). */
  startAtMs: number | null;
  /** No slot after (Unix ms). */
  endAtMs: number | null;
  /** Whether it fired (or fires) once at once. */
  immediately: boolean;
  /** Missed slots. */
  catchUp: CatchUp;
  /** With `catchUp: 'all'`, most slots per round; `null` otherwise. */
  catchUpMax: number | null;
}

/** A stored job scheduler. Times are Unix ms. */
export interface JobScheduler {
  /** Its id in the namespace. */
  id: string;
  /** When it fires. */
  repeat: JobSchedulerRepeat;
  /** The job it enqueues: the payload JSON-decoded, the options that were set (seconds as `enqueue` takes them). */
  template: { task: string; payload: unknown; options: JobTemplateOptions };
  /** The next slot; `null` once none is left (limit or `endAtMs` reached). */
  nextRunMs: number | null;
  /** The newest slot fired; `null` before the first. */
  lastRunMs: number | null;
  /** Jobs fired so far. */
  iterations: number;
  /** When it was created. */
  createdAt: number;
  /** When it was last upserted. */
  updatedAt: number;
}

/** Which page of schedulers `listJobSchedulers` reads. */
export interface ListJobSchedulersOptions {
  /** Page size, 1 to 10,000 (default 100). */
  limit?: number | null;
  /** The previous page's `nextCursor` (`null`: the first page). */
  after?: string | null;
}
