"""Queue control, statistics, dead letters, cleanup, retention, settings and schema calls.

A mixin of :class:`flexiq.Queue`: each method hands its arguments to the engine unchanged and
returns what the spec says (dicts, lists, :class:`~flexiq.models.Page`, retention classes).
Every call releases the GIL while the engine works. Durations passed in are **seconds**;
timestamps and windows reported back are **milliseconds**.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from . import _flexiq
from .exceptions import InvalidArgument
from .models import EffectiveRetention, Page, Retention, RetentionPreview

__all__ = ["OpsMixin"]


def _retention_dict(retention: Union[Retention, Dict[str, Optional[int]], None]) -> Optional[Dict[str, Optional[int]]]:
    if retention is None:
        return None
    if isinstance(retention, Retention):
        return retention.to_dict()
    if isinstance(retention, dict):
        return dict(retention)
    raise InvalidArgument(f"retention must be a Retention or a dict of seconds per table, not {type(retention).__name__}")


class OpsMixin:
    """Queue management, stats, dead letters, retention, settings and schema."""

    _native: _flexiq.NativeQueue

    # -- queue management ------------------------------------------------------------------

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
        """A queue's persisted controls: ``paused``, ``rate_limit`` and ``concurrency``."""
        return self._native.queue_config(queue_name)

    # -- statistics --------------------------------------------------------------------------

    def stats(self) -> Dict[str, int]:
        """Jobs per status: pending, running, completed, failed, dead, cancelled (plus
        suspended and waiting)."""
        return self._native.stats()

    def stats_by_queue(self) -> Dict[str, Dict[str, int]]:
        """Status counts per queue holding jobs: ``{queue_name: {"pending": N, ...}}``."""
        return self._native.stats_by_queue()

    def stats_all_queues(self) -> Dict[str, Dict[str, int]]:
        """Status counts for every known queue, including those with zero jobs."""
        return self._native.stats_all_queues()

    def stats_for_queue(self, queue_name: str) -> Dict[str, int]:
        """Status counts of one queue."""
        return self._native.stats_for_queue(queue_name)

    def metrics(self, task_name: Optional[str] = None, since: int = 3600) -> Dict[str, Dict[str, Any]]:
        """Per-task aggregates over the last ``since`` seconds: count, success_count,
        failure_count, avg_ms, p50_ms, p95_ms, p99_ms, min_ms, max_ms (each retry counts)."""
        return self._native.metrics(task_name, since)

    def metrics_timeseries(
        self, task_name: Optional[str] = None, since: int = 3600, bucket: int = 60
    ) -> List[Dict[str, Any]]:
        """The same rows in ``bucket``-second buckets, oldest first; empty buckets absent.
        Each has timestamp (Unix ms), count, success, failure, avg_ms, p50_ms, p95_ms, p99_ms."""
        return self._native.metrics_timeseries(task_name, since, bucket)

    def get_metrics(self, since_ms: int, task_name: Optional[str] = None) -> List[Dict[str, Any]]:
        """Raw per-execution rows recorded at or after ``since_ms`` (Unix ms), oldest first."""
        return self._native.get_metrics(since_ms, task_name)

    def count_pending_by_queue(self, queue_name: str) -> int:
        """Pending jobs on one queue: the number the ``max_pending`` cap is compared against."""
        return self._native.count_pending_by_queue(queue_name)

    def list_workers(self) -> List[Dict[str, Any]]:
        """Registered worker processes with their heartbeats (Unix ms)."""
        return self._native.list_workers()

    # -- dead letters ------------------------------------------------------------------------

    def dead_letters(self, limit: int = 10, offset: int = 0) -> List[Dict[str, Any]]:
        """Dead letters, newest first: id, original_job_id, queue, task_name, error,
        retry_count, failed_at (Unix ms), metadata."""
        return self._native.dead_letters(limit, offset)

    def dead_letters_by_task(self, task_name: str, limit: int = 10, offset: int = 0) -> List[Dict[str, Any]]:
        """The dead letters of one task."""
        return self._native.dead_letters_by_task(task_name, limit, offset)

    def dead_letters_after(self, limit: int = 10, after: Optional[str] = None) -> Page[Dict[str, Any]]:
        """Keyset-paginated dead letters, by failed time; pass ``next_cursor`` back as ``after``."""
        items, cursor = self._native.dead_letters_after(limit, after)
        return Page(items, cursor)

    def retry_dead(self, dead_id: str) -> str:
        """Re-enqueues a dead letter's job as a new job; returns the new job id."""
        return self._native.retry_dead(dead_id)

    def purge_dead(self, older_than: int = 86400) -> int:
        """Deletes dead letters older than ``older_than`` seconds; returns the count."""
        return self._native.purge_dead(older_than)

    def delete_dead(self, dead_id: str) -> bool:
        """Discards one dead letter (by its own id); False when no entry has that id."""
        return self._native.delete_dead(dead_id)

    def purge_dead_by_task(self, task_name: str) -> int:
        """Deletes every dead letter of one task; returns the count."""
        return self._native.purge_dead_by_task(task_name)

    def requeue_job(self, job_id: str) -> bool:
        """Forces a stuck running job back to pending, keeping its retry budget. False when
        the job doesn't exist or isn't running. Only for jobs whose worker is known dead."""
        return self._native.requeue_job(job_id)

    # -- cleanup and retention ---------------------------------------------------------------

    def purge_completed(self, older_than: int = 86400) -> int:
        """Deletes completed jobs older than ``older_than`` seconds; returns the count."""
        return self._native.purge_completed(older_than)

    def effective_retention(self) -> Optional[EffectiveRetention]:
        """The windows (ms) the elected cleaner applied on its last sweep; ``None`` before
        any worker has swept."""
        d = self._native.effective_retention()
        return None if d is None else EffectiveRetention(**d)

    def dry_run_retention(
        self, retention: Union[Retention, Dict[str, Optional[int]], None] = None
    ) -> RetentionPreview:
        """Counts what a purge would delete now, deleting nothing. ``retention`` (seconds)
        defaults to this queue's configured windows, else the recommended ones."""
        return RetentionPreview(**self._native.dry_run_retention(_retention_dict(retention)))

    # -- settings ----------------------------------------------------------------------------

    def get_setting(self, key: str) -> Optional[str]:
        """A setting's value; ``None`` for a key never set."""
        return self._native.get_setting(key)

    def set_setting(self, key: str, value: str) -> None:
        """Writes a setting (last write wins)."""
        self._native.set_setting(key, value)

    def delete_setting(self, key: str) -> bool:
        """Deletes a setting; False when it did not exist."""
        return self._native.delete_setting(key)

    def list_settings(self) -> Dict[str, str]:
        """Every setting, runtime-owned keys included."""
        return self._native.list_settings()

    def set_setting_if(self, key: str, expected: Optional[str], value: str) -> bool:
        """Compare-and-set: writes only while ``key`` holds ``expected`` (``None``: unset)."""
        return self._native.set_setting_if(key, expected, value)

    # -- schema and contract floor -----------------------------------------------------------

    def migrate(self) -> Dict[str, Any]:
        """Applies pending schema changes: ``applied`` and ``workflow_applied`` version lists,
        ``archived_jobs`` and ``schemaless``."""
        return self._native.migrate()

    def min_contract(self) -> int:
        """The lowest contract level a process may speak and still open this storage."""
        return self._native.min_contract()

    def set_min_contract(self, level: int) -> None:
        """Moves the contract floor; a level this build does not speak is refused."""
        self._native.set_min_contract(level)
