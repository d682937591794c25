"""revoke_task as the spec says: future enqueues of the task fail with TaskRevoked (also dead
letter retries and replays), its pending jobs still run, and unrevoke_task / revoked_tasks."""

from __future__ import annotations

import asyncio

import pytest

import flexiq
from flexiq import InvalidArgument, JobFailed, Queue, TaskRevoked


def test_enqueue_of_a_revoked_task_is_task_revoked_and_writes_nothing(queue: Queue) -> None:
    @queue.task(name="rv.gone")
    def gone() -> None:
        return None

    queue.revoke_task("rv.gone")
    before = queue.stats()
    for enqueue in (
        lambda: queue.enqueue("rv.gone"),
        gone.delay,
        lambda: gone.apply_async(delay=5),
        lambda: queue.enqueue_many([{"task": "rv.gone"}]),
    ):
        with pytest.raises(TaskRevoked) as e:
            enqueue()
        assert e.value.code == "TASK_REVOKED" and e.value.task == "rv.gone"
        assert "rv.gone" in str(e.value)
        assert isinstance(e.value, flexiq.FlexiqError)
    assert queue.stats() == before, "a refused enqueue wrote nothing"
    # Other tasks are not affected.
    assert queue.enqueue("rv.other").status == "pending"


def test_pending_jobs_of_a_revoked_task_still_run(queue: Queue) -> None:
    @queue.task(name="rv.work")
    def work(n: int) -> int:
        return n * 2

    pending = [work.delay(i) for i in range(3)]
    queue.revoke_task("rv.work")
    with pytest.raises(TaskRevoked):
        work.delay(99)
    with queue.worker(concurrency=2):
        assert [r.result(timeout=20) for r in pending] == [0, 2, 4]
    assert queue.stats()["completed"] == 3


def test_retry_dead_and_replay_of_a_revoked_task_are_refused(queue: Queue) -> None:
    @queue.task(name="rv.doomed", max_retries=0)
    def doomed() -> None:
        raise RuntimeError("no")

    r = doomed.delay()
    with queue.worker(concurrency=1):
        with pytest.raises(JobFailed):
            r.result(timeout=20)
    dead = queue.dead_letters()
    assert [d["original_job_id"] for d in dead] == [r.id]
    queue.revoke_task("rv.doomed")
    with pytest.raises(TaskRevoked):
        queue.retry_dead(dead[0]["id"])
    with pytest.raises(TaskRevoked):
        queue.replay(r.id)
    assert queue.stats()["pending"] == 0
    assert queue.unrevoke_task("rv.doomed") is True
    assert queue.get_job(queue.retry_dead(dead[0]["id"])) is not None


def test_unrevoke_and_revoked_tasks(queue: Queue) -> None:
    assert queue.revoked_tasks() == []
    assert queue.unrevoke_task("never.revoked") is False
    queue.revoke_task("b.task")
    queue.revoke_task("a.task")
    queue.revoke_task("a.task")  # revoking twice is harmless
    assert queue.revoked_tasks() == ["a.task", "b.task"]
    assert queue.unrevoke_task("a.task") is True
    assert queue.unrevoke_task("a.task") is False
    assert queue.revoked_tasks() == ["b.task"]
    assert queue.enqueue("a.task").status == "pending"
    with pytest.raises(TaskRevoked):
        queue.enqueue("b.task")


def test_revocation_is_per_namespace(store_url: str) -> None:
    a = Queue(url=store_url, namespace="rv-a")
    b = Queue(url=store_url, namespace="rv-b")
    try:
        a.revoke_task("shared")
        assert b.revoked_tasks() == []
        assert b.enqueue("shared").status == "pending"
        with pytest.raises(TaskRevoked):
            a.enqueue("shared")
    finally:
        a.close()
        b.close()


def test_bad_task_names_are_invalid_argument(queue: Queue) -> None:
    for call in (queue.revoke_task, queue.unrevoke_task):
        with pytest.raises(InvalidArgument):
            call("")
        with pytest.raises(InvalidArgument):
            call("x" * 300)
        with pytest.raises(InvalidArgument):
            call("bad\nname")
        with pytest.raises(TypeError):
            call(42)  # type: ignore[arg-type]
    assert queue.revoked_tasks() == []


def test_async_twins(queue: Queue) -> None:
    async def main() -> None:
        await queue.arevoke_task("rv.async")
        assert await queue.arevoked_tasks() == ["rv.async"]
        with pytest.raises(TaskRevoked):
            await queue.aenqueue("rv.async")
        with pytest.raises(TaskRevoked):
            await queue.aenqueue_many([{"task": "rv.async"}])
        assert await queue.aunrevoke_task("rv.async") is True
        assert await queue.aunrevoke_task("rv.async") is False
        assert (await queue.aenqueue("rv.async")).status == "pending"

    asyncio.run(main())
