// The workflow view (`queue.workflowJobs`) on every store: the whole surface, records and
// fences, replacement in place, fairness, both lease tiers, run-wide calls, bad input, and a
// host loop of two processes sharing one store.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { describe, it } from 'node:test';

import { WorkflowJobs } from '../index.mjs';
import { BACKENDS, rejectsCode, storeFixture, throwsCode, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A stage of run `run` of workflow `wf`. */
const stage = (run, stageId, extra = {}) => ({ workflowRunId: run, workflowId: 'wf', stageId, ...extra });

for (const backend of BACKENDS) {
  describe(`workflow view on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('options, getters and adoptWorkerId', async () => {
      const q = await store.open();
      const plain = q.workflowJobs();
      assert.ok(plain instanceof WorkflowJobs);
      assert.equal(plain.queueName, 'workflow');
      assert.equal(plain.fairnessGroupBy, null);
      assert.equal(plain.fairnessCap, null);
      assert.equal(typeof plain.workerId, 'string');
      assert.equal(plain.adoptWorkerId('host-1'), 'host-1');
      assert.equal(plain.workerId, 'host-1');
      const own = q.workflowJobs({ fairnessGroupBy: 'tenant.id', fairnessCap: 2, workerId: 'mine', queue: 'wf-q' });
      assert.equal(own.fairnessGroupBy, 'tenant.id');
      assert.equal(own.fairnessCap, 2);
      assert.equal(own.queueName, 'wf-q');
      assert.equal(own.adoptWorkerId('host-2'), 'mine', 'a configured worker id is kept');
      assert.equal(own.workerId, 'mine');
      const nulls = q.workflowJobs({ fairnessGroupBy: null, fairnessCap: null, workerId: null, queue: null });
      assert.equal(nulls.queueName, 'workflow');
      assert.equal(nulls.fairnessGroupBy, null);
      assert.throws(() => new WorkflowJobs(), TypeError);
    });

    it('enqueueParallel, getJobsByWorkflowRun, dequeue and a fenced complete', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ workerId: 'w1' });
      const before = Date.now();
      const ids = await view.enqueueParallel([
        stage('run-1', 'a', { payload: { n: 1 }, definitionVersion: 'v1', priority: 5 }),
        stage('run-1', 'b', { payload: [1, 2], maxAttempts: 5, definitionVersion: null, priority: null, nextPollAt: null }),
      ]);
      assert.equal(ids.length, 2);
      assert.deepEqual(await view.enqueueParallel([]), []);

      const rows = await view.getJobsByWorkflowRun('run-1');
      assert.deepEqual(rows.map((r) => r.id).sort(), [...ids].sort());
      const a = rows.find((r) => r.stageId === 'a');
      assert.equal(a.id, ids[0]);
      assert.equal(a.queue, 'workflow');
      assert.equal(a.workflowRunId, 'run-1');
      assert.equal(a.workflowId, 'wf');
      assert.equal(a.definitionVersion, 'v1');
      assert.equal(a.groupKey, null);
      assert.equal(a.status, 'pending');
      assert.equal(a.attempt, 0);
      assert.equal(a.maxAttempts, 3);
      assert.equal(a.workerId, null);
      assert.equal(a.lockedAt, null);
      assert.equal(a.startedAt, null);
      assert.equal(a.lastError, null);
      assert.deepEqual(a.payload, { n: 1 });
      for (const k of ['nextPollAt', 'createdAt', 'updatedAt']) {
        assert.ok(a[k] instanceof Date, `${k} is a Date`);
        assert.ok(a[k].getTime() >= before - 1_000);
      }
      const b = rows.find((r) => r.stageId === 'b');
      assert.deepEqual(b.payload, [1, 2]);
      assert.equal(b.maxAttempts, 5);
      assert.equal(b.definitionVersion, null);

      // Priority 5 first.
      const d = await view.dequeue();
      assert.equal(d.job.id, ids[0]);
      assert.equal(d.job.status, 'running');
      assert.equal(d.job.attempt, 1);
      assert.equal(d.job.workerId, 'w1');
      assert.ok(d.job.startedAt instanceof Date);
      assert.ok(d.job.lockedAt instanceof Date);
      assert.deepEqual(Object.keys(d.fence).sort(), ['attempt', 'claimSeq', 'jobId', 'startedAt']);
      assert.equal(d.fence.jobId, d.job.id);
      assert.equal(d.fence.attempt, 1);
      assert.equal(d.fence.claimSeq, 1);
      assert.ok(d.fence.startedAt instanceof Date);
      assert.equal(d.fence.startedAt.getTime(), d.job.startedAt.getTime());

      assert.equal(await view.complete(d.job.id, d.fence), 'acknowledged');
      assert.equal(await view.complete(d.job.id, d.fence), 'superseded', 'the attempt is over');
      // A fence whose startedAt is Unix ms works as well as a Date.
      const d2 = await view.dequeue();
      assert.equal(d2.job.id, ids[1]);
      assert.equal(await view.complete(d2.job.id, { ...d2.fence, startedAt: d2.fence.startedAt.getTime() }), 'acknowledged');
      assert.equal(await view.dequeue(), null);
      const done = await view.getJobsByWorkflowRun('run-1');
      assert.deepEqual(done.map((r) => r.status), ['completed', 'completed']);
      assert.deepEqual(await view.getJobsByWorkflowRun('no-such-run'), []);
      // The jobs are ordinary jobs of the queue.
      assert.equal(q.getJob(ids[0]).task, 'wf');
      assert.equal((await q.statsByQueue('workflow')).completed, 2);
    });

    it('enqueueParallel replaces a stage in place and supersedes its running attempt', async () => {
      const q = await store.open();
      const view = q.workflowJobs();
      const [id] = await view.enqueueParallel([stage('run-r', 's', { payload: { v: 1 } })]);
      const d = await view.dequeue();
      assert.equal(d.job.id, id);
      const [again] = await view.enqueueParallel([stage('run-r', 's', { payload: { v: 2 } })]);
      assert.equal(again, id, 'the row keeps its id');
      const [row] = await view.getJobsByWorkflowRun('run-r');
      assert.equal(row.status, 'pending');
      assert.equal(row.attempt, 0);
      assert.equal(row.workerId, null);
      assert.equal(row.lockedAt, null);
      assert.deepEqual(row.payload, { v: 2 });
      assert.equal(await view.complete(id, d.fence), 'superseded');
      assert.equal(await view.fail(id, 'late', true, d.fence), 'superseded');
      assert.equal(await view.suspend(id, new Date(Date.now() + 60_000), d.fence), 'superseded');
      assert.equal(await view.defer(id, new Date(Date.now() + 60_000), 'late', d.fence), 'superseded');
      const [unchanged] = await view.getJobsByWorkflowRun('run-r');
      assert.equal(unchanged.status, 'pending');
      assert.deepEqual(unchanged.payload, { v: 2 });
      // Unfenced acks of a job that is not running change nothing.
      assert.equal(await view.complete(id), 'acknowledged');
      assert.equal((await view.getJobsByWorkflowRun('run-r'))[0].status, 'pending');
      // A completed stage is replaced too.
      const d2 = await view.dequeue();
      assert.equal(await view.complete(id, d2.fence), 'acknowledged');
      await view.enqueueParallel([stage('run-r', 's')]);
      assert.equal((await view.getJobsByWorkflowRun('run-r'))[0].status, 'pending');
    });

    it('fail, suspend, defer and touchJob', async () => {
      const q = await store.open();
      const view = q.workflowJobs();
      const ids = await view.enqueueParallel(['f', 'r', 's', 'd'].map((s) => stage('run-x', s, { payload: { s } })));
      const claims = new Map();
      for (let i = 0; i < 4; i++) {
        const d = await view.dequeue();
        claims.set(d.job.stageId, d);
      }
      const byStage = async () => new Map((await view.getJobsByWorkflowRun('run-x')).map((r) => [r.stageId, r]));

      // fail without shouldRetry: failed for good.
      assert.equal(await view.fail(claims.get('f').job.id, 'boom', undefined, claims.get('f').fence), 'acknowledged');
      // fail with shouldRetry: back to pending for a later attempt (unfenced form).
      assert.equal(await view.fail(claims.get('r').job.id, 'flaky', true), 'acknowledged');
      const later = new Date(Date.now() + 3_600_000);
      assert.equal(await view.suspend(claims.get('s').job.id, later, claims.get('s').fence), 'acknowledged');
      const lockedBefore = claims.get('d').job.lockedAt.getTime();
      await sleep(5);
      await view.touchJob(claims.get('d').job.id);
      const touched = (await byStage()).get('d');
      assert.equal(touched.status, 'running');
      assert.ok(touched.lockedAt.getTime() >= lockedBefore);
      assert.equal(await view.defer(claims.get('d').job.id, later, 'version not served', claims.get('d').fence), 'acknowledged');

      const rows = await byStage();
      assert.equal(rows.get('f').status, 'failed');
      assert.match(rows.get('f').lastError, /boom/);
      assert.equal(rows.get('r').status, 'pending');
      assert.match(rows.get('r').lastError, /flaky/);
      assert.equal(rows.get('r').attempt, 1);
      assert.equal(rows.get('s').status, 'suspended');
      assert.equal(rows.get('s').nextPollAt.getTime(), later.getTime());
      assert.equal(rows.get('d').status, 'pending');
      assert.equal(rows.get('d').attempt, 0, 'a deferral gives the attempt back');
      assert.equal(rows.get('d').nextPollAt.getTime(), later.getTime());
      assert.match(rows.get('d').lastError, /version not served/);
      // touchJob of a job that is not running is a no-op; of an unknown one NOT_FOUND.
      await view.touchJob(ids[0]);
      await rejectsCode(assert, () => view.touchJob(UNKNOWN), 'NOT_FOUND');
      await rejectsCode(assert, () => view.complete(UNKNOWN), 'NOT_FOUND');
    });

    it('dequeue serves (workflow, version) pairs and the given queues', async () => {
      const q = await store.open();
      const view = q.workflowJobs();
      const other = q.workflowJobs({ queue: 'other' });
      await view.enqueueParallel([
        { workflowRunId: 'r1', workflowId: 'A', stageId: 's', definitionVersion: 'v1' },
        { workflowRunId: 'r2', workflowId: 'B', stageId: 's', definitionVersion: 'v2' },
      ]);
      const [elsewhere] = await other.enqueueParallel([{ workflowRunId: 'r3', workflowId: 'A', stageId: 's' }]);
      assert.equal(await view.dequeue({ serves: [{ workflowId: 'A', definitionVersion: 'v2' }] }), null);
      assert.equal(await view.dequeue({ serves: [{ workflowId: 'C' }] }), null);
      const b = await view.dequeue({ serves: [{ workflowId: 'B', definitionVersion: null }] });
      assert.equal(b.job.workflowId, 'B');
      assert.equal(b.job.definitionVersion, 'v2');
      const a = await view.dequeue({ serves: [{ workflowId: 'A', definitionVersion: 'v1' }], queues: [] });
      assert.equal(a.job.workflowRunId, 'r1');
      assert.equal(await view.dequeue(), null, "the view's own queue is drained");
      const o = await view.dequeue({ queues: ['other'] });
      assert.equal(o.job.id, elsewhere);
      assert.equal(o.job.queue, 'other');
    });

    it('fairness: at most fairnessCap running per group, groups served in turn', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ fairnessGroupBy: 'tenant', fairnessCap: 1 });
      const specs = [];
      for (let i = 0; i < 5; i++) specs.push(stage('big', `s${i}`, { payload: { tenant: 'big' } }));
      specs.push(stage('small', 's0', { payload: { tenant: 'small' } }));
      specs.push(stage('none', 's0', { payload: { other: 1 } }));
      await view.enqueueParallel(specs);
      const first = [];
      for (let i = 0; i < 3; i++) first.push(await view.dequeue());
      assert.deepEqual(first.map((d) => d.job.groupKey ?? '').sort(), ['', 'big', 'small']);
      assert.equal(await view.dequeue(), null, 'every group is at its cap');
      const big = first.find((d) => d.job.groupKey === 'big');
      assert.equal(await view.complete(big.job.id, big.fence), 'acknowledged');
      const next = await view.dequeue();
      assert.equal(next.job.groupKey, 'big');
      // A view without a cap ignores the groups.
      const free = q.workflowJobs({ fairnessGroupBy: 'tenant' });
      assert.equal((await free.dequeue()).job.groupKey, 'big');
    });

    it('releaseStaleJobs and expireRunawayJobs', async () => {
      const q = await store.open();
      const view = q.workflowJobs();
      const [id] = await view.enqueueParallel([stage('run-l', 's')]);
      assert.equal(await view.releaseStaleJobs(), 0, 'the default threshold is a minute');
      const d = await view.dequeue();
      await sleep(30);
      assert.equal(await view.releaseStaleJobs(10), 1);
      const [released] = await view.getJobsByWorkflowRun('run-l');
      assert.notEqual(released.status, 'running');
      assert.match(released.lastError, /LEASE_HEARTBEAT_LOST/);
      assert.equal(await view.complete(id, d.fence), 'superseded', 'the released claim is a zombie');

      await until(async () => (await view.dequeue()) !== null, 10_000, 'the released job claimable again');
      await sleep(30);
      await view.touchJob(id);
      assert.equal(await view.releaseStaleJobs(20), 0, 'touched: not stale');
      assert.equal(await view.expireRunawayJobs(10), 1, 'but past the absolute cap');
      const [expired] = await view.getJobsByWorkflowRun('run-l');
      assert.notEqual(expired.status, 'running');
      assert.match(expired.lastError, /LEASE_ABSOLUTE_CAP/);
      assert.equal(await view.expireRunawayJobs(10), 0);
    });

    it('cancelByRun and deleteByRunAndStages', async () => {
      const q = await store.open();
      const view = q.workflowJobs();
      await view.enqueueParallel(['a', 'b', 'c', 'd'].map((s) => stage('run-c', s)));
      await view.enqueueParallel([stage('run-keep', 'a')]);
      const d = await view.dequeue({});
      assert.equal(await view.complete(d.job.id, d.fence), 'acknowledged');
      const running = await view.dequeue();
      assert.equal(await view.cancelByRun('run-c'), 2, 'the two not started');
      assert.equal(await view.cancelByRun('run-c'), 0);
      assert.equal(await view.cancelByRun('no-such-run'), 0);
      const rows = await view.getJobsByWorkflowRun('run-c');
      const status = (id) => rows.find((r) => r.id === id).status;
      assert.equal(status(d.job.id), 'completed');
      assert.equal(status(running.job.id), 'running');
      assert.equal(rows.filter((r) => r.status === 'cancelled').length, 2);

      assert.equal(await view.deleteByRunAndStages('run-c', []), 0);
      assert.equal(await view.deleteByRunAndStages('run-c', [running.job.stageId, d.job.stageId, 'nope']), 2);
      assert.equal(await view.complete(running.job.id, running.fence), 'superseded', 'its row is gone');
      assert.equal((await view.getJobsByWorkflowRun('run-c')).length, 2);
      assert.equal((await view.getJobsByWorkflowRun('run-keep')).length, 1, 'other runs untouched');
    });

    it('bad input is INVALID_ARGUMENT and writes nothing', async () => {
      const q = await store.open();
      throwsCode(assert, () => q.workflowJobs({ fairnessCap: 0 }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ fairnessCap: 1.5 }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ fairnessCap: '2' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ fairnessGroupBy: '' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ fairnessGroupBy: 'a..b' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ queue: '' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ workerId: '' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs({ fairnessgroupby: 'x' }), 'INVALID_ARGUMENT');
      throwsCode(assert, () => q.workflowJobs('tenant'), 'INVALID_ARGUMENT');

      const view = q.workflowJobs();
      throwsCode(assert, () => view.adoptWorkerId(''), 'INVALID_ARGUMENT');
      throwsCode(assert, () => view.adoptWorkerId(7), 'INVALID_ARGUMENT');
      const bad = (j) => view.enqueueParallel([stage('run-bad', 'ok'), j]);
      await rejectsCode(assert, () => view.enqueueParallel('x'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.enqueueParallel([null]), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad({ workflowRunId: 'run-bad', workflowId: 'wf' }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', '')), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { stage: 'typo' })), 'INVALID_ARGUMENT', /no option "stage"/);
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { nextPollAt: 'tomorrow' })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { nextPollAt: new Date(NaN) })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { nextPollAt: -1 })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { maxAttempts: 0 })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { priority: 0.5 })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'x', { payload: 1n })), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => bad(stage('run-bad', 'ok')), 'INVALID_ARGUMENT', /twice/);
      assert.deepEqual(await view.getJobsByWorkflowRun('run-bad'), [], 'nothing was written');

      await rejectsCode(assert, () => view.dequeue('all'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.dequeue({ serve: [] }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.dequeue({ serves: 'A' }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.dequeue({ serves: [{ workflowId: 1 }] }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.dequeue({ serves: [{ workflowId: 'A', version: '1' }] }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.dequeue({ queues: [''] }), 'INVALID_ARGUMENT');

      const [id, otherId] = await view.enqueueParallel([stage('run-f', 'a'), stage('run-f', 'b')]);
      const d = await view.dequeue();
      const mine = d.job.id === id ? id : otherId;
      const theirs = mine === id ? otherId : id;
      const at = new Date(Date.now() + 60_000);
      await rejectsCode(assert, () => view.complete(theirs, d.fence), 'INVALID_ARGUMENT', new RegExp(`fence of job ${mine}`));
      await rejectsCode(assert, () => view.fail(theirs, 'e', false, d.fence), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.suspend(theirs, at, d.fence), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.defer(theirs, at, 'r', d.fence), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(mine, { jobId: mine }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(mine, { ...d.fence, extra: 1 }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(mine, { ...d.fence, attempt: 1.5 }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(mine, { ...d.fence, startedAt: 'now' }), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(mine, 'fence'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete(42), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.complete('garbage'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.fail(mine, 5), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.fail(mine, 'e', 'yes'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.suspend(mine), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.suspend(mine, 'later'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.suspend(mine, new Date(NaN)), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.suspend(mine, new Date(-1_000)), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.defer(mine, at, 7), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.defer(mine, at), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.touchJob(), 'INVALID_ARGUMENT');
      for (const v of [-1, 0, NaN, Infinity, 1.5, '60']) {
        await rejectsCode(assert, () => view.releaseStaleJobs(v), 'INVALID_ARGUMENT');
        await rejectsCode(assert, () => view.expireRunawayJobs(v), 'INVALID_ARGUMENT');
      }
      await rejectsCode(assert, () => view.expireRunawayJobs(), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.cancelByRun(''), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.cancelByRun(), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.deleteByRunAndStages('run-f', 'a'), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.deleteByRunAndStages('run-f', [''] ), 'INVALID_ARGUMENT');
      await rejectsCode(assert, () => view.getJobsByWorkflowRun(7), 'INVALID_ARGUMENT');

      const rows = await view.getJobsByWorkflowRun('run-f');
      assert.equal(rows.length, 2, 'nothing was deleted');
      assert.equal(rows.find((r) => r.id === mine).status, 'running', 'nothing was acked');
      assert.equal(rows.find((r) => r.id === theirs).status, 'pending');

      await q.close();
      await rejectsCode(assert, () => view.dequeue(), 'CLOSED');
      await rejectsCode(assert, () => view.complete(mine, d.fence), 'CLOSED');
      throwsCode(assert, () => q.workflowJobs(), 'CLOSED');
    });

    it('two host processes share the store: every job completed exactly once, caps held', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ fairnessGroupBy: 'tenant', fairnessCap: 1 });
      const host = new URL('./workflow-host.mjs', import.meta.url);
      const hosts = ['host-a', 'host-b'].map((name) => {
        const child = fork(host, [store.url, name, '1'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        const messages = [];
        const waiters = [];
        child.on('message', (m) => {
          messages.push(m);
          for (const w of waiters.splice(0)) w();
        });
        const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
        const next = async (key) => {
          for (;;) {
            const m = messages.find((x) => key in x);
            if (m) return m[key];
            await Promise.race([new Promise((r) => waiters.push(r)), exited.then((c) => assert.fail(`${name} exited (${c}) early`))]);
          }
        };
        return { name, child, next, exited };
      });
      try {
        for (const h of hosts) assert.equal(await h.next('ready'), h.name);
        const specs = [];
        for (let r = 0; r < 3; r++) {
          for (let s = 0; s < 10; s++) specs.push(stage(`run-${r}`, `s${s}`, { payload: { tenant: `t${(r * 10 + s) % 4}` } }));
        }
        const ids = await view.enqueueParallel(specs);
        assert.equal(new Set(ids).size, 30);
        await until(
          async () => {
            const all = (await Promise.all([0, 1, 2].map((r) => view.getJobsByWorkflowRun(`run-${r}`)))).flat();
            return all.every((j) => j.status === 'completed');
          },
          60_000,
          'every stage completed',
        );
        for (const h of hosts) h.child.send('stop');
        const done = await Promise.all(hosts.map((h) => h.next('done')));
        assert.deepEqual(await Promise.all(hosts.map((h) => h.exited)), [0, 0]);

        const acked = done.flat().filter((x) => x.outcome === 'acknowledged');
        assert.deepEqual(acked.map((x) => x.id).sort(), [...ids].sort(), 'each job acknowledged exactly once');
        hosts.forEach((h, i) => {
          assert.ok(done[i].length > 0, `${h.name} did some of the work`);
          for (const x of done[i]) assert.equal(x.worker, h.name, 'claims carry the adopted worker id');
        });
        // Within a tenant no two held spans overlap: the cap of 1 held across both processes.
        const spans = done.flat();
        for (const a of spans) {
          for (const b of spans) {
            if (a !== b && a.tenant === b.tenant) {
              assert.ok(a.end <= b.start || b.end <= a.start, `tenant ${a.tenant}: jobs ${a.id} and ${b.id} ran at once`);
            }
          }
        }
        const rows = (await Promise.all([0, 1, 2].map((r) => view.getJobsByWorkflowRun(`run-${r}`)))).flat();
        for (const r of rows) assert.equal(r.attempt, 1, `job ${r.id} ran once`);
      } finally {
        for (const h of hosts) if (h.child.exitCode === null) h.child.kill();
        await Promise.all(hosts.map((h) => h.exited));
      }
    });
  });
}
