// `claimAhead` on the workflow view, on every store: an ack claims the host's next job in the
// same store call, the next dequeue gets it, a held job no one dequeues goes back without
// counting the attempt, and a non-boolean option is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, storeFixture, throwsCode, until } from './helpers.mjs';

const stage = (run, stageId) => ({ workflowRunId: run, workflowId: 'wf', stageId, payload: { s: stageId } });
const running = async (view, run) => (await view.getJobsByWorkflowRun(run)).filter((j) => j.status === 'running');

for (const backend of BACKENDS) {
  describe(`workflow claimAhead on ${backend.name}`, () => {
    const store = storeFixture(backend);

    it('a host loop takes the job its ack claimed', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ workerId: 'h1', claimAhead: true });
      await view.enqueueParallel(['a', 'b', 'c'].map((s) => stage('r', s)));
      let got = await view.dequeue();
      const done = [];
      while (got) {
        done.push(got.job.stageId);
        assert.equal(await view.complete(got.job.id, got.fence), 'acknowledged');
        const held = await running(view, 'r');
        assert.ok(held.length <= 1 && held.every((j) => j.workerId === 'h1'));
        got = await view.dequeue();
        if (held.length && got?.job.id !== held[0].id) {
          // Only a held job the host was too slow to take (over a second) goes back.
          const back = (await view.getJobsByWorkflowRun('r')).find((j) => j.id === held[0].id);
          assert.match(back.lastError ?? '', /^deferred: claimed ahead/, 'the dequeue answers with the held job');
        }
      }
      assert.deepEqual(done.sort(), ['a', 'b', 'c']);
      const rows = await view.getJobsByWorkflowRun('r');
      assert.ok(rows.every((j) => j.status === 'completed' && j.attempt === 1));
    });

    it('a held job no one dequeues goes back', async () => {
      const q = await store.open();
      const view = q.workflowJobs({ workerId: 'h1', claimAhead: true });
      await view.enqueueParallel([stage('r', 'a'), stage('r', 'b')]);
      const got = await view.dequeue();
      await view.complete(got.job.id, got.fence);
      const [held] = await running(view, 'r');
      assert.ok(held, 'the other stage is held');
      await until(async () => (await running(view, 'r')).length === 0);
      const back = (await view.getJobsByWorkflowRun('r')).find((j) => j.id === held.id);
      assert.equal(back.status, 'pending');
      assert.match(back.lastError, /^deferred: claimed ahead/);
      const again = await view.dequeue();
      assert.deepEqual([again.job.id, again.job.attempt], [held.id, 1]);
    });

    it('claimAhead must be a boolean', async () => {
      const q = await store.open();
      for (const bad of ['yes', 1, {}]) throwsCode(assert, () => q.workflowJobs({ claimAhead: bad }), 'INVALID_ARGUMENT');
    });
  });
}
