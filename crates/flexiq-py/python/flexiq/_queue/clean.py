"""Removing and re-running jobs in bulk on :class:`flexiq.Queue`, as ``flexiq-runtime``'s
``queue/clean.rs``: clean by status and age, drain, obliterate in pages, remove one job with
its children, retry finished jobs, orphan removal, and the two limit probes (``is_maxed``,
``rate_limit_ttl``).

These are operator tools, so the engine checks every value (a negative count, a limit past
10,000, an unknown status is :class:`~flexiq.InvalidArgument` naming the argument) and
nothing is removed on bad input. Counts and ``grace_ms`` must be real integers: a ``bool``,
a float or a string is a :class:`~flexiq.WrongType` (an ``InvalidArgument`` that is also a
``TypeError``), rather than being read as 0 or 1. Ages and waits are milliseconds, as the
backend contract names them.
"""

from __future__ import annotations

from typing import List

from .base import QueueBase

__all__ = ["CleanMixin"]


class CleanMixin(QueueBase):
    """Clean, drain, obliterate, remove, retry in bulk, orphans and the limit probes."""

    def clean(self, queue: str, status: str, grace_ms: int, limit: int = 1000) -> List[str]:
        """Removes up to ``limit`` (1 to 10,000) jobs of ``status`` in ``queue``, oldest first,
        that finished (completed, failed, dead, cancelled) or were created (the other
        statuses) at least ``grace_ms`` milliseconds ago, with their history; returns their
        ids. Jobs waiting on a removed job no longer wait for it. ``"running"`` is refused:
        cancel those, or :meth:`obliterate` the queue."""
        return self._native.clean(queue, status, grace_ms, limit)

    def drain(self, queue: str, include_delayed: bool = False) -> int:
        """Removes the pending jobs of ``queue`` that are due, and with ``include_delayed``
        the delayed ones too; returns how many. Waiting, suspended, running and finished
        jobs stay."""
        return self._native.drain(queue, include_delayed)

    def obliterate(self, queue: str, force: bool = False, count: int = 1000) -> int:
        """Removes up to ``count`` (1 to 10,000) jobs of ``queue`` whatever their status, with
        their dead letters and archived copies, and returns how many are left; once none
        are, the queue's controls and counts go too. Call it until it returns 0. A queue with
        running jobs raises :class:`~flexiq.Conflict` (and nothing goes) unless ``force``,
        when their workers' late acks are superseded."""
        return self._native.obliterate(queue, force, count)

    def remove_orphans(self) -> int:
        """Removes history rows (logs, errors, dead letters, ...) whose job no longer
        exists; returns how many."""
        return self._native.remove_orphans()

    def retry_jobs(self, queue: str, status: str = "failed", count: int = 1000) -> int:
        """Moves up to ``count`` (1 to 10,000) jobs of ``status`` (``"failed"``, ``"dead"`` or
        ``"completed"``) in ``queue``, oldest finished first, back to pending now with a
        fresh retry budget and the same ids; returns how many moved, 0 when none are left."""
        return self._native.retry_jobs(queue, status, count)

    def remove(self, job_id: str, remove_children: bool = True) -> List[str]:
        """Removes a job with its history, and with ``remove_children`` the jobs it waits on
        (transitively) that no other job waits on; returns every id removed, the job first.
        :class:`~flexiq.NotFound` for an unknown id; :class:`~flexiq.Conflict` naming the job
        when it or a child to remove is running (then nothing is removed)."""
        return self._native.remove(job_id, remove_children)

    def is_maxed(self, queue: str) -> bool:
        """Whether ``queue`` has a concurrency cap and as many jobs running as it allows."""
        return self._native.is_maxed(queue)

    def rate_limit_ttl(self, queue: str) -> int:
        """Milliseconds until ``queue``'s rate limit grants another claim; 0 without a limit
        or while a claim is free."""
        return self._native.rate_limit_ttl(queue)
