"""Counts, metrics and the worker registry of :class:`flexiq.Queue`, as ``flexiq-runtime``'s
``queue/stats.rs``. Windows passed in are seconds; timestamps and durations reported back
are milliseconds."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .base import QueueBase

__all__ = ["StatsMixin"]


class StatsMixin(QueueBase):
    """Status counts, task metrics and the worker registry."""

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
        """Registered worker processes: id, queues, concurrency, host, pid, ``started_at`` and
        ``heartbeat_at`` (Unix ms), and ``current_jobs``, the ids of the jobs each runs now."""
        return self._native.list_workers()
