"""``JobResult``: the handle ``Task.delay`` / ``apply_async`` / ``Queue.enqueue`` return.

It holds only the queue and the job id, so it is cheap to create on the enqueue path; every
property reads the store afresh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Optional

if TYPE_CHECKING:
    from .models import Job
    from .queue import Queue

__all__ = ["JobResult"]


class JobResult:
    """A handle on one enqueued job."""

    __slots__ = ("_queue", "id")

    def __init__(self, queue: "Queue", job_id: str) -> None:
        self._queue = queue
        self.id: str = job_id

    def __repr__(self) -> str:
        return f"JobResult(id={self.id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobResult) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def job(self) -> Optional["Job"]:
        """The job's current state (``None`` once deleted)."""
        return self._queue.get_job(self.id)

    @property
    def status(self) -> Optional[str]:
        """The job's current status (``"pending"``, ``"running"``, ``"completed"``, ...);
        ``None`` once the job row is gone."""
        job = self._queue.get_job(self.id)
        return None if job is None else job.status

    def result(self, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Waits (``timeout`` seconds, ``None``: forever) for the job and returns its result;
        raises ``JobFailed``, ``JobCancelled`` or ``FlexiqTimeout``."""
        return self._queue.result(self.id, timeout=timeout, poll=poll)

    async def aresult(self, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Async twin of :meth:`result`."""
        return await self._queue.aresult(self.id, timeout=timeout, poll=poll)

    def get(self) -> Any:
        """The result if the job has completed, else ``None`` (never waits)."""
        return self._queue.get_result(self.id)

    def stream(self, timeout: Optional[float] = None) -> Iterator[Any]:
        """The job's published partials, in order, until it ends."""
        return self._queue.stream(self.id, timeout=timeout)

    def astream(self, timeout: Optional[float] = None) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""
        return self._queue.astream(self.id, timeout=timeout)

    def cancel(self) -> bool:
        """Requests cancellation: a pending job is cancelled outright, a running one is asked
        to stop. False when the job had already finished."""
        return self._queue.request_cancel(self.id)
