"""flexiq through the Python SDK: the four commands of the side-by-side harness, one JSON line
each (the Rust driver ``flexiq-bench`` and the peers in ``bench/peers`` answer the same).

- ``enqueue-single``: ``task.delay()`` one job at a time, each returning after its commit.
- ``enqueue-batch``: ``queue.enqueue_many()`` in batches of ``--batch``.
- ``drain``: ``--jobs`` pending jobs run by a worker with a no-op handler at ``--concurrency``,
  timed from ``worker.start()`` until the last handler ran; also the longest gap between two
  handler starts while jobs were still due.
- ``latency``: an idle, started worker; jobs enqueued at ``--rate`` per second; from just before
  ``delay()`` to the handler's first line (p50, p99), and the median ``delay()`` call.

The timing is ``bench/peers/harness.py``'s, shared with the peers' Python driver.

Usage: ``python driver.py COMMAND URL [--jobs N] [--batch B] [--concurrency C] [--rate R]``.
The caller isolates and cleans up the store the URL names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict

from flexiq import Queue

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench" / "peers"))
from harness import Arrivals, Starts, harness_args, time_latency, time_singles  # noqa: E402


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
    return time_singles(a.jobs, noop.delay)


def enqueue_batch(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    t0 = time.perf_counter()
    fill(q, a.jobs, a.batch)
    secs = time.perf_counter() - t0
    return {"secs": secs, "rate": a.jobs / secs, "batch": a.batch}


def drain(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    fill(q, a.jobs, a.batch)
    starts = Starts(a.jobs)

    @q.task(name="noop")
    def noop(i: int) -> None:
        starts.started()

    worker = q.worker(concurrency=a.concurrency, maintenance=False)
    t0 = time.perf_counter()
    worker.start()
    end = starts.wait()
    worker.stop()
    return starts.result(t0, end, a.concurrency)


def latency(q: Queue, a: argparse.Namespace) -> Dict[str, Any]:
    seen = Arrivals(a.jobs)

    @q.task(name="noop")
    def noop(i: int) -> None:
        seen.arrived(i)

    worker = q.worker(concurrency=1, maintenance=False)
    worker.start()
    out = time_latency(a, seen, noop.delay)
    worker.stop()
    return out


COMMANDS = {"enqueue-single": enqueue_single, "enqueue-batch": enqueue_batch, "drain": drain, "latency": latency}


def main() -> int:
    a = harness_args(__doc__.split("\n\n")[0])
    q = Queue(url=a.url)
    out = COMMANDS[a.command](q, a)
    q.close()
    out.update({"system": "flexiq-python", "store": backend(a.url), "command": a.command, "jobs": a.jobs})
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
