// Flows (addFlow, getDependencies, removeChildDependency) and the handler side of them
// (ctx.childrenValues, ctx.ignoredFailures), on every store: a three-level flow across three
// queues, what each failure policy does to the parent, paging, detaching, and the bad input
// each call refuses with nothing written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BACKENDS, rejectsCode, storeFixture, until } from './helpers.mjs';

const UNKNOWN = '01890000-0000-7000-8000-000000000000';
const HOUR_S = 3_600;
const POLICIES = ['fail_parent', 'continue_parent', 'ignore_dependency', 'remove_dependency'];
const QUEUES = ['fa', 'fb', 'fc'];

/** A handler error that is not retried. */
function fatal(message) {
  const e = new Error(message);
  e.retryable = false;
  return e;
}

/** A node of queue `queue`. */
const node = (task, queue, extra = {}) => ({ task, options: { queue, maxRetries: 0 }, ...extra });

const ids = (children) => children.map((c) => c.id).sort();

for (const backend of BACKENDS) {
  describe(`flows on ${backend.name}`, () => {
    const store = storeFixture(backend);
    const work = (q) => store.work(q, { queues: QUEUES, concurrency: 4, prefetch: 0, pollInterval: 0.05 });

    it('runs a three-level flow across three queues; parents read childrenValues and ignoredFailures', async () => {
      const q = await store.open();
      q.task('num', async (p) => p.n)
        .task('quiet', async () => undefined)
        .task('bad', async () => {
          throw fatal('no good');
        })
        .task('mid', async (_p, ctx) => {
          const values = await ctx.childrenValues();
          return Object.values(values).reduce((a, b) => a + b, 0) * 10;
        })
        .task('sum', async (_p, ctx) => ({ values: await ctx.childrenValues(), ignored: await ctx.ignoredFailures() }));
      const tree = {
        ...node('sum', 'fa'),
        payload: { label: 'total' },
        children: [
          { ...node('num', 'fb'), payload: { n: 2 } },
          { ...node('mid', 'fc'), children: [{ ...node('num', 'fb'), payload: { n: 3 } }] },
          { ...node('bad', 'fc'), onFailure: 'ignore_dependency' },
          node('quiet', 'fa'),
        ],
      };
      const flow = await q.addFlow(tree);
      assert.equal(flow.length, 6);
      const [root, two, mid, three, bad, quiet] = flow;
      assert.deepEqual(
        flow.map((id) => [q.getJob(id).task, q.getJob(id).queue, q.getJob(id).status]),
        [
          ['sum', 'fa', 'waiting'],
          ['num', 'fb', 'pending'],
          ['mid', 'fc', 'waiting'],
          ['num', 'fb', 'pending'],
          ['bad', 'fc', 'pending'],
          ['quiet', 'fa', 'pending'],
        ],
        'ids in the order given: the root, then each child subtree in turn',
      );
      assert.deepEqual(q.getJob(root).payload, { label: 'total' });
      const before = await q.getDependencies(root);
      assert.deepEqual(ids(before.unprocessed), [two, mid, bad, quiet].sort());
      assert.deepEqual(before.unprocessed.find((c) => c.id === bad), {
        id: bad,
        queue: 'fc',
        task: 'bad',
        status: 'pending',
        policy: 'ignore_dependency',
        result: null,
        error: null,
      });
      assert.deepEqual([before.processed, before.ignored, before.failed, before.nextAfter], [[], [], [], null]);

      work(q);
      const out = await q.result(root, { timeoutMs: 30_000 });
      assert.deepEqual(out.values, { [two]: 2, [mid]: 30, [quiet]: null }, 'results decoded; none is null');
      assert.deepEqual(Object.keys(out.ignored), [bad]);
      assert.match(out.ignored[bad], /no good/);
      const deps = await q.getDependencies(root);
      assert.deepEqual(ids(deps.processed), [two, mid, quiet].sort());
      assert.equal(deps.processed.find((c) => c.id === mid).result, 30);
      assert.equal(deps.processed.find((c) => c.id === mid).policy, 'fail_parent', 'the default policy');
      assert.deepEqual([deps.ignored.length, deps.ignored[0].id, deps.ignored[0].status], [1, bad, 'failed']);
      assert.match(deps.ignored[0].error, /no good/);
      assert.deepEqual((await q.getDependencies(mid)).processed.map((c) => [c.id, c.result]), [[three, 3]]);
    });

    for (const policy of POLICIES) {
      it(`a failed child with onFailure ${policy} does to its parent what the policy says`, async () => {
        const q = await store.open();
        const seen = [];
        q.task('boom', async () => {
          throw fatal('boom went off');
        })
          .task('ok', async () => 'fine')
          .task('parent', async (_p, ctx) => {
            seen.push({ values: await ctx.childrenValues(), ignored: await ctx.ignoredFailures(), deps: await q.getDependencies(ctx.id) });
            return 'parent ran';
          });
        // The other child waits an hour, so only the policy can let the parent go early.
        const [parent, boom, other] = await q.addFlow({
          ...node('parent', 'fa'),
          children: [
            { ...node('boom', 'fb'), onFailure: policy },
            { ...node('ok', 'fc'), options: { queue: 'fc', delay: HOUR_S } },
          ],
        });
        work(q);
        await until(() => ['failed', 'dead'].includes(q.getJob(boom).status), 15_000, 'the child failed');
        if (policy === 'fail_parent') {
          await until(() => q.getJob(parent).status === 'failed', 15_000, 'the parent failed');
          assert.match(q.getJob(parent).lastError, new RegExp(boom));
          assert.match(q.getJob(parent).lastError, /boom went off/);
          const deps = await q.getDependencies(parent);
          assert.deepEqual([ids(deps.failed), ids(deps.unprocessed)], [[boom], [other]]);
          assert.deepEqual(seen, [], 'the parent never ran');
          return;
        }
        if (policy === 'continue_parent') {
          await until(() => q.getJob(parent).status === 'completed', 15_000, 'the parent ran at once');
          const [{ values, ignored, deps }] = seen;
          assert.deepEqual([values, ignored], [{}, {}]);
          assert.deepEqual([ids(deps.failed), ids(deps.unprocessed)], [[boom], [other]]);
          assert.match(deps.failed[0].error, /boom went off/);
          assert.equal(deps.failed[0].policy, 'continue_parent');
          return;
        }
        // ignore_dependency and remove_dependency: the parent waits for the other child.
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(q.getJob(parent).status, 'waiting');
        const waiting = await q.getDependencies(parent);
        if (policy === 'ignore_dependency') assert.deepEqual(ids(waiting.ignored), [boom]);
        else assert.deepEqual([waiting.ignored, waiting.failed, ids(waiting.unprocessed)], [[], [], [other]], 'the edge is gone');
        await q.promote(other);
        assert.equal(await q.result(parent, { timeoutMs: 15_000 }), 'parent ran');
        const [{ values, ignored, deps }] = seen;
        assert.deepEqual(values, { [other]: 'fine' });
        if (policy === 'ignore_dependency') {
          assert.deepEqual(Object.keys(ignored), [boom]);
          assert.match(ignored[boom], /boom went off/);
          assert.deepEqual(ids(deps.ignored), [boom]);
        } else {
          assert.deepEqual([ignored, deps.ignored, deps.failed, ids(deps.processed)], [{}, [], [], [other]]);
        }
      });
    }

    it('getDependencies pages through the children by child id', async () => {
      const q = await store.open();
      const children = Array.from({ length: 25 }, (_, n) => ({ task: 'c', payload: n, options: { queue: 'page', delay: HOUR_S } }));
      const [root, ...kids] = await q.addFlow({ task: 'root', options: { queue: 'page' }, children });
      const seen = [];
      const sizes = [];
      let after = null;
      do {
        const page = await q.getDependencies(root, { limit: 10, after });
        sizes.push(page.unprocessed.length);
        seen.push(...page.unprocessed.map((c) => c.id));
        after = page.nextAfter;
      } while (after !== null);
      assert.deepEqual(sizes, [10, 10, 5]);
      assert.deepEqual(seen, [...kids].sort(), 'every child once, in id order');
      assert.equal((await q.getDependencies(root)).unprocessed.length, 25, 'the default page holds them all');
      // A plain dependsOn edge is listed too, under its own policy.
      const plain = await q.enqueue('t', null, { queue: 'page', dependsOn: [kids[0]] });
      const [edge] = (await q.getDependencies(plain)).unprocessed;
      assert.deepEqual([edge.id, edge.policy], [kids[0], 'cancel_dependent']);
      assert.deepEqual(await q.getDependencies(kids[0]), { processed: [], unprocessed: [], ignored: [], failed: [], nextAfter: null });
    });

    it('removeChildDependency detaches an unfinished child and frees its parent', async () => {
      const q = await store.open();
      const [root, child, other] = await q.addFlow({
        task: 'root',
        options: { queue: 'detach' },
        children: [{ task: 'c', options: { queue: 'detach', delay: HOUR_S } }, { task: 'c', options: { queue: 'detach', delay: HOUR_S } }],
      });
      assert.equal(await q.removeChildDependency(child), true);
      assert.equal(q.getJob(root).status, 'waiting', 'another child still holds it');
      assert.deepEqual(ids((await q.getDependencies(root)).unprocessed), [other]);
      assert.equal(await q.removeChildDependency(other), true);
      assert.equal(q.getJob(root).status, 'pending', 'nothing holds it any more');
      assert.equal(q.getJob(child).status, 'pending', 'the child itself stays');
      assert.equal(await q.removeChildDependency(child), false, 'nothing waits on it now');
      assert.equal(await q.removeChildDependency(root), false, 'no job waits on the root');
      await rejectsCode(assert, () => q.removeChildDependency(UNKNOWN), 'NOT_FOUND');
    });

    it('a deep chain goes in as one flow', async () => {
      const q = await store.open();
      let tree = { task: 'leaf', options: { queue: 'deep' } };
      for (let n = 0; n < 999; n++) tree = { task: 'link', payload: n, options: { queue: 'deep' }, children: [tree] };
      const chain = await q.addFlow(tree);
      assert.equal(chain.length, 1_000);
      assert.equal(q.getJob(chain[0]).payload, 998);
      assert.equal(q.getJob(chain[999]).task, 'leaf');
      assert.equal(q.getJob(chain[999]).status, 'pending');
      assert.equal(q.getJob(chain[998]).status, 'waiting');
      assert.deepEqual((await q.getDependencies(chain[500])).unprocessed.map((c) => c.id), [chain[501]]);
    });

    it('refuses bad trees, ids, cursors and limits with INVALID_ARGUMENT and writes nothing', async () => {
      const q = await store.open();
      const bad = (fn, re) => rejectsCode(assert, fn, 'INVALID_ARGUMENT', re);
      const ok = node('c', 'bad');
      for (const tree of [null, undefined, 5, 'tree', [], [ok]]) await bad(() => q.addFlow(tree));
      await bad(() => q.addFlow({ payload: 1 }), /task/);
      await bad(() => q.addFlow({ task: 5 }), /task/);
      await bad(() => q.addFlow({ task: '' }), /task name/);
      await bad(() => q.addFlow({ ...ok, tsk: 'x' }), /tsk/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, chidren: [] }] }), /chidren/);
      await bad(() => q.addFlow({ ...ok, children: ok }), /children/);
      await bad(() => q.addFlow({ ...ok, children: [null] }), /flow node 1/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, onFailure: 'explode' }] }), /explode/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, onFailure: 'cancel_dependent' }] }), /cancel_dependent/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, onFailure: 5 }] }));
      await bad(() => q.addFlow({ ...ok, onFailure: 'fail_parent' }), /root/);
      await bad(() => q.addFlow({ ...ok, id: 'not-an-id' }), /not-an-id/);
      await bad(() => q.addFlow({ ...ok, id: UNKNOWN, children: [{ ...ok, id: UNKNOWN }] }), /cycle/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, namespace: 'elsewhere' }] }), /namespace/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { queue: 'bad', uniqueKey: 'k' } }] }), /unique key/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { dedup: { id: 'k', mode: 'simple' } } }] }), /dedup/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { queue: 'bad', delay: -1 } }] }), /delay/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { queue: 'bad', priority: NaN } }] }), /priority/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { queu: 'bad' } }] }), /queu/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, options: { queue: 'bad', dependsOn: ['nope'] } }] }), /nope/);
      await bad(() => q.addFlow({ ...ok, children: [{ ...ok, payload: 10n }] }), /payload of flow node 1/);
      const loop = { ...ok };
      loop.children = [loop];
      await bad(() => q.addFlow(loop), /at most 10000 jobs/);
      const wide = { ...ok, children: Array.from({ length: 10_000 }, () => ok) };
      await bad(() => q.addFlow(wide), /at most 10000 jobs/);

      const [root] = await q.addFlow({ ...node('r', 'dep'), children: [node('c', 'dep')] });
      for (const id of [7, null, undefined, 'garbage']) {
        await bad(() => q.getDependencies(id));
        await bad(() => q.removeChildDependency(id));
      }
      await rejectsCode(assert, () => q.getDependencies(UNKNOWN), 'NOT_FOUND');
      for (const limit of [NaN, Infinity, 1.5, '5', true, 0, -1, 10_001]) await bad(() => q.getDependencies(root, { limit }), /limit/);
      for (const after of ['garbage', '', 5, true]) await bad(() => q.getDependencies(root, { after }));
      await bad(() => q.getDependencies(root, { afte: UNKNOWN }), /afte/);
      for (const opts of ['x', 5, [], true]) await bad(() => q.getDependencies(root, opts));

      const stats = await q.stats();
      assert.equal(stats.pending + stats.waiting, 2, 'only the one good flow was written');
      assert.equal((await q.statsByQueue('bad')).pending, 0);
    });

    it('every flow call fails with CLOSED after close()', async () => {
      const q = await store.open();
      await q.close();
      for (const call of [() => q.addFlow({ task: 't' }), () => q.getDependencies(UNKNOWN), () => q.removeChildDependency(UNKNOWN)]) {
        await rejectsCode(assert, call, 'CLOSED');
      }
    });
  });
}
