"""Jobs API: get_job, get_result, result, stream, cancellation, errors, replay, the DAG."""

from __future__ import annotations

import asyncio
import uuid

import pytest

import flexiq
from flexiq import FlexiqTimeout, InvalidArgument, JobNotFound, Queue


def test_unknown_ids_and_garbage_ids(queue: Queue) -> None:
    unknown = str(uuid.uuid4())
    assert queue.get_job(unknown) is None
    for call in (queue.get_result, queue.request_cancel, queue.is_cancel_requested, queue.cancel_job, queue.replay):
        with pytest.raises(JobNotFound) as e:
            call(unknown)
        assert e.value.code == "NOT_FOUND" and isinstance(e.value, KeyError)
    with pytest.raises(JobNotFound):
        queue.result(unknown, timeout=1)
    for call in (queue.get_job, queue.get_result, queue.cancel_job, queue.job_dag, queue.get_job_errors):
        with pytest.raises(InvalidArgument) as e2:
            call("garbage")
        assert isinstance(e2.value, ValueError)
    with pytest.raises(TypeError):
        queue.get_job(42)  # type: ignore[arg-type]


def test_result_times_out_and_validates(queue: Queue) -> None:
    r = queue.enqueue("nobody.runs.this", args=[1])
    with pytest.raises(FlexiqTimeout) as e:
        queue.result(r.id, timeout=0.2, poll=0.05)
    assert isinstance(e.value, TimeoutError) and e.value.code == "TIMEOUT"
    with pytest.raises(InvalidArgument):
        queue.result(r.id, timeout=-1)
    with pytest.raises(InvalidArgument):
        queue.result(r.id, timeout=1, poll=0)
    assert queue.get_result(r.id) is None
    with pytest.raises(FlexiqTimeout):
        list(queue.stream(r.id, timeout=0.2))


def test_cancel_pending_and_cancelled_result(queue: Queue) -> None:
    r = queue.enqueue("t", args=[])
    assert queue.is_cancel_requested(r.id) is False
    assert queue.cancel_job(r.id) is True
    assert queue.cancel_job(r.id) is False
    assert queue.request_cancel(r.id) is False  # already terminal
    with pytest.raises(flexiq.JobCancelled) as e:
        queue.result(r.id, timeout=5)
    assert e.value.code == "JOB_CANCELLED" and e.value.job_id == r.id


def test_replay_history_and_dag(queue: Queue) -> None:
    a = queue.enqueue("a")
    b = queue.enqueue("b", depends_on=[a])
    c = queue.enqueue("c", depends_on=[b.id])
    dag = queue.job_dag(b.id)
    assert {n["id"] for n in dag["nodes"]} == {a.id, b.id, c.id}
    assert {(e["from"], e["to"]) for e in dag["edges"]} == {(a.id, b.id), (b.id, c.id)}
    assert b.status == "waiting"
    new_id = queue.replay(a.id)
    assert new_id != a.id and queue.get_job(new_id) is not None
    hist = queue.replay_history(a.id)
    assert [(h["original_job_id"], h["replay_job_id"]) for h in hist] == [(a.id, new_id)]
    assert queue.get_replay_history(a.id) == hist
    with pytest.raises(JobNotFound):
        queue.job_dag(str(uuid.uuid4()))
    assert queue.get_job_errors(a.id) == []


def test_unknown_dependency_is_refused_and_nothing_written(queue: Queue) -> None:
    with pytest.raises(InvalidArgument):
        queue.enqueue("t", depends_on=[str(uuid.uuid4())])
    assert sum(queue.stats().values()) == 0


def test_max_pending_rejects_with_queue_full(store_url: str) -> None:
    q = flexiq.Queue(url=store_url, max_pending=2)
    try:
        q.enqueue("t")
        q.enqueue("t")
        with pytest.raises(flexiq.QueueFull) as e:
            q.enqueue("t")
        assert e.value.code == "QUEUE_FULL"
        assert q.count_pending_by_queue("default") == 2
    finally:
        q.close()
    with pytest.raises(InvalidArgument):
        flexiq.Queue(url=store_url, max_pending=0)


def test_closed_queue_raises_closed(store_url: str) -> None:
    q = flexiq.Queue(url=store_url)
    q.close()
    with pytest.raises(flexiq.Closed):
        q.stats()


def test_is_job_in_state_follows_the_job(queue: Queue) -> None:
    r = queue.enqueue("nobody.runs.this", args=[1])
    assert queue.is_job_in_state(r.id, "pending") is True
    assert queue.is_job_in_state(r.id, "running") is False
    assert queue.is_job_in_state(job_id=r.id, status="pending") is True
    assert queue.cancel_job(r.id) is True
    assert queue.is_job_in_state(r.id, "cancelled") is True
    assert queue.is_job_in_state(r.id, "pending") is False
    assert queue.is_job_in_state(str(uuid.uuid4()), "pending") is False


def test_is_job_in_state_refuses_bad_input(queue: Queue) -> None:
    r = queue.enqueue("nobody.runs.this", args=[1])
    with pytest.raises(InvalidArgument, match="unknown status"):
        queue.is_job_in_state(r.id, "PENDING")
    with pytest.raises(InvalidArgument):
        queue.is_job_in_state("garbage", "pending")
    with pytest.raises(TypeError):
        queue.is_job_in_state(r.id, 1)  # type: ignore[arg-type]
    assert queue.get_job(r.id).status == "pending"


def test_ais_job_in_state(queue: Queue) -> None:
    r = queue.enqueue("nobody.runs.this", args=[1])

    async def main() -> None:
        assert await queue.ais_job_in_state(r.id, "pending") is True
        with pytest.raises(InvalidArgument):
            await queue.ais_job_in_state(r.id, "nope")

    asyncio.run(main())
