"""The events stream: events (the iterator) and aevents, read_events and aread_events,
publish_event, last_event_id, trim_events and the switch, on every store. The iterator sees a
worker in another process run a job; a resumed stream repeats and loses nothing; the kinds
filter; custom data round-trips as JSON; bad input is refused before anything is read or
stored; an open stream closes from another thread, when dropped, and on Ctrl-C."""

from __future__ import annotations

import asyncio
import gc
import inspect
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Generator, Iterator, List, Optional

import pytest
from conftest import wait_until

import flexiq
from flexiq import Closed, Conflict, Event, EventIterator, InvalidArgument, Queue

#: Generous bound on a wait that should end in well under a second; no test asserts speed.
SETTLE_S = 60.0

APP = textwrap.dedent(
    """
    import os
    from flexiq import Queue

    queue = Queue(url=os.environ["FLEXIQ_TEST_URL"])

    @queue.task(name="ev.greet")
    def greet(name):
        return "hello " + name
    """
)

LISTENER = textwrap.dedent(
    """
    import os, sys
    from flexiq import Queue

    queue = Queue(url=os.environ["FLEXIQ_TEST_URL"])
    stream = queue.events(block_ms=300000)
    print("ready", flush=True)
    try:
        for ev in stream:
            pass
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        stream.close()
        queue.close()
        sys.exit(0)
    """
)


def collect(it: Iterator[Event], until: Callable[[Event], bool], what: str) -> List[Event]:
    """Iterates ``it`` on a thread until ``until`` holds for an event (inclusive); fails the
    test, closing the stream, when that takes more than :data:`SETTLE_S`."""
    out: List[Event] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            for ev in it:
                out.append(ev)
                if until(ev):
                    return
        except BaseException as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(SETTLE_S)
    if t.is_alive():
        if isinstance(it, EventIterator):
            it.close()
        t.join(SETTLE_S)
        raise AssertionError(f"timed out waiting for {what}; saw {[(e.kind, e.name) for e in out]}")
    if errors:
        raise errors[0]
    return out


def take(it: Iterator[Event], n: int) -> List[Event]:
    seen = 0

    def enough(_: Event) -> bool:
        nonlocal seen
        seen += 1
        return seen >= n

    return collect(it, enough, f"{n} events")


def settle(queue: Queue, event_id: str) -> None:
    """Waits until ``event_id`` is the newest event the store shows. PostgreSQL shows a commit
    once every transaction in the cluster that began before it has ended, so under load from
    other clients an event a test just wrote may take a moment to appear."""
    wait_until(lambda: queue.last_event_id() == event_id, SETTLE_S, f"event {event_id} to show")


def read_settled(queue: Queue, after: Optional[str], n: int) -> List[Event]:
    """The events after ``after`` once ``n`` show (see :func:`settle`)."""
    got: List[Event] = []

    def enough() -> bool:
        got[:] = queue.read_events(after=after, block_ms=200, limit=1000)
        return len(got) >= n

    wait_until(enough, SETTLE_S, f"{n} events after {after}")
    return got


def spawn(tmp_path: Path, store_url: str, name: str, source: str, *cmd: str) -> subprocess.Popen:
    (tmp_path / f"{name}.py").write_text(source)
    env = dict(os.environ, FLEXIQ_TEST_URL=store_url, PYTHONPATH=str(tmp_path))
    return subprocess.Popen(
        [sys.executable, *cmd], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def stop(proc: subprocess.Popen) -> str:
    """Stops a child with SIGTERM (SIGKILL when it lingers) and returns its stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=SETTLE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def test_the_model_the_kinds_and_the_calls_are_public() -> None:
    assert flexiq.Event is Event and {"Event", "EventIterator", "EVENT_KINDS"} <= set(flexiq.__all__)
    assert list(Event.__dataclass_fields__) == [
        "id", "kind", "name", "job_id", "queue", "task", "attempt", "at_ms", "data"
    ]
    assert {"enqueued", "active", "completed", "failed", "cancelled", "paused"} <= set(flexiq.EVENT_KINDS)
    assert "custom" not in flexiq.EVENT_KINDS and len(set(flexiq.EVENT_KINDS)) == len(flexiq.EVENT_KINDS)
    for name in ("publish_event", "last_event_id", "trim_events", "set_events_enabled", "events_enabled"):
        assert inspect.iscoroutinefunction(getattr(Queue, "a" + name)), name
    assert inspect.iscoroutinefunction(Queue.aread_events)
    assert inspect.isasyncgenfunction(Queue.aevents)
    sig = inspect.signature(Queue.events)
    assert list(sig.parameters) == ["self", "after", "kinds", "from_start", "block_ms", "batch"]
    assert sig.parameters["from_start"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(Queue.aevents).parameters) == list(sig.parameters)
    assert "max_age_ms" in inspect.signature(Queue.trim_events).parameters


def test_the_iterator_sees_a_worker_in_another_process_run_a_job(
    queue: Queue, store_url: str, tmp_path: Path
) -> None:
    stream = queue.events()
    worker = spawn(tmp_path, store_url, "evapp", APP, "-m", "flexiq", "worker", "--app", "evapp:queue")
    try:
        with Queue(url=store_url) as other:
            job = other.enqueue("ev.greet", args=["events"])
            mine = [
                e
                for e in collect(stream, lambda e: e.job_id == job.id and e.kind == "completed", "completed")
                if e.job_id == job.id
            ]
    finally:
        err = stop(worker)
        stream.close()
    assert [e.kind for e in mine] == ["enqueued", "active", "completed"], err
    enqueued, active, completed = mine
    assert all(e.name == e.kind and e.task == "ev.greet" and e.queue == "default" for e in mine)
    assert enqueued.data["status"] == "pending" and isinstance(enqueued.data["run_at"], int)
    assert enqueued.attempt == 0 and active.attempt == completed.attempt == 1
    assert isinstance(active.data.get("worker_id"), str)
    assert completed.data["result_size"] == len(queue.serializer.dumps("hello events"))
    assert enqueued.at_ms <= active.at_ms <= completed.at_ms
    assert len({e.id for e in mine}) == 3
    assert stream.closed and next(stream, None) is None


def test_a_resumed_stream_repeats_nothing_and_loses_nothing(queue: Queue, store_url: str) -> None:
    for n in range(5):
        queue.enqueue("t", args=[n])
    with queue.events(from_start=True, batch=2) as first:
        seen = take(first, 3)
    saved = seen[-1].id
    for n in range(5, 7):
        queue.enqueue("t", args=[n])
    with Queue(url=store_url) as other, other.events(after=saved) as resumed:
        seen += take(resumed, 4)
    whole = queue.read_events(limit=100)
    assert [e.id for e in seen] == [e.id for e in whole], "seven enqueues, each seen once and in order"
    assert [e.kind for e in whole] == ["enqueued"] * 7
    assert queue.read_events(after=whole[-1].id, block_ms=300) == []
    assert queue.last_event_id() == whole[-1].id
    # read_events pages the same way: after the 3rd, the rest
    assert [e.id for e in queue.read_events(after=saved, limit=2)] == [e.id for e in whole[3:5]]


def test_custom_events_and_the_kinds_filter(queue: Queue) -> None:
    stream = queue.events(kinds=["deploy.done", "cancelled"])
    customs = queue.events(kinds=["custom"])
    job = queue.enqueue("t")
    other = queue.publish_event("other", 1)
    data = {"v": 7, "nested": [1, -2.5, None, True, "é"], "big": 2**64 - 1, "empty": {}}
    published = queue.publish_event("deploy.done", data, job_id=job.id, queue="default")
    assert isinstance(published, str) and published != other
    assert queue.cancel_job(job.id)
    custom, cancelled = take(stream, 2)
    assert (custom.id, custom.kind, custom.name) == (published, "custom", "deploy.done")
    assert (custom.data, custom.job_id, custom.queue) == (data, job.id, "default")
    assert (cancelled.kind, cancelled.name, cancelled.job_id) == ("cancelled", "cancelled", job.id)
    assert [(e.name, e.data) for e in take(customs, 2)] == [("other", 1), ("deploy.done", data)]
    assert queue.last_event_id() == cancelled.id
    stream.close()
    customs.close()
    # data defaults to null, and a custom event may name no job
    bare = queue.publish_event("ping")
    (ev,) = read_settled(queue, cancelled.id, 1)
    assert (ev.id, ev.data, ev.job_id, ev.queue, ev.task, ev.attempt) == (bare, None, None, None, None, None)
    assert ev.to_dict()["name"] == "ping"


def test_read_events_waits_for_an_event_across_slices(queue: Queue) -> None:
    last = queue.publish_event("first")
    settle(queue, last)
    assert queue.read_events(after=last) == []

    def later() -> None:
        time.sleep(1.5)  # past the first read slice
        queue.publish_event("later", {"n": 1})

    t = threading.Thread(target=later)
    t.start()
    got = queue.read_events(after=last, block_ms=int(SETTLE_S * 1000))
    t.join()
    assert [(e.name, e.data) for e in got] == [("later", {"n": 1})]


def test_trim_last_id_and_the_switch(queue: Queue) -> None:
    assert queue.last_event_id() is None and queue.read_events() == []
    assert queue.events_enabled() is True
    for n in range(4):
        newest = queue.publish_event("n", n)
    settle(queue, newest)
    assert queue.trim_events(10) == 0
    assert queue.trim_events(1) == 3
    (kept,) = queue.read_events()
    assert (kept.id, kept.data) == (newest, 3) and queue.last_event_id() == newest
    assert queue.trim_events(0, max_age_ms=3_600_000) == 1 and queue.read_events() == []
    queue.set_events_enabled(False)
    try:
        assert queue.events_enabled() is False
        with pytest.raises(Conflict):
            queue.publish_event("n", 5)
        queue.enqueue("t")
    finally:
        queue.set_events_enabled(True)
    job = queue.enqueue("t")
    assert [(e.kind, e.job_id) for e in read_settled(queue, None, 1)] == [("enqueued", job.id)]


def test_aevents_and_the_twins_under_asyncio(queue: Queue) -> None:
    @queue.task(name="ev.add")
    def add(a: int, b: int) -> int:
        return a + b

    async def main() -> None:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.ensure_future(ticker())
        seen: List[Event] = []
        start = await queue.apublish_event("start")
        w = queue.worker(concurrency=1).start()
        try:
            job = await add.adelay(2, 3)

            async def follow() -> None:
                async for ev in queue.aevents(after=start, kinds=["completed", "custom"]):
                    seen.append(ev)
                    if ev.kind == "custom":
                        break

            async def publish_after_completion() -> None:
                assert await job.aresult(timeout=SETTLE_S) == 5
                await queue.apublish_event("done", {"job": job.id})

            await asyncio.wait_for(asyncio.gather(follow(), publish_after_completion()), SETTLE_S)
        finally:
            w.stop()
        assert [(e.kind, e.job_id) for e in seen] == [("completed", job.id), ("custom", None)]
        assert seen[1].data == {"job": job.id}
        # the loop ran while the reads waited
        got = await queue.aread_events(after=seen[1].id, block_ms=400)
        assert got == [] and ticks >= 5
        assert await queue.aevents_enabled() is True
        assert await queue.atrim_events(1) >= 1
        with pytest.raises(InvalidArgument):
            async for _ in queue.aevents(kinds=[""]):
                pass
        with pytest.raises(InvalidArgument):
            await queue.aread_events(after="not an id")
        t.cancel()

    asyncio.run(main())


def test_a_cancelled_aevents_frees_the_loop(queue: Queue) -> None:
    async def main() -> None:
        async def follow() -> None:
            async for _ in queue.aevents(block_ms=300_000):
                pass

        task = asyncio.ensure_future(follow())
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the queue is still usable from the loop
        assert await queue.apublish_event("after") is not None

    asyncio.run(main())


def test_bad_read_and_stream_arguments_are_refused_up_front(queue: Queue) -> None:
    before = queue.publish_event("one")
    settle(queue, before)
    kwargs: Dict[str, Any]
    for kwargs in (
        {"limit": "10"},
        {"limit": 1.0},
        {"limit": True},
        {"block_ms": float("nan")},
        {"block_ms": "5"},
        {"after": 123},
    ):
        with pytest.raises(TypeError) as e:
            queue.read_events(**kwargs)
        assert isinstance(e.value, InvalidArgument), kwargs
    for kwargs in (
        {"limit": -1},
        {"limit": 0},
        {"limit": 10_001},
        {"block_ms": -1},
        {"block_ms": flexiq._flexiq.MAX_EVENTS_BLOCK_MS + 1},
        {"after": ""},
        {"after": "garbage"},
        {"after": "x" * 100},
    ):
        with pytest.raises(InvalidArgument):
            queue.read_events(**kwargs)
            raise AssertionError(f"read_events({kwargs}) was not refused")
    for kwargs in (
        {"kinds": "completed"},
        {"kinds": [1]},
        {"kinds": 5},
        {"batch": "1"},
        {"block_ms": float("nan")},
        {"block_ms": None},
        {"from_start": "yes"},
        {"after": 5},
    ):
        with pytest.raises(TypeError):
            queue.events(**kwargs)
    for kwargs in (
        {"kinds": []},
        {"kinds": [""]},
        {"kinds": ["a\nb"]},
        {"batch": 0},
        {"batch": -5},
        {"batch": 10_001},
        {"block_ms": 0},
        {"block_ms": -1},
        {"block_ms": 300_001},
        {"after": "garbage"},
        {"after": before, "from_start": True},
    ):
        with pytest.raises(InvalidArgument):
            queue.events(**kwargs)
            raise AssertionError(f"events({kwargs}) was not refused")
    with pytest.raises(TypeError):
        queue.events(since=0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        queue.read_events(wait=1)  # type: ignore[call-arg]
    assert queue.last_event_id() == before


def test_bad_publish_trim_and_switch_arguments_store_nothing(queue: Queue) -> None:
    before = queue.publish_event("one")
    settle(queue, before)
    for name in ("completed", "custom", "", "x" * 201, "bad\x00name"):
        with pytest.raises(InvalidArgument):
            queue.publish_event(name)
    for data in ({1, 2}, object(), b"bytes", {(1, 2): 3}):
        with pytest.raises(TypeError) as e:
            queue.publish_event("bad", data)
        assert isinstance(e.value, InvalidArgument) and "not JSON" in str(e.value)
    loop: List[Any] = []
    loop.append(loop)
    for data in (float("nan"), float("inf"), [float("-inf")], loop, "x" * (64 * 1024 + 1)):
        with pytest.raises(InvalidArgument):
            queue.publish_event("bad", data)
    with pytest.raises(TypeError):
        queue.publish_event(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        queue.publish_event("bad", job_id=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        queue.publish_event("bad", job_id="not-a-job-id")
    with pytest.raises(InvalidArgument):
        queue.publish_event("bad", queue="")
    with pytest.raises(TypeError):
        queue.publish_event("bad", 1, 2)  # type: ignore[misc, arg-type]
    with pytest.raises(TypeError):
        queue.publish_event("bad", kind="x")  # type: ignore[call-arg]
    assert queue.last_event_id() == before
    with pytest.raises(InvalidArgument):
        queue.trim_events(-1)
    with pytest.raises(InvalidArgument):
        queue.trim_events(1, max_age_ms=-1)
    with pytest.raises(TypeError):
        queue.trim_events("5")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        queue.trim_events(1, 5)  # type: ignore[misc]
    with pytest.raises(TypeError):
        queue.set_events_enabled("yes")  # type: ignore[arg-type]
    assert queue.events_enabled() is True and queue.last_event_id() == before


def test_a_stream_closed_from_another_thread_ends_its_loop(queue: Queue) -> None:
    stream = queue.events(block_ms=300_000)
    ended = threading.Event()

    def run() -> None:
        for _ in stream:
            pass
        ended.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.3)
    stream.close()
    t.join(SETTLE_S)
    assert ended.is_set() and stream.closed
    assert next(stream, None) is None
    stream.close()  # closing twice is harmless


def test_a_dropped_or_closed_generator_releases_its_stream(queue: Queue) -> None:
    def names() -> Generator[str, None, None]:
        with queue.events(from_start=True) as stream:
            for ev in stream:
                yield ev.name

    queue.publish_event("a")
    gen = names()
    assert next(gen) == "a"
    gen.close()  # runs the with block's exit: the stream is closed
    stream = queue.events()
    ref = weakref.ref(stream)
    del stream
    gc.collect()
    assert ref() is None
    queue.publish_event("b")
    assert [e.name for e in read_settled(queue, None, 2)] == ["a", "b"]


def test_closing_the_queue_ends_a_stream_with_closed(store_url: str) -> None:
    q = Queue(url=store_url)
    stream = q.events(block_ms=300_000)
    q.close()
    with pytest.raises(Closed):
        next(stream)
    assert next(stream, None) is None


def test_ctrl_c_interrupts_a_waiting_iterator(store_url: str, tmp_path: Path) -> None:
    proc = spawn(tmp_path, store_url, "listener", LISTENER, "listener.py")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        time.sleep(0.5)  # let it block in a read
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=SETTLE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "interrupted" in out, err


def test_a_workers_elected_cleaner_trims_the_stream(queue: Queue, until: Callable[..., None]) -> None:
    @queue.task(name="ev.noop")
    def noop() -> None:
        return None

    for n in range(5):
        newest = queue.publish_event("n", n)
    settle(queue, newest)
    w = queue.worker(concurrency=1, events_max_len=2, events_max_age=3600).start()
    try:
        until(lambda: len(queue.read_events()) == 2, timeout=SETTLE_S, what="the cleaner's trim")
    finally:
        w.stop()
    assert [e.data for e in queue.read_events()] == [3, 4]


def test_bad_worker_events_settings_are_refused(sqlite_queue: Queue) -> None:
    @sqlite_queue.task(name="ev.noop")
    def noop() -> None:
        return None

    for kwargs in (
        {"events_max_len": -1},
        {"events_max_len": "5"},
        {"events_max_len": True},
        {"events_max_len": 1.5},
        {"events_max_age": 0},
        {"events_max_age": 0.5},
        {"events_max_age": -3},
        {"events_max_age": float("nan")},
        {"events_max_age": "60"},
        {"maintenance": False, "events_max_len": 5},
        {"maintenance": False, "events_max_age": 60},
    ):
        with pytest.raises(InvalidArgument):
            sqlite_queue.worker(**kwargs)
            raise AssertionError(f"worker({kwargs}) was not refused")
    assert sqlite_queue.worker(events_max_len=0, events_max_age=1).id
