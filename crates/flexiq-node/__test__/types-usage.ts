// Type-checked by `tsc -p tsconfig.json --noEmit`: the package's declarations as a user sees them.
import {
  EVENT_KINDS,
  FlexiqError,
  Queue,
  reservedSettingPrefixes,
  type AbortReasonCode,
  type ChildDependency,
  type DedupMode,
  type Dependencies,
  type CatchUp,
  type EnqueueOutcome,
  type EventKind,
  type EventStream,
  type QueueEvent,
  type FlowNode,
  type FlowPolicy,
  type Job,
  type JobScheduler,
  type JobTemplate,
  type LogEntry,
  type MetricBucket,
  type Page,
  type QueueControls,
  type RepeatOptions,
  type Stats,
  type TaskMetrics,
  type WorkerInfo,
  type WorkerStats,
  type Dequeued,
  type JobAckOutcome,
  type WorkflowJob,
  type WorkflowJobs,
} from '../index.js';

async function usage(): Promise<void> {
  const q = new Queue({ dbPath: 'tasks.db', namespace: 'app', maxPending: 10_000, retention: { taskLogs: 86_400 } });
  const pg: Queue = await Queue.connect({ url: 'postgres://postgres@127.0.0.1:5432/test?schema=app', autoMigrate: false });
  await pg.migrate();

  q.task<{ to: string }, { sent: boolean }>('send', async (payload, ctx) => {
    ctx.signal.throwIfAborted();
    await ctx.publish({ to: payload.to });
    await ctx.log(`sending to ${payload.to}`, 'info');
    await ctx.setProgress(50);
    return { sent: ctx.attempt > 0 };
  }, { timeout: 30, softTimeout: 20 });
  q.task('tidy', async (_p, ctx) => {
    await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    const code: AbortReasonCode | string = (ctx.signal.reason as FlexiqError).code;
    return code === 'SOFT_TIMEOUT';
  });

  const id: string = await q.enqueue('send', { to: 'a@b.c' }, { queue: 'mail', delay: 5, metadata: { tenant: 't1' }, backoff: { base: 1, max: 60 } });
  const ids: string[] = await q.enqueueMany([{ task: 'send', payload: { to: 'x' } }, { task: 'send', options: { priority: 2, runAt: new Date() } }]);
  const job: Job | null = q.getJob(id);
  const status: string | undefined = job?.status;
  const pending: number = q.countPendingByQueue('mail');
  const worker = q.worker({ concurrency: 8, queues: ['mail'] });
  const running = worker.run();
  await worker.ready;
  try {
    const r = await q.result<{ sent: boolean }>(id, { timeoutMs: 5_000, pollMs: 100 });
    const sent: boolean | undefined = r?.sent;
    void sent;
  } catch (e) {
    if (e instanceof FlexiqError && (e.code === 'JOB_FAILED' || e.code === 'TIMEOUT')) console.error(e.jobError);
  }
  for await (const partial of q.stream<{ to: string }>(id)) console.log(partial.to);
  const page: Page<Job> = await q.listJobsAfter({ status: 'pending', limit: 100 }, null);
  const next: string | null = page.nextCursor;
  const stats: Stats = await q.statsByQueue('mail');
  const all: Record<string, Stats> = await q.statsAllQueues();
  const dead = await q.deadLettersAfter(10, null);
  const preview = await q.dryRunRetention({ deadLetter: 3_600 });
  const windowMs: number | null | undefined = preview.windows.deadLetter;
  const eff = q.effectiveRetention();
  const ok: boolean = q.setSettingIf('theme', null, JSON.stringify({ dark: true }));
  const prefixes: string[] = reservedSettingPrefixes();
  const floor: number = q.minContract();
  q.setQueueRateLimit('mail', '10/s');
  q.clearQueueRateLimit('mail');
  q.setQueueConcurrency('mail', 4);
  q.clearQueueConcurrency('mail');
  const controls: QueueControls = q.queueConfig('mail');
  const cancelled: number = await q.purge('mail');
  const alsoCancelled: number = await q.purgeQueue('mail');
  q.revokeTask('old');
  const lifted: boolean = q.unrevokeTask('old');
  const revoked: string[] = q.revokedTasks();
  const inState: boolean = await q.isJobInState('0190aaaa-0000-7000-8000-000000000000', 'pending');
  try {
    await q.enqueue('old', null);
  } catch (e) {
    if (e instanceof FlexiqError && e.code === 'TASK_REVOKED') console.error(e.task);
  }
  const perTask: Record<string, TaskMetrics> = await q.metrics('send', 60_000);
  const p95: number | undefined = perTask.send?.p95Ms;
  const buckets: MetricBucket[] = await q.metricsTimeseries(null, 3_600_000, 60_000);
  const workers: WorkerInfo[] = await q.listWorkers();
  const logs: LogEntry[] = await q.jobLogs(id);
  const claims: number | undefined = job?.claimSeq;
  const busy: string[] | undefined = workers[0]?.currentJobs;
  void [controls, cancelled, alsoCancelled, lifted, revoked, inState, p95, buckets, workers, logs, claims, busy];
  const cleaned: string[] = await q.clean('mail', 'completed', 86_400_000, 500);
  const drained: number = await q.drain('mail', true);
  let left: number = await q.obliterate('mail', { force: true, count: 500 });
  while (left > 0) left = await q.obliterate('mail');
  const removed: string[] = await q.remove(id, { removeChildren: false });
  const retried: number = (await q.retryJobs('mail', 'dead', 100)) + (await q.retryJobs('mail'));
  const maxed: boolean = await q.isMaxed('mail');
  const ttlMs: number = await q.rateLimitTtl('mail');
  void [cleaned, drained, removed, retried, maxed, ttlMs, await q.removeOrphans()];
  const lifo: string = await q.enqueue('send', { to: 'c@d.e' }, { queue: 'mail', priority: 1, lifo: true });
  await q.changeDelay(lifo, 60_000);
  await q.promote(lifo);
  await q.changePriority(lifo, 5, { lifo: true });
  await q.changePriority(lifo, -5);
  let promoted: number = await q.promoteJobs('mail', 100);
  while (promoted > 0) promoted = await q.promoteJobs('mail');
  q.setQueueMaxStalled('mail', 3);
  const stallBudget: number | null = q.queueConfig('mail').maxStalledCount;
  q.clearQueueMaxStalled('mail');
  const stalls: number | undefined = q.getJob(lifo)?.stallCount;
  void [stallBudget, stalls];
  q.task<null, { total: number; skipped: string[] }>('sum', async (_p, ctx) => {
    const values: Record<string, number> = await ctx.childrenValues<number>();
    const ignored: Record<string, string> = await ctx.ignoredFailures();
    return { total: Object.values(values).reduce((a, b) => a + b, 0), skipped: Object.keys(ignored) };
  });
  const policy: FlowPolicy = 'ignore_dependency';
  const tree: FlowNode = {
    task: 'sum',
    payload: null,
    options: { queue: 'totals', priority: 2 },
    children: [
      { task: 'count', payload: { n: 1 }, options: { queue: 'counts' }, onFailure: policy },
      { task: 'count', payload: { n: 2 }, onFailure: 'continue_parent', children: [{ task: 'fetch', id: '01890000-0000-7000-8000-000000000001' }] },
    ],
  };
  const flowIds: string[] = await q.addFlow(tree);
  const deps: Dependencies = await q.getDependencies(flowIds[0]!, { limit: 10 });
  const firstChild: ChildDependency | undefined = deps.processed[0] ?? deps.unprocessed[0];
  const childError: string | null | undefined = firstChild?.error;
  const more: Dependencies = await q.getDependencies(flowIds[0]!, { after: deps.nextAfter, limit: null });
  const detached: boolean = await q.removeChildDependency(flowIds[1]!);
  const mode: DedupMode = 'debounce';
  const outcome: EnqueueOutcome = await q.enqueueOutcome('send', { to: 'x' }, { dedup: { id: 'send:x', mode, ttlMs: 5_000, extend: true, replace: true } });
  const deduplicated: boolean = outcome.deduplicated;
  await q.enqueue('send', { to: 'y' }, { dedup: { id: 'send:y', mode: 'keep_last_if_active' } });
  const holder: string | null = await q.dedupJobId('send:x');
  const freed: boolean = await q.deleteDedupKey('send:x');
  void [childError, more, detached, deduplicated, holder, freed, outcome.id];
  const weekdays: RepeatOptions = { cron: '0 9 * * MON-FRI', tz: 'Europe/Berlin', startAtMs: new Date(), catchUp: 'none' };
  const report: JobTemplate = { task: 'send', payload: { to: 'ops' }, options: { queue: 'mail', timeout: 30, metadata: { kind: 'report' } } };
  const sched: JobScheduler = await q.upsertJobScheduler('daily-report', weekdays, report);
  const nextRun: number | null = sched.nextRunMs;
  const catchUp: CatchUp = sched.repeat.catchUp;
  await q.upsertJobScheduler(sched.id, sched.repeat, sched.template);
  await q.upsertJobScheduler('tick', { everyMs: 60_000, limit: 10, catchUp: 'all', catchUpMax: 5 }, { task: 'send' });
  const found: JobScheduler | null = await q.getJobScheduler('tick');
  const schedulers: Page<JobScheduler> = await q.listJobSchedulers({ limit: 10, after: null });
  const nextSchedulers = await q.listJobSchedulers({ after: schedulers.nextCursor });
  const schedulerCount: number = await q.countJobSchedulers();
  const dropped: boolean = await q.removeJobScheduler('tick');
  void [nextRun, catchUp, found?.template.payload, nextSchedulers.items, schedulerCount, dropped];
  const stream: EventStream = q.events({ kinds: ['completed', 'deploy.done'], blockMs: 1_000, batch: 64 });
  for await (const ev of stream) {
    const kind: EventKind = ev.kind;
    const jobOf: string | null = ev.jobId;
    const at: number = ev.atMs;
    void [kind, jobOf, at, ev.data, ev.attempt, ev.task, ev.queue, ev.name];
    if (kind === 'completed') break;
  }
  const resumed = q.events({ after: '42' });
  const first: IteratorResult<QueueEvent, undefined> = await resumed.next();
  await resumed.return();
  void [first, q.events({ fromStart: true }), q.events()];
  const onCompleted = (ev: QueueEvent) => console.log(ev.jobId);
  q.on('completed', onCompleted).once('deploy.done', async (ev) => ev.data).on('error', (err) => console.error(err));
  q.off('completed', onCompleted);
  const eventId: string = await q.publishEvent('deploy.done', { version: 7 }, { jobId: id, queue: 'mail' });
  const page2: QueueEvent[] = await q.readEvents({ after: eventId, blockMs: 5_000, limit: 100 });
  const lastId: string | null = await q.lastEventId();
  const trimmed: number = await q.trimEvents(1_000, { maxAgeMs: 86_400_000 });
  await q.setEventsEnabled(true);
  const eventsOn: boolean = await q.eventsEnabled();
  const kinds: readonly EventKind[] = EVENT_KINDS;
  const trimming = q.worker({ eventsMaxLen: 50_000, eventsMaxAgeMs: 3_600_000 });
  void [page2, lastId, trimmed, eventsOn, kinds, trimming];
  const wf: WorkflowJobs = q.workflowJobs({ fairnessGroupBy: 'tenant.id', fairnessCap: 2, queue: 'workflow' });
  const groupBy: string | null = wf.fairnessGroupBy;
  const stamped: string = wf.adoptWorkerId('host-1');
  const stageIds: string[] = await wf.enqueueParallel([
    { workflowRunId: 'run-1', workflowId: 'etl', stageId: 'extract', payload: { tenant: { id: 't1' } }, nextPollAt: new Date() },
  ]);
  const claimed: Dequeued | null = await wf.dequeue({ serves: [{ workflowId: 'etl', definitionVersion: null }] });
  if (claimed) {
    const at: Date = claimed.fence.startedAt;
    const outcome: JobAckOutcome = await wf.complete(claimed.job.id, claimed.fence);
    await wf.defer(claimed.job.id, new Date(Date.now() + 1_000), 'version not served', claimed.fence);
    void [at, outcome];
  }
  const runJobs: WorkflowJob[] = await wf.getJobsByWorkflowRun('run-1');
  const polled: Date | undefined = runJobs[0]?.nextPollAt;
  const released: number = await wf.releaseStaleJobs();
  void [groupBy, stamped, stageIds, polled, released, await wf.expireRunawayJobs(3_600_000), await wf.cancelByRun('run-1')];
  await worker.close();
  const counters = await running;
  const stopped: WorkerStats | undefined = await q.worker().stop();
  void stopped;
  await q.shutdown();
  void [ids, status, pending, next, stats, all, dead, windowMs, eff, ok, prefixes, floor, counters.succeeded];
  await q.close();
  await pg.close();
}

void usage;
