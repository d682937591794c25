"""Moving jobs that have not started (``_queue/reschedule.py``) and stalled-job recovery, on
every store: change_delay, promote, promote_jobs, change_priority, the enqueue option
``lifo``, the stall budget (set_queue_max_stalled / clear_queue_max_stalled, a job's
``stall_count``) and their async twins. Each call is also given bad values
(InvalidArgument), wrong Python types (TypeError) and jobs in the wrong status (Conflict),
and every refusal is checked to have changed nothing."""

from __future__ import annotations

import asyncio
import math
import threading
import time
import uuid
from typing import Callable, List, Tuple

import pytest

from conftest import wait_until

from flexiq import Conflict, InvalidArgument, Job, NotFound, Queue, Task, WorkflowJobs, WorkflowJobSpec

HOUR_MS = 3_600_000
MAX_PRIORITY = 2_097_152
BAD_COUNTS = (0, -1, 10_001, 2**63, 2**64)
WRONG_INTS = ("10", 1.5, math.nan, None, True, False, b"1")
WRONG_BOOLS = (1, 0, "yes", None)
WRONG_STRS = (None, 3, b"q")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _job(queue: Queue, job_id: str) -> Job:
    job = queue.get_job(job_id)
    assert job is not None, f"job {job_id} is gone"
    return job


def _snapshot(queue: Queue, ids: List[str]) -> List[Tuple[str, int, int]]:
    """What a reschedule may change on each job: status, priority, run_at."""
    return [(j.status, j.priority, j.run_at) for j in (_job(queue, i) for i in ids)]


def _finished(queue: Queue, queue_name: str) -> str:
    """A job of ``queue_name`` run to completed; its id."""

    @queue.task(name=f"done.{queue_name}", queue=queue_name)
    def t() -> int:
        return 1

    r = t.delay()
    with queue.worker(concurrency=1, queues=[queue_name]):
        assert r.result(timeout=30) == 1
    return r.id


def _ordered(queue: Queue, queue_name: str) -> Tuple[Task, Callable[[int], List[str]]]:
    """Task ``order.<queue_name>`` (it records its argument), and a call that runs ``n`` of
    its jobs one at a time and returns the order they ran in."""
    ran: List[str] = []

    @queue.task(name=f"order.{queue_name}", queue=queue_name)
    def t(tag: str) -> None:
        ran.append(tag)

    def run(n: int) -> List[str]:
        with queue.worker(concurrency=1, queues=[queue_name], prefetch=0):
            wait_until(lambda: len(ran) >= n, what=f"{n} jobs to run")
        return list(ran)

    return t, run


def _stage(run: str, stage_id: str) -> WorkflowJobSpec:
    return {"workflow_run_id": run, "workflow_id": "st.flow", "stage_id": stage_id, "payload": {}}


def _stall(queue: Queue, wf: WorkflowJobs) -> Job:
    """Claims the view's next job and lets its lease lapse: the stale-lease rescue (the
    store call a cleaner worker makes) recovers it. The job afterwards."""
    got = wf.dequeue()
    assert got is not None, "nothing to claim"
    # The host reports that it runs the job (a lease renewal records the start): only a
    # started job's lapsed lease is a stall.
    wf.touch_job(got.job.id)
    time.sleep(0.3)
    assert wf.release_stale_jobs(100) == 1
    assert wf.complete(got.job.id, got.fence) == "superseded", "the lapsed attempt's ack is void"
    return _job(queue, got.job.id)


def test_change_delay_moves_a_pending_job_in_time(queue: Queue) -> None:
    r = queue.enqueue("cd.t", queue="cdq")
    before = _now_ms()
    queue.change_delay(r.id, HOUR_MS)
    job = _job(queue, r.id)
    assert job.status == "pending" and before + HOUR_MS <= job.run_at <= _now_ms() + HOUR_MS
    queue.change_delay(r.id, 0)
    assert _job(queue, r.id).run_at <= _now_ms(), "due again"
    lifo = queue.enqueue("cd.t", queue="cdq", lifo=True)
    assert _job(queue, lifo.id).run_at < 0
    queue.change_delay(lifo.id, 1000)
    assert _job(queue, lifo.id).run_at > _now_ms(), "a new delay makes a LIFO job FIFO"


def test_change_delay_refuses_bad_input_and_wrong_statuses(queue: Queue) -> None:
    r = queue.enqueue("cd.t", queue="cdb")
    waiter = queue.enqueue("cd.t", queue="cdb", depends_on=[r])
    done = _finished(queue, "cdb-done")
    ids = [r.id, waiter.id]
    before = _snapshot(queue, ids)
    with pytest.raises(Conflict, match="completed"):
        queue.change_delay(done, 1000)
    with pytest.raises(Conflict, match="waiting"):
        queue.change_delay(waiter.id, 1000)
    with pytest.raises(NotFound):
        queue.change_delay(str(uuid.uuid4()), 1000)
    with pytest.raises(InvalidArgument):
        queue.change_delay("not-a-uuid", 1000)
    with pytest.raises(InvalidArgument, match="delay"):
        queue.change_delay(r.id, -1)
    with pytest.raises(InvalidArgument):
        queue.change_delay(r.id, 2**63)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.change_delay(r.id, wrong)  # type: ignore[arg-type]
    for wrong_id in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.change_delay(wrong_id, 1000)  # type: ignore[arg-type]
    assert _snapshot(queue, ids) == before
    assert _job(queue, done).status == "completed"


def test_promote_makes_a_delayed_job_due(queue: Queue) -> None:
    r = queue.enqueue("pr.t", queue="prq", delay=600)
    assert _job(queue, r.id).run_at > _now_ms()
    queue.promote(r.id)
    job = _job(queue, r.id)
    assert job.status == "pending" and job.run_at <= _now_ms()
    with pytest.raises(Conflict, match="already due"):
        queue.promote(r.id)
    done = _finished(queue, "prq-done")
    with pytest.raises(Conflict, match="completed"):
        queue.promote(done)
    with pytest.raises(NotFound):
        queue.promote(str(uuid.uuid4()))
    with pytest.raises(InvalidArgument):
        queue.promote("not-a-uuid")
    for wrong_id in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.promote(wrong_id)  # type: ignore[arg-type]


def test_promote_jobs_promotes_a_queue_in_pages_soonest_first(queue: Queue) -> None:
    later = [queue.enqueue("pj.t", queue="pjq", delay=600 + i).id for i in range(5)]
    other = queue.enqueue("pj.t", queue="pjq-other", delay=600)
    due = queue.enqueue("pj.t", queue="pjq")
    assert queue.promote_jobs("pjq", count=2) == 2
    now = _now_ms()
    assert [_job(queue, i).run_at <= now for i in later] == [True, True, False, False, False]
    assert queue.promote_jobs("pjq") == 3
    assert queue.promote_jobs("pjq", 10) == 0
    assert all(_job(queue, i).run_at <= _now_ms() for i in later + [due.id])
    assert _job(queue, other.id).run_at > _now_ms(), "another queue is untouched"


def test_promote_jobs_bad_input_moves_nothing(queue: Queue) -> None:
    ids = [queue.enqueue("pj.t", queue="pjb", delay=600).id for _ in range(2)]
    before = _snapshot(queue, ids)
    for n in BAD_COUNTS:
        with pytest.raises(InvalidArgument, match="count"):
            queue.promote_jobs("pjb", count=n)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.promote_jobs("pjb", count=wrong)  # type: ignore[arg-type]
    for wrong_q in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.promote_jobs(wrong_q)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.promote_jobs("")
    assert _snapshot(queue, ids) == before


def test_change_priority_reorders_jobs_that_have_not_started(queue: Queue) -> None:
    t, run = _ordered(queue, "cpq")
    moved = [t.apply_async([tag]) for tag in "abcd"]
    queue.change_priority(moved[2].id, 5)
    queue.change_priority(moved[3].id, 0, lifo=True)
    assert _job(queue, moved[2].id).priority == 5
    assert _job(queue, moved[3].id).run_at < 0, "placed LIFO"
    assert run(4) == ["c", "d", "a", "b"]
    delayed = queue.enqueue("cp.t", queue="cpw", delay=600)
    waiter = queue.enqueue("cp.t", queue="cpw", depends_on=[delayed])
    queue.change_priority(waiter.id, -MAX_PRIORITY)
    queue.change_priority(delayed.id, MAX_PRIORITY)
    assert _job(queue, waiter.id).priority == -MAX_PRIORITY
    assert _job(queue, delayed.id).priority == MAX_PRIORITY
    before = _snapshot(queue, [delayed.id, waiter.id])
    with pytest.raises(Conflict, match="delayed"):
        queue.change_priority(delayed.id, 1, lifo=True)
    with pytest.raises(Conflict, match="waiting"):
        queue.change_priority(waiter.id, 1, lifo=True)
    assert _snapshot(queue, [delayed.id, waiter.id]) == before


def test_change_priority_refuses_bad_input_and_started_jobs(queue: Queue) -> None:
    r = queue.enqueue("cp.t", queue="cpb", priority=3)
    done = _finished(queue, "cpb-done")
    before = _snapshot(queue, [r.id])
    with pytest.raises(Conflict, match="completed"):
        queue.change_priority(done, 1)
    with pytest.raises(NotFound):
        queue.change_priority(str(uuid.uuid4()), 1)
    with pytest.raises(InvalidArgument):
        queue.change_priority("not-a-uuid", 1)
    for bad in (MAX_PRIORITY + 1, -MAX_PRIORITY - 1, 2**40, 2**63):
        with pytest.raises(InvalidArgument, match="priority"):
            queue.change_priority(r.id, bad)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.change_priority(r.id, wrong)  # type: ignore[arg-type]
    for wrong_flag in WRONG_BOOLS:
        with pytest.raises(TypeError):
            queue.change_priority(r.id, 1, lifo=wrong_flag)  # type: ignore[arg-type]
    for wrong_id in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.change_priority(wrong_id, 1)  # type: ignore[arg-type]
    assert _snapshot(queue, [r.id]) == before


def test_change_priority_refuses_a_running_job(queue: Queue) -> None:
    started, release = threading.Event(), threading.Event()

    @queue.task(name="cp.hold", queue="cpr")
    def hold() -> None:
        started.set()
        release.wait(60)

    r = hold.delay()
    try:
        with queue.worker(concurrency=1, queues=["cpr"], prefetch=0):
            assert started.wait(30), "the holding job never started"
            with pytest.raises(Conflict, match="running"):
                queue.change_priority(r.id, 1)
            with pytest.raises(Conflict, match="running"):
                queue.change_delay(r.id, 0)
            with pytest.raises(Conflict, match="running"):
                queue.promote(r.id)
            assert _job(queue, r.id).priority == 0
            release.set()
            r.result(timeout=30)
    finally:
        release.set()


def test_the_lifo_enqueue_option_runs_the_newest_first(queue: Queue) -> None:
    t, run = _ordered(queue, "lq")
    queue.enqueue("order.lq", ["fifo-1"], queue="lq")
    t.apply_async(["fifo-2"], lifo=False)
    # LIFO order is the order of the placing calls' millisecond clock: apart by a few ms
    first = t.apply_async(["lifo-1"], lifo=True)
    time.sleep(0.005)
    queue.enqueue_many([{"task": t, "args": ["lifo-2"], "lifo": True}])
    time.sleep(0.005)
    queue.enqueue("order.lq", ["lifo-3"], queue="lq", lifo=True)
    queue.enqueue("order.lq", ["high"], queue="lq", priority=1)
    assert _job(queue, first.id).run_at < 0
    assert run(6) == ["high", "lifo-3", "lifo-2", "lifo-1", "fifo-1", "fifo-2"]


def test_the_lifo_option_refuses_a_delay_and_wrong_types(queue: Queue) -> None:
    t = queue.task(name="lo.t", queue="lob")(lambda: None)
    for bad, word in (
        ({"lifo": True, "delay": 5}, "lifo"),
        ({"lifo": True, "eta": time.time() + 60}, "lifo"),
        ({"lifo": 1}, "lifo must be a bool"),
        ({"lifo": "yes"}, "lifo must be a bool"),
    ):
        for call in (
            lambda: queue.enqueue("lo.t", **bad),
            lambda: t.apply_async(**bad),
            lambda: queue.enqueue_many([{"task": t, **bad}]),
        ):
            with pytest.raises(InvalidArgument) as e:
                call()
            assert word in str(e.value), str(e.value)
    with pytest.raises(InvalidArgument, match="lifo must be a bool, not int"):
        queue._native.enqueue("lo.t", b"[[],{}]", {"lifo": 1})
    assert sum(queue.stats().values()) == 0, "nothing was written"
    delayed = queue.enqueue("lo.t", lifo=False, delay=60)
    assert _job(queue, delayed.id).run_at > _now_ms()


def test_the_stall_budget_is_persisted_and_validated(queue: Queue) -> None:
    assert queue.queue_config("sq")["max_stalled_count"] is None, "the default"
    queue.set_queue_max_stalled("sq", 3)
    queue.set_queue_concurrency("sq", 2)
    assert queue.queue_config("sq") == {
        "paused": False, "rate_limit": None, "concurrency": 2, "max_stalled_count": 3,
    }
    queue.set_queue_max_stalled("sq", 0)
    assert queue.queue_config("sq")["max_stalled_count"] == 0
    queue.set_queue_max_stalled("sq", 10_000)
    before = queue.queue_config("sq")
    for n in (-1, 10_001, 2**40, 2**63):
        with pytest.raises(InvalidArgument, match="max_stalled_count"):
            queue.set_queue_max_stalled("sq", n)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.set_queue_max_stalled("sq", wrong)  # type: ignore[arg-type]
    for wrong_q in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.set_queue_max_stalled(wrong_q, 1)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.clear_queue_max_stalled(wrong_q)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.set_queue_max_stalled("", 1)
    with pytest.raises(InvalidArgument, match="queue name"):
        queue.clear_queue_max_stalled("")
    assert queue.queue_config("sq") == before
    queue.clear_queue_max_stalled("sq")
    assert queue.queue_config("sq")["max_stalled_count"] is None
    assert queue.queue_config("sq")["concurrency"] == 2, "the other controls stay"
    queue.clear_queue_max_stalled("never")  # clearing what was never set is a no-op


def test_a_stalled_job_is_recovered_once_then_fails_stalled(queue: Queue) -> None:
    wf = queue.workflow_jobs(queue="stq")
    (job_id,) = wf.enqueue_parallel([_stage("run-st", "a")])
    assert _job(queue, job_id).stall_count == 0
    job = _stall(queue, wf)
    assert (job.status, job.attempt, job.stall_count) == ("pending", 0, 1), "no attempt spent"
    assert (job.last_error or "").startswith("LEASE_HEARTBEAT_LOST"), job.last_error
    job = _stall(queue, wf)
    assert (job.status, job.stall_count) == ("dead", 2)
    assert (job.last_error or "").startswith("STALLED") and job_id in (job.last_error or ""), job.last_error
    assert [d["original_job_id"] for d in queue.dead_letters()] == [job_id]
    assert job.to_dict()["stall_count"] == 2


def test_the_stall_budget_decides_when_a_stall_fails(queue: Queue) -> None:
    strict = queue.workflow_jobs(queue="st0")
    lenient = queue.workflow_jobs(queue="st2")
    queue.set_queue_max_stalled("st0", 0)
    queue.set_queue_max_stalled("st2", 2)
    strict.enqueue_parallel([_stage("run-s0", "a")])
    lenient.enqueue_parallel([_stage("run-s2", "a")])
    job = _stall(queue, strict)
    assert (job.status, job.stall_count) == ("dead", 1), "0 fails the first stall"
    assert (job.last_error or "").startswith("STALLED")
    statuses = [_stall(queue, lenient).status for _ in range(3)]
    assert statuses == ["pending", "pending", "dead"]


def test_a_worker_recovers_a_stalled_job_without_spending_a_retry(queue: Queue, store_url: str) -> None:
    """A worker that stops renewing its lease loses its job to the cleaner, which runs it."""
    started, release = threading.Event(), threading.Event()
    other = Queue(url=store_url)

    for q in (queue, other):

        @q.task(name="st.job", queue="stw", max_retries=0)
        def hold_once() -> str:
            if not started.is_set():
                started.set()
                release.wait(60)
            return "done"

    r = queue.enqueue("st.job", queue="stw")
    try:
        first = queue.worker(concurrency=1, queues=["stw"], prefetch=0, lease=30, maintenance=False).start()
        second = None
        try:
            assert started.wait(30), "the first worker never started the job"
            second = other.worker(concurrency=1, queues=["stw"], lease=0.3).start()
            assert other.result(r.id, timeout=60) == "done"
        finally:
            release.set()
            first.stop(60)
            if second is not None:
                second.stop(60)
        job = _job(queue, r.id)
        # The first worker froze before its heartbeat (every 10 s with a 30 s lease) reported
        # the start, so the release spent neither the attempt nor a stall.
        assert (job.status, job.attempt, job.stall_count) == ("completed", 1, 0), "recovered with no retry left"
    finally:
        other.close()


def test_async_twins_of_reschedule(queue: Queue) -> None:
    async def main() -> None:
        a = await queue.aenqueue("at.t", queue="arq", delay=600)
        b = await queue.aenqueue("at.t", queue="arq", delay=600)
        c = await queue.aenqueue("at.t", queue="arq")
        await queue.apromote(a.id)
        promoted = await queue.aget_job(a.id)
        assert promoted is not None and promoted.run_at <= _now_ms()
        assert await queue.apromote_jobs("arq") == 1
        assert await queue.apromote_jobs("arq", count=5) == 0
        await queue.achange_delay(b.id, HOUR_MS)
        assert _job(queue, b.id).run_at > _now_ms()
        await queue.achange_priority(c.id, 7)
        await queue.achange_priority(c.id, 8, lifo=True)
        job = _job(queue, c.id)
        assert job.priority == 8 and job.run_at < 0
        await queue.aset_queue_max_stalled("arq", 4)
        assert (await queue.aqueue_config("arq"))["max_stalled_count"] == 4
        await queue.aclear_queue_max_stalled("arq")
        assert (await queue.aqueue_config("arq"))["max_stalled_count"] is None
        with pytest.raises(InvalidArgument):
            await queue.apromote_jobs("arq", count=0)
        with pytest.raises(TypeError):
            await queue.achange_delay(b.id, 1.5)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await queue.aset_queue_max_stalled("arq", True)

    asyncio.run(main())
