"""Soft timeouts reach handlers: a sync or async handler observes its task's soft timeout
(polled, waited for, awaited, or by callback) while its attempt keeps running to completion."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any, Dict

import pytest

from flexiq import InvalidArgument, Queue, current_job


def _assert_completed_first_attempt(queue: Queue, job_id: str) -> None:
    job = queue.get_job(job_id)
    assert job is not None and job.status == "completed" and job.attempt == 1
    assert queue.get_job_errors(job_id) == []


def test_a_sync_handler_sees_its_soft_timeout_and_keeps_running(queue: Queue) -> None:
    called = threading.Event()

    @queue.task(name="soft.sync", soft_timeout=0.2, timeout=60)
    def slow() -> Dict[str, Any]:
        job = current_job()
        job.on_soft_timeout(called.set)
        before = job.soft_timeout_exceeded()
        fired = job.wait_soft_timeout(timeout=30)
        seen = (job.soft_timeout_exceeded(), job.soft_timeout_reached)
        # The attempt goes on after the soft timeout: it still writes and finishes.
        job.publish("after soft timeout")
        return {
            "configured": job.soft_timeout,
            "before": before,
            "fired": fired,
            "seen": list(seen),
            "callback": called.wait(30),
            "cancelled": job.is_cancel_requested(),
        }

    r = slow.delay()
    with queue.worker(concurrency=1):
        out = r.result(timeout=60)
    assert out == {
        "configured": 0.2,
        "before": False,
        "fired": True,
        "seen": [True, True],
        "callback": True,
        "cancelled": False,
    }
    assert list(queue.stream(r.id, timeout=10)) == ["after soft timeout"]
    _assert_completed_first_attempt(queue, r.id)


def test_an_async_handler_awaits_its_soft_timeout_and_keeps_running(queue: Queue) -> None:
    @queue.task(name="soft.async", soft_timeout=0.2)
    async def slow() -> Dict[str, Any]:
        job = current_job()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        t = asyncio.ensure_future(ticker())
        fired = await job.await_soft_timeout(timeout=30)
        t.cancel()
        await asyncio.sleep(0)  # still running after the soft timeout
        return {"fired": fired, "exceeded": job.soft_timeout_exceeded(), "loop_ran": ticks > 1}

    r = slow.delay()
    with queue.worker(concurrency=1):
        assert r.result(timeout=60) == {"fired": True, "exceeded": True, "loop_ran": True}
    _assert_completed_first_attempt(queue, r.id)


def test_without_a_soft_timeout_waits_end_false(queue: Queue) -> None:
    @queue.task(name="soft.none")
    def none() -> Dict[str, Any]:
        job = current_job()
        return {"configured": job.soft_timeout, "waited": job.wait_soft_timeout(timeout=0.05)}

    @queue.task(name="soft.none.async")
    async def none_async() -> bool:
        return await current_job().await_soft_timeout(timeout=0.05)

    a, b = none.delay(), none_async.delay()
    with queue.worker(concurrency=2):
        assert a.result(timeout=30) == {"configured": None, "waited": False}
        assert b.result(timeout=30) is False


def test_bad_soft_timeout_waits_are_invalid_argument(queue: Queue) -> None:
    @queue.task(name="soft.bad", soft_timeout=5)
    def bad() -> list:
        job = current_job()
        errors = []
        for call in (
            lambda: job.wait_soft_timeout(timeout=-1),
            lambda: job.wait_soft_timeout(timeout=0),
            lambda: job.wait_soft_timeout(timeout=math.nan),
            lambda: job.on_soft_timeout(5),  # type: ignore[arg-type]
            lambda: asyncio.run(job.await_soft_timeout(timeout=-2)),
        ):
            try:
                call()
            except InvalidArgument as e:
                errors.append(e.code)
        return errors

    r = bad.delay()
    with queue.worker(concurrency=1):
        assert r.result(timeout=30) == ["INVALID_ARGUMENT"] * 5
    with pytest.raises(InvalidArgument):
        queue.task(name="soft.neg", soft_timeout=-1)(lambda: None)
    with pytest.raises(InvalidArgument):
        queue.task(name="soft.nan", soft_timeout=math.nan)(lambda: None)
    queue.task(name="soft.inverted", soft_timeout=5, timeout=1)(lambda: None)
    with pytest.raises(InvalidArgument):
        queue.worker(concurrency=1)  # a soft timeout must be shorter than the hard one
