"""The zombie worker from the outside, through the Python worker on every store.

Worker A is a separate Python process (the public ``flexiq`` API): its task writes a start
marker and waits for a release file. The test freezes A with SIGSTOP mid-attempt, so its
heartbeats stop and its lease lapses; worker B, in this process and the namespace's cleaner,
rescues the job, re-claims it and completes it. A is then resumed with SIGCONT and its task
finishes late: its worker's ack must be ``superseded`` (A reports its counters), the job keeps
B's result, and it was completed exactly once (one success metric row, one ``completed``
event). A runs without maintenance: a frozen cleaner would hold the cleaner lease, which is
not the case under test.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional

from flexiq import Queue

from conftest import wait_until

TASK = "zombie.work"

WORKER_A = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from flexiq import Queue

    markers = Path(sys.argv[2])
    queue = Queue(url=sys.argv[1])

    def wait_for(name, seconds):
        deadline = time.monotonic() + seconds
        while not (markers / name).exists():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    @queue.task(name="zombie.work")
    def work():
        (markers / "started").write_text("")
        # Released by the test once it has resumed this process; the bound only keeps a
        # forgotten process from lingering.
        wait_for("release", 60)
        (markers / "finished").write_text("")
        return "zombie-a"

    worker = queue.worker(concurrency=1, prefetch=0, lease=1.0, maintenance=False, worker_id="zombie-a").start()
    assert wait_for("finished", 90), "the task never finished"
    # A graceful stop writes the pending ack before it returns the counters.
    counters = worker.stop(60)
    queue.close()
    print(json.dumps(counters))
    """
)


class WorkerA:
    """Worker A's process; SIGKILLed if the test ends before it exits."""

    def __init__(self, store_url: str, markers: Path) -> None:
        script = markers / "worker_a.py"
        script.write_text(WORKER_A)
        self.proc = subprocess.Popen(
            [sys.executable, str(script), store_url, str(markers)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def finish(self, timeout: float) -> Dict[str, int]:
        """Waits for A to exit and returns the counters it printed."""
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"worker A failed ({self.proc.returncode}): {err}"
        return json.loads(out.strip().splitlines()[-1])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL ends a stopped process too
            self.proc.communicate()


def freeze(a: WorkerA, queue: Queue, sqlite: bool) -> None:
    """Stops A outside a store write. On SQLite a process stopped inside a write transaction
    keeps the database's write lock until it resumes, so every other process waits for it (an
    outage of its own, not the case under test): a probe write must get through while A is
    stopped, or A runs on for a moment and is stopped again."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        for _ in range(20):
            a.signal(signal.SIGSTOP)
            if not sqlite:
                return
            probe = pool.submit(queue.set_events_enabled, True)
            try:
                probe.result(timeout=0.5)
                return
            except concurrent.futures.TimeoutError:
                a.signal(signal.SIGCONT)
                probe.result(timeout=30)
                time.sleep(0.03)
    raise AssertionError("worker A was stopped inside a write transaction 20 times running")


def reported_started(queue: Queue, job_id: str, seen: Optional[int]) -> None:
    """Waits for two lease renewals of the running attempt after ``seen`` (its heartbeat when
    the task was seen running): the second was sent after the task started, so the store has
    recorded the start, and a lapsed lease is a stall of a started attempt."""
    last = seen
    for renewal in ("first", "second"):

        def renewed() -> bool:
            job = queue.get_job(job_id)
            return job is not None and job.heartbeat_at is not None and job.heartbeat_at != last

        wait_until(renewed, 30, f"the {renewal} lease renewal of job {job_id}")
        job = queue.get_job(job_id)
        last = job.heartbeat_at if job is not None else None


def claimed_by(queue: Queue, job_id: str) -> List[str]:
    """The worker ids of the job's ``active`` events (one per claim), in order."""
    events = queue.read_events(None, 0, 1000)
    return [e.data["worker_id"] for e in events if e.kind == "active" and e.job_id == job_id]


def test_a_frozen_worker_process_late_ack_is_superseded(store_url: str, tmp_path: Path) -> None:
    q = Queue(url=store_url)

    @q.task(name=TASK)
    def work() -> str:
        return "zombie-b"

    rescuer = None
    worker_a = WorkerA(store_url, tmp_path)
    try:
        job_id = q.enqueue(TASK).id
        wait_until(lambda: (tmp_path / "started").exists(), 60, "worker A starting the job")
        first = q.get_job(job_id)
        assert first is not None and (first.status, first.worker_id, first.attempt) == ("running", "zombie-a", 1), first
        reported_started(q, job_id, first.heartbeat_at)

        # Frozen mid-attempt: no heartbeats, no ack.
        freeze(worker_a, q, sqlite=not store_url.startswith(("postgres", "redis")))
        rescuer = q.worker(concurrency=1, prefetch=0, lease=1.0, worker_id="zombie-b").start()

        def completed() -> bool:
            job = q.get_job(job_id)
            return job is not None and job.status == "completed"

        wait_until(completed, 30, "worker B completing the job after A's lease lapsed")
        done = q.get_job(job_id)
        assert done is not None
        assert q.get_result(job_id) == "zombie-b"
        assert (done.attempt, done.stall_count) == (1, 1), done
        assert claimed_by(q, job_id) == ["zombie-a", "zombie-b"], f"the workers that claimed job {job_id}"
        assert any(e["error"].startswith("LEASE_HEARTBEAT_LOST") for e in q.get_job_errors(job_id)), (
            f"job {job_id} was not rescued from a lapsed lease"
        )

        # Resumed: A's task finishes late and its worker acks the stale attempt.
        (tmp_path / "release").write_text("")
        worker_a.signal(signal.SIGCONT)
        a = worker_a.finish(timeout=60)
        assert a["succeeded"] == 1, f"A's task ran to the end: {a}"
        assert a["superseded"] == 1, f"A's late ack was not superseded: {a}"
        assert (a["acknowledged"], a["ack_errors"]) == (0, 0), f"A's late ack was applied: {a}"

        after = q.get_job(job_id)
        assert after == done, f"A's late ack changed job {job_id}"
        assert q.get_result(job_id) == "zombie-b"
        rows = [r for r in q.get_metrics(0, TASK) if r["job_id"] == job_id and r["success"]]
        assert len(rows) == 1, f"job {job_id} has {len(rows)} success metric rows: {rows}"
        events = q.read_events(None, 0, 1000)
        completions = [e for e in events if e.kind == "completed" and e.job_id == job_id]
        assert len(completions) == 1, f"job {job_id}'s completed events: {completions}"
        assert claimed_by(q, job_id) == ["zombie-a", "zombie-b"], f"the workers that claimed job {job_id}"
        b = rescuer.stop(60)
        rescuer = None
        assert b is not None and (b["acknowledged"], b["superseded"]) == (1, 0), b
    finally:
        if rescuer is not None:
            rescuer.stop(60)
        worker_a.kill()
        q.close()
