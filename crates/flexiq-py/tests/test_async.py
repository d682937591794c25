"""The async twins: ``a``-prefixed calls usable from asyncio, run off the event loop."""

from __future__ import annotations

import asyncio
import inspect
import time

import pytest

import flexiq
from flexiq import FlexiqTimeout, InvalidArgument, Queue
from flexiq._aio import AsyncMixin


def test_every_blocking_call_has_an_async_twin() -> None:
    not_io = {"task", "worker", "run_worker", "workflow_jobs"}
    public = {n: getattr(Queue, n) for n in dir(Queue) if not n.startswith("_")}
    blocking = [
        n
        for n, v in public.items()
        if callable(v) and n not in not_io and not (inspect.iscoroutinefunction(v) or inspect.isasyncgenfunction(v))
    ]
    assert "requeue_job" in blocking and "stats" in blocking
    assert [n for n in blocking if "a" + n not in public] == []
    assert inspect.iscoroutinefunction(Queue.arequeue_job) and inspect.iscoroutinefunction(Queue.astats)


def test_async_twins_work_from_asyncio(queue: Queue) -> None:
    @queue.task(name="a.add")
    async def add(a: int, b: int) -> int:
        return a + b

    async def main() -> None:
        r = await add.adelay(1, 2)
        r2 = await queue.aenqueue("a.add", args=[5, 5])
        assert (await queue.astats())["pending"] == 2
        assert await queue.arequeue_job(r.id) is False
        assert await queue.aget_result(r.id) is None
        # the loop keeps running while a twin waits
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.ensure_future(ticker())
        with pytest.raises(FlexiqTimeout):
            await queue.aresult(r.id, timeout=0.3)
        assert ticks >= 5
        w = queue.worker(concurrency=2).start()
        try:
            assert await r.aresult(timeout=20) == 3
            assert await queue.aresult(r2.id, timeout=20) == 10
        finally:
            w.stop()
        t.cancel()
        assert [j.id for j in await queue.alist_jobs(status="completed")] != []
        page = await queue.alist_jobs_after(limit=1)
        assert isinstance(page, flexiq.Page) and page.next_cursor is not None
        assert await queue.apaused_queues() == [] and await queue.alist_paused_queues() == []
        await queue.aset_setting("k", "v")
        assert await queue.aget_setting("k") == "v"
        with pytest.raises(InvalidArgument):
            await queue.alist_jobs(limit=-1)

    asyncio.run(main())


def test_astream_yields_partials(queue: Queue) -> None:
    @queue.task(name="a.parts")
    def parts() -> None:
        for i in range(3):
            flexiq.current_job().publish(i)
            time.sleep(0.01)

    async def main() -> list:
        r = await parts.adelay()
        w = queue.worker(concurrency=1).start()
        try:
            return [p async for p in queue.astream(r.id, timeout=20)]
        finally:
            w.stop()

    assert asyncio.run(main()) == [0, 1, 2]


def test_mixin_only_defines_coroutines() -> None:
    for name, fn in vars(AsyncMixin).items():
        if name.startswith("a") and callable(fn):
            assert inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn), name


def test_made_twins_carry_the_blocking_signature_and_run_the_blocking_method(sqlite_queue: Queue) -> None:
    twins = [n for n, v in vars(AsyncMixin).items() if n.startswith("a") and callable(v)]
    assert len(twins) > 60 and "aresult" not in twins  # aresult / astream are written by hand
    for name in twins:
        blocking = getattr(Queue, name[1:])
        assert inspect.signature(getattr(Queue, name)) == inspect.signature(blocking), name
        assert getattr(Queue, name).__doc__ == f"Async twin of :meth:`{name[1:]}`."
    calls = []

    class Counting(Queue):
        def stats(self) -> dict:
            calls.append("stats")
            return super().stats()

    q = Counting(db_path=sqlite_queue.url + ".2")
    try:
        assert asyncio.run(q.astats())["pending"] == 0 and calls == ["stats"]
    finally:
        q.close()
