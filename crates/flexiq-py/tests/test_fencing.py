"""Fencing end to end through the Python worker: a handler paused past its lease loses the
job to another worker, which finishes it; the first finishes late, its result is
``superseded`` and changes nothing."""

from __future__ import annotations

import threading
from typing import List, Optional

from flexiq import Queue, current_job


def _zombie_queue(url: str, started: threading.Event, release: threading.Event, reasons: List[Optional[str]]) -> Queue:
    q = Queue(url=url)

    @q.task(name="fence.job")
    def job() -> str:
        ctx = current_job()
        if not started.is_set():
            # The first claim pauses past its lease, then finishes anyway. (The rescue gives
            # the attempt back, so the second claim is attempt 1 too.)
            started.set()
            assert release.wait(120), "the test never released the first attempt"
            reasons.append(ctx.cancel_reason)
            return "first"
        return "second"

    return q


def test_a_handler_paused_past_its_lease_is_superseded(store_url: str) -> None:
    started, release = threading.Event(), threading.Event()
    reasons: List[Optional[str]] = []
    q1 = _zombie_queue(store_url, started, release, reasons)
    q2 = _zombie_queue(store_url, started, release, reasons)
    try:
        r = q1.enqueue("fence.job")
        # The first worker renews its lease every 10 s (a third of 30 s), holds one job and
        # prefetches none, so it can neither keep the job alive for a 0.3 s lease nor take
        # it back; it does not run the cleaner.
        first = q1.worker(concurrency=1, prefetch=0, lease=30, maintenance=False, worker_id="fence-first").start()
        second = None
        try:
            assert started.wait(60), "the first worker never started the job"
            job = q1.get_job(r.id)
            assert job is not None and (job.status, job.worker_id, job.attempt) == ("running", "fence-first", 1)
            # The second worker is the cleaner with a 0.3 s lease: its stale-lease rescue
            # releases the first worker's job, which it then claims and completes.
            second = q2.worker(concurrency=1, lease=0.3, worker_id="fence-second").start()
            assert q2.result(r.id, timeout=60) == "second"
        finally:
            release.set()
            c1 = first.stop(60)
            c2 = second.stop(60) if second is not None else None
        assert c1 is not None and c2 is not None
        assert (c1["succeeded"], c1["acknowledged"], c1["superseded"]) == (1, 0, 1), c1
        assert (c2["succeeded"], c2["acknowledged"], c2["superseded"]) == (1, 1, 0), c2
        # the late first result changed nothing: the stored result is the second worker's
        job = q1.get_job(r.id)
        assert job is not None
        # The first worker's heartbeat never reported the start (it beats every 10 s), so the
        # release spent neither the attempt nor a stall.
        assert (job.status, job.attempt, job.stall_count) == ("completed", 1, 0), "a release spends no attempt"
        assert q1.get_result(r.id) == "second"
        assert q1.stats()["completed"] == 1 and q1.stats()["running"] == 0
        # the first handler saw either nothing yet or its lost lease, never another reason
        assert reasons in ([None], ["lease_lost"]), reasons
    finally:
        q1.close()
        q2.close()
