"""flexiq through the Python SDK: the four commands of the side-by-side harness, one JSON line
each (the Rust driver ``flexiq-bench`` and the peers in ``bench/peers`` answer the same).

- ``enqueue-single``: ``task.delay()`` one job at a time, each returning after its commit.
- ``enqueue-batch``: ``queue.enqueue_many()`` in batches of ``--batch``.
- ``drain``: ``--jobs`` pending jobs run by a worker with a no-op handler at ``--concurrency``,
  timed from ``worker.start()`` until the last handler ran; also the longest gap between two
  handler starts while jobs were still due.
- ``latency``: an idle, started worker; jobs enqueued at ``--rate`` per second; from just before
  ``delay()`` to the handler's first line (p50, p99), and the median ``delay()`` call.

Usage: ``python driver.py COMMAND URL [--jobs N] [--batch B] [--concurrency C] [--rate R]``.
The caller isolates and cleans up the store the URL names.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any, Dict, List

from flexiq import Queue


def quantile(xs: List[float], q: float) -> float:
    """The value at quantile ``q`` of ``xs`` (nearest rank); 0 for no values."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[round((len(s) - 1) * q)]


def backend(url: str) -> str:
    for name in ("postgres", "redis"):
        if url.startswith(name):
            return name
    return "sqlite"


def fill(q: Queue, jobs: int, batch: int) -> None:
    for start in range(0, jobs, batch):
        q.enqueue_many([{"task": "noop", "args": (i,)} for i in range(start, min(start + batch, jobs))])


def enqueue_single(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    noop = q.task(name="noop")(lambda i: None)
    delay = noop.delay
    calls: List[float] = []
    t0 = time.perf_counter()
    for i in range(a.jobs):
        t = time.perf_counter()
        delay(i)
        calls.append((time.perf_counter() - t) * 1000)
    secs = time.perf_counter() - t0
    return {"secs": secs, "rate": a.jobs / secs, "call_p50_ms": quantile(calls, 0.5)}


def enqueue_batch(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    t0 = time.perf_counter()
    fill(q, a.jobs, a.batch)
    secs = time.perf_counter() - t0
    return {"secs": secs, "rate": a.jobs / secs, "batch": a.batch}


def drain(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    fill(q, a.jobs, a.batch)
    starts: List[float] = []
    done = threading.Event()
    lock = threading.Lock()

    @q.task(name="noop")
    def noop(i: int) -> None:
        with lock:
            starts.append(time.perf_counter())
            if len(starts) == a.jobs:
                done.set()

    worker = q.worker(concurrency=a.concurrency, maintenance=False)
    t0 = time.perf_counter()
    worker.start()
    if not done.wait(600):
        raise SystemExit(f"drain: only {len(starts)} of {a.jobs} jobs ran in 600 s")
    secs = time.perf_counter() - t0
    worker.stop()
    starts.sort()
    gap = max((b - x for x, b in zip(starts, starts[1:])), default=0.0)
    return {"secs": secs, "rate": a.jobs / secs, "concurrency": a.concurrency, "max_gap_ms": gap * 1000}


def latency(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    if not a.rate > 0:
        raise SystemExit(f"rate {a.rate} must be a positive number of jobs per second")
    sent: List[float] = [0.0] * a.jobs
    waits: List[float] = []
    done = threading.Event()

    @q.task(name="noop")
    def noop(i: int) -> None:
        waits.append((time.perf_counter() - sent[i]) * 1000)
        if len(waits) == a.jobs:
            done.set()

    worker = q.worker(concurrency=1, maintenance=False)
    worker.start()
    calls: List[float] = []
    every = 1.0 / a.rate
    t0 = time.perf_counter()
    for i in range(a.jobs):
        pause = t0 + i * every - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        t = time.perf_counter()
        sent[i] = t
        noop.delay(i)
        calls.append((time.perf_counter() - t) * 1000)
    if not done.wait(120):
        raise SystemExit(f"latency: only {len(waits)} of {a.jobs} jobs ran")
    worker.stop()
    return {
        "rate": a.rate,
        "p50_ms": quantile(waits, 0.5),
        "p99_ms": quantile(waits, 0.99),
        "enqueue_p50_ms": quantile(calls, 0.5),
    }


COMMANDS = {"enqueue-single": enqueue_single, "enqueue-batch": enqueue_batch, "drain": drain, "latency": latency}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=sorted(COMMANDS))
    p.add_argument("url")
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=1_000)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--rate", type=float, default=100.0)
    a = p.parse_args()
    q = Queue(url=a.url)
    out = COMMANDS[a.command](q, a)
    q.close()
    out.update({"system": "flexiq-python", "store": backend(a.url), "command": a.command, "jobs": a.jobs})
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
