"""The typed values the Python API returns: jobs, keyset pages and retention reports.

Units follow the spec: a :class:`Retention` you configure is in **seconds**; every window and
timestamp reported back (:class:`EffectiveRetention`, :class:`RetentionPreview`, job
timestamps) is in **milliseconds** (timestamps as Unix ms).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Generic, List, Optional, TypeVar

__all__ = ["Job", "Page", "Retention", "EffectiveRetention", "RetentionPreview", "RETENTION_TABLES"]

T = TypeVar("T")

#: The history tables retention sweeps, in report order.
RETENTION_TABLES = ("archived_jobs", "dead_letter", "task_logs", "task_metrics", "job_errors")


@dataclass(frozen=True)
class Job:
    """A job as stored. Timestamps are Unix ms, ``timeout_ms`` is ms; ``payload`` and
    ``result`` are the raw bytes (see :meth:`flexiq.Queue.get_result` for the decoded result)."""

    id: str
    namespace: str
    queue: str
    task: str
    payload: bytes
    priority: int
    status: str
    attempt: int
    max_retries: int
    created_at: int
    run_at: int
    started_at: Optional[int]
    heartbeat_at: Optional[int]
    finished_at: Optional[int]
    worker_id: Optional[str]
    result: Optional[bytes]
    last_error: Optional[str]
    unique_key: Optional[str]
    metadata: Optional[str]
    progress: Optional[float]
    timeout_ms: Optional[int]
    cancel_requested: bool
    depends_on: List[str]
    group_key: Optional[str]
    workflow_run_id: Optional[str]
    workflow_stage_id: Optional[str]

    def to_dict(self) -> Dict[str, Any]:
        """The job as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One keyset page: pass ``next_cursor`` back as ``after``; ``None`` means the last page.
    Treat the cursor as opaque."""

    items: List[T]
    next_cursor: Optional[str]

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class Retention:
    """Retention windows to configure, in **seconds** per table; ``None`` keeps a table forever."""

    archived_jobs: Optional[int] = None
    dead_letter: Optional[int] = None
    task_logs: Optional[int] = None
    task_metrics: Optional[int] = None
    job_errors: Optional[int] = None

    def to_dict(self) -> Dict[str, Optional[int]]:
        """The windows keyed by table name (seconds)."""
        return {t: getattr(self, t) for t in RETENTION_TABLES}


@dataclass(frozen=True)
class EffectiveRetention:
    """What the elected cleaner applied on its last sweep: ``windows`` in **ms** keyed by
    table (``None``: kept forever), ``reported_at`` in Unix ms."""

    enabled: bool
    defaulted: bool
    namespace: str
    reported_at: int
    windows: Dict[str, Optional[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class RetentionPreview:
    """What a purge would delete at ``reference_time`` (Unix ms): ``windows`` in **ms**,
    ``counts`` of rows per table, and their ``total``."""

    enabled: bool
    defaulted: bool
    namespace: str
    reference_time: int
    windows: Dict[str, Optional[int]] = field(default_factory=dict)
    counts: Dict[str, int] = field(default_factory=dict)
    total: int = 0
