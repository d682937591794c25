"""The shared half of the Python drivers of the side-by-side harness (flexiq's Python SDK
driver in ``crates/flexiq-py/bench`` and huey's here): the arguments, and the timing of each of
the four commands, so that every system is timed by the same code and only the calls into the
system differ. ``cargo xtask bench --peers`` copies it beside the huey driver."""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any, Callable, Dict, List

COMMANDS = ["drain", "enqueue-batch", "enqueue-single", "latency"]


def harness_args(description: str) -> argparse.Namespace:
    """The command, the store URL and the numeric options, checked (exit 2 on bad usage)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("command", choices=COMMANDS)
    p.add_argument("url")
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=1_000)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--rate", type=float, default=100.0)
    a = p.parse_args()
    if not (a.jobs > 0 and a.batch > 0 and a.concurrency > 0 and a.rate > 0):
        p.error("--jobs, --batch, --concurrency and --rate must be positive")
    return a


def quantile(xs: List[float], q: float) -> float:
    """The value at quantile ``q`` of ``xs`` (nearest rank); 0 for no values."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[round((len(s) - 1) * q)]


def time_singles(jobs: int, add: Callable[[int], Any]) -> Dict[str, Any]:
    """``enqueue-single``: ``add(i)`` for each job in turn, each returning after its write."""
    calls: List[float] = []
    t0 = time.perf_counter()
    for i in range(jobs):
        t = time.perf_counter()
        add(i)
        calls.append((time.perf_counter() - t) * 1000)
    secs = time.perf_counter() - t0
    return {"secs": secs, "rate": jobs / secs, "call_p50_ms": quantile(calls, 0.5)}


class Starts:
    """A drain's handler starts: handlers call :meth:`started` first; :meth:`result` is the
    line from ``t0`` to the last start, with the longest gap between two."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.starts: List[float] = []
        self.done = threading.Event()
        self.lock = threading.Lock()

    def started(self) -> None:
        with self.lock:
            self.starts.append(time.perf_counter())
            if len(self.starts) == self.jobs:
                self.done.set()

    def wait(self, timeout: float = 600) -> float:
        """Waits for the last handler to start; the time it is seen to have."""
        if not self.done.wait(timeout):
            raise SystemExit(f"drain: only {len(self.starts)} of {self.jobs} jobs ran in {timeout:.0f} s")
        return time.perf_counter()

    def result(self, t0: float, end: float, concurrency: int) -> Dict[str, Any]:
        starts = sorted(self.starts)
        gap = max((b - x for x, b in zip(starts, starts[1:])), default=0.0)
        secs = end - t0
        return {"secs": secs, "rate": self.jobs / secs, "concurrency": concurrency, "max_gap_ms": gap * 1000}


class Arrivals:
    """A latency run's jobs: handlers call :meth:`arrived` with their job number first."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.sent: List[float] = [0.0] * jobs
        self.waits: List[float] = []
        self.done = threading.Event()

    def arrived(self, i: int) -> None:
        self.waits.append((time.perf_counter() - self.sent[i]) * 1000)
        if len(self.waits) == self.jobs:
            self.done.set()


def time_latency(a: argparse.Namespace, seen: Arrivals, add: Callable[[int], Any]) -> Dict[str, Any]:
    """``latency``: ``add(i)`` for each job at ``a.rate`` per second into an idle worker; the
    line once every handler ran."""
    calls: List[float] = []
    every = 1.0 / a.rate
    t0 = time.perf_counter()
    for i in range(a.jobs):
        pause = t0 + i * every - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        t = time.perf_counter()
        seen.sent[i] = t
        add(i)
        calls.append((time.perf_counter() - t) * 1000)
    if not seen.done.wait(120):
        raise SystemExit(f"latency: only {len(seen.waits)} of {a.jobs} jobs ran")
    return {
        "rate": a.rate,
        "p50_ms": quantile(seen.waits, 0.5),
        "p99_ms": quantile(seen.waits, 0.99),
        "enqueue_p50_ms": quantile(calls, 0.5),
    }
