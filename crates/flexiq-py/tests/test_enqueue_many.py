"""Queue.enqueue_many: one atomic batch over the native batch enqueue, with apply_async's
options per job; one bad job refuses the whole batch and nothing is written."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import uuid

import pytest

from flexiq import InvalidArgument, JobResult, Queue, QueueFull, TaskRevoked


def test_batch_runs_and_keeps_order(queue: Queue) -> None:
    @queue.task(name="em.add")
    def add(a: int, b: int = 0) -> int:
        return a + b

    jobs = queue.enqueue_many(
        [{"task": add, "args": [i], "kwargs": {"b": 10}} for i in range(5)] + [{"task": "em.add", "args": (7,)}]
    )
    assert all(isinstance(j, JobResult) for j in jobs) and len({j.id for j in jobs}) == 6
    with queue.worker(concurrency=2):
        assert [j.result(timeout=20) for j in jobs] == [10, 11, 12, 13, 14, 7]


def test_options_per_job_match_apply_async(queue: Queue) -> None:
    @queue.task(name="em.opts", queue="q-default", priority=1, max_retries=7, timeout=30, group_key="g0")
    def f() -> None:
        return None

    dep = f.delay()
    eta = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
    jobs = queue.enqueue_many(
        [
            {"task": f},  # the task's defaults
            {
                "task": f,
                "delay": 60,
                "priority": 9,
                "unique_key": "u1",
                "metadata": {"who": "me"},
                "depends_on": [dep],
                "queue": "q-other",
                "max_retries": 2,
                "timeout": 1.5,
                "retry_backoff": 4,
                "group_key": "g1",
            },
            {"task": "em.by-name", "eta": eta, "args": [1], "kwargs": {"k": "v"}},
        ]
    )
    plain, custom, by_name = (queue.get_job(j.id) for j in jobs)
    assert plain is not None and custom is not None and by_name is not None
    assert (plain.queue, plain.priority, plain.max_retries, plain.timeout_ms, plain.group_key) == (
        "q-default",
        1,
        7,
        30_000,
        "g0",
    )
    assert (custom.queue, custom.priority, custom.max_retries, custom.timeout_ms, custom.group_key) == (
        "q-other",
        9,
        2,
        1_500,
        "g1",
    )
    assert custom.run_at >= custom.created_at + 59_000
    assert custom.metadata is not None and json.loads(custom.metadata) == {"who": "me"}
    assert custom.depends_on == [dep.id] and custom.unique_key == "u1"
    assert by_name.task == "em.by-name" and by_name.queue == "default"
    assert abs(by_name.run_at - int(eta.timestamp() * 1000)) < 5
    assert json.loads(by_name.payload) == {"args": [1], "kwargs": {"k": "v"}}
    # a unique key in a later batch returns the live job holding it
    again = queue.enqueue_many([{"task": f, "unique_key": "u1"}])
    assert [j.id for j in again] == [jobs[1].id]


def _assert_nothing_written(queue: Queue, before: dict) -> None:
    assert queue.stats() == before, "a refused batch wrote nothing"


def test_one_bad_job_refuses_the_whole_batch(queue: Queue) -> None:
    queue.enqueue("em.seed")
    before = queue.stats()
    good = {"task": "em.ok", "args": [1]}
    bad_jobs = [
        ({"task": "em.ok", "delay": -1}, "delay"),
        ({"task": "em.ok", "delay": math.nan}, "finite"),
        ({"task": "em.ok", "timeout": math.inf}, "finite"),
        ({"task": "em.ok", "priority": 1.5}, "priority"),
        ({"task": "em.ok", "priority": 2**40}, "priority"),
        ({"task": "em.ok", "max_retries": -1}, "max_retries"),
        ({"task": "em.ok", "max_retries": "3"}, "max_retries"),
        ({"task": "em.ok", "metadata": "[1]"}, "metadata"),
        ({"task": "em.ok", "depends_on": ["not-a-uuid"]}, "not-a-uuid"),
        ({"task": "em.ok", "delay": 1, "eta": 5}, "delay or eta"),
        ({"task": "em.ok", "args": "abc"}, "args"),
        ({"task": "em.ok", "kwargs": [1]}, "kwargs"),
        ({"task": "em.ok", "args": [object()]}, "JSON"),
        ({"task": "em.ok", "colour": "red"}, "colour"),
        ({"task": ""}, "task name"),
        ({"task": 5}, "task"),
        ({"args": [1]}, "task"),
        ("em.ok", "dict"),
    ]
    for bad, word in bad_jobs:
        with pytest.raises(InvalidArgument) as e:
            queue.enqueue_many([good, good, bad, good])
        assert "item 2" in str(e.value) and word in str(e.value), str(e.value)
        _assert_nothing_written(queue, before)


def test_a_store_side_refusal_rolls_the_batch_back(queue: Queue) -> None:
    before = queue.stats()
    missing = str(uuid.uuid4())
    with pytest.raises(InvalidArgument) as e:
        queue.enqueue_many([{"task": "em.ok"}, {"task": "em.ok", "depends_on": [missing]}, {"task": "em.ok"}])
    assert missing in str(e.value)
    _assert_nothing_written(queue, before)
    queue.revoke_task("em.revoked")
    with pytest.raises(TaskRevoked):
        queue.enqueue_many([{"task": "em.ok"}, {"task": "em.revoked"}])
    _assert_nothing_written(queue, before)


def test_max_pending_refuses_a_batch_that_would_pass_it(store_url: str) -> None:
    q = Queue(url=store_url, max_pending=3)
    try:
        q.enqueue("em.t")
        with pytest.raises(QueueFull):
            q.enqueue_many([{"task": "em.t"} for _ in range(3)])
        assert q.count_pending_by_queue("default") == 1
        assert len(q.enqueue_many([{"task": "em.t"}, {"task": "em.t"}])) == 2
    finally:
        q.close()


def test_bad_batches(queue: Queue) -> None:
    for bad in ([], "em.t", {"task": "em.t"}, 5, None):
        with pytest.raises(InvalidArgument):
            queue.enqueue_many(bad)  # type: ignore[arg-type]
    assert sum(queue.stats().values()) == 0
    # any iterable of dicts is a batch
    assert len(queue.enqueue_many({"task": "em.t", "args": [i]} for i in range(3))) == 3


def test_aenqueue_many(queue: Queue) -> None:
    async def main() -> None:
        jobs = await queue.aenqueue_many([{"task": "em.a", "priority": 2}, {"task": "em.a"}])
        assert [j.status for j in jobs] == ["pending", "pending"]
        with pytest.raises(InvalidArgument):
            await queue.aenqueue_many([{"task": "em.a", "delay": -5}])
        assert (await queue.astats())["pending"] == 2

    asyncio.run(main())
