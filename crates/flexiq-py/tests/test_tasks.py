"""Tasks: the decorator, delay / apply_async, JobResult, serialization, sync and async
handlers, current_job(), retries with tracebacks."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time

import pytest

import flexiq
from flexiq import InvalidArgument, JobFailed, Queue, current_job


def test_delay_runs_sync_and_async_handlers_and_returns_results(queue: Queue) -> None:
    @queue.task()
    def add(a: int, b: int) -> int:
        return a + b

    @queue.task(name="mul_async")
    async def mul(a: int, b: int = 1) -> int:
        await asyncio.sleep(0.001)
        return a * b

    assert add.name.endswith("add") and mul.name == "mul_async"
    assert add(1, 2) == 3  # a direct call runs in-process
    r1 = add.delay(2, 3)
    r2 = mul.apply_async(args=(4,), kwargs={"b": 5})
    assert isinstance(r1, flexiq.JobResult) and r1.status == "pending"
    with queue.worker(concurrency=4):
        assert r1.result(timeout=20) == 5
        assert r2.result(timeout=20) == 20
    assert r1.status == "completed"
    assert queue.get_result(r1.id) == 5


def test_payload_is_json_args_kwargs(queue: Queue) -> None:
    @queue.task(name="t.json")
    def f(*a: object, **k: object) -> None:
        return None

    r = f.apply_async(args=[1, "x"], kwargs={"k": [1, 2]})
    job = queue.get_job(r.id)
    assert job is not None and job.task == "t.json"
    import json

    assert json.loads(job.payload) == {"args": [1, "x"], "kwargs": {"k": [1, 2]}}


def test_apply_async_options_reach_the_job(queue: Queue) -> None:
    @queue.task(name="opts", queue="q1", priority=3, max_retries=7, timeout=30)
    def f() -> None:
        return None

    dep = f.delay()
    r = f.apply_async(delay=60, priority=9, unique_key="u1", metadata={"who": "me"}, depends_on=[dep])
    job = queue.get_job(r.id)
    assert job is not None
    assert (job.queue, job.priority, job.max_retries, job.timeout_ms) == ("q1", 9, 7, 30_000)
    assert job.run_at >= job.created_at + 59_000
    assert job.metadata is not None and '"who"' in job.metadata
    assert job.depends_on == [dep.id]
    # the unique key deduplicates while the first job is live
    assert f.apply_async(unique_key="u1").id == r.id
    eta = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
    j2 = queue.get_job(f.apply_async(eta=eta).id)
    assert j2 is not None and abs(j2.run_at - int(eta.timestamp() * 1000)) < 5


def test_bad_task_options_and_arguments_are_typed_errors(queue: Queue) -> None:
    @queue.task(name="bad")
    def f(x: object = None) -> None:
        return None

    with pytest.raises(InvalidArgument):
        f.delay(object())  # not JSON
    with pytest.raises(InvalidArgument):
        f.apply_async(delay=-1)
    with pytest.raises(InvalidArgument):
        f.apply_async(delay=1, eta=time.time())
    with pytest.raises(InvalidArgument):
        f.apply_async(args="abc")
    with pytest.raises(InvalidArgument):
        f.apply_async(metadata="[1]")
    with pytest.raises(InvalidArgument):
        f.apply_async(depends_on=["not-a-uuid"])
    with pytest.raises(InvalidArgument):
        f.apply_async(priority=2**40)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        queue.task(name="r", rate_limit="fast")(lambda: None)
    with pytest.raises(InvalidArgument):
        queue.task(name="r2", rate_limit="5/s")(lambda: None)  # needs its own queue
    with pytest.raises(InvalidArgument):
        queue.task(name="s", soft_timeout=-1)(lambda: None)
    assert queue.stats()["pending"] == 0, "nothing was half-written"


def test_exceptions_become_job_errors_with_tracebacks_and_retry(queue: Queue) -> None:
    calls = []

    @queue.task(name="flaky", max_retries=2, retry_backoff=0)
    def flaky() -> str:
        calls.append(current_job().attempt)
        if len(calls) < 3:
            raise RuntimeError(f"boom {len(calls)}")
        return "ok"

    @queue.task(name="doomed", max_retries=1, retry_backoff=0)
    def doomed() -> None:
        raise ValueError("always")

    r = flaky.delay()
    d = doomed.delay()
    with queue.worker(concurrency=2):
        assert r.result(timeout=30) == "ok"
        with pytest.raises(JobFailed) as e:
            d.result(timeout=30)
    assert calls == [1, 2, 3]
    assert e.value.job_id == d.id and e.value.status == "dead"
    assert "ValueError: always" in (e.value.error or "")
    errors = queue.get_job_errors(d.id)
    assert [x["attempt"] for x in errors] == [1, 2]
    assert "Traceback" in errors[0]["error"] and "always" in errors[0]["error"]
    assert len(queue.get_job_errors(r.id)) == 2


def test_current_job_publishes_logs_and_progress(queue: Queue) -> None:
    @queue.task(name="chatty")
    def chatty(n: int) -> int:
        job = current_job()
        for i in range(n):
            job.publish({"i": i})
        job.log("halfway", level="warn")
        job.set_progress(50.0)
        assert not job.is_cancel_requested() and not job.soft_timeout_exceeded()
        return job.attempt

    with pytest.raises(flexiq.FlexiqError):
        current_job()
    r = chatty.delay(3)
    with queue.worker(concurrency=1):
        assert r.result(timeout=20) == 1
    assert list(queue.stream(r.id, timeout=10)) == [{"i": 0}, {"i": 1}, {"i": 2}]
    logs = queue.job_logs(r.id)
    assert [(entry["level"], entry["message"]) for entry in logs] == [("warn", "halfway")]
    job = queue.get_job(r.id)
    assert job is not None and job.progress == 50.0


def test_pickle_serializer_round_trips_python_objects(store_url: str) -> None:
    q = Queue(url=store_url, serializer="pickle")
    try:

        @q.task(name="sets")
        def union(a: set, b: set) -> set:
            return a | b

        r = union.delay({1}, {2})
        with q.worker(concurrency=1):
            assert r.result(timeout=20) == {1, 2}
    finally:
        q.close()
    with pytest.raises(InvalidArgument):
        Queue(url=store_url, serializer="yaml")


def test_cancel_stops_a_cooperative_task(queue: Queue) -> None:
    started = threading.Event()

    @queue.task(name="long")
    def long() -> str:
        started.set()
        while not current_job().is_cancel_requested():
            time.sleep(0.01)
        raise RuntimeError("stopped on request")

    r = long.delay()
    pending = long.delay()
    assert pending.cancel() is True and pending.status == "cancelled"
    w = queue.worker(concurrency=1, lease=0.9).start()
    try:
        assert started.wait(20)
        assert r.cancel() is True
        assert queue.is_cancel_requested(r.id)
        with pytest.raises(flexiq.JobCancelled):
            r.result(timeout=20)
    finally:
        w.stop()


def test_sync_handlers_reuse_threads_and_an_overrun_does_not_block_the_next(queue: Queue) -> None:
    release = threading.Event()
    seen = set()

    @queue.task(name="stuck", timeout=0.3, max_retries=0)
    def stuck() -> None:
        release.wait(30)

    @queue.task(name="who")
    def who() -> int:
        seen.add(threading.get_ident())
        return 1

    s = stuck.delay()
    try:
        with queue.worker(concurrency=1):
            with pytest.raises(JobFailed):
                s.result(timeout=20)
            results = [who.delay() for _ in range(30)]
            assert [r.result(timeout=20) for r in results] == [1] * 30
    finally:
        release.set()
    assert 1 <= len(seen) <= 2, f"30 sequential jobs ran on {len(seen)} threads"
