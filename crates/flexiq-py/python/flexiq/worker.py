"""``Worker``: runs a queue's registered tasks through the Rust engine's worker.

The engine claims, heartbeats, times out, retries and acks; this module only turns one
claimed job into one Python call (the dispatcher) and back into ``(ok, result, error,
retryable)``. Synchronous tasks run on the engine's blocking threads; ``async def`` tasks run
on one event loop thread the worker owns, and are cancelled when the engine cancels the
attempt. An exception in a task becomes the attempt's error with its traceback text; the
task's retry policy decides what happens next.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _flexiq
from .context import JobContext, _current
from .exceptions import FlexiqError, InvalidArgument

if TYPE_CHECKING:
    from .queue import Queue
    from .task import Task

__all__ = ["Worker"]

Answer = Tuple[bool, Optional[bytes], Optional[str], bool]

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
        ctx = JobContext(native, ser)
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


class Worker:
    """Runs a queue's registered tasks. ``concurrency`` handlers at once (default 8);
    ``queues`` limits which queues it takes from (default: all); ``shutdown_timeout`` (s)
    is how long running handlers may finish on shutdown before their jobs are given back;
    ``lease`` (s) is the job lease window; ``prefetch`` jobs are claimed beyond the free slots
    (default: sized by the worker's finish rate, four to 64 per slot) so a freed slot starts
    its next job without a round trip."""

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
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise InvalidArgument(f"concurrency {concurrency!r} must be a positive integer")
        if isinstance(queues, str):
            queues = [q for q in queues.split(",") if q]
        self.queue = queue
        tasks = queue.tasks
        if not tasks:
            raise InvalidArgument("no tasks are registered on this queue: decorate functions with @queue.task()")
        self._tasks = tasks
        self._dispatcher = _Dispatcher(queue, tasks)
        specs: List[Tuple[str, Optional[float], Optional[float]]] = [
            (t.name, t.timeout, t.soft_timeout) for t in tasks.values()
        ]
        extra = {} if prefetch is None else {"prefetch": prefetch}
        self._native = _flexiq.NativeWorker(
            queue._native,
            self._dispatcher,
            specs,
            concurrency=concurrency,
            queues=list(queues) if queues is not None else None,
            shutdown_timeout=shutdown_timeout,
            worker_id=worker_id,
            lease=lease,
            maintenance=maintenance,
            **extra,
        )
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None

    def _apply_task_rate_limits(self) -> None:
        for t in self._tasks.values():
            if t.rate_limit is not None:
                # Rate limits are enforced per queue by the engine; a task's limit applies
                # to the queue it owns (Task requires a queue of its own for one).
                self.queue.set_queue_rate_limit(t.queue_name or "default", t.rate_limit)

    def run(self, install_signal_handlers: bool = True) -> Dict[str, int]:
        """Runs until :meth:`stop`, SIGINT or SIGTERM, then shuts down gracefully and
        returns the counters (claimed, succeeded, failed, ...)."""
        self._apply_task_rate_limits()
        previous = None
        main = threading.current_thread() is threading.main_thread()
        if install_signal_handlers and main:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return self._native.run()
        except (KeyboardInterrupt, _Shutdown):
            counters = self._native.counters()
            return counters if counters is not None else {}
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            self._dispatcher.close()

    def start(self) -> "Worker":
        """Runs the worker on a background thread; :meth:`stop` ends it."""
        if self._thread is not None:
            raise FlexiqError("this worker was already started")

        def target() -> None:
            try:
                self.run(install_signal_handlers=False)
            except BaseException as e:  # surfaced by stop()
                self._error = e

        self._thread = threading.Thread(target=target, name="flexiq-worker", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: Optional[float] = None) -> Optional[Dict[str, int]]:
        """Asks the worker to stop; with a background thread, waits for it (``timeout`` s)
        and re-raises what ended it abnormally. Returns the final counters."""
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
