// Worker A of zombie.test.mjs, a process of its own: `node zombie-host.mjs <store url>
// <marker dir>`. Its `zombie.work` handler writes `started`, waits for `release` (bounded, so
// a forgotten process does not linger), writes `finished` and returns `{ by: 'zombie-a' }`.
// Once the handler has finished it stops the worker (which writes the pending ack first) and
// prints the worker's counters as one JSON line.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Queue } from '../index.mjs';

const [url, markers] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(name, ms) {
  const end = Date.now() + ms;
  while (!existsSync(join(markers, name))) {
    if (Date.now() > end) return false;
    await sleep(10);
  }
  return true;
}

const q = await Queue.connect({ url });
q.task('zombie.work', async () => {
  writeFileSync(join(markers, 'started'), '');
  await waitFor('release', 60_000);
  writeFileSync(join(markers, 'finished'), '');
  return { by: 'zombie-a' };
});
const worker = q.worker({ workerId: 'zombie-a', concurrency: 1, prefetch: 0, lease: 1, maintenance: false });
const run = worker.run();
await worker.ready;
if (!(await waitFor('finished', 90_000))) throw new Error('the zombie.work handler never finished');
const counters = await worker.stop();
await run;
await q.close();
process.stdout.write(`${JSON.stringify(counters)}\n`);
