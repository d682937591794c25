"""Deduplicated enqueues (the ``dedup`` option and ``_queue/dedup.py``) on every store: each
mode (simple, throttle, debounce with and without extend / replace, keep_last_if_active), a
debounce burst from threads leaving one job with the last payload, enqueue_outcome, the dedup
key calls, the option on every enqueue entry point, the async twins, and bad input refused
with InvalidArgument and nothing written."""

from __future__ import annotations

import asyncio
import math
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, get_args, get_type_hints

import pytest

from conftest import wait_until

from flexiq import DedupOptions, EnqueueOutcome, InvalidArgument, Job, Queue
from flexiq._options import DEDUP_MODES

WRONG_STRS = (None, 3, b"k")


def _job(queue: Queue, job_id: str) -> Job:
    job = queue.get_job(job_id)
    assert job is not None, f"job {job_id} is gone"
    return job


def _args(queue: Queue, job_id: str) -> List[Any]:
    args, _ = queue.serializer.loads_call(_job(queue, job_id).payload)
    return list(args)


def _total(queue: Queue) -> int:
    return sum(queue.stats().values())


def _run(queue: Queue, queue_name: str, job_id: str) -> Any:
    with queue.worker(concurrency=1, queues=[queue_name]):
        return queue.result(job_id, timeout=30)


def test_the_dedup_type_names_every_mode() -> None:
    assert DedupOptions.__required_keys__ == frozenset({"id"})
    assert set(DedupOptions.__annotations__) == {"id", "mode", "ttl_ms", "extend", "replace"}
    (modes, _none) = get_args(get_type_hints(DedupOptions)["mode"])
    assert get_args(modes) == DEDUP_MODES == ("simple", "throttle", "debounce", "keep_last_if_active")


def test_simple_holds_while_the_holder_is_unfinished(queue: Queue) -> None:
    queue.task(name="ds.t", queue="ds")(lambda n: n)
    dedup = {"id": "ds-key"}
    first = queue.enqueue_outcome("ds.t", [1], queue="ds", dedup=dedup)
    assert isinstance(first, EnqueueOutcome) and first.deduplicated is False
    again = queue.enqueue_outcome("ds.t", [2], queue="ds", dedup={"id": "ds-key", "mode": "simple"})
    assert again == EnqueueOutcome(id=first.id, deduplicated=True)
    assert queue.enqueue("ds.t", [3], queue="ds", dedup=dedup).id == first.id
    assert _args(queue, first.id) == [1], "simple never replaces"
    assert queue.dedup_job_id("ds-key") == first.id
    assert _run(queue, "ds", first.id) == 1
    after = queue.enqueue_outcome("ds.t", [4], queue="ds", dedup=dedup)
    assert after.deduplicated is False and after.id != first.id, "a finished holder frees the key"
    assert queue.dedup_job_id("ds-key") == after.id
    assert _total(queue) == 2


def test_throttle_ignores_repeats_for_its_window_even_after_the_holder_ran(queue: Queue) -> None:
    queue.task(name="dt.t", queue="dt")(lambda: "ran")
    dedup = {"id": "dt-key", "mode": "throttle", "ttl_ms": 2500}
    start = time.monotonic()
    first = queue.enqueue_outcome("dt.t", queue="dt", dedup=dedup)
    assert _run(queue, "dt", first.id) == "ran"
    assert time.monotonic() - start < 2.0, "running one job took most of the window"
    held = queue.enqueue_outcome("dt.t", queue="dt", dedup=dedup)
    assert held == EnqueueOutcome(first.id, True), "the window holds though the holder completed"
    time.sleep(max(0.0, 2.8 - (time.monotonic() - start)))
    later = queue.enqueue_outcome("dt.t", queue="dt", dedup=dedup)
    assert later.deduplicated is False and later.id != first.id, "the window lapsed"


def test_debounce_extend_restarts_the_window(queue: Queue) -> None:
    ttl = {"mode": "debounce", "ttl_ms": 1500}
    plain, extended = {"id": "db-plain", **ttl}, {"id": "db-ext", **ttl, "extend": True}
    start = time.monotonic()
    p0 = queue.enqueue_outcome("db.t", queue="db", dedup=plain)
    e0 = queue.enqueue_outcome("db.t", queue="db", dedup=extended)

    def at(t: float) -> None:
        time.sleep(max(0.0, t - (time.monotonic() - start)))

    at(0.9)
    assert queue.enqueue_outcome("db.t", queue="db", dedup=plain).id == p0.id
    assert queue.enqueue_outcome("db.t", queue="db", dedup=extended).id == e0.id
    at(2.0)  # past the first window; the extended one runs to about 2.4 s
    assert queue.enqueue_outcome("db.t", queue="db", dedup=plain).deduplicated is False
    assert queue.enqueue_outcome("db.t", queue="db", dedup=extended) == EnqueueOutcome(e0.id, True)
    at(4.1)  # the last duplicate (at about 2.0 s) moved the window to about 3.5 s
    assert queue.enqueue_outcome("db.t", queue="db", dedup=extended).deduplicated is False


def test_debounce_without_replace_keeps_the_first_payload(queue: Queue) -> None:
    dedup = {"id": "dk-key", "mode": "debounce", "ttl_ms": 60_000}
    first = queue.enqueue("dk.t", ["first"], queue="dk", dedup=dedup)
    assert queue.enqueue("dk.t", ["second"], queue="dk", priority=9, dedup=dedup).id == first.id
    job = _job(queue, first.id)
    assert _args(queue, first.id) == ["first"] and job.priority == 0


def test_a_debounce_burst_from_threads_leaves_one_job_with_the_last_payload(queue: Queue) -> None:
    ran: List[Any] = []

    @queue.task(name="burst.t", queue="burst")
    def handle(tag: Any) -> None:
        ran.append(tag)

    dedup = {"id": "burst-key", "mode": "debounce", "ttl_ms": 60_000, "extend": True, "replace": True}
    outcomes: List[EnqueueOutcome] = []
    lock = threading.Lock()
    go = threading.Barrier(8)

    def producer(t: int) -> None:
        go.wait()
        for i in range(5):
            # delayed, so no holder starts before the burst is over
            o = queue.enqueue_outcome("burst.t", [f"t{t}-{i}"], queue="burst", delay=3600, dedup=dedup)
            with lock:
                outcomes.append(o)

    threads = [threading.Thread(target=producer, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert len(outcomes) == 40
    holder = {o.id for o in outcomes}
    assert len(holder) == 1 and sum(not o.deduplicated for o in outcomes) == 1
    (job_id,) = holder
    assert _args(queue, job_id)[0] in {f"t{t}-{i}" for t in range(8) for i in range(5)}
    last = queue.enqueue_outcome("burst.t", ["last"], queue="burst", dedup=dedup)
    assert last == EnqueueOutcome(job_id, True)
    assert _args(queue, job_id) == ["last"] and _job(queue, job_id).run_at <= time.time() * 1000, "replaced, due now"
    assert [j.id for j in queue.list_jobs(queue="burst")] == [job_id], "one job"
    with queue.worker(concurrency=2, queues=["burst"]):
        wait_until(lambda: _job(queue, job_id).status == "completed", what="the debounced job")
    assert ran == ["last"]


def test_keep_last_if_active_keeps_one_running_and_one_queued_with_the_newest(queue: Queue) -> None:
    started, release = threading.Event(), threading.Event()
    ran: List[str] = []

    @queue.task(name="kl.t", queue="kl")
    def hold(tag: str) -> None:
        ran.append(tag)
        if tag == "b":
            started.set()
            release.wait(60)

    dedup = {"id": "kl-key", "mode": "keep_last_if_active"}
    first = queue.enqueue_outcome("kl.t", ["a"], queue="kl", dedup=dedup)
    assert queue.enqueue_outcome("kl.t", ["b"], queue="kl", dedup=dedup) == EnqueueOutcome(first.id, True)
    assert _args(queue, first.id) == ["b"], "a holder that has not started takes the newest payload"
    try:
        with queue.worker(concurrency=1, queues=["kl"], prefetch=0):
            assert started.wait(30), "the holder never started"
            behind = queue.enqueue_outcome("kl.t", ["c"], queue="kl", dedup=dedup)
            assert behind.deduplicated is False and behind.id != first.id
            assert _job(queue, behind.id).status == "waiting", "queued behind the running one"
            assert queue.dedup_job_id("kl-key") == behind.id
            assert queue.enqueue_outcome("kl.t", ["d"], queue="kl", dedup=dedup) == EnqueueOutcome(behind.id, True)
            assert _args(queue, behind.id) == ["d"]
            release.set()
            wait_until(lambda: _job(queue, behind.id).status == "completed", what="the queued job")
    finally:
        release.set()
    assert ran == ["b", "d"]
    assert _total(queue) == 2


def test_dedup_keys_are_read_and_deleted(queue: Queue) -> None:
    assert queue.dedup_job_id("dkey") is None
    assert queue.delete_dedup_key("dkey") is False
    first = queue.enqueue("dkey.t", dedup={"id": "dkey"})
    assert queue.dedup_job_id("dkey") == first.id
    assert queue.delete_dedup_key("dkey") is True
    assert queue.dedup_job_id("dkey") is None and queue.delete_dedup_key("dkey") is False
    assert _job(queue, first.id).status == "pending", "the holder is left alone"
    second = queue.enqueue_outcome("dkey.t", dedup={"id": "dkey"})
    assert second.deduplicated is False and second.id != first.id
    for bad in ("", "x" * 1000, "a\nb"):
        with pytest.raises(InvalidArgument, match="dedup id"):
            queue.dedup_job_id(bad)
        with pytest.raises(InvalidArgument, match="dedup id"):
            queue.delete_dedup_key(bad)
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.dedup_job_id(wrong)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.delete_dedup_key(wrong)  # type: ignore[arg-type]
    assert queue.dedup_job_id("dkey") == second.id


def test_the_dedup_option_works_at_every_entry_point(queue: Queue) -> None:
    t = queue.task(name="ep.t", queue="ep")(lambda: None)
    dedup = {"id": "ep-key"}
    first = queue.enqueue("ep.t", dedup=dedup)
    calls: List[Callable[[], str]] = [
        lambda: queue.enqueue("ep.t", dedup=dedup).id,
        lambda: t.apply_async(dedup=dedup).id,
        lambda: queue.enqueue_many([{"task": t, "dedup": dedup}])[0].id,
        lambda: queue.enqueue_many([{"task": "ep.t", "args": [1], "dedup": dedup}])[0].id,
        lambda: queue.enqueue_outcome("ep.t", dedup=dedup).id,
        lambda: asyncio.run(queue.aenqueue("ep.t", dedup=dedup)).id,
        lambda: asyncio.run(t.aapply_async(dedup=dedup)).id,
        lambda: queue._native.enqueue("ep.t", b"[]", {"dedup": {"id": "ep-key"}}),
    ]
    assert [call() for call in calls] == [first.id] * len(calls)
    assert queue.enqueue_outcome("ep.t", unique_key="ep-u").deduplicated is False
    assert queue.enqueue_outcome("ep.t", unique_key="ep-u").deduplicated is True, "a unique key counts too"
    assert _total(queue) == 2


BAD_DEDUP: List[Any] = [
    ("ep-key", "dedup must be a dict, not str"),
    ({}, "dedup needs an id"),
    ({"mode": "simple"}, "dedup needs an id"),
    ({"id": 5}, "dedup id must be a string, not int"),
    ({"id": ""}, "dedup id must not be empty"),
    ({"id": "k", "colour": 1}, "dedup has unknown keys ['colour']"),
    ({"id": "k", "mode": "sometimes"}, "unknown dedup mode 'sometimes'"),
    ({"id": "k", "mode": 1}, "dedup mode must be a string"),
    ({"id": "k", "mode": "throttle"}, "needs ttl_ms"),
    ({"id": "k", "mode": "debounce", "ttl_ms": 0}, "ttl_ms must be positive"),
    ({"id": "k", "mode": "throttle", "ttl_ms": -5}, "ttl_ms"),
    ({"id": "k", "mode": "throttle", "ttl_ms": 1.5}, "dedup ttl_ms must be an integer"),
    ({"id": "k", "mode": "throttle", "ttl_ms": math.nan}, "dedup ttl_ms must be an integer"),
    ({"id": "k", "mode": "throttle", "ttl_ms": True}, "dedup ttl_ms must be an integer"),
    ({"id": "k", "mode": "throttle", "ttl_ms": 366 * 24 * 3_600_000}, "over the limit"),
    ({"id": "k", "mode": "throttle", "ttl_ms": 2**70}, "ttl_ms"),
    ({"id": "k", "ttl_ms": 100}, "takes no ttl_ms"),
    ({"id": "k", "mode": "keep_last_if_active", "ttl_ms": 100}, "takes no ttl_ms"),
    ({"id": "k", "extend": True}, "extend and replace belong to mode debounce"),
    ({"id": "k", "mode": "throttle", "ttl_ms": 5, "replace": True}, "belong to mode debounce"),
    ({"id": "k", "mode": "debounce", "ttl_ms": 5, "extend": 1}, "dedup extend must be a bool"),
]


def test_bad_dedup_input_is_refused_everywhere_and_nothing_is_written(queue: Queue) -> None:
    t = queue.task(name="bd.t", queue="bd")(lambda: None)
    for bad, word in BAD_DEDUP:
        for call in (
            lambda: queue.enqueue("bd.t", dedup=bad),
            lambda: queue.enqueue_outcome("bd.t", dedup=bad),
            lambda: t.apply_async(dedup=bad),
            lambda: queue.enqueue_many([{"task": t}, {"task": t, "dedup": bad}]),
        ):
            with pytest.raises(InvalidArgument) as e:
                call()
            assert word in str(e.value), (bad, str(e.value))
    dep = str(uuid.uuid4())
    for opts, word in (
        ({"dedup": {"id": "k"}, "unique_key": "u"}, "cannot be given together"),
        ({"dedup": {"id": "k", "mode": "keep_last_if_active"}, "depends_on": [dep]}, "cannot also have dependencies"),
    ):
        with pytest.raises(InvalidArgument, match=word):
            queue.enqueue("bd.t", **opts)  # type: ignore[arg-type]
    native = queue._native
    for spec, word in (
        ([("id", "k")], "dedup must be a dict, not list"),
        ({"id": "k", "colour": 1}, 'unknown dedup key "colour"'),
        ({"mode": "simple"}, "dedup needs an id"),
        ({"id": 1}, "dedup id must be a string, not int"),
        ({"id": "k", "mode": "sometimes"}, "unknown dedup mode"),
        ({"id": "k", "mode": "throttle", "ttl_ms": 0}, "ttl_ms must be positive"),
        ({"id": "k", "mode": "throttle", "ttl_ms": -1}, "ttl_ms -1 must be positive"),
        ({"id": "k", "mode": "throttle", "ttl_ms": 1.0}, "ttl_ms must be an integer (ms), not float"),
        ({"id": "k", "mode": "throttle", "ttl_ms": 2**64}, "out of range"),
        ({"id": "k", "mode": "debounce", "ttl_ms": 5, "replace": "yes"}, "replace must be a bool, not str"),
    ):
        with pytest.raises(InvalidArgument) as e:
            native.enqueue("bd.t", b"[]", {"dedup": spec})
        assert word in str(e.value), (spec, str(e.value))
        with pytest.raises(InvalidArgument):
            native.enqueue_outcome("bd.t", b"[]", {"dedup": spec})
    assert _total(queue) == 0, "nothing was written"
    assert queue.dedup_job_id("k") is None


def test_async_twins_of_dedup(queue: Queue) -> None:
    async def main() -> Dict[str, Any]:
        first = await queue.aenqueue_outcome("ad.t", [1], queue="ad", dedup={"id": "ad-key"})
        again = await queue.aenqueue_outcome("ad.t", [2], queue="ad", dedup={"id": "ad-key"})
        held = await queue.adedup_job_id("ad-key")
        deleted = await queue.adelete_dedup_key("ad-key")
        gone = await queue.adedup_job_id("ad-key")
        with pytest.raises(InvalidArgument):
            await queue.aenqueue_outcome("ad.t", dedup={"id": "ad-key", "mode": "throttle", "ttl_ms": 0})
        with pytest.raises(InvalidArgument):
            await queue.adelete_dedup_key("")
        return {"first": first, "again": again, "held": held, "deleted": deleted, "gone": gone}

    got = asyncio.run(main())
    assert got["first"].deduplicated is False
    assert got["again"] == EnqueueOutcome(got["first"].id, True)
    assert (got["held"], got["deleted"], got["gone"]) == (got["first"].id, True, None)
    assert _total(queue) == 1
