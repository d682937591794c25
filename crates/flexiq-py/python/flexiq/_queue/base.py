"""``QueueBase``: the handle every part of :class:`flexiq.Queue` shares.

It holds the native queue, the serializer and the workers running from this handle, and
owns what concerns the handle as a whole: its namespace and backend, closing it, and
stopping its workers (:meth:`QueueBase.shutdown`). The other parts derive from it so each
sees these attributes typed, and share the conversions of what the native layer returns.
Arguments go to the native layer as given: it checks each under its name (``src/args.rs``).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Optional, cast

from .. import _flexiq
from ..models import Job
from ..result import JobResult

if TYPE_CHECKING:
    from ..queue import Queue
    from ..serialization import Serializer
    from ..worker import Worker

__all__ = ["QueueBase", "job_list", "job_or_none"]

def job_or_none(d: Optional[Dict[str, Any]]) -> Optional[Job]:
    """A native job dict as a :class:`~flexiq.Job` (``None`` stays ``None``)."""
    return None if d is None else Job(**d)


def job_list(rows: List[Dict[str, Any]]) -> List[Job]:
    """Native job dicts as :class:`~flexiq.Job` values."""
    return [Job(**d) for d in rows]


class QueueBase:
    """The native handle, the serializer and the workers running from this handle."""

    _native: _flexiq.NativeQueue
    serializer: "Serializer"
    url: str
    _workers: "weakref.WeakSet[Worker]"
    _workers_lock: threading.Lock

    @property
    def namespace(self) -> str:
        """The namespace every call is scoped to."""
        return self._native.namespace

    @property
    def backend(self) -> str:
        """``"sqlite"``, ``"postgres"`` or ``"redis"``."""
        return self._native.backend

    def _job_result(self, job_id: str) -> JobResult:
        """The handle on job ``job_id`` of this queue."""
        return JobResult(cast("Queue", self), job_id)

    def close(self) -> None:
        """Releases the store's connections; later calls raise :class:`~flexiq.Closed`."""
        self._native.close()

    def shutdown(self, timeout: Optional[float] = None) -> None:
        """Stops every worker running from this queue handle (:meth:`run_worker`,
        :meth:`Worker.run`, :meth:`Worker.start`) gracefully and waits for those on
        background threads, ``timeout`` seconds at most each. A worker started afterwards
        runs normally. The queue itself stays open."""
        with self._workers_lock:
            running = list(self._workers)
        for w in running:
            w._signal_stop()
        for w in running:
            w._join(timeout)

    def _track(self, worker: "Worker", running: bool) -> None:
        with self._workers_lock:
            if running:
                self._workers.add(worker)
            else:
                self._workers.discard(worker)
