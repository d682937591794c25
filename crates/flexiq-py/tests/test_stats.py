"""Statistics and metrics: stats, stats_by_queue, stats_all_queues, metrics, metrics_timeseries."""

from __future__ import annotations

import pytest

from flexiq import InvalidArgument, Queue

SPEC_KEYS = {"pending", "running", "completed", "failed", "dead", "cancelled"}


def test_stats_shapes(queue: Queue) -> None:
    s = queue.stats()
    assert SPEC_KEYS <= set(s) and all(v == 0 for v in s.values())
    queue.enqueue("t", queue="a")
    queue.enqueue("t", queue="a")
    c = queue.enqueue("t", queue="b")
    queue.cancel_job(c.id)
    s = queue.stats()
    assert (s["pending"], s["cancelled"]) == (2, 1)
    by = queue.stats_by_queue()
    assert by["a"]["pending"] == 2 and by["b"]["cancelled"] == 1
    every = queue.stats_all_queues()
    assert {"a", "b"} <= set(every)
    assert every["a"] == by["a"] and every["b"] == by["b"]
    assert queue.stats_for_queue("a")["pending"] == 2


def test_stats_all_queues_shows_configured_queues_without_jobs(queue: Queue) -> None:
    queue.set_queue_concurrency("only-cap", 1)
    queue.set_queue_rate_limit("only-limit", "3/s")
    queue.pause("only-paused")
    queue.enqueue("t", queue="busy")
    every = queue.stats_all_queues()
    for name in ("only-cap", "only-limit", "only-paused"):
        assert name in every, f"configured empty queue {name} missing from {sorted(every)}"
        assert SPEC_KEYS <= set(every[name]) and all(n == 0 for n in every[name].values()), every[name]
    assert every["busy"]["pending"] == 1
    # stats_by_queue lists only queues holding jobs
    assert set(queue.stats_by_queue()) == {"busy"}


def test_metrics_aggregate_executions(queue: Queue) -> None:
    @queue.task(name="m.ok")
    def ok() -> None:
        return None

    @queue.task(name="m.bad", max_retries=0)
    def bad() -> None:
        raise RuntimeError("x")

    rs = [ok.delay() for _ in range(3)] + [bad.delay()]
    with queue.worker(concurrency=2):
        for r in rs[:3]:
            r.result(timeout=20)
        with pytest.raises(Exception):
            rs[3].result(timeout=20)
    m = queue.metrics()
    assert m["m.ok"]["count"] == 3 and m["m.ok"]["success_count"] == 3
    assert m["m.bad"]["failure_count"] == 1
    assert set(m["m.ok"]) == {"count", "success_count", "failure_count", "avg_ms", "p50_ms", "p95_ms", "p99_ms", "min_ms", "max_ms"}
    assert list(queue.metrics(task_name="m.ok")) == ["m.ok"]
    ts = queue.metrics_timeseries(since=600, bucket=60)
    assert sum(b["count"] for b in ts) == 4
    assert set(ts[0]) == {"timestamp", "count", "success", "failure", "avg_ms", "p50_ms", "p95_ms", "p99_ms"}
    assert len(queue.get_metrics(0)) == 4
    for bad_call in (lambda: queue.metrics(since=0), lambda: queue.metrics_timeseries(bucket=0), lambda: queue.metrics(since=-5)):
        with pytest.raises(InvalidArgument):
            bad_call()
