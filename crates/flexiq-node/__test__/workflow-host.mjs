// A workflow host for workflow.test.mjs, run as a child process (`fork`): it opens the store
// named by its first argument, adopts the worker id of its second, and claims, touches and
// completes (fenced) the jobs of workflow `wf` until its parent sends "stop". It then reports
// what it did: each job's id, tenant, the claiming worker, the span it held the job (taken
// after the claim and before the ack, so inside the real running interval) and the ack's
// outcome.
import { Queue } from '../index.mjs';

const [url, name, cap] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const q = await Queue.connect({ url });
const view = q.workflowJobs({ fairnessGroupBy: 'tenant', fairnessCap: Number(cap) });
const adopted = view.adoptWorkerId(name);
let stop = false;
process.on('message', (m) => {
  if (m === 'stop') stop = true;
});
process.send({ ready: adopted });

const done = [];
while (!stop) {
  const d = await view.dequeue({ serves: [{ workflowId: 'wf' }] });
  if (d === null) {
    await sleep(5);
    continue;
  }
  const start = Date.now();
  await view.touchJob(d.job.id);
  await sleep(3);
  const end = Date.now();
  const outcome = await view.complete(d.job.id, d.fence);
  done.push({ id: d.job.id, tenant: d.job.groupKey, worker: d.job.workerId, start, end, outcome });
}
await q.close();
process.send({ done }, () => process.disconnect());
