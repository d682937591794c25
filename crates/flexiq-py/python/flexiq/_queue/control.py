"""Queue control of :class:`flexiq.Queue`: pause / resume, rate limits, concurrency caps,
stall budgets, purges, task revocation and the operator's requeue of a stuck job, as
``flexiq-runtime``'s ``queue/control.rs``. All of it is persisted and namespace-scoped."""

from __future__ import annotations

from typing import Any, Dict, List

from .base import QueueBase

__all__ = ["ControlMixin"]


class ControlMixin(QueueBase):
    """Pause, limits, caps, stall budgets, purges, revocation and requeue."""

    def set_queue_rate_limit(self, queue_name: str, rate_limit: str) -> None:
        """Limits claims on a queue across all workers: ``"N/s"``, ``"N/m"`` or ``"N/h"``."""
        self._native.set_queue_rate_limit(queue_name, rate_limit)

    def clear_queue_rate_limit(self, queue_name: str) -> None:
        """Removes a queue's rate limit (a no-op for a queue without one)."""
        self._native.clear_queue_rate_limit(queue_name)

    def set_queue_concurrency(self, queue_name: str, max_concurrent: int) -> None:
        """Caps the jobs of a queue running at once across all workers (1 to 1,000,000)."""
        self._native.set_queue_concurrency(queue_name, max_concurrent)

    def clear_queue_concurrency(self, queue_name: str) -> None:
        """Removes a queue's concurrency cap (a no-op for a queue without one)."""
        self._native.clear_queue_concurrency(queue_name)

    def set_queue_max_stalled(self, queue_name: str, max_stalled_count: int) -> None:
        """Sets how many stalls (lapsed leases: the worker died or lost its lease) a job of
        a queue recovers from, back to pending without spending a retry, before it goes
        dead with an error starting ``STALLED`` (0 to 10,000; 0 fails the first stall; the
        default is 1). A ``bool``, a float or a string is a
        :class:`~flexiq.WrongType`."""
        self._native.set_queue_max_stalled(queue_name, max_stalled_count)

    def clear_queue_max_stalled(self, queue_name: str) -> None:
        """Restores a queue's stall budget to the default of 1."""
        self._native.clear_queue_max_stalled(queue_name)

    def pause(self, queue_name: str) -> None:
        """Pauses a queue for every worker of this namespace; persisted across restarts."""
        self._native.pause(queue_name)

    pause_queue = pause

    def resume(self, queue_name: str) -> None:
        """Resumes a paused queue; its backlog dispatches at once, subject to its limits."""
        self._native.resume(queue_name)

    resume_queue = resume

    def paused_queues(self) -> List[str]:
        """Every paused queue of this namespace (the whole deployment's view), sorted."""
        return self._native.paused_queues()

    list_paused_queues = paused_queues

    def purge(self, queue_name: str) -> int:
        """Cancels every pending job on one queue (rows stay); returns the count cancelled."""
        return self._native.purge(queue_name)

    purge_queue = purge

    def revoke_task(self, task_name: str) -> None:
        """Refuses every future enqueue of a task (also dead-letter retries and replays of
        it) with :class:`~flexiq.TaskRevoked`. Jobs of the task already pending are not
        affected: workers still run them. Persisted for the whole namespace."""
        self._native.revoke_task(task_name)

    def unrevoke_task(self, task_name: str) -> bool:
        """Lifts a revocation so the task may be enqueued again; False when it was not revoked."""
        return self._native.unrevoke_task(task_name)

    def revoked_tasks(self) -> List[str]:
        """The revoked task names of this namespace, sorted."""
        return self._native.revoked_tasks()

    def queue_config(self, queue_name: str) -> Dict[str, Any]:
        """A queue's persisted controls: ``paused``, ``rate_limit``, ``concurrency`` and
        ``max_stalled_count`` (``None`` where the queue keeps the default)."""
        return self._native.queue_config(queue_name)

    def purge_completed(self, older_than: int = 86400) -> int:
        """Deletes completed jobs older than ``older_than`` seconds; returns the count."""
        return self._native.purge_completed(older_than)

    def requeue_job(self, job_id: str) -> bool:
        """Forces a stuck running job back to pending, keeping its retry budget. False when
        the job doesn't exist or isn't running. Only for jobs whose worker is known dead."""
        return self._native.requeue_job(job_id)
