// Types of the workflow view (`queue.workflowJobs(options)`): its options, the stages a host
// enqueues, the records and fences it dequeues and the ack outcomes. Re-exported by
// `index.d.ts`, which declares the `WorkflowJobs` class that takes and returns them.

import type { JobStatus } from './index';

/** Options of `queue.workflowJobs(options)`. */
export interface WorkflowJobsOptions {
  /** Dotted path into a payload whose value is the job's fairness group (`"tenant.id"`); `null`: no groups. */
  fairnessGroupBy?: string | null;
  /** Most running jobs per fairness group across every worker (1 or more); `null`: no cap. */
  fairnessCap?: number | null;
  /** The id stamped on the jobs this view claims (default: one made for the view; see `adoptWorkerId`). */
  workerId?: string | null;
  /** The queue the view enqueues to and claims from (default `"workflow"`). */
  queue?: string | null;
  /**
   * Claim this worker's next job in the store call of each ack and hold it for the next
   * `dequeue` with the same options (default `false`): one store call per job for a host loop
   * instead of two. The held job is `running` under this worker id before the dequeue; it goes
   * back to pending (the attempt not counted) when not dequeued within a second, on a dequeue
   * with other options, a `cancelByRun` or `deleteByRunAndStages` in this process, or when the
   * queue closes.
   */
  claimAhead?: boolean | null;
}

/** A (workflow, definition version) pair a host serves. */
export interface WorkflowServes {
  /** The workflow id. */
  workflowId: string;
  /** The definition version; `null` or absent serves every version of the workflow. */
  definitionVersion?: string | null;
}

/** What `dequeue(options)` may claim. */
export interface DequeueOptions {
  /** Only jobs of these pairs; absent or empty serves every workflow. */
  serves?: WorkflowServes[] | null;
  /** Queues to claim from; absent or empty: the view's queue. */
  queues?: string[] | null;
}

/** What a fenced (or unfenced) ack achieved: `"superseded"` means nothing was written. */
export type JobAckOutcome = 'acknowledged' | 'superseded';

/**
 * The stamp of one claim of a workflow job, as `dequeue` returns it: pass it back to
 * `complete`, `fail`, `suspend` or `defer` so the write applies only while this claim is
 * still the job's running attempt. A fence of another job is refused (`INVALID_ARGUMENT`).
 */
export interface JobFence {
  /** The job the claim is of. */
  jobId: string;
  /** The attempt the claim started (1-based). */
  attempt: number;
  /** When the claim started the attempt (a `Date`; Unix ms is accepted too). */
  startedAt: Date | number;
  /** The job's claim sequence number at this claim (never given back). */
  claimSeq: number;
}

/** One stage of `enqueueParallel(jobs)`. */
export interface WorkflowJobSpec {
  /** The workflow run. */
  workflowRunId: string;
  /** The workflow (the job's task). */
  workflowId: string;
  /** The stage of the run: at most one job row per (run, stage); enqueueing again replaces it. */
  stageId: string;
  /** The workflow definition version the run is pinned to. */
  definitionVersion?: string | null;
  /** Any JSON value (default `null`); `fairnessGroupBy` reads the group from it. */
  payload?: unknown;
  /** Higher runs first (a whole number, default 0). */
  priority?: number | null;
  /** Claimable from this time (a `Date` or Unix ms; default now). */
  nextPollAt?: Date | number | null;
  /** Attempts allowed, the first included (default 3). */
  maxAttempts?: number | null;
}

/** A workflow job row (`dequeue`, `getJobsByWorkflowRun`). */
export interface WorkflowJob {
  /** The job's id. */
  id: string;
  /** Its queue. */
  queue: string;
  /** The workflow run. */
  workflowRunId: string;
  /** The workflow (the job's task). */
  workflowId: string;
  /** The stage of the run. */
  stageId: string;
  /** The definition version the run is pinned to. */
  definitionVersion: string | null;
  /** The fairness group read from the payload when it was enqueued. */
  groupKey: string | null;
  /** Its status. */
  status: JobStatus;
  /** Attempts counted so far (a deferred claim is given back). */
  attempt: number;
  /** Attempts allowed, the first included. */
  maxAttempts: number;
  /** The worker holding (or that last held) it. */
  workerId: string | null;
  /** The lease: the running attempt's last heartbeat, else its start. */
  lockedAt: Date | null;
  /** When the current or last attempt started. */
  startedAt: Date | null;
  /** When it is next claimable. */
  nextPollAt: Date;
  /** The last error recorded (a lease lost, a deferral's reason, a failure). */
  lastError: string | null;
  /** The payload, JSON-decoded. */
  payload: unknown;
  /** When it was enqueued. */
  createdAt: Date;
  /** Its latest change. */
  updatedAt: Date;
}

/** A claimed workflow job and its claim's fence. */
export interface Dequeued {
  /** The job as claimed (status `running`). */
  job: WorkflowJob;
  /** Pass it to the acks. */
  fence: JobFence & { startedAt: Date };
}
