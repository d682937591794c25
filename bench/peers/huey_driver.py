"""huey: the four commands of flexiq's side-by-side harness, one JSON line each (see
``bench/driver/src/main.rs`` for what each measures; the timing is ``harness.py``'s, shared with
flexiq's Python driver). ``cargo xtask bench --peers`` runs it, with ``harness.py`` beside it,
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
import time
from typing import Any, Dict
from urllib.parse import parse_qs, urlparse

from harness import Arrivals, Starts, harness_args, time_latency, time_singles
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


def enqueue_single(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    noop = h.task(name="noop")(lambda i: None)
    return time_singles(a.jobs, noop)


def enqueue_batch(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    out = enqueue_single(h, a)
    out["batch"] = 1
    return out


def drain(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    starts = Starts(a.jobs)
    noop = h.task(name="noop")(lambda i: starts.started())
    for i in range(a.jobs):
        noop(i)
    consumer = h.create_consumer(workers=a.concurrency, periodic=False)
    t0 = time.perf_counter()
    consumer.start()
    end = starts.wait()
    consumer.stop(graceful=True)
    return starts.result(t0, end, a.concurrency)


def latency(h: Huey, a: argparse.Namespace) -> Dict[str, Any]:
    seen = Arrivals(a.jobs)
    noop = h.task(name="noop")(seen.arrived)
    consumer = h.create_consumer(workers=1, periodic=False)
    consumer.start()
    time.sleep(0.2)
    out = time_latency(a, seen, noop)
    consumer.stop(graceful=True)
    return out


COMMANDS = {"enqueue-single": enqueue_single, "enqueue-batch": enqueue_batch, "drain": drain, "latency": latency}


def main() -> int:
    a = harness_args(__doc__.split("\n\n")[0])
    logging.getLogger("huey").setLevel(logging.WARNING)
    h = open_huey(a.url)
    out = COMMANDS[a.command](h, a)
    store = urlparse(a.url).scheme if "://" in a.url else "sqlite"
    out.update({"system": "huey", "store": store, "command": a.command, "jobs": a.jobs})
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
