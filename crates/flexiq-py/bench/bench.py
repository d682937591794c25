"""Python SDK benchmarks on an embedded SQLite file (run by ``cargo xtask bench --py``).

- enqueue: ``task.delay()`` one job at a time, 20,000 jobs.
- drain: 20,000 pending jobs run by a worker with a no-op Python handler, concurrency 8,
  timed from worker start until every job is acknowledged.

Each is run five times on a fresh database; the median rate is reported.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from typing import Callable, List

from flexiq import Queue

N = int(os.environ.get("FLEXIQ_BENCH_JOBS", "20000"))
RUNS = int(os.environ.get("FLEXIQ_BENCH_RUNS", "5"))
CONCURRENCY = 8


def bench_enqueue(path: str) -> float:
    q = Queue(db_path=path)

    @q.task(name="bench.noop")
    def noop(i: int) -> None:
        return None

    delay = noop.delay
    t0 = time.perf_counter()
    for i in range(N):
        delay(i)
    elapsed = time.perf_counter() - t0
    assert q.stats()["pending"] == N
    q.close()
    return N / elapsed


def bench_drain(path: str) -> float:
    q = Queue(db_path=path)
    done = threading.Event()
    count = [0]
    lock = threading.Lock()

    @q.task(name="bench.noop")
    def noop(i: int) -> None:
        with lock:
            count[0] += 1
            if count[0] == N:
                done.set()

    for i in range(N):
        noop.delay(i)
    worker = q.worker(concurrency=CONCURRENCY)
    t0 = time.perf_counter()
    worker.start()
    if not done.wait(600):
        raise SystemExit(f"drain: only {count[0]} of {N} jobs ran in 600 s")
    worker.stop()
    elapsed = time.perf_counter() - t0
    completed = q.stats()["completed"]
    assert completed == N, f"{completed} of {N} completed"
    q.close()
    return N / elapsed


def median_of(name: str, fn: Callable[[str], float]) -> float:
    rates: List[float] = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as d:
            rates.append(fn(os.path.join(d, "bench.db")))
    med = statistics.median(rates)
    runs = ", ".join(f"{r:,.0f}" for r in rates)
    print(f"{name:<34} median {med:>10,.0f} jobs/s   (runs: {runs})", flush=True)
    return med


def main() -> int:
    print(f"flexiq Python bench: SQLite, {N:,} jobs, {RUNS} runs, Python {sys.version.split()[0]}")
    median_of("enqueue: delay() one at a time", bench_enqueue)
    median_of(f"drain: no-op handler, concurrency {CONCURRENCY}", bench_drain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
