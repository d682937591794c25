// Type-checked by `tsc -p tsconfig.json --noEmit`: the package's declarations as a user sees them.
import { FlexiqError, Queue, reservedSettingPrefixes, type Job, type Page, type Stats } from '../index.js';

async function usage(): Promise<void> {
  const q = new Queue({ dbPath: 'tasks.db', namespace: 'app', maxPending: 10_000, retention: { taskLogs: 86_400 } });
  const pg = new Queue({ url: 'postgres://postgres@127.0.0.1:5432/test?schema=app', autoMigrate: false });
  await pg.migrate();

  q.task<{ to: string }, { sent: boolean }>('send', async (payload, ctx) => {
    ctx.signal.throwIfAborted();
    await ctx.publish({ to: payload.to });
    await ctx.log(`sending to ${payload.to}`, 'info');
    await ctx.setProgress(50);
    return { sent: ctx.attempt > 0 };
  }, { timeout: 30 });

  const id: string = await q.enqueue('send', { to: 'a@b.c' }, { queue: 'mail', delay: 5, metadata: { tenant: 't1' }, backoff: { base: 1, max: 60 } });
  const ids: string[] = await q.enqueueMany([{ task: 'send', payload: { to: 'x' } }, { task: 'send', options: { priority: 2, runAt: new Date() } }]);
  const job: Job | null = q.getJob(id);
  const status: string | undefined = job?.status;
  const pending: number = q.countPendingByQueue('mail');
  const worker = q.worker({ concurrency: 8, queues: ['mail'] });
  const running = worker.run();
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
  await worker.close();
  const counters = await running;
  void [ids, status, pending, next, stats, all, dead, windowMs, eff, ok, prefixes, floor, counters.succeeded];
  await q.close();
  await pg.close();
}

void usage;
