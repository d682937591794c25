"""Bulk removal and re-running (``_queue/clean.py``): clean, drain, obliterate, remove,
retry_jobs, remove_orphans, is_maxed, rate_limit_ttl and their async twins, on every store.
Each call is also given bad values (InvalidArgument) and wrong Python types (TypeError), and
every refusal is checked to have removed nothing."""

from __future__ import annotations

import asyncio
import math
import threading
import uuid
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

from flexiq import Conflict, InvalidArgument, JobFailed, JobNotFound, NotFound, Queue

HOUR_MS = 3_600_000
# Values no count, limit or age accepts, by what they should raise.
BAD_COUNTS = (0, -1, 10_001, 2**63, 2**64)
WRONG_INTS = ("10", 1.5, math.nan, None, True, False, b"1")
WRONG_BOOLS = (1, 0, "yes", None)
WRONG_STRS = (None, 3, b"q")


def _counts(queue: Queue) -> Dict[str, Dict[str, int]]:
    return queue.stats_by_queue()


def _finish(queue: Queue, name: str, queue_name: str, n: int, *, fail: bool = False) -> List[str]:
    """Runs ``n`` jobs of a new task on ``queue_name`` to completed (or, with ``fail``, dead)."""

    @queue.task(name=name, queue=queue_name, max_retries=0)
    def t(i: int) -> int:
        if fail:
            raise RuntimeError(f"boom {i}")
        return i

    rs = [t.delay(i) for i in range(n)]
    with queue.worker(concurrency=2, queues=[queue_name]):
        for r in rs:
            if fail:
                with pytest.raises(JobFailed):
                    r.result(timeout=30)
            else:
                r.result(timeout=30)
    return [r.id for r in rs]


@pytest.fixture
def running(queue: Queue) -> Iterator[Callable[[str], Tuple[str, Any]]]:
    """Starts a worker holding one job of the given queue running; released afterwards."""
    release = threading.Event()
    started = threading.Event()
    workers: List[Any] = []

    def start(queue_name: str) -> Tuple[str, Any]:
        @queue.task(name=f"hold.{queue_name}", queue=queue_name)
        def hold() -> None:
            started.set()
            release.wait(60)

        r = hold.delay()
        w = queue.worker(concurrency=1, queues=[queue_name], prefetch=0, worker_id=f"holder-{queue_name}").start()
        workers.append(w)
        assert started.wait(30), "the holding job never started"
        return r.id, w

    try:
        yield start
    finally:
        release.set()
        for w in workers:
            w.stop(60)


def test_clean_removes_old_jobs_of_one_status_oldest_first(queue: Queue) -> None:
    done = _finish(queue, "cl.t", "cq", 3)
    elsewhere = _finish(queue, "cl.o", "cq-other", 1)
    assert queue.clean("cq", "completed", HOUR_MS) == [], "none finished an hour ago"
    first = queue.clean("cq", "completed", 0, limit=1)
    assert len(first) == 1 and first[0] in done
    rest = queue.clean("cq", "completed", 0)
    assert sorted(first + rest) == sorted(done)
    assert all(queue.get_job(i) is None for i in done)
    assert queue.get_job(elsewhere[0]) is not None, "another queue is untouched"
    assert queue.clean("cq", "completed", 0) == []
    # Pending jobs age from creation; a job waiting on a cleaned one no longer waits.
    dep = queue.enqueue("cl.dep", queue="cq")
    waiter = queue.enqueue("cl.waiter", queue="cq-wait", depends_on=[dep])
    assert waiter.status == "waiting"
    assert queue.clean("cq", "pending", HOUR_MS) == []
    assert queue.clean("cq", "pending", 0) == [dep.id]
    assert waiter.status == "pending"


def test_clean_takes_dead_jobs_and_their_dead_letters(queue: Queue) -> None:
    ids = _finish(queue, "cl.d", "cdq", 2, fail=True)
    assert len(queue.dead_letters()) == 2
    assert sorted(queue.clean("cdq", "dead", 0, 10)) == sorted(ids)
    assert queue.dead_letters() == []
    with pytest.raises(JobNotFound):
        queue.get_job_errors(ids[0])


def test_clean_bad_input_removes_nothing(queue: Queue) -> None:
    queue.enqueue("cl.t", queue="cb")
    _finish(queue, "cl.b", "cb", 1)
    before = _counts(queue)
    for status in ("running", "bogus", ""):
        with pytest.raises(InvalidArgument, match="running|status|bogus"):
            queue.clean("cb", status, 0)
    with pytest.raises(InvalidArgument, match="grace_ms"):
        queue.clean("cb", "pending", -1)
    for n in BAD_COUNTS:
        with pytest.raises(InvalidArgument, match="limit"):
            queue.clean("cb", "pending", 0, limit=n)
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.clean("", "pending", 0)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.clean("cb", "pending", 0, limit=wrong)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.clean("cb", "pending", wrong)  # type: ignore[arg-type]
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.clean(wrong, "pending", 0)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.clean("cb", wrong, 0)  # type: ignore[arg-type]
    assert _counts(queue) == before


def test_drain_removes_due_then_delayed_pending_jobs(queue: Queue) -> None:
    due = [queue.enqueue("dr.t", queue="dq") for _ in range(2)]
    later = queue.enqueue("dr.t", queue="dq", delay=600)
    waiter = queue.enqueue("dr.t", queue="dq", depends_on=[later])
    other = queue.enqueue("dr.t", queue="dq-other")
    assert queue.drain("dq") == 2
    assert all(queue.get_job(r.id) is None for r in due)
    assert later.status == "pending" and waiter.status == "waiting"
    assert queue.drain("dq", include_delayed=True) == 1
    assert queue.get_job(later.id) is None
    # the job that waited on the drained one dropped the edge: it is pending now, and due
    assert waiter.status == "pending"
    assert queue.drain("dq", True) == 1
    assert queue.drain("dq", True) == 0
    assert other.status == "pending"
    before = _counts(queue)
    for wrong in WRONG_BOOLS:
        with pytest.raises(TypeError):
            queue.drain("dq-other", include_delayed=wrong)  # type: ignore[arg-type]
    for wrong_q in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.drain(wrong_q)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.drain("")
    assert _counts(queue) == before


def test_obliterate_in_pages_leaves_no_trace_of_the_queue(queue: Queue) -> None:
    queue.enqueue_many([{"task": "ob.t", "queue": "oq"} for _ in range(25)])
    dead = _finish(queue, "ob.d", "oq", 1, fail=True)
    keep = queue.enqueue("ob.t", queue="oq-other")
    queue.pause("oq")
    queue.set_queue_concurrency("oq", 3)
    queue.set_queue_rate_limit("oq", "5/s")
    left = []
    while not left or left[-1]:
        left.append(queue.obliterate("oq", count=10))
        assert len(left) < 10, f"obliterate does not finish: {left}"
    assert left == [16, 6, 0]
    assert queue.get_job(dead[0]) is None and queue.dead_letters() == []
    assert "oq" not in queue.stats_by_queue() and "oq" not in queue.paused_queues()
    assert queue.queue_config("oq") == {
        "paused": False, "rate_limit": None, "concurrency": None, "max_stalled_count": None,
    }
    assert keep.status == "pending"
    assert queue.obliterate("oq") == 0, "an empty queue is done at once"


def test_obliterate_bad_input_removes_nothing(queue: Queue) -> None:
    queue.enqueue_many([{"task": "ob.t", "queue": "ob"} for _ in range(3)])
    before = _counts(queue)
    for n in BAD_COUNTS:
        with pytest.raises(InvalidArgument, match="count"):
            queue.obliterate("ob", count=n)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.obliterate("ob", count=wrong)  # type: ignore[arg-type]
    for wrong in WRONG_BOOLS:
        with pytest.raises(TypeError):
            queue.obliterate("ob", force=wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        queue.obliterate(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.obliterate("")
    assert _counts(queue) == before


def test_obliterate_refuses_running_jobs_without_force(queue: Queue, running: Callable[..., Any]) -> None:
    job_id, worker = running("orun")
    queue.enqueue("ob.t", queue="orun")
    rows = {w["id"]: w for w in queue.list_workers()}
    assert rows["holder-orun"]["current_jobs"] == [job_id], "the worker shows the job it runs"
    with pytest.raises(Conflict, match="orun"):
        queue.obliterate("orun")
    assert queue.stats_for_queue("orun")["running"] == 1
    assert queue.stats_for_queue("orun")["pending"] == 1, "nothing removed"
    assert queue.obliterate("orun", force=True) == 0
    assert queue.get_job(job_id) is None


def test_remove_with_and_without_children(queue: Queue) -> None:
    leaf = queue.enqueue("rm.leaf", queue="rq")
    child = queue.enqueue("rm.child", queue="rq", depends_on=[leaf])
    shared = queue.enqueue("rm.shared", queue="rq")
    parent = queue.enqueue("rm.parent", queue="rq", depends_on=[child, shared])
    other = queue.enqueue("rm.other", queue="rq", depends_on=[shared])
    removed = queue.remove(parent.id)
    assert removed[0] == parent.id, "the job first"
    assert sorted(removed) == sorted([parent.id, child.id, leaf.id]), "not the shared child"
    assert shared.status == "pending" and other.status == "waiting"
    assert queue.remove(shared.id, remove_children=False) == [shared.id]
    assert other.status == "pending", "no dependency is left to wait for"
    with pytest.raises(NotFound):
        queue.remove(shared.id)


def test_remove_bad_input_and_running_jobs_remove_nothing(queue: Queue, running: Callable[..., Any]) -> None:
    job_id, _ = running("rrun")
    parent = queue.enqueue("rm.parent", queue="rrun", depends_on=[job_id])
    before = _counts(queue)
    with pytest.raises(Conflict, match=job_id):
        queue.remove(job_id)
    with pytest.raises(Conflict, match=job_id):
        queue.remove(parent.id, remove_children=True)
    with pytest.raises(NotFound):
        queue.remove(str(uuid.uuid4()))
    with pytest.raises(InvalidArgument):
        queue.remove("not-a-uuid")
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.remove(wrong)  # type: ignore[arg-type]
    for wrong in WRONG_BOOLS:
        with pytest.raises(TypeError):
            queue.remove(parent.id, remove_children=wrong)  # type: ignore[arg-type]
    assert _counts(queue) == before
    assert queue.remove(parent.id, remove_children=False) == [parent.id]


def test_retry_jobs_moves_finished_jobs_back_in_pages(queue: Queue) -> None:
    dead = _finish(queue, "rt.d", "tq", 3, fail=True)
    done = _finish(queue, "rt.c", "tq", 2)
    assert queue.retry_jobs("tq") == 0, "no job failed without a retry"
    assert queue.retry_jobs("tq", "dead", count=2) == 2
    assert queue.retry_jobs("tq", status="dead") == 1
    assert queue.retry_jobs("tq", "dead") == 0
    assert queue.dead_letters() == []
    for i in dead:
        job = queue.get_job(i)
        assert job is not None and (job.status, job.attempt, job.last_error) == ("pending", 0, None)
    assert queue.retry_jobs("tq", "completed", 10) == 2
    job = queue.get_job(done[0])
    assert job is not None and (job.status, job.result) == ("pending", None)
    assert queue.stats_for_queue("tq")["pending"] == 5


def test_retry_jobs_bad_input_moves_nothing(queue: Queue) -> None:
    _finish(queue, "rt.d", "tb", 1, fail=True)
    before = _counts(queue)
    for status in ("pending", "running", "bogus"):
        with pytest.raises(InvalidArgument):
            queue.retry_jobs("tb", status)
    for n in BAD_COUNTS:
        with pytest.raises(InvalidArgument, match="count"):
            queue.retry_jobs("tb", "dead", count=n)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.retry_jobs("tb", "dead", count=wrong)  # type: ignore[arg-type]
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.retry_jobs("tb", wrong)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.retry_jobs(wrong, "dead")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.retry_jobs("", "dead")
    assert _counts(queue) == before


def test_remove_orphans_finds_none_after_removals(queue: Queue) -> None:
    _finish(queue, "or.t", "orq", 2)
    queue.enqueue("or.t", queue="orq")
    queue.clean("orq", "completed", 0)
    queue.drain("orq")
    assert queue.remove_orphans() == 0
    with pytest.raises(TypeError):
        queue.remove_orphans("orq")  # type: ignore[call-arg]


def test_is_maxed_follows_the_concurrency_cap(queue: Queue, running: Callable[..., Any]) -> None:
    assert queue.is_maxed("mq") is False, "no cap"
    queue.set_queue_concurrency("mq", 1)
    assert queue.is_maxed("mq") is False, "nothing runs"
    running("mq")
    assert queue.is_maxed("mq") is True
    queue.set_queue_concurrency("mq", 2)
    assert queue.is_maxed("mq") is False
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.is_maxed("")
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.is_maxed(wrong)  # type: ignore[arg-type]


def test_rate_limit_ttl_counts_down_to_the_next_claim(queue: Queue, until: Callable[..., None]) -> None:
    assert queue.rate_limit_ttl("lq") == 0, "no limit"

    @queue.task(name="rl.t", queue="lq")
    def t() -> None:
        return None

    queue.set_queue_rate_limit("lq", "1/m")
    assert queue.rate_limit_ttl("lq") == 0, "a claim is free"
    first, second = t.delay(), t.delay()
    with queue.worker(concurrency=2, queues=["lq"]):
        until(lambda: queue.stats_for_queue("lq")["completed"] == 1, what="one claim")
        ttl = queue.rate_limit_ttl("lq")
        assert 0 < ttl <= 60_000, f"the next claim is up to a minute away, got {ttl} ms"
        assert queue.stats_for_queue("lq")["pending"] == 1
    assert {first.status, second.status} == {"completed", "pending"}
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.rate_limit_ttl("")
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.rate_limit_ttl(wrong)  # type: ignore[arg-type]


def test_async_twins_of_clean(queue: Queue) -> None:
    async def main() -> None:
        a = await queue.aenqueue("at.t", queue="aq")
        b = await queue.aenqueue("at.t", queue="aq")
        c = await queue.aenqueue("at.t", queue="aq", delay=600)
        assert await queue.aclean("aq", "pending", HOUR_MS) == []
        assert await queue.aremove(a.id, remove_children=False) == [a.id]
        assert await queue.adrain("aq") == 1 and await queue.aget_job(b.id) is None
        assert await queue.adrain("aq", include_delayed=False) == 0
        assert await queue.aclean("aq", "pending", 0, limit=5) == [c.id]
        assert await queue.aretry_jobs("aq") == 0
        assert await queue.aremove_orphans() == 0
        assert await queue.ais_maxed("aq") is False
        assert await queue.arate_limit_ttl("aq") == 0
        assert await queue.aobliterate("aq", force=False, count=10) == 0
        with pytest.raises(InvalidArgument):
            await queue.aobliterate("aq", count=0)
        with pytest.raises(TypeError):
            await queue.aclean("aq", "pending", True)  # type: ignore[arg-type]

    asyncio.run(main())
