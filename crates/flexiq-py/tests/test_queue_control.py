"""Queue management: pause / resume (and their declared aliases), purge, revoke, rate limits
and concurrency caps."""

from __future__ import annotations

import pytest

from flexiq import Conflict, InvalidArgument, Queue


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


def test_revoke_task_refuses_enqueues(queue: Queue) -> None:
    queue.enqueue("gone")
    queue.revoke_task("gone")
    with pytest.raises(Conflict) as e:
        queue.enqueue("gone")
    assert e.value.code == "CONFLICT"
    assert queue.stats()["pending"] == 1


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
