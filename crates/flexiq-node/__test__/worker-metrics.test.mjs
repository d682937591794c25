// A worker's Prometheus endpoint (`metricsBind`): served at `GET /metrics` while the worker
// runs, on the address `worker.metricsAddr` reports, and refused with INVALID_ARGUMENT when
// the address is not one. The endpoint does not depend on the store, so one store (SQLite)
// covers it.
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture } from './helpers.mjs';

/** The endpoint's status, content type and text, fetched with the stdlib HTTP client. */
function scrape(addr) {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/metrics', method: 'GET' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, contentType: res.headers['content-type'], text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `flexiq_worker_attempts_total` samples of a task and outcome, as `[labels, value]`. */
function attempts(text, task, outcome) {
  return text
    .split('\n')
    .filter((l) => l.startsWith('flexiq_worker_attempts_total{'))
    .filter((l) => l.includes(`task="${task}"`) && l.includes(`outcome="${outcome}"`))
    .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]);
}

const sqlite = BACKENDS.find((b) => b.name === 'sqlite');

describe('worker metrics endpoint on sqlite', () => {
  const store = storeFixture(sqlite);

  it('serves the attempts of a running worker on the address it bound', async () => {
    const q = await store.open();
    q.task('triple', async (p) => p * 3);
    const w = store.work(q, { workerId: 'node-metered', metricsBind: '127.0.0.1:0', concurrency: 2 });
    await w.ready;
    const addr = w.metricsAddr;
    assert.match(addr, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(addr, '127.0.0.1:0', 'port 0 asked for a free port; metricsAddr is the one chosen');
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await q.enqueue('triple', n));
    const results = [];
    for (const id of ids) results.push(await q.result(id, { timeoutMs: 10_000 }));
    assert.deepEqual(results, [3, 6, 9]);
    // An attempt is counted as its handler ends, before its ack makes the result visible.
    const { status, contentType, text } = await scrape(addr);
    assert.equal(status, 200);
    assert.match(contentType, /^application\/openmetrics-text/);
    assert.deepEqual(attempts(text, 'triple', 'completed'), [
      ['flexiq_worker_attempts_total{worker="node-metered",task="triple",outcome="completed"}', 3],
    ]);
    assert.deepEqual(attempts(text, 'triple', 'failed'), []);
    assert.match(text, /^flexiq_jobs\{.*status="completed".*\} 3$/m, 'the store-level gauges come along');
  });

  it('has no address without metricsBind', async () => {
    const q = await store.open();
    q.task('noop', async () => null);
    const w = store.work(q, { concurrency: 1 });
    await w.ready;
    assert.equal(w.metricsAddr, null);
  });

  it('stops at start when its metrics address is taken', async () => {
    const q = await store.open();
    q.task('noop', async () => null);
    const taken = createServer();
    await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const addr = `127.0.0.1:${taken.address().port}`;
    try {
      const w = q.worker({ metricsBind: addr, concurrency: 1 });
      // Caught at once: `run()` may reject before `ready` does.
      const ran = w.run().then(() => undefined, (e) => e);
      await rejectsCode(assert, () => w.ready, 'CLOSED');
      const e = await ran;
      assert.equal(e?.code, 'BACKEND', `run() should reject with BACKEND, got ${e}`);
      assert.ok(e.message.includes(addr), e.message);
      assert.equal(w.metricsAddr, null);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses a metricsBind that is not an address', async () => {
    const q = await store.open();
    q.task('noop', async () => null);
    for (const bad of [9100, true, ['127.0.0.1:9100'], { host: '127.0.0.1' }]) {
      await rejectsCode(assert, () => q.worker({ metricsBind: bad }), 'INVALID_ARGUMENT', /metricsBind must be a string/);
    }
    for (const bad of ['', '127.0.0.1', 'localhost:9100', '127.0.0.1:99999', ':9100']) {
      const e = await rejectsCode(assert, () => q.worker({ metricsBind: bad }), 'INVALID_ARGUMENT', /metricsBind/);
      assert.ok(e.message.includes(JSON.stringify(bad)), e.message);
    }
  });
});
