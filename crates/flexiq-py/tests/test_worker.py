"""The in-process worker: start() returns once the worker is ready (or raises why it could
not start), run_worker() / run() stop from another thread through Worker.stop() or
Queue.shutdown(), and task rate limits never overwrite a queue's limit."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Dict, List

import pytest

import flexiq
from flexiq import Closed, Conflict, FlexiqTimeout, InvalidArgument, Queue


def _register(queue: Queue) -> None:
    @queue.task(name="wk.echo")
    def echo(x: int) -> int:
        return x


def test_start_returns_once_the_worker_is_registered_and_claiming(queue: Queue) -> None:
    _register(queue)
    w = queue.worker(concurrency=2, worker_id="wk-ready")
    assert w.id == "wk-ready" and w.ready is False
    assert w.start() is w
    try:
        # start() returned, so the worker is in the registry already: no waiting needed.
        assert w.ready is True
        assert [row["id"] for row in queue.list_workers()] == ["wk-ready"]
        assert queue.enqueue("wk.echo", args=[3]).result(timeout=20) == 3
        w.wait_ready(timeout=1)  # already ready: returns at once
    finally:
        counters = w.stop()
    assert w.ready is False
    assert counters is not None and counters["succeeded"] == 1


def test_a_default_worker_id_is_known_before_it_runs(queue: Queue) -> None:
    _register(queue)
    w = queue.worker()
    assert w.id and w.id != queue.worker().id
    with w:
        assert [row["id"] for row in queue.list_workers()] == [w.id]


def test_start_on_a_closed_queue_raises_closed(store_url: str) -> None:
    q = Queue(url=store_url)
    _register(q)
    w = q.worker(concurrency=1)
    q.close()
    with pytest.raises(Closed) as e:
        w.start(ready_timeout=60)
    assert e.value.code == "CLOSED"
    assert w.ready is False
    # run() in the foreground says the same at once
    with pytest.raises(Closed):
        q.worker(concurrency=1).run()


def test_bad_ready_timeouts_are_invalid_argument(queue: Queue) -> None:
    _register(queue)
    for bad in (0, -1, math.nan, math.inf):
        w = queue.worker(concurrency=1)
        with pytest.raises(InvalidArgument):
            w.start(ready_timeout=bad)
        w.stop()
    w = queue.worker(concurrency=1)
    with pytest.raises(TypeError):
        w.wait_ready(timeout="soon")  # type: ignore[arg-type]


def test_wait_ready_times_out_for_a_worker_nobody_runs(queue: Queue) -> None:
    _register(queue)
    w = queue.worker(concurrency=1)
    with pytest.raises(FlexiqTimeout) as e:
        w.wait_ready(timeout=0.05)
    assert w.id in str(e.value)


def test_a_worker_runs_once(queue: Queue) -> None:
    _register(queue)
    w = queue.worker(concurrency=1).start()
    w.stop()
    with pytest.raises(Conflict) as e:
        w.run()
    assert w.id in str(e.value)
    with pytest.raises(flexiq.FlexiqError):
        w.start()


def test_run_worker_stops_through_queue_shutdown(queue: Queue) -> None:
    _register(queue)
    out: List[Dict[str, int]] = []
    t = threading.Thread(target=lambda: out.append(queue.run_worker(concurrency=2)))
    t.start()
    try:
        # The job completing proves the worker is running (and so registered for shutdown).
        assert queue.enqueue("wk.echo", args=[7]).result(timeout=20) == 7
    finally:
        queue.shutdown(timeout=30)
        t.join(30)
    assert not t.is_alive(), "run_worker returned after queue.shutdown()"
    assert out and out[0]["succeeded"] == 1
    # A worker started after shutdown runs normally.
    with queue.worker(concurrency=1):
        assert queue.enqueue("wk.echo", args=[8]).result(timeout=20) == 8


def test_foreground_run_stops_through_worker_stop_and_wait_ready(queue: Queue) -> None:
    _register(queue)
    w = queue.worker(concurrency=1)
    out: List[Dict[str, int]] = []
    t = threading.Thread(target=lambda: out.append(w.run(install_signal_handlers=False)))
    t.start()
    try:
        w.wait_ready(timeout=60)
        assert w.ready
        assert queue.enqueue("wk.echo", args=[1]).result(timeout=20) == 1
    finally:
        w.stop()
        t.join(30)
    assert not t.is_alive() and out[0]["succeeded"] == 1


def test_shutdown_stops_every_started_worker(queue: Queue) -> None:
    _register(queue)
    workers = [queue.worker(concurrency=1, worker_id=f"wk-many-{i}").start() for i in range(2)]
    assert sorted(row["id"] for row in queue.list_workers()) == ["wk-many-0", "wk-many-1"]
    queue.shutdown(timeout=30)
    assert [w.ready for w in workers] == [False, False]
    assert all(w.counters is not None for w in workers)

    async def main() -> None:
        w = queue.worker(concurrency=1).start()
        await queue.ashutdown(timeout=30)
        assert w.counters is not None

    asyncio.run(main())


def test_task_rate_limit_sets_an_unlimited_queue_and_agrees_with_an_equal_one(queue: Queue) -> None:
    @queue.task(name="rl.t", queue="rl-q", rate_limit="100/s")
    def t() -> None:
        return None

    assert queue.queue_config("rl-q")["rate_limit"] is None
    with queue.worker(concurrency=1):
        pass
    assert queue.queue_config("rl-q")["rate_limit"] == "100/s"
    # an equal limit (another worker starting) is fine and changes nothing
    with queue.worker(concurrency=1):
        pass
    assert queue.queue_config("rl-q")["rate_limit"] == "100/s"


def test_task_rate_limit_never_overwrites_a_different_queue_limit(queue: Queue) -> None:
    @queue.task(name="rl.conflict", queue="rl-set", rate_limit="100/s")
    def t() -> None:
        return None

    queue.set_queue_rate_limit("rl-set", "5/m")
    for start in (lambda w: w.start(), lambda w: w.run()):
        w = queue.worker(concurrency=1)
        with pytest.raises(Conflict) as e:
            start(w)
        msg = str(e.value)
        assert "rl.conflict" in msg and "rl-set" in msg and "100/s" in msg and "5/m" in msg, msg
    assert queue.queue_config("rl-set")["rate_limit"] == "5/m", "the queue's limit was kept"
    assert queue.list_workers() == [], "no worker started"
    queue.clear_queue_rate_limit("rl-set")
    with queue.worker(concurrency=1):
        pass
    assert queue.queue_config("rl-set")["rate_limit"] == "100/s"


def test_two_tasks_asking_different_limits_of_one_queue_conflict(queue: Queue) -> None:
    @queue.task(name="rl.a", queue="rl-shared", rate_limit="10/s")
    def a() -> None:
        return None

    @queue.task(name="rl.b", queue="rl-shared", rate_limit="20/s")
    def b() -> None:
        return None

    with pytest.raises(Conflict) as e:
        queue.worker(concurrency=1)
    assert "rl.a" in str(e.value) and "rl.b" in str(e.value) and "rl-shared" in str(e.value)
    assert queue.queue_config("rl-shared")["rate_limit"] is None
