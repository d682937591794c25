"""The dead-letter queue of :class:`flexiq.Queue`: listings, retry, delete and purges, as
``flexiq-runtime``'s ``queue/dead.rs``."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..models import Page
from .base import QueueBase

__all__ = ["DeadMixin"]


class DeadMixin(QueueBase):
    """Dead letters: list, retry, delete, purge."""

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
