"""``flexiq.Queue``: the handle a Python program holds on one namespace of a store.

It opens the store (SQLite file, PostgreSQL or Redis) through the Rust engine, registers
tasks with :meth:`Queue.task`, enqueues, awaits and inspects jobs, and runs workers. Every
blocking call releases the GIL while the engine works, and has an ``a``-prefixed async twin,
made from it by :func:`flexiq._aio.async_twins`. Payloads and results go through the queue's serializer (JSON
unless told otherwise).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union, overload

from . import _flexiq
from ._aio import AsyncMixin, async_twins
from ._batch import batch_items
from ._units import seconds_to_ms
from ._options import EnqueueOptions, check_option_names, native_options
from ._ops import OpsMixin, _retention_dict
from .exceptions import InvalidArgument
from .models import Job, Page
from .result import JobResult
from .serialization import Serializer, resolve_serializer
from .task import Task, call_args
from .worker import Worker

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Queue"]


def _ms(what: str, seconds: Optional[float]) -> Optional[int]:
    return seconds_to_ms(what, seconds, positive=True)

_DURABILITY = ("normal", "full")


def _job(d: Optional[Dict[str, Any]]) -> Optional[Job]:
    return None if d is None else Job(**d)


def _jobs(rows: List[Dict[str, Any]]) -> List[Job]:
    return [Job(**d) for d in rows]


@async_twins(not_io=("task", "worker", "run_worker"))
class Queue(OpsMixin, AsyncMixin):
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
            retention=_retention_dict(retention),
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

    @property
    def namespace(self) -> str:
        """The namespace every call is scoped to."""
        return self._native.namespace

    @property
    def backend(self) -> str:
        """``"sqlite"``, ``"postgres"`` or ``"redis"``."""
        return self._native.backend

    def close(self) -> None:
        """Releases the store's connections; later calls raise :class:`~flexiq.Closed`."""
        self._native.close()

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

    def enqueue(
        self,
        task_name: str,
        args: Sequence[Any] = (),
        kwargs: Optional[Dict[str, Any]] = None,
        **options: Unpack[EnqueueOptions],
    ) -> JobResult:
        """Enqueues a job for a task by name (which may be handled by a Node or Rust worker),
        with :meth:`Task.apply_async`'s options. ``delay``, ``timeout`` and
        ``retry_backoff`` are seconds, ``eta`` a datetime or Unix seconds. A revoked task
        raises :class:`~flexiq.TaskRevoked`."""
        check_option_names("enqueue", options)
        if not isinstance(task_name, str):
            raise InvalidArgument(f"task_name must be a string, not {type(task_name).__name__}")
        payload = self.serializer.dumps_call(*call_args(args, kwargs))
        return JobResult(self, self._native.enqueue(task_name, payload, native_options(options)))

    def enqueue_many(self, jobs: Iterable[Mapping[str, Any]]) -> List[JobResult]:
        """Enqueues a batch atomically: every job is written, or none is. Each job is a dict
        with ``task`` (a name, or a :class:`~flexiq.Task` whose defaults apply), optional
        ``args`` and ``kwargs``, and any option of :meth:`Task.apply_async` (``delay``,
        ``eta``, ``priority``, ``unique_key``, ``metadata``, ``depends_on``, ``queue``,
        ``max_retries``, ``timeout``, ``retry_backoff``, ``group_key``; same units). Returns
        the jobs' handles in order. A bad job raises :class:`~flexiq.InvalidArgument` naming
        its index; a revoked task :class:`~flexiq.TaskRevoked`; the ``max_pending`` cap
        :class:`~flexiq.QueueFull`."""
        items = batch_items(jobs, self.serializer)
        return [JobResult(self, i) for i in self._native.enqueue_many(items)]

    # -- jobs --------------------------------------------------------------------------------

    def get_job(self, job_id: str) -> Optional[Job]:
        """A job's current state, or ``None`` when no job has that id."""
        return _job(self._native.get_job(job_id))

    def get_result(self, job_id: str) -> Any:
        """The deserialized result of a completed job, or ``None`` while not ready."""
        data = self._native.get_result(job_id)
        return None if data is None else self.serializer.loads(data)

    def result(self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Waits for a job to finish and returns its deserialized result. ``timeout`` and
        ``poll`` are seconds (``None``: wait forever; poll caps one wait, default 1 s).
        Raises :class:`~flexiq.JobFailed`, :class:`~flexiq.JobCancelled` or
        :class:`~flexiq.FlexiqTimeout`."""
        data = self._native.result(job_id, _ms("timeout", timeout), _ms("poll", poll))
        return None if data is None else self.serializer.loads(data)

    def stream(self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None) -> Iterator[Any]:
        """Iterates a job's published partials (deserialized) in order until it ends.
        ``timeout`` and ``poll`` are seconds."""
        it = self._native.stream(job_id, _ms("timeout", timeout), _ms("poll", poll))
        loads = self.serializer.loads
        return (loads(p["data"]) for p in it)

    def _stream_native(self, job_id: str, timeout: Optional[float], poll: Optional[float]) -> _flexiq.PartialIter:
        return self._native.stream(job_id, _ms("timeout", timeout), _ms("poll", poll))

    def request_cancel(self, job_id: str) -> bool:
        """Requests cooperative cancellation: a pending job is cancelled outright, a running
        one sees ``current_job().is_cancel_requested()``. False when already terminal."""
        return self._native.request_cancel(job_id)

    def is_cancel_requested(self, job_id: str) -> bool:
        """Whether cancellation has been requested for a job."""
        return self._native.is_cancel_requested(job_id)

    def cancel_job(self, job_id: str) -> bool:
        """Cancels a pending job (and its dependents); False when running or terminal."""
        return self._native.cancel_job(job_id)

    def list_jobs(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        limit: int = 50,
        offset: int = 0,
    ) -> List[Job]:
        """Jobs by status, queue or task, newest first (``limit`` 1 to 10,000)."""
        return _jobs(self._native.list_jobs(status, queue, task, limit, offset))

    def list_jobs_filtered(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        metadata_contains: Optional[str] = None,
        error_contains: Optional[str] = None,
        created_after: Optional[int] = None,
        created_before: Optional[int] = None,
        limit: int = 50,
        offset: int = 0,
    ) -> List[Job]:
        """The wider filter: plus metadata / error substrings and a created-at range
        (``created_after`` inclusive, ``created_before`` exclusive, Unix ms)."""
        rows = self._native.list_jobs_filtered(
            status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, offset
        )
        return _jobs(rows)

    def list_jobs_after(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        limit: int = 50,
        after: Optional[str] = None,
    ) -> Page[Job]:
        """Keyset-paginated :meth:`list_jobs`, by created time; pass ``next_cursor`` back as
        ``after``. ``None`` means that was the last page."""
        items, cursor = self._native.list_jobs_after(status, queue, task, limit, after)
        return Page(_jobs(items), cursor)

    def list_jobs_filtered_after(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        metadata_contains: Optional[str] = None,
        error_contains: Optional[str] = None,
        created_after: Optional[int] = None,
        created_before: Optional[int] = None,
        limit: int = 50,
        after: Optional[str] = None,
    ) -> Page[Job]:
        """Keyset-paginated :meth:`list_jobs_filtered`, same cursor contract."""
        items, cursor = self._native.list_jobs_filtered_after(
            status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, after
        )
        return Page(_jobs(items), cursor)

    def get_job_errors(self, job_id: str) -> List[Dict[str, Any]]:
        """Every failed attempt (id, job_id, attempt, error, failed_at Unix ms), oldest first."""
        return self._native.get_job_errors(job_id)

    def replay(self, job_id: str) -> str:
        """Enqueues a copy of a job (fresh id and retry budget, same payload) and records
        the replay; returns the new id."""
        return self._native.replay(job_id)

    replay_job = replay

    def replay_history(self, job_id: str) -> List[Dict[str, Any]]:
        """Every replay of a job, newest first: id, original_job_id, replay_job_id,
        replayed_at (Unix ms), original_error, replay_error."""
        return self._native.replay_history(job_id)

    get_replay_history = replay_history

    def job_dag(self, job_id: str) -> Dict[str, List[Dict[str, str]]]:
        """The dependency graph reachable from a job: ``{"nodes": [...], "edges": [...]}``,
        each edge ``{"from": dependency, "to": dependent}``."""
        return self._native.job_dag(job_id)

    def job_logs(self, job_id: str) -> List[Dict[str, Any]]:
        """A job's log lines (job_id, level, message, logged_at Unix ms), oldest first."""
        return self._native.job_logs(job_id)

    def list_archived(self, limit: int = 50, offset: int = 0) -> List[Job]:
        """Archived jobs, newest first, offset-paginated."""
        return _jobs(self._native.list_archived(limit, offset))

    def list_archived_after(self, limit: int = 50, after: Optional[str] = None) -> Page[Job]:
        """Keyset-paginated archive, by completed time."""
        items, cursor = self._native.list_archived_after(limit, after)
        return Page(_jobs(items), cursor)

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
    ) -> Worker:
        """A worker for this queue's registered tasks (see :class:`flexiq.Worker`):
        ``shutdown_timeout`` and ``lease`` (the job lease window) in seconds;
        ``maintenance=False`` keeps it out of the cleaner election; ``prefetch`` jobs are
        claimed beyond the free slots."""
        return Worker(
            self,
            concurrency=concurrency,
            queues=queues,
            shutdown_timeout=shutdown_timeout,
            worker_id=worker_id,
            lease=lease,
            maintenance=maintenance,
            prefetch=prefetch,
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
        ).run()

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

    def _track(self, worker: Worker, running: bool) -> None:
        with self._workers_lock:
            if running:
                self._workers.add(worker)
            else:
                self._workers.discard(worker)

