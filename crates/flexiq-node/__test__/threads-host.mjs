// A process that uses flexiq only from worker threads, for awaited-calls.test.mjs:
// `node threads-host.mjs <store url>`. Its main thread never loads the addon; three worker
// threads in turn each open a queue, await 20 enqueues, start 10 more and exit with those
// still in flight. It prints one JSON line: the ids the workers saw committed.
import { Worker } from 'node:worker_threads';

const [url] = process.argv.slice(2);
const INDEX = new URL('../index.mjs', import.meta.url).href;

const body = `
  const { parentPort, workerData } = require('node:worker_threads');
  (async () => {
    const { Queue } = await import(workerData.index);
    const q = await Queue.connect({ url: workerData.url });
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => q.enqueue('t', { i })));
    for (let i = 0; i < 10; i++) q.enqueue('t', { late: i }).catch(() => {});
    parentPort.postMessage(ids);
    process.exit(0);
  })();
`;

const ids = [];
for (let round = 0; round < 3; round++) {
  await new Promise((resolve, reject) => {
    const w = new Worker(body, { eval: true, workerData: { index: INDEX, url } });
    w.on('message', (got) => ids.push(...got));
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker thread exited with ${code}`))));
  });
}
console.log(JSON.stringify({ ids }));
