"""Queue management: pause / resume (and their declared aliases), purge, rate limits and
concurrency caps (set and cleared), the worker registry, job logs and fairness groups.
Revocation has its own file (test_revoke.py)."""

from __future__ import annotations

import asyncio
import math
import uuid

import pytest

from flexiq import InvalidArgument, Queue, current_job


def test_pause_resume_and_aliases(queue: Queue) -> None:
    assert queue.paused_queues() == []
    queue.pause("emails")
    queue.pause_queue("reports")
    assert queue.paused_queues() == ["emails", "reports"]
    assert queue.list_paused_queues() == ["emails", "reports"]
    assert queue.queue_config("emails")["paused"] is True
    queue.resume("emails")
    queue.resume_queue("reports")
    assert queue.paused_queues() == []


def test_paused_queue_is_not_dispatched(queue: Queue, until) -> None:  # type: ignore[no-untyped-def]
    @queue.task(name="p.t", queue="held")
    def t() -> int:
        return 1

    queue.pause("held")
    r = t.delay()
    other = queue.enqueue("p.t", queue="free")
    with queue.worker(concurrency=2):
        assert other.result(timeout=20) == 1
        assert r.status == "pending"
        queue.resume("held")
        assert r.result(timeout=20) == 1


def test_purge_cancels_pending_and_alias(queue: Queue) -> None:
    a = queue.enqueue("t", queue="bulk")
    queue.enqueue("t", queue="bulk")
    keep = queue.enqueue("t", queue="other")
    assert queue.purge("bulk") == 2
    assert a.status == "cancelled" and keep.status == "pending"
    assert queue.purge_queue("bulk") == 0


def test_rate_limit_and_concurrency_are_persisted_and_validated(queue: Queue) -> None:
    queue.set_queue_rate_limit("api", "10/s")
    queue.set_queue_concurrency("api", 3)
    cfg = queue.queue_config("api")
    assert cfg["rate_limit"] == "10/s" and cfg["concurrency"] == 3
    for bad in ("", "10", "0/s", "x/s", "10/d"):
        with pytest.raises(InvalidArgument):
            queue.set_queue_rate_limit("api", bad)
    for bad_n in (0, -1):
        with pytest.raises(InvalidArgument):
            queue.set_queue_concurrency("api", bad_n)
    with pytest.raises(InvalidArgument):
        queue.pause("")
    assert queue.queue_config("api")["concurrency"] == 3


def test_clear_rate_limit_and_concurrency(queue: Queue) -> None:
    queue.set_queue_rate_limit("api", "5/m")
    queue.set_queue_concurrency("api", 2)
    queue.clear_queue_rate_limit("api")
    assert queue.queue_config("api") == {
        "paused": False, "rate_limit": None, "concurrency": 2, "max_stalled_count": None,
    }
    queue.clear_queue_concurrency("api")
    assert queue.queue_config("api") == {
        "paused": False, "rate_limit": None, "concurrency": None, "max_stalled_count": None,
    }
    # clearing what was never set is a no-op
    queue.clear_queue_rate_limit("never")
    queue.clear_queue_concurrency("never")
    assert queue.queue_config("never")["rate_limit"] is None
    for bad in ("", "x" * 300, "a\x00b"):
        for call in (queue.clear_queue_rate_limit, queue.clear_queue_concurrency):
            with pytest.raises(InvalidArgument):
                call(bad)
    for wrong in (None, 3, b"api"):
        with pytest.raises(TypeError):
            queue.clear_queue_rate_limit(wrong)  # type: ignore[arg-type]
    for bad_n in (2**40, 1.5, math.nan):
        with pytest.raises((InvalidArgument, TypeError)):
            queue.set_queue_concurrency("api", bad_n)  # type: ignore[arg-type]


def test_cleared_concurrency_cap_lets_jobs_run(queue: Queue) -> None:
    @queue.task(name="cc.t", queue="capped")
    def t() -> int:
        return 1

    queue.set_queue_concurrency("capped", 1)
    queue.clear_queue_concurrency("capped")
    r = t.delay()
    with queue.worker(concurrency=1):
        assert r.result(timeout=20) == 1


def test_list_workers_shows_a_running_worker(queue: Queue) -> None:
    @queue.task(name="lw.t")
    def t() -> None:
        return None

    assert queue.list_workers() == []
    w = queue.worker(concurrency=3, queues=["lw-a", "lw-b"], worker_id="lw-worker-1").start()
    try:
        rows = {row["id"]: row for row in queue.list_workers()}
        assert set(rows) == {"lw-worker-1"}
        row = rows["lw-worker-1"]
        assert row["queues"] == ["lw-a", "lw-b"] and row["concurrency"] == 3
        assert row["pid"] > 0 and row["host"]
        assert row["heartbeat_at"] >= row["started_at"] > 1_600_000_000_000
        assert row["current_jobs"] == [], "an idle worker runs no job"
    finally:
        w.stop()


def test_job_logs_read_back_what_a_handler_logged(queue: Queue) -> None:
    @queue.task(name="logs.t")
    def t() -> None:
        current_job().log("first")
        current_job().log("second", level="error")

    r = t.delay()
    assert queue.job_logs(r.id) == []
    with queue.worker(concurrency=1):
        r.result(timeout=20)
    logs = queue.job_logs(r.id)
    assert [(entry["level"], entry["message"]) for entry in logs] == [("info", "first"), ("error", "second")]
    assert all(entry["job_id"] == r.id and entry["logged_at"] > 1_600_000_000_000 for entry in logs)
    with pytest.raises(InvalidArgument):
        queue.job_logs("not-a-uuid")
    assert queue.job_logs(str(uuid.uuid4())) == []  # an unknown job has no log lines
    with pytest.raises(TypeError):
        queue.job_logs(None)  # type: ignore[arg-type]


def test_group_key_from_the_task_and_per_call(queue: Queue) -> None:
    @queue.task(name="gk.t", group_key="tenant-1")
    def t() -> None:
        return None

    job = queue.get_job(t.delay().id)
    assert job is not None and job.group_key == "tenant-1"
    job = queue.get_job(t.apply_async(group_key="tenant-2").id)
    assert job is not None and job.group_key == "tenant-2"
    job = queue.get_job(queue.enqueue("gk.other", group_key="tenant-3").id)
    assert job is not None and job.group_key == "tenant-3"
    assert queue.get_job(queue.enqueue("gk.other").id).group_key is None  # type: ignore[union-attr]
    for bad in ("", "g" * 300):
        with pytest.raises(InvalidArgument):
            queue.enqueue("gk.other", group_key=bad)
    with pytest.raises(InvalidArgument):
        queue.enqueue("gk.other", group_key=7)  # type: ignore[arg-type]
    empty = queue.task(name="gk.bad", group_key="")(lambda: None)
    with pytest.raises(InvalidArgument):
        empty.delay()
    assert queue.stats()["pending"] == 4


def test_async_twins_of_queue_control(queue: Queue) -> None:
    async def main() -> None:
        await queue.aset_queue_rate_limit("aq", "3/s")
        await queue.aset_queue_concurrency("aq", 4)
        await queue.aclear_queue_rate_limit("aq")
        await queue.aclear_queue_concurrency("aq")
        assert await queue.aqueue_config("aq") == {
            "paused": False, "rate_limit": None, "concurrency": None, "max_stalled_count": None,
        }
        assert await queue.alist_workers() == []
        r = await queue.aenqueue("aq.t")
        assert await queue.ajob_logs(r.id) == []
        with pytest.raises(InvalidArgument):
            await queue.aclear_queue_concurrency("")

    asyncio.run(main())
