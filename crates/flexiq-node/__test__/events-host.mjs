// A second process for events.test.mjs, run with `fork`: it opens the store named by its
// second argument and does what its first says, reporting over IPC. It ends by disconnecting
// from its parent without calling `process.exit`, so it exits only if nothing it started
// (a listener's reader, a waiting read) is left holding Node's event loop.
//
// - `run`: runs a worker for task `greet` and enqueues one job, reporting `{ id }`, then
//   waits for the job's result and shuts the worker and queue down.
// - `off`: listens for custom events with `on` and `once`, publishes one, and once it arrived
//   removes the `on` listener (the `once` one removed itself); the queue stays open.
// - `close`: leaves a listener, an iterator's `next()` and a 5-minute `readEvents` waiting,
//   then closes the queue and reports how the two reads ended.
import { Queue } from '../index.mjs';

const [mode, url] = process.argv.slice(2);
const q = await Queue.connect({ url });

if (mode === 'run') {
  q.task('greet', async () => 'hello');
  const worker = q.worker({ concurrency: 1, maintenance: false });
  worker.run();
  await worker.ready;
  const id = await q.enqueue('greet', { who: 'parent' });
  process.send({ id });
  await q.result(id, { timeoutMs: 30_000 });
  await q.shutdown();
} else if (mode === 'off') {
  const got = [];
  const arrived = new Promise((resolve) => {
    const listener = (ev) => {
      got.push(`on:${ev.name}`);
      q.off('custom', listener);
      resolve();
    };
    q.on('custom', listener);
  });
  q.once('custom', (ev) => got.push(`once:${ev.name}`));
  await q.publishEvent('ping', { from: 'child' });
  await arrived;
  process.send({ got });
} else if (mode === 'close') {
  q.on('completed', () => {});
  const iterator = q.events();
  const next = iterator.next();
  const after = (await q.lastEventId()) ?? undefined;
  const read = q.readEvents({ after, blockMs: 300_000 }).then(
    (events) => `resolved with ${events.length}`,
    (e) => e.code,
  );
  // Lets both reads reach the store before the close.
  await new Promise((r) => setTimeout(r, 200));
  await q.close();
  process.send({ next: await next, read: await read });
} else {
  throw new Error(`unknown mode ${mode}`);
}
process.disconnect();
