"""huey: the four commands of flexiq's side-by-side harness, one JSON line each (see
``bench/driver/src/main.rs`` for what each measures). ``cargo xtask bench --peers`` runs it
from a throwaway virtualenv holding huey, redis-py and psycopg.

The store follows the URL: ``redis://HOST:PORT?prefix=TAG`` is ``RedisHuey`` named TAG (its
blocking dequeue), ``sqlite:///path/jobs.db`` is ``SqliteHuey`` on a file beside that path,
``postgres://USER@HOST:PORT/DB?schema=TAG`` is ``PostgresHuey`` in schema TAG (created here,
dropped by the caller). huey has no batch enqueue, so ``enqueue-batch`` enqueues one by one;
consumers run with huey's defaults (thread workers; SQLite polls from 0.1 s with back-off).

Usage: ``python huey_driver.py COMMAND URL [--jobs N] [--batch B] [--concurrency C] [--rate R]``
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from typing import Any, Callable, Dict, List
from urllib.parse import parse_qs, urlparse

from huey import Huey, PostgresHuey, RedisHuey, SqliteHuey


def open_huey(url: str) -> Huey:
    u = urlparse(url)
    query = parse_qs(u.query)
    if u.scheme == "redis":
        return RedisHuey(query.get("prefix", ["huey"])[0], host=u.hostname, port=u.port or 6379)
    if u.scheme == "postgres":
        import psycopg

        schema = query["schema"][0]
        dsn = f"host={u.hostname} port={u.port or 5432} user={u.username} dbname={u.path.lstrip('/')}"
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        return PostgresHuey(schema, dsn=f"{dsn} options='-c search_path={schema}'")
    path = u.path if u.scheme == "sqlite" else url
    return SqliteHuey("bench", filename=path.replace("jobs.db", "huey.db"))


def quantile(xs: List[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[round((len(s) - 1) * q)]


def enqueue_single(h: Huey, a: argparse.Namespace, on_run: Callable[[int], None]) -> Dict[str, Any]:
    noop = h.task(name="noop")(on_run)
    calls: List[float] = []
    t0 = time.perf_counter()
    for i in range(a.jobs):
        t = time.perf_counter()
        noop(i)
        calls.append((time.perf_counter() - t) * 1000)
    secs = time.perf_counter() - t0
    return {"secs": secs, "rate": a.jobs / secs, "call_p50_ms": quantile(calls, 0.5)}


def enqueue_batch(h: Huey, a: argparse.Namespace, on_run: Callable[[int], None]) -> Dict[str, Any]:
    out = enqueue_single(h, a, on_run)
    out["batch"] = 1
    return out


def drain(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    starts: List[float] = []
    done = threading.Event()
    lock = threading.Lock()

    def run(i: int) -> None:
        with lock:
            starts.append(time.perf_counter())
            if len(starts) == a.jobs:
                done.set()

    noop = h.task(name="noop")(run)
    for i in range(a.jobs):
        noop(i)
    consumer = h.create_consumer(workers=a.concurrency, periodic=False)
    t0 = time.perf_counter()
    consumer.start()
    if not done.wait(600):
        raise SystemExit(f"drain: only {len(starts)} of {a.jobs} jobs ran in 600 s")
    secs = time.perf_counter() - t0
    consumer.stop(graceful=True)
    starts.sort()
    gap = max((b - x for x, b in zip(starts, starts[1:])), default=0.0)
    return {"secs": secs, "rate": a.jobs / secs, "concurrency": a.concurrency, "max_gap_ms": gap * 1000}


def latency(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    sent: List[float] = [0.0] * a.jobs
    waits: List[float] = []
    done = threading.Event()

    def run(i: int) -> None:
        waits.append((time.perf_counter() - sent[i]) * 1000)
        if len(waits) == a.jobs:
            done.set()

    noop = h.task(name="noop")(run)
    consumer = h.create_consumer(workers=1, periodic=False)
    consumer.start()
    time.sleep(0.2)
    calls: List[float] = []
    every = 1.0 / a.rate
    t0 = time.perf_counter()
    for i in range(a.jobs):
        pause = t0 + i * every - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        t = time.perf_counter()
        sent[i] = t
        noop(i)
        calls.append((time.perf_counter() - t) * 1000)
    if not done.wait(120):
        raise SystemExit(f"latency: only {len(waits)} of {a.jobs} jobs ran")
    consumer.stop(graceful=True)
    return {
        "rate": a.rate,
        "p50_ms": quantile(waits, 0.5),
        "p99_ms": quantile(waits, 0.99),
        "enqueue_p50_ms": quantile(calls, 0.5),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["enqueue-single", "enqueue-batch", "drain", "latency"])
    p.add_argument("url")
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=1_000)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--rate", type=float, default=100.0)
    a = p.parse_args()
    logging.getLogger("huey").setLevel(logging.WARNING)
    h = open_huey(a.url)
    if a.command == "enqueue-single":
        out = enqueue_single(h, a, lambda i: None)
    elif a.command == "enqueue-batch":
        out = enqueue_batch(h, a, lambda i: None)
    elif a.command == "drain":
        out = drain(h, a)
    else:
        out = latency(h, a)
    store = urlparse(a.url).scheme if "://" in a.url else "sqlite"
    out.update({"system": "huey", "store": store, "command": a.command, "jobs": a.jobs})
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
