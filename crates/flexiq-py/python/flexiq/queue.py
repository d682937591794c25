"""``flexiq.Queue``: the handle a Python program holds on one namespace of a store.

It opens the store (SQLite file, PostgreSQL or Redis) through the Rust engine, registers
tasks with :meth:`Queue.task` and runs workers; its calls come from one mixin per area in
:mod:`flexiq._queue` (``jobs``, ``listing``, ``control``, ``dead``, ``stats``, ``admin``,
``clean``, ``reschedule``, ``flows``, ``dedup``, ``schedulers``, ``events``, ``wait``,
``workflow``), named as the engine's; a native call that needs no conversion is forwarded as it is
(:mod:`flexiq._queue.forward`).
Every blocking call releases the GIL while the engine works, and has an ``a``-prefixed async
twin, made from it by :func:`flexiq._aio.async_twins`. Payloads and results go through the
queue's serializer (JSON unless told otherwise).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, Optional, Sequence, Union, overload

from . import _flexiq
from ._aio import AsyncMixin, async_twins
from ._queue.admin import AdminMixin, retention_dict
from ._queue.clean import CleanMixin
from ._queue.control import ControlMixin
from ._queue.dead import DeadMixin
from ._queue.dedup import DedupMixin
from ._queue.events import EventsMixin
from ._queue.flows import FlowsMixin
from ._queue.forward import NativeCalls, forward_native
from ._queue.jobs import JobsMixin
from ._queue.listing import ListingMixin
from ._queue.reschedule import RescheduleMixin
from ._queue.schedulers import SchedulersMixin
from ._queue.stats import StatsMixin
from ._queue.wait import WaitMixin
from ._queue.workflow import WorkflowMixin
from .exceptions import InvalidArgument
from .serialization import Serializer, resolve_serializer
from .task import Task
from .worker import Worker

__all__ = ["Queue"]

_DURABILITY = ("normal", "full")


@async_twins(not_io=("task", "worker", "run_worker", "workflow_jobs"))
@forward_native()
class Queue(
    JobsMixin,
    ListingMixin,
    ControlMixin,
    DeadMixin,
    StatsMixin,
    AdminMixin,
    CleanMixin,
    RescheduleMixin,
    FlowsMixin,
    DedupMixin,
    SchedulersMixin,
    EventsMixin,
    WaitMixin,
    WorkflowMixin,
    NativeCalls,
    AsyncMixin,
):
    """A durable job queue on SQLite (``db_path=``), PostgreSQL or Redis (``url=``).

    ``namespace`` scopes every call; ``auto_migrate=False`` leaves DDL to :meth:`migrate`;
    ``durability`` is ``"normal"`` (survives a process crash) or ``"full"`` (fsync every
    commit, SQLite only); ``max_pending`` caps the pending jobs of each queue (enqueues past
    it raise :class:`~flexiq.QueueFull`); ``retention`` sets the windows (seconds) this
    process's workers sweep with; ``serializer`` is ``"json"`` (default), ``"pickle"`` or a
    :class:`~flexiq.serialization.Serializer`.
    """

    def __init__(
        self,
        db_path: Optional[str] = None,
        *,
        url: Optional[str] = None,
        namespace: str = "default",
        auto_migrate: bool = True,
        durability: str = "normal",
        max_pending: Optional[int] = None,
        retention: Any = None,
        serializer: Union[str, Serializer, None] = "json",
    ) -> None:
        if db_path is not None and url is not None:
            raise InvalidArgument("give db_path or url, not both")
        if durability not in _DURABILITY:
            raise InvalidArgument(f"durability {durability!r} must be 'normal' or 'full'")
        target = url if url is not None else (db_path if db_path is not None else "flexiq.db")
        if not isinstance(target, str):
            raise InvalidArgument(f"db_path / url must be a string, not {type(target).__name__}")
        self.serializer: Serializer = resolve_serializer(serializer)
        self._native = _flexiq.NativeQueue(
            target,
            namespace=namespace,
            auto_migrate=auto_migrate,
            durability=durability,
            max_pending=max_pending,
            retention=retention_dict(retention),
        )
        self.url = target
        self._tasks: Dict[str, Task] = {}
        # Workers running from this handle, for shutdown(); weak so a dropped worker goes.
        self._workers: weakref.WeakSet[Worker] = weakref.WeakSet()
        self._workers_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Queue(backend={self.backend!r}, namespace={self.namespace!r})"

    def __enter__(self) -> "Queue":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- tasks -------------------------------------------------------------------------------

    @overload
    def task(self, fn: Callable[..., Any], /) -> Task: ...

    @overload
    def task(
        self,
        fn: None = None,
        /,
        *,
        name: Optional[str] = None,
        queue: Optional[str] = None,
        priority: Optional[int] = None,
        max_retries: Optional[int] = None,
        retry_backoff: Optional[float] = None,
        timeout: Optional[float] = None,
        soft_timeout: Optional[float] = None,
        rate_limit: Optional[str] = None,
        group_key: Optional[str] = None,
    ) -> Callable[[Callable[..., Any]], Task]: ...

    def task(
        self,
        fn: Optional[Callable[..., Any]] = None,
        /,
        *,
        name: Optional[str] = None,
        queue: Optional[str] = None,
        priority: Optional[int] = None,
        max_retries: Optional[int] = None,
        retry_backoff: Optional[float] = None,
        timeout: Optional[float] = None,
        soft_timeout: Optional[float] = None,
        rate_limit: Optional[str] = None,
        group_key: Optional[str] = None,
    ) -> Union[Task, Callable[[Callable[..., Any]], Task]]:
        """Registers a function (sync or ``async def``) as a task.

        ``name`` defaults to ``module.qualname``; ``queue`` (default ``"default"``),
        ``priority`` (higher first), ``max_retries`` (default 3), ``retry_backoff`` (first
        retry delay, seconds, doubling), ``timeout`` (hard limit of one attempt, seconds),
        ``soft_timeout`` (seconds after which ``current_job().soft_timeout_exceeded()`` turns
        true) and ``rate_limit`` (``"N/s"``, ``"N/m"``, ``"N/h"``: claims of this task across
        all workers) are its defaults.
        """

        def register(f: Callable[..., Any]) -> Task:
            t = Task(
                self,
                f,
                name=name,
                queue_name=queue,
                priority=priority,
                max_retries=max_retries,
                retry_backoff=retry_backoff,
                timeout=timeout,
                soft_timeout=soft_timeout,
                rate_limit=rate_limit,
                group_key=group_key,
            )
            if t.name in self._tasks and self._tasks[t.name].fn is not f:
                raise InvalidArgument(f"task {t.name!r} is already registered on this queue")
            self._tasks[t.name] = t
            return t

        if fn is not None:
            return register(fn)
        return register

    @property
    def tasks(self) -> Dict[str, Task]:
        """Registered tasks by name."""
        return dict(self._tasks)

    # -- workers -----------------------------------------------------------------------------

    def worker(
        self,
        concurrency: int = 8,
        queues: Optional[Sequence[str]] = None,
        *,
        shutdown_timeout: float = 30.0,
        worker_id: Optional[str] = None,
        lease: Optional[float] = None,
        maintenance: bool = True,
        prefetch: Optional[int] = None,
        events_max_len: Optional[int] = None,
        events_max_age: Optional[float] = None,
        metrics_bind: Optional[str] = None,
    ) -> Worker:
        """A worker for this queue's registered tasks (see :class:`flexiq.Worker`):
        ``shutdown_timeout`` and ``lease`` (the job lease window) in seconds;
        ``maintenance=False`` keeps it out of the cleaner election; ``prefetch`` jobs are
        claimed beyond the free slots; while it is the elected cleaner it keeps the newest
        ``events_max_len`` events (default 10,000) and, with ``events_max_age`` (seconds),
        none older; with ``metrics_bind`` (``"0.0.0.0:9100"``) it serves Prometheus metrics
        at ``GET /metrics`` while it runs."""
        return Worker(
            self,
            concurrency=concurrency,
            queues=queues,
            shutdown_timeout=shutdown_timeout,
            worker_id=worker_id,
            lease=lease,
            maintenance=maintenance,
            prefetch=prefetch,
            events_max_len=events_max_len,
            events_max_age=events_max_age,
            metrics_bind=metrics_bind,
        )

    def run_worker(
        self,
        concurrency: int = 8,
        queues: Optional[Sequence[str]] = None,
        *,
        shutdown_timeout: float = 30.0,
        worker_id: Optional[str] = None,
        lease: Optional[float] = None,
        maintenance: bool = True,
        prefetch: Optional[int] = None,
        events_max_len: Optional[int] = None,
        events_max_age: Optional[float] = None,
        metrics_bind: Optional[str] = None,
    ) -> Dict[str, int]:
        """Runs a worker in this thread until SIGINT, SIGTERM or :meth:`shutdown` (from any
        thread), then shuts down gracefully: no new claims, running jobs finish (or are
        released for another worker). Returns the worker's counters. Options as
        :meth:`worker`."""
        return self.worker(
            concurrency=concurrency,
            queues=queues,
            shutdown_timeout=shutdown_timeout,
            worker_id=worker_id,
            lease=lease,
            maintenance=maintenance,
            prefetch=prefetch,
            events_max_len=events_max_len,
            events_max_age=events_max_age,
            metrics_bind=metrics_bind,
        ).run()
