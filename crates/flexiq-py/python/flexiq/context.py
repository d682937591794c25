"""``current_job()``: what a running task knows about its own job.

The worker sets the context before calling a handler (a context variable, so it follows the
handler into ``async def`` code). Partials are serialized with the queue's serializer so
``Queue.stream`` reads them back as the values that were published.
"""

from __future__ import annotations

import contextvars
from typing import Any, Optional

from . import _flexiq
from .exceptions import FlexiqError
from .serialization import Serializer

__all__ = ["JobContext", "current_job"]

_current: contextvars.ContextVar[Optional["JobContext"]] = contextvars.ContextVar("flexiq_current_job", default=None)


class JobContext:
    """The running attempt of one job."""

    __slots__ = ("_native", "_serializer")

    def __init__(self, native: _flexiq.NativeJobContext, serializer: Serializer) -> None:
        self._native = native
        self._serializer = serializer

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

    def is_cancel_requested(self) -> bool:
        """True once the handler should stop: a cancel request (delivered at the worker's next
        heartbeat), the hard timeout, a lost lease or a shutdown past its deadline."""
        return self._native.is_cancelled()

    @property
    def cancel_reason(self) -> Optional[str]:
        """``"requested"``, ``"hard_timeout"``, ``"lease_lost"`` or ``"shutdown"`` once
        :meth:`is_cancel_requested` is true."""
        return self._native.cancel_reason()

    def soft_timeout_exceeded(self) -> bool:
        """True once the task's soft timeout has passed: a hint to finish up."""
        return self._native.soft_timeout_exceeded()


def current_job() -> JobContext:
    """The job the calling task is running; raises :class:`~flexiq.FlexiqError` outside one."""
    ctx = _current.get()
    if ctx is None:
        raise FlexiqError("current_job() called outside a running task")
    return ctx
