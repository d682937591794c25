"""``Worker``: runs a queue's registered tasks through the Rust engine's worker.

The engine claims, heartbeats, times out, retries and acks; this module only turns one
claimed job into one Python call (the dispatcher) and back into ``(ok, result, error,
retryable)``. Synchronous tasks run on the engine's blocking threads; ``async def`` tasks run
on one event loop thread the worker owns, and are cancelled when the engine cancels the
attempt. An exception in a task becomes the attempt's error with its traceback text; the
task's retry policy decides what happens next.

Readiness: :meth:`Worker.start` returns once the engine reports the worker live (registered
in the worker registry, its first claim at the store), so a job enqueued afterwards is taken
without waiting for a poll; a worker that cannot start (a closed queue, an unreachable store)
raises instead of hanging. Stopping is in-process too: :meth:`Worker.stop` or
:meth:`flexiq.Queue.shutdown` from any thread, besides SIGINT / SIGTERM.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _flexiq
from ._units import seconds_to_ms
from .context import JobContext, _current
from .exceptions import Closed, Conflict, FlexiqError, InvalidArgument

if TYPE_CHECKING:
    from .queue import Queue
    from .task import Task

__all__ = ["Worker"]

Answer = Tuple[bool, Optional[bytes], Optional[str], bool]

def _ms(what: str, seconds: Optional[float]) -> Optional[int]:
    return seconds_to_ms(what, seconds, positive=True)


#: How often an async task's waiting thread checks for cancellation (s).
_CANCEL_POLL_S = 0.05


class _Shutdown(BaseException):
    """Raised by the SIGTERM handler to start a graceful shutdown."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Shutdown()


class _Dispatcher:
    """Called by the engine (on a blocking thread, GIL held) once per claimed job."""

    def __init__(self, queue: "Queue", tasks: Dict[str, "Task"]) -> None:
        self._tasks = tasks
        self._serializer = queue.serializer
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._loop_thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def __call__(self, native: _flexiq.NativeJobContext) -> Answer:
        task = self._tasks.get(native.task)
        if task is None:
            return (False, None, f"task {native.task} is not registered on this worker", True)
        ser = self._serializer
        try:
            args, kwargs = ser.loads_call(native.payload)
        except InvalidArgument as e:
            # A payload that cannot be decoded will not decode on a retry either.
            return (False, None, f"cannot decode payload of job {native.id}: {e}", False)
        ctx = JobContext(native, ser, soft_timeout=task.soft_timeout)
        token = _current.set(ctx)
        try:
            if task.is_async:
                value = self._run_async(task.fn, args, kwargs, ctx, native)
            else:
                value = task.fn(*args, **kwargs)
        except Exception:
            return (False, None, traceback.format_exc(), True)
        finally:
            _current.reset(token)
        if value is None:
            return (True, None, None, True)
        try:
            return (True, ser.dumps(value), None, True)
        except InvalidArgument as e:
            return (False, None, f"task {task.name} returned a value that cannot be serialized: {e}", False)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                t = threading.Thread(target=loop.run_forever, name="flexiq-asyncio", daemon=True)
                t.start()
                self._loop, self._loop_thread = loop, t
            return self._loop

    def _run_async(
        self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any], ctx: JobContext, native: Any
    ) -> Any:
        async def run() -> Any:
            _current.set(ctx)
            return await fn(*args, **kwargs)

        fut = asyncio.run_coroutine_threadsafe(run(), self._event_loop())
        while True:
            try:
                return fut.result(timeout=_CANCEL_POLL_S)
            except concurrent.futures.TimeoutError:
                if native.is_cancelled():
                    fut.cancel()
                    raise FlexiqError(f"job {native.id} was cancelled ({native.cancel_reason()})") from None

    def close(self) -> None:
        """Stops the event loop thread, if one was started."""
        with self._lock:
            loop, t = self._loop, self._loop_thread
            self._loop = self._loop_thread = None
        if loop is not None and t is not None:
            loop.call_soon_threadsafe(loop.stop)
            t.join(timeout=5)
            loop.close()


def _task_rate_limits(tasks: Dict[str, "Task"]) -> Dict[str, Tuple[str, str]]:
    """``{queue: (task, normalised limit)}`` of the rate-limited tasks; ``Conflict`` when two
    tasks ask different limits of one queue."""
    by_queue: Dict[str, Tuple[str, str]] = {}
    for t in tasks.values():
        if t.rate_limit is None:
            continue
        q = t.queue_name or "default"
        limit = _flexiq.parse_rate_limit(t.rate_limit)
        if q in by_queue and by_queue[q][1] != limit:
            other, theirs = by_queue[q]
            raise Conflict(
                f"tasks {other!r} and {t.name!r} ask different rate limits of queue {q!r} "
                f"({theirs} and {limit}): a task's rate limit is its queue's, so they must agree"
            )
        by_queue[q] = (t.name, limit)
    return by_queue


class Worker:
    """Runs a queue's registered tasks. ``concurrency`` handlers at once (default 8);
    ``queues`` limits which queues it takes from (default: all); ``shutdown_timeout`` (s)
    is how long running handlers may finish on shutdown before their jobs are given back;
    ``lease`` (s) is the job lease window; ``prefetch`` jobs are claimed beyond the free slots
    (default: sized by the worker's finish rate, four to 64 per slot) so a freed slot starts
    its next job without a round trip. With ``maintenance`` (the default) it takes part in
    the cleaner election; while elected it also trims the namespace's events stream to the
    newest ``events_max_len`` events (default 10,000; 0 keeps none) and, with
    ``events_max_age`` (s, 1 or more), drops events older than that. With ``metrics_bind``
    (an IP and a port such as ``"0.0.0.0:9100"``; port 0 picks a free one) it serves
    Prometheus metrics at ``GET /metrics`` there while it runs (see :attr:`metrics_addr`). A
    worker runs once; build another to run again."""

    def __init__(
        self,
        queue: "Queue",
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
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise InvalidArgument(f"concurrency {concurrency!r} must be a positive integer")
        if events_max_len is not None and (
            isinstance(events_max_len, bool) or not isinstance(events_max_len, int) or events_max_len < 0
        ):
            raise InvalidArgument(f"events_max_len {events_max_len!r} must be an integer, 0 or more")
        if isinstance(queues, str):
            queues = [q for q in queues.split(",") if q]
        self.queue = queue
        tasks = queue.tasks
        if not tasks:
            raise InvalidArgument("no tasks are registered on this queue: decorate functions with @queue.task()")
        self._tasks = tasks
        self._rate_limits = _task_rate_limits(tasks)
        self._dispatcher = _Dispatcher(queue, tasks)
        specs: List[Tuple[str, Optional[int], Optional[int]]] = [
            (t.name, _ms("timeout", t.timeout), _ms("soft_timeout", t.soft_timeout)) for t in tasks.values()
        ]
        extra: Dict[str, Any] = {} if prefetch is None else {"prefetch": prefetch}
        if events_max_len is not None:
            extra["events_max_len"] = events_max_len
        if events_max_age is not None:
            extra["events_max_age_ms"] = _ms("events_max_age", events_max_age)
        if metrics_bind is not None:
            extra["metrics_bind"] = metrics_bind
        self._native = _flexiq.NativeWorker(
            queue._native,
            self._dispatcher,
            specs,
            concurrency=concurrency,
            queues=list(queues) if queues is not None else None,
            shutdown_timeout_ms=_ms("shutdown_timeout", shutdown_timeout),
            worker_id=worker_id,
            lease_ms=_ms("lease", lease),
            maintenance=maintenance,
            **extra,
        )
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        self._prepared = False

    def __repr__(self) -> str:
        return f"Worker(id={self.id!r}, ready={self.ready})"

    @property
    def id(self) -> str:
        """The worker's id: in :meth:`flexiq.Queue.list_workers` and on the jobs it claims."""
        return self._native.id

    @property
    def ready(self) -> bool:
        """Whether the worker is running and live (registered, claiming)."""
        return self._native.ready

    @property
    def metrics_addr(self) -> Optional[str]:
        """Where the running worker serves ``GET /metrics`` (``"127.0.0.1:9100"``; the chosen
        port when ``metrics_bind`` asked for port 0), once it is ready; ``None`` without
        ``metrics_bind`` or before then."""
        return self._native.metrics_addr

    def _prepare(self) -> None:
        """Applies the tasks' rate limits to their queues, once per worker. Until the engine
        has per-task limits a task's limit is its queue's: a queue without one gets it; one
        that has the same limit is fine; a different limit (``set_queue_rate_limit``, or
        another task's worker) is ``Conflict`` and is never overwritten."""
        if self._prepared:
            return
        for q, (task, limit) in self._rate_limits.items():
            current = self.queue.queue_config(q)["rate_limit"]
            if current is None:
                self.queue.set_queue_rate_limit(q, limit)
            elif current != limit:
                raise Conflict(
                    f"task {task!r} has rate_limit {limit!r} but its queue {q!r} already has rate limit "
                    f"{current!r}: a task's rate limit is its queue's, so make them agree or call "
                    f"clear_queue_rate_limit({q!r}) first"
                )
        self._prepared = True

    def run(self, install_signal_handlers: bool = True) -> Dict[str, int]:
        """Runs until :meth:`stop`, :meth:`flexiq.Queue.shutdown`, SIGINT or SIGTERM, then
        shuts down gracefully and returns the counters (claimed, succeeded, failed, ...).
        Raises at once when the worker cannot start (``Closed`` for a closed queue,
        ``Conflict`` for a task rate limit that disagrees with its queue's)."""
        self._prepare()
        previous = None
        main = threading.current_thread() is threading.main_thread()
        if install_signal_handlers and main:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        self.queue._track(self, True)
        try:
            return self._native.run()
        except (KeyboardInterrupt, _Shutdown):
            counters = self._native.counters()
            return counters if counters is not None else {}
        finally:
            self.queue._track(self, False)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            self._dispatcher.close()

    def start(self, ready_timeout: Optional[float] = 30.0) -> "Worker":
        """Runs the worker on a background thread and returns once it is ready: registered
        and claiming, so a job enqueued from now on is picked up without waiting for a
        poll. A worker that stops first raises what stopped it (``Closed`` for a closed
        queue, ...); one not ready within ``ready_timeout`` seconds (``None``: no limit) is
        stopped and raises ``FlexiqTimeout``. :meth:`stop` ends it."""
        if self._thread is not None:
            raise FlexiqError(f"worker {self.id} was already started")
        self._prepare()

        def target() -> None:
            try:
                self.run(install_signal_handlers=False)
            except BaseException as e:  # surfaced by start() / stop()
                self._error = e

        self._thread = threading.Thread(target=target, name=f"flexiq-worker-{self.id}", daemon=True)
        self._thread.start()
        try:
            ready = self._native.wait_ready(_ms("timeout", ready_timeout))
        except BaseException:
            self._native.stop()
            self._thread.join()
            raise
        if not ready:
            self._thread.join()
            self._raise_stopped()
        return self

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Blocks until the worker is ready (for a worker whose :meth:`run` another thread
        runs); ``timeout`` in seconds (``None``: no limit) raises ``FlexiqTimeout`` when it
        runs out. A worker that stopped without becoming ready raises why (or ``Closed``)."""
        if not self._native.wait_ready(_ms("timeout", timeout)):
            if self._thread is not None:
                self._thread.join()
            self._raise_stopped()

    def _raise_stopped(self) -> None:
        if self._error is not None:
            raise self._error
        raise Closed(f"worker {self.id} stopped before it was ready")

    def _signal_stop(self) -> None:
        self._native.stop()

    def _join(self, timeout: Optional[float]) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self, timeout: Optional[float] = None) -> Optional[Dict[str, int]]:
        """Asks the worker to stop (from any thread); with a background thread, waits for it
        (``timeout`` s) and re-raises what ended it abnormally. Returns the final counters
        (``None`` while a worker run elsewhere has not finished)."""
        self._native.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._error is not None:
                raise self._error
        return self._native.counters()

    @property
    def counters(self) -> Optional[Dict[str, int]]:
        """The final counters once the worker has stopped, else ``None``."""
        return self._native.counters()

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
