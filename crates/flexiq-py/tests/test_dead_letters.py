"""Dead letters: dead_letters, dead_letters_after, retry_dead, delete_dead, purge_dead,
purge_dead_by_task, and requeue_job for a stuck running job."""

from __future__ import annotations

import threading
import uuid

import pytest

from flexiq import InvalidArgument, JobFailed, NotFound, Queue

DEAD_KEYS = {"id", "original_job_id", "queue", "task_name", "error", "retry_count", "failed_at", "metadata"}


def _kill(queue: Queue, n: int) -> list:
    @queue.task(name="dies", max_retries=0)
    def dies(i: int) -> None:
        raise RuntimeError(f"dead {i}")

    rs = [dies.apply_async(args=[i], metadata={"i": i}) for i in range(n)]
    with queue.worker(concurrency=2):
        for r in rs:
            with pytest.raises(JobFailed):
                r.result(timeout=30)
    return rs


def test_dead_letter_lifecycle(queue: Queue) -> None:
    rs = _kill(queue, 3)
    dl = queue.dead_letters()
    assert len(dl) == 3 and set(dl[0]) == DEAD_KEYS
    assert {d["original_job_id"] for d in dl} == {r.id for r in rs}
    assert dl[0]["task_name"] == "dies" and "dead" in dl[0]["error"]
    assert len(queue.dead_letters(limit=2, offset=2)) == 1
    assert len(queue.dead_letters_by_task("dies")) == 3
    p1 = queue.dead_letters_after(limit=2)
    p2 = queue.dead_letters_after(limit=2, after=p1.next_cursor)
    assert p2.next_cursor is None and len(p1.items) + len(p2.items) == 3
    new_id = queue.retry_dead(dl[0]["id"])
    assert queue.get_job(new_id) is not None and len(queue.dead_letters()) == 2
    assert queue.delete_dead(dl[1]["id"]) is True
    assert queue.delete_dead(dl[1]["id"]) is False
    assert queue.purge_dead(older_than=3600) == 0
    assert queue.purge_dead(older_than=0) == 1
    assert queue.purge_dead_by_task("dies") == 0


def test_dead_letter_bad_input(queue: Queue) -> None:
    with pytest.raises(NotFound):
        queue.retry_dead(str(uuid.uuid4()))
    with pytest.raises(InvalidArgument):
        queue.retry_dead("nope")
    with pytest.raises(InvalidArgument):
        queue.dead_letters(limit=0)
    with pytest.raises(InvalidArgument):
        queue.dead_letters(offset=-1)
    with pytest.raises(InvalidArgument):
        queue.dead_letters_after(after="garbage")
    with pytest.raises(InvalidArgument):
        queue.purge_dead(older_than=-1)
    with pytest.raises(InvalidArgument):
        queue.purge_completed(older_than=-1)


def test_requeue_job_releases_a_running_job(queue: Queue, until) -> None:  # type: ignore[no-untyped-def]
    gate = threading.Event()
    runs = []

    @queue.task(name="stuck")
    def stuck() -> int:
        runs.append(1)
        gate.wait(20)
        return len(runs)

    r = stuck.delay()
    assert queue.requeue_job(r.id) is False  # pending, not running
    with queue.worker(concurrency=1):
        until(lambda: r.status == "running", what="job running")
        assert queue.requeue_job(r.id) is True
        assert r.status in ("pending", "running")
        gate.set()
        until(lambda: r.status == "completed", what="job completed")
    assert queue.requeue_job(str(uuid.uuid4())) is False


def test_purge_completed(queue: Queue) -> None:
    @queue.task(name="done")
    def done() -> int:
        return 1

    r = done.delay()
    with queue.worker(concurrency=1):
        r.result(timeout=20)
    assert queue.purge_completed(older_than=3600) == 0
    assert queue.purge_completed(older_than=0) == 1
