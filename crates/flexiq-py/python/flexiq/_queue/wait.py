"""Awaiting a job from :class:`flexiq.Queue`: its result and its partial-result stream, as
``flexiq-runtime``'s ``queue/wait.rs``. ``timeout`` and ``poll`` are seconds (``poll`` caps
one wait); the engine wakes a waiter as soon as the job changes.

The async forms are written here rather than made by :func:`flexiq._aio.async_twins`: they
cut a long wait into short ones, so a cancelled coroutine frees its thread within about a
second.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Iterator, Optional

from .. import _flexiq
from .._aio import run_blocking
from .._units import seconds_to_ms
from ..exceptions import FlexiqTimeout
from .base import QueueBase

__all__ = ["WaitMixin"]

#: Longest single blocking wait of ``aresult`` / ``astream`` (s).
_SLICE_S = 1.0


def _ms(what: str, seconds: Optional[float]) -> Optional[int]:
    return seconds_to_ms(what, seconds, positive=True)


class WaitMixin(QueueBase):
    """Results and partial streams, blocking and async."""

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

    async def aresult(self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Async twin of :meth:`result`: awaits a job's result (``timeout`` seconds)."""
        _ms("timeout", timeout), _ms("poll", poll)  # refused before any wait
        result = self.result
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _SLICE_S if deadline is None else min(_SLICE_S, deadline - time.monotonic())
            if left <= 0:
                return await run_blocking(result, job_id, 0.001, poll)
            try:
                return await run_blocking(result, job_id, left, poll)
            except FlexiqTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    async def astream(
        self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`: async-iterates a job's partials (deserialized)."""
        it = await run_blocking(self._stream_native, job_id, timeout, poll)
        loads = self.serializer.loads
        done = object()
        while True:
            p = await run_blocking(next, it, done)
            if p is done:
                return
            yield loads(p["data"])
