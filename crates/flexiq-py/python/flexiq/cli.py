"""The ``flexiq`` console script (also ``python -m flexiq``).

``flexiq worker --app module:queue [--concurrency N] [--queues a,b] [--shutdown-timeout S]
[--lease S] [--no-maintenance] [--metrics-bind IP:PORT]`` imports the module, finds the
:class:`flexiq.Queue` in it and runs a worker for its registered tasks until SIGINT or SIGTERM, with the options of
:meth:`flexiq.Queue.worker`. An option the worker refuses exits with code 2 and the error on
stderr, as the Rust commands do for an invalid argument. Every other command (stats, dlq, queue, migrate, retention, settings,
...) is the Rust command line itself, run in-process with the same arguments and exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING, List, Optional

from . import _flexiq
from .exceptions import FlexiqError, InvalidArgument

if TYPE_CHECKING:
    from .queue import Queue

__all__ = ["main", "load_app"]


def load_app(spec: str) -> "Queue":
    """Imports ``module:attribute`` (``module`` alone looks for ``queue`` / ``app``) and
    returns the :class:`flexiq.Queue` it names."""
    from .queue import Queue

    module_name, _, attr = spec.partition(":")
    if not module_name:
        raise SystemExit(f"--app {spec!r} must look like module:queue")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    candidates = [attr] if attr else ["queue", "app"]
    for name in candidates:
        obj = module
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if isinstance(obj, Queue):
            return obj
        raise SystemExit(f"--app {spec!r} names a {type(obj).__name__}, not a flexiq.Queue")
    raise SystemExit(f"--app {spec!r}: module {module_name} has no {' or '.join(candidates)}")


def _worker(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="flexiq worker", description="Run a worker for a Queue's tasks.")
    parser.add_argument("--app", required=True, help="module:queue naming the flexiq.Queue to serve")
    parser.add_argument("--concurrency", type=int, default=8, help="handlers running at once (default 8)")
    parser.add_argument("--queues", default=None, help="comma-separated queues to take jobs from (default: all)")
    parser.add_argument(
        "--shutdown-timeout", type=float, default=30.0, help="seconds running jobs may finish on shutdown"
    )
    parser.add_argument(
        "--lease",
        type=float,
        default=None,
        help="job lease in seconds: a job whose worker stops heartbeating is rescued after it (default 30)",
    )
    parser.add_argument(
        "--no-maintenance",
        dest="maintenance",
        action="store_false",
        help="never take part in the cleaner election (rescue, archival, retention run elsewhere)",
    )
    parser.add_argument(
        "--metrics-bind",
        default=None,
        metavar="IP:PORT",
        help="serve Prometheus metrics at GET /metrics on this address while the worker runs",
    )
    args = parser.parse_args(argv)
    queue = load_app(args.app)
    queues = [q.strip() for q in args.queues.split(",") if q.strip()] if args.queues else None
    try:
        worker = queue.worker(
            concurrency=args.concurrency,
            queues=queues,
            shutdown_timeout=args.shutdown_timeout,
            lease=args.lease,
            maintenance=args.maintenance,
            metrics_bind=args.metrics_bind,
        )
    except FlexiqError as e:
        print(f"flexiq worker: {e.code}: {e}", file=sys.stderr, flush=True)
        return 2 if isinstance(e, InvalidArgument) else 1
    tasks = ", ".join(sorted(queue.tasks))
    lease = "default" if args.lease is None else f"{args.lease:g} s"
    maintenance = "on" if args.maintenance else "off"
    metrics = "" if args.metrics_bind is None else f", metrics on {args.metrics_bind}"
    print(
        f"flexiq worker: {queue.backend} namespace {queue.namespace}, concurrency {args.concurrency}, "
        f"lease {lease}, maintenance {maintenance}{metrics}, tasks: {tasks}",
        flush=True,
    )
    counters = worker.run()
    print(
        f"flexiq worker: stopped after {counters.get('succeeded', 0)} succeeded, {counters.get('failed', 0)} failed",
        flush=True,
    )
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``flexiq`` script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "worker":
        return _worker(args[1:])
    return _flexiq.cli_main(["flexiq", *args])


if __name__ == "__main__":
    sys.exit(main())
