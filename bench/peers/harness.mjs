// The shared half of the Node drivers of the side-by-side harness (flexiq's Node SDK driver in
// crates/flexiq-node/bench, BullMQ's and graphile-worker's here): the arguments, and the timing
// of each of the four commands, so that every system is timed by the same code and only the
// calls into the system differ. `cargo xtask bench --peers` copies it beside the peers' drivers.
import { parseArgs } from 'node:util';

/** The command, the store URL and the numeric options, checked; exits 2 on bad usage. */
export function harnessArgs(script) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      jobs: { type: 'string', default: '20000' },
      batch: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '1' },
      rate: { type: 'string', default: '100' },
    },
  });
  const [command, url] = positionals;
  const args = {
    command,
    url,
    jobs: Number(values.jobs),
    batch: Number(values.batch),
    concurrency: Number(values.concurrency),
    rate: Number(values.rate),
  };
  const { jobs, batch, concurrency, rate } = args;
  if (url === undefined || !(jobs > 0 && batch > 0 && concurrency > 0 && rate > 0)) {
    console.error(
      `usage: ${script} enqueue-single|enqueue-batch|drain|latency URL [--jobs N] [--batch B] [--concurrency C] [--rate R]`,
    );
    process.exit(2);
  }
  return args;
}

/** The q-quantile of `xs` (0 for none). */
export const quantile = (xs, q) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * q)];
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Calls `addBatch(start, end)` for every batch of `batch` job numbers below `jobs`. */
export async function inBatches(jobs, batch, addBatch) {
  for (let start = 0; start < jobs; start += batch) await addBatch(start, Math.min(start + batch, jobs));
}

/** `enqueue-single`: `add(i)` awaited for each job in turn. */
export async function timeSingles(jobs, add) {
  const calls = [];
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const t = performance.now();
    await add(i);
    calls.push(performance.now() - t);
  }
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, call_p50_ms: quantile(calls, 0.5) };
}

/** `enqueue-batch`: the time of `fill()`. */
export async function timeBatches(jobs, batch, fill) {
  const t0 = performance.now();
  await fill();
  const secs = (performance.now() - t0) / 1000;
  return { secs, rate: jobs / secs, batch };
}

/** What a drain's handler calls first (`started`), and `all`, which settles at the last. */
export function handlerStarts(jobs) {
  const starts = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  const started = () => {
    starts.push(performance.now());
    if (starts.length === jobs) finished();
  };
  return { starts, all, started };
}

/** `drain`'s line: from `t0` to the last handler start, and the longest gap between two. */
export function drainResult(t0, end, starts, jobs, concurrency) {
  const secs = (end - t0) / 1000;
  const sorted = [...starts].sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < sorted.length; i++) gap = Math.max(gap, sorted[i] - sorted[i - 1]);
  return { secs, rate: jobs / secs, concurrency, max_gap_ms: gap };
}

/** What a latency handler calls with its job number (`arrived(i)`), and `all`. */
export function arrivals(jobs) {
  const sent = new Array(jobs).fill(0);
  const waits = [];
  let finished;
  const all = new Promise((r) => (finished = r));
  const arrived = (i) => {
    waits.push(performance.now() - sent[i]);
    if (waits.length === jobs) finished();
  };
  return { sent, waits, all, arrived };
}

/** `latency`: `add(i)` for each job at `rate` per second, noting when each was sent; the
 * line once `wait()` (every handler ran) settles. */
export async function timeLatency(jobs, rate, { sent, waits, all }, add) {
  const calls = [];
  const every = 1000 / rate;
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) {
    const pause = t0 + i * every - performance.now();
    if (pause > 0) await sleep(pause);
    const t = performance.now();
    sent[i] = t;
    await add(i);
    calls.push(performance.now() - t);
  }
  await all;
  return { rate, p50_ms: quantile(waits, 0.5), p99_ms: quantile(waits, 0.99), enqueue_p50_ms: quantile(calls, 0.5) };
}

/** The driver of `command` among `commands`; exits 2 for an unknown one. */
export function commandOf(commands, command) {
  if (!(command in commands)) {
    console.error(`unknown command ${command}: one of ${Object.keys(commands).join(', ')}`);
    process.exit(2);
  }
  return commands[command];
}
