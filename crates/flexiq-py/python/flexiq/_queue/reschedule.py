"""Moving jobs that have not started on :class:`flexiq.Queue`, as ``flexiq-runtime``'s
``queue/reschedule.rs``: a new delay, promotion of one delayed job or a batch of a queue's,
a new priority, LIFO placement.

The rules are the store contract's: only a pending job gets a new delay or is promoted; a
pending, waiting or suspended job may get a new priority; any other status is
:class:`~flexiq.Conflict` naming it, an unknown id :class:`~flexiq.NotFound`, and a negative
delay, a priority outside ±2,097,152 or a count outside 1 to 10,000
:class:`~flexiq.InvalidArgument`. Delays are milliseconds, as the backend contract names
them, and with the counts and priorities must be real integers: a ``bool``, a float or a
string is a :class:`~flexiq.WrongType` (also a ``TypeError``), and nothing changes.
"""

from __future__ import annotations

from .base import QueueBase

__all__ = ["RescheduleMixin"]


class RescheduleMixin(QueueBase):
    """Change a delay, promote delayed jobs, change a priority."""

    def change_delay(self, job_id: str, delay_ms: int) -> None:
        """Makes a pending job due ``delay_ms`` milliseconds from now (0: due now); a LIFO
        job becomes an ordinary FIFO one."""
        self._native.change_delay(job_id, delay_ms)

    def promote(self, job_id: str) -> None:
        """Makes a delayed pending job due now. :class:`~flexiq.Conflict` when it is not
        pending or already due."""
        self._native.promote(job_id)

    def promote_jobs(self, queue: str, count: int = 1000) -> int:
        """Makes up to ``count`` (1 to 10,000) delayed pending jobs of ``queue`` due now,
        soonest first; returns how many. Call it until it returns 0."""
        return self._native.promote_jobs(queue, count)

    def change_priority(self, job_id: str, priority: int, lifo: bool = False) -> None:
        """Gives a pending, waiting or suspended job a new priority (higher runs first).
        With ``lifo`` a due pending job is also placed ahead of the FIFO jobs of that
        priority, as the enqueue option ``lifo`` does."""
        self._native.change_priority(job_id, priority, lifo)
