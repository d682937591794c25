"""``current_job()``: what a running task knows about its own job.

The worker sets the context before calling a handler (a context variable, so it follows the
handler into ``async def`` code). Partials are serialized with the queue's serializer so
``Queue.stream`` reads them back as the values that were published.

The task's soft timeout is a hint, not a limit: the attempt keeps running after it. A
handler can poll it (:meth:`JobContext.soft_timeout_exceeded`), block on it
(:meth:`JobContext.wait_soft_timeout`, e.g. from a helper thread), await it
(:meth:`JobContext.await_soft_timeout` in an ``async def`` task) or have a callback run when
it fires (:meth:`JobContext.on_soft_timeout`).

A job that waits on others (a flow's parent, or a job with ``depends_on``) reads what its
children left: :meth:`JobContext.children_values` (their results, decoded like
``Queue.get_result``) and :meth:`JobContext.ignored_failures` (the errors of the children
whose failure its ``ignore_dependency`` policy ignored).
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any, Callable, Dict, Optional

from . import _flexiq
from ._units import seconds_to_ms
from .exceptions import FlexiqError, InvalidArgument
from .serialization import Serializer

__all__ = ["JobContext", "current_job"]

_current: contextvars.ContextVar[Optional["JobContext"]] = contextvars.ContextVar("flexiq_current_job", default=None)


class JobContext:
    """The running attempt of one job."""

    __slots__ = ("_native", "_serializer", "_soft_timeout")

    def __init__(
        self, native: _flexiq.NativeJobContext, serializer: Serializer, soft_timeout: Optional[float] = None
    ) -> None:
        self._native = native
        self._serializer = serializer
        self._soft_timeout = soft_timeout

    def __repr__(self) -> str:
        return f"JobContext(id={self.id!r}, task={self.task!r}, attempt={self.attempt})"

    @property
    def id(self) -> str:
        """The job's id."""
        return self._native.id

    @property
    def task(self) -> str:
        """The task name."""
        return self._native.task

    @property
    def attempt(self) -> int:
        """This attempt's number, from 1."""
        return self._native.attempt

    @property
    def max_retries(self) -> int:
        """Retries the job may have after its first attempt."""
        return self._native.max_retries

    @property
    def queue(self) -> str:
        """The queue the job came from."""
        return self._native.queue

    @property
    def metadata(self) -> Optional[str]:
        """The job's metadata (JSON object text), if any."""
        return self._native.metadata

    def publish(self, partial: Any) -> int:
        """Publishes a partial result (serialized like results); returns its sequence number.
        Readers get it from ``Queue.stream(job_id)``."""
        return self._native.publish(self._serializer.dumps(partial))

    def log(self, message: str, level: str = "info") -> None:
        """Appends a log line to the job (``Queue.job_logs`` reads them back)."""
        self._native.log(message, level)

    def set_progress(self, progress: float) -> None:
        """Records progress, 0 to 100, of this attempt."""
        self._native.set_progress(progress)

    def children_values(self) -> Dict[str, Any]:
        """The results of this job's completed children by child id, decoded with the
        queue's serializer (``None`` for a child that returned nothing). Read from the store
        on each call, every page of children included."""
        loads = self._serializer.loads
        return {k: None if v is None else loads(v) for k, v in self._native.children_values().items()}

    def ignored_failures(self) -> Dict[str, str]:
        """The last error of each child whose failure was ignored (its policy
        ``ignore_dependency``), by child id."""
        return self._native.ignored_failures()

    def is_cancel_requested(self) -> bool:
        """True once the handler should stop: a cancel request (delivered at the worker's next
        heartbeat), the hard timeout, a lost lease or a shutdown past its deadline."""
        return self._native.is_cancelled()

    @property
    def cancel_reason(self) -> Optional[str]:
        """``"requested"``, ``"hard_timeout"``, ``"lease_lost"`` or ``"shutdown"`` once
        :meth:`is_cancel_requested` is true."""
        return self._native.cancel_reason()

    @property
    def soft_timeout(self) -> Optional[float]:
        """The task's soft timeout in seconds (``None``: the task has none, so it never fires)."""
        return self._soft_timeout

    def soft_timeout_exceeded(self) -> bool:
        """True once the task's soft timeout has passed: a hint to finish up; the attempt
        keeps running."""
        return self._native.soft_timeout_exceeded()

    @property
    def soft_timeout_reached(self) -> bool:
        """The same as :meth:`soft_timeout_exceeded`, as a property."""
        return self._native.soft_timeout_exceeded()

    def wait_soft_timeout(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the soft timeout fires (True), or the attempt is cancelled, ends, or
        ``timeout`` seconds pass (False; ``None``: no limit). Releases the GIL while it waits."""
        return self._native.wait_soft_timeout(seconds_to_ms("timeout", timeout, positive=True))

    async def await_soft_timeout(self, timeout: Optional[float] = None) -> bool:
        """Async twin of :meth:`wait_soft_timeout`, for ``async def`` tasks: resolves True
        when the soft timeout fires, False when the attempt is cancelled or ends first, or
        ``timeout`` seconds pass. The event loop keeps running meanwhile."""
        seconds_to_ms("timeout", timeout, positive=True)
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[bool]" = loop.create_future()

        def settle(fired: bool) -> None:
            if not fut.done():
                fut.set_result(fired)

        def wake(fired: bool) -> None:
            try:
                loop.call_soon_threadsafe(settle, fired)
            except RuntimeError:
                pass  # the loop was closed: nobody is awaiting any more

        self._native._on_soft_timeout(wake)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except asyncio.TimeoutError:
            return False

    def on_soft_timeout(self, callback: Callable[[], Any]) -> None:
        """Calls ``callback()`` once when the soft timeout fires (never if the attempt ends
        or is cancelled first). It runs on a flexiq thread, not the handler's: keep it short
        and thread-safe (set an event, flip a flag). Its exceptions are reported as
        unraisable, never raised into the handler."""
        if not callable(callback):
            raise InvalidArgument(f"callback must be callable, not {type(callback).__name__}")

        def fire(fired: bool) -> None:
            if fired:
                callback()

        self._native._on_soft_timeout(fire)


def current_job() -> JobContext:
    """The job the calling task is running; raises :class:`~flexiq.FlexiqError` outside one."""
    ctx = _current.get()
    if ctx is None:
        raise FlexiqError("current_job() called outside a running task")
    return ctx
