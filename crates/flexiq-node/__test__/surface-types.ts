// Type-checked by `tsc -p tsconfig.json --noEmit`: the hand-written `index.d.ts` against the
// declarations napi generates from the addon (`native.d.ts`), so the two cannot drift. A
// mismatch is a compile error naming the method or option (`surface.test.mjs` checks the
// same declarations against what the JavaScript layer really exports).
import type {
  BackoffOptions,
  ChildDependency,
  Dependencies,
  DependenciesOptions,
  Dequeued,
  DequeueOptions,
  EnqueueOptions,
  FlowNode,
  JobFence,
  JobFilterWide,
  JobScheduler,
  JobSchedulerRepeat,
  JobTemplate,
  JobTemplateOptions,
  ListJobSchedulersOptions,
  Queue,
  RepeatOptions,
  TaskOptions,
  WorkflowJob,
  WorkflowJobs,
  WorkflowJobsOptions,
  WorkflowJobSpec,
  WorkflowServes,
} from '../index.js';
import type {
  BackoffOptions as NativeBackoffOptions,
  ChildDependencyRecord,
  DependenciesOptions as NativeDependenciesOptions,
  DependenciesRecord,
  FlowNodeInput,
  DequeueOptions as NativeDequeueOptions,
  JobOptions,
  JobSchedulerRecord,
  ListFilter,
  ListJobSchedulersOptions as NativeListJobSchedulersOptions,
  NativeQueue,
  SchedulerRepeat,
  SchedulerTemplate,
  SchedulerTemplateOptions,
  NativeWorkflowJobs,
  TaskSpec,
  WorkflowDequeued,
  WorkflowFence,
  WorkflowJobInput,
  WorkflowJobRecord,
  WorkflowJobsOptions as NativeWorkflowJobsOptions,
  WorkflowServes as NativeWorkflowServes,
} from '../native.js';
import type { InternalMethod, ReshapedMethod } from '../forwarded.js';

/** `true` when `A` and `B` are the same type (not merely assignable). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Names in `A` missing from `B` (`never` when none). */
type Missing<A, B> = Exclude<keyof A, keyof B>;
/** Fails to compile unless `T` is `never`; the error shows what `T` holds. */
type None<T extends never> = T;

// ---- methods ----

/** Queue methods the JS layer adds over the addon: the worker side, aliases and event listeners. */
type JsOnly =
  | 'on'
  | 'once'
  | 'off'
  | 'task'
  | 'worker'
  | 'shutdown'
  | 'replay'
  | 'replayHistory'
  | 'purgeQueue'
  | 'pause'
  | 'resume'
  | 'pausedQueues'
  | 'statsForQueue';

type QueueMembers = keyof Queue;
type NativeMembers = keyof NativeQueue;

// Every addon method is on the Queue (declared in index.d.ts, or forwarded and typed by the
// interface merged into it) unless it is internal, and every Queue member is the addon's or
// a known JS one.
export type AddonMethodsMissingFromQueue = None<Exclude<NativeMembers, QueueMembers | InternalMethod>>;
export type QueueMembersUnknownToAddon = None<Exclude<QueueMembers, NativeMembers | JsOnly>>;
// The lists above and in forwarded.d.ts hold only real names: an internal method is the
// addon's and not the Queue's, a reshaped one is declared on both.
export type StaleJsOnly = None<Exclude<JsOnly, QueueMembers> | Extract<JsOnly, NativeMembers>>;
export type StaleInternal = None<Exclude<InternalMethod, NativeMembers> | Extract<InternalMethod, QueueMembers>>;
export type StaleReshaped = None<Exclude<ReshapedMethod, QueueMembers & NativeMembers>>;

type PassThrough = Exclude<QueueMembers & NativeMembers, ReshapedMethod>;
type Fn = (...args: never[]) => unknown;
/** What a caller may pass per `index.d.ts` the addon accepts, and what it returns fits the promise. */
type Fits<K extends PassThrough> = Queue[K] extends Fn
  ? NativeQueue[K] extends Fn
    ? Parameters<Queue[K]> extends Parameters<NativeQueue[K]>
      ? ReturnType<NativeQueue[K]> extends ReturnType<Queue[K]>
        ? true
        : false
      : false
    : false
  : Same<Queue[K], NativeQueue[K]>;
export type PassThroughSignaturesDiffer = None<{ [K in PassThrough]: Fits<K> extends true ? never : K }[PassThrough]>;

// ---- option objects ----

// Same option names; the JS layer only widens types (a Date for a time, an object for metadata).
export type EnqueueOptionsDrift = None<Missing<EnqueueOptions, JobOptions> | Missing<JobOptions, EnqueueOptions>>;
export type JobFilterDrift = None<Missing<JobFilterWide, ListFilter> | Missing<ListFilter, JobFilterWide>>;
export type TaskOptionsDrift = None<Missing<TaskOptions, TaskSpec> | Exclude<Missing<TaskSpec, TaskOptions>, 'name'>>;
export type BackoffDrift = None<Same<BackoffOptions, NativeBackoffOptions> extends true ? never : 'BackoffOptions'>;
// Options passed through unchanged keep the addon's types.
export type EnqueueOptionTypesDiffer = None<
  {
    [K in Exclude<keyof JobOptions, 'runAt' | 'metadata'>]: Same<EnqueueOptions[K], JobOptions[K]> extends true ? never : K;
  }[Exclude<keyof JobOptions, 'runAt' | 'metadata'>]
>;

// ---- flows ----

// A flow node keeps the addon's names; the JS layer adds `children` and lists the tree with a
// `parent` index instead.
export type FlowNodeDrift = None<Exclude<Missing<FlowNode, FlowNodeInput>, 'children'> | Exclude<Missing<FlowNodeInput, FlowNode>, 'parent'>>;
export type ChildDependencyDrift = None<Missing<ChildDependency, ChildDependencyRecord> | Missing<ChildDependencyRecord, ChildDependency>>;
export type DependenciesDrift = None<Missing<Dependencies, DependenciesRecord> | Missing<DependenciesRecord, Dependencies>>;
export type DependenciesOptionsDrift = None<
  Missing<DependenciesOptions, NativeDependenciesOptions> | Missing<NativeDependenciesOptions, DependenciesOptions>
>;
export type FlowPolicyDiffers = None<Same<FlowNode['onFailure'], FlowNodeInput['onFailure']> extends true ? never : 'onFailure'>;

// ---- job schedulers ----

// The rule, the template and the scheduler keep the addon's names both ways (the JS layer
// takes `Date`s, encodes and decodes JSON and gives absent values as `null`), and a template's
// options are the enqueue options of the same name and type.
export type RepeatOptionsDrift = None<Missing<RepeatOptions, SchedulerRepeat> | Missing<SchedulerRepeat, RepeatOptions>>;
export type SchedulerRepeatDrift = None<Missing<JobSchedulerRepeat, SchedulerRepeat> | Missing<SchedulerRepeat, JobSchedulerRepeat>>;
export type JobTemplateDrift = None<Missing<JobTemplate, SchedulerTemplate> | Missing<SchedulerTemplate, JobTemplate>>;
export type JobTemplateOptionsDrift = None<
  Missing<JobTemplateOptions, SchedulerTemplateOptions> | Missing<SchedulerTemplateOptions, JobTemplateOptions>
>;
export type TemplateOptionTypesDiffer = None<
  {
    [K in Exclude<keyof SchedulerTemplateOptions, 'metadata'>]: Same<JobTemplateOptions[K], SchedulerTemplateOptions[K]> extends true
      ? never
      : K;
  }[Exclude<keyof SchedulerTemplateOptions, 'metadata'>]
>;
export type JobSchedulerDrift = None<Missing<JobScheduler, JobSchedulerRecord> | Missing<JobSchedulerRecord, JobScheduler>>;
export type ListJobSchedulersOptionsDrift = None<
  Missing<ListJobSchedulersOptions, NativeListJobSchedulersOptions> | Missing<NativeListJobSchedulersOptions, ListJobSchedulersOptions>
>;
// What a scheduler reads back can be upserted again as it is.
export type SchedulerNotReupsertable = None<
  | (JobSchedulerRepeat extends RepeatOptions ? never : 'repeat')
  | (JobScheduler['template'] extends JobTemplate ? never : 'template')
>;

// ---- the workflow view ----

/**
 * WorkflowJobs methods whose arguments or results the JS layer reshapes: payloads encoded,
 * `Date`s to Unix ms and back, fences' `startedAt`, absent fields to `null`. The others pass
 * through with the addon's signature.
 */
type WorkflowReshaped =
  | 'enqueueParallel'
  | 'dequeue'
  | 'complete'
  | 'fail'
  | 'suspend'
  | 'defer'
  | 'releaseStaleJobs'
  | 'getJobsByWorkflowRun'
  | 'fairnessGroupBy'
  | 'fairnessCap';

export type ViewMethodsMissing = None<Exclude<keyof NativeWorkflowJobs, keyof WorkflowJobs>>;
export type ViewMembersUnknownToAddon = None<Exclude<keyof WorkflowJobs, keyof NativeWorkflowJobs>>;
export type StaleWorkflowReshaped = None<Exclude<WorkflowReshaped, keyof WorkflowJobs>>;
type ViewPassThrough = Exclude<keyof WorkflowJobs, WorkflowReshaped>;
type ViewFits<K extends ViewPassThrough> = WorkflowJobs[K] extends Fn
  ? NativeWorkflowJobs[K] extends Fn
    ? Parameters<WorkflowJobs[K]> extends Parameters<NativeWorkflowJobs[K]>
      ? ReturnType<NativeWorkflowJobs[K]> extends ReturnType<WorkflowJobs[K]>
        ? true
        : false
      : false
    : false
  : Same<WorkflowJobs[K], NativeWorkflowJobs[K]>;
export type ViewPassThroughSignaturesDiffer = None<
  { [K in ViewPassThrough]: ViewFits<K> extends true ? never : K }[ViewPassThrough]
>;
// The reshaped records keep the addon's field names.
export type WorkflowJobSpecDrift = None<Missing<WorkflowJobSpec, WorkflowJobInput> | Missing<WorkflowJobInput, WorkflowJobSpec>>;
export type WorkflowJobDrift = None<Missing<WorkflowJob, WorkflowJobRecord> | Missing<WorkflowJobRecord, WorkflowJob>>;
export type JobFenceDrift = None<Missing<JobFence, WorkflowFence> | Missing<WorkflowFence, JobFence>>;
export type DequeuedDrift = None<Missing<Dequeued, WorkflowDequeued> | Missing<WorkflowDequeued, Dequeued>>;
// The view's option objects keep the addon's names (the JS layer only admits `null`s).
export type WorkflowJobsOptionsDrift = None<
  Missing<WorkflowJobsOptions, NativeWorkflowJobsOptions> | Missing<NativeWorkflowJobsOptions, WorkflowJobsOptions>
>;
export type DequeueOptionsDrift = None<Missing<DequeueOptions, NativeDequeueOptions> | Missing<NativeDequeueOptions, DequeueOptions>>;
export type WorkflowServesDrift = None<Missing<WorkflowServes, NativeWorkflowServes> | Missing<NativeWorkflowServes, WorkflowServes>>;
