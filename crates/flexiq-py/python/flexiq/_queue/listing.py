"""Job and archive listings of :class:`flexiq.Queue`, offset-paged and keyset-paged, as
``flexiq-runtime``'s ``queue/listing.rs``. A keyset page is a :class:`~flexiq.Page`; pass its
``next_cursor`` back as ``after``."""

from __future__ import annotations

from typing import List, Optional

from ..models import Job, Page
from .base import QueueBase, job_list

__all__ = ["ListingMixin"]


class ListingMixin(QueueBase):
    """Jobs (plain and filtered) and the archive."""

    def list_jobs(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        limit: int = 50,
        offset: int = 0,
    ) -> List[Job]:
        """Jobs by status, queue or task, newest first (``limit`` 1 to 10,000)."""
        return job_list(self._native.list_jobs(status, queue, task, limit, offset))

    def list_jobs_filtered(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        metadata_contains: Optional[str] = None,
        error_contains: Optional[str] = None,
        created_after: Optional[int] = None,
        created_before: Optional[int] = None,
        limit: int = 50,
        offset: int = 0,
    ) -> List[Job]:
        """The wider filter: plus metadata / error substrings and a created-at range
        (``created_after`` inclusive, ``created_before`` exclusive, Unix ms)."""
        rows = self._native.list_jobs_filtered(
            status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, offset
        )
        return job_list(rows)

    def list_jobs_after(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        limit: int = 50,
        after: Optional[str] = None,
    ) -> Page[Job]:
        """Keyset-paginated :meth:`list_jobs`, by created time; pass ``next_cursor`` back as
        ``after``. ``None`` means that was the last page."""
        items, cursor = self._native.list_jobs_after(status, queue, task, limit, after)
        return Page(job_list(items), cursor)

    def list_jobs_filtered_after(
        self,
        status: Optional[str] = None,
        queue: Optional[str] = None,
        task: Optional[str] = None,
        metadata_contains: Optional[str] = None,
        error_contains: Optional[str] = None,
        created_after: Optional[int] = None,
        created_before: Optional[int] = None,
        limit: int = 50,
        after: Optional[str] = None,
    ) -> Page[Job]:
        """Keyset-paginated :meth:`list_jobs_filtered`, same cursor contract."""
        items, cursor = self._native.list_jobs_filtered_after(
            status, queue, task, metadata_contains, error_contains, created_after, created_before, limit, after
        )
        return Page(job_list(items), cursor)

    def list_archived(self, limit: int = 50, offset: int = 0) -> List[Job]:
        """Archived jobs, newest first, offset-paginated."""
        return job_list(self._native.list_archived(limit, offset))

    def list_archived_after(self, limit: int = 50, after: Optional[str] = None) -> Page[Job]:
        """Keyset-paginated archive, by completed time."""
        items, cursor = self._native.list_archived_after(limit, after)
        return Page(job_list(items), cursor)
