"""The typed values the Python API returns: jobs, keyset pages, a flow parent's dependencies,
enqueue outcomes, job schedulers, events, retention reports and the workflow view's records.

Units follow the spec: a :class:`Retention` you configure is in **seconds**; every window and
timestamp reported back (:class:`EffectiveRetention`, :class:`RetentionPreview`, job and
scheduler timestamps, an event's ``at_ms``) is in **milliseconds** (timestamps as Unix ms). The workflow records
(:class:`WorkflowJob`) follow the workflow contract instead, whose times are dates: they are
timezone-aware UTC datetimes, which the view's ``next_poll_at`` arguments take back as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Dict, Generic, List, Optional, Tuple, TypeVar

from . import _flexiq

__all__ = [
    "ChildDependency",
    "Dependencies",
    "Dequeued",
    "EnqueueOutcome",
    "EffectiveRetention",
    "Event",
    "EVENT_KINDS",
    "Fence",
    "Job",
    "JobScheduler",
    "Page",
    "RETENTION_TABLES",
    "Retention",
    "RetentionPreview",
    "WorkflowJob",
]

T = TypeVar("T")

#: The history tables retention sweeps, in report order.
RETENTION_TABLES = ("archived_jobs", "dead_letter", "task_logs", "task_metrics", "job_errors")


@dataclass(frozen=True)
class Job:
    """A job as stored. Timestamps are Unix ms, ``timeout_ms`` is ms; ``payload`` and
    ``result`` are the raw bytes (see :meth:`flexiq.Queue.get_result` for the decoded result).
    ``stall_count`` counts the times its lease lapsed and it was recovered (see
    :meth:`flexiq.Queue.set_queue_max_stalled`). A LIFO job's ``run_at`` is minus the time
    it was placed (negative: due, and ahead of the FIFO jobs of its priority)."""

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
    stall_count: int

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
class ChildDependency:
    """A job a parent waits on (a flow's child, or a ``depends_on`` dependency): its ``id``,
    ``queue``, ``task`` and ``status``; the edge's ``policy`` (``"fail_parent"``,
    ``"continue_parent"``, ``"ignore_dependency"``, ``"remove_dependency"``, or
    ``"cancel_dependent"`` for a plain ``depends_on`` edge); the decoded ``result`` of a
    completed child (``None`` otherwise) and the last ``error`` of a failed one."""

    id: str
    queue: str
    task: str
    status: str
    policy: str
    result: Any
    error: Optional[str]


@dataclass(frozen=True)
class Dependencies:
    """One page of a parent's dependencies, ordered by child id, by outcome: ``processed``
    (completed), ``unprocessed`` (not finished), ``ignored`` (failed under
    ``ignore_dependency``) and ``failed`` (failed under any other policy). Pass
    ``next_after`` back as ``after`` for the next page; ``None`` means the last page."""

    processed: List[ChildDependency]
    unprocessed: List[ChildDependency]
    ignored: List[ChildDependency]
    failed: List[ChildDependency]
    next_after: Optional[str]


@dataclass(frozen=True)
class EnqueueOutcome:
    """What :meth:`flexiq.Queue.enqueue_outcome` did: ``id`` is the job's, and
    ``deduplicated`` is true when a unique key or dedup key returned an existing job (whose id
    it is) instead of inserting one."""

    id: str
    deduplicated: bool


@dataclass(frozen=True)
class JobScheduler:
    """A job scheduler as stored (see :meth:`flexiq.Queue.upsert_job_scheduler`).

    ``repeat`` is its rule as the dict the upsert takes, with every key present: ``cron`` and
    ``tz`` (``None``: UTC) or ``every_ms`` (ms), then ``limit`` (``None``: no limit),
    ``start_at_ms`` and ``end_at_ms`` (Unix ms or ``None``), ``immediately``, ``catch_up``
    (``"latest"``, ``"none"`` or ``"all"``) and ``catch_up_max`` (``None`` unless ``"all"``).
    ``template`` is the job each slot enqueues: ``task``, the call's ``args`` (a list) and
    ``kwargs`` decoded with the queue's serializer, and ``options``, the enqueue options it
    sets, named and in the units of :meth:`flexiq.Queue.enqueue` (``timeout`` and
    ``retry_backoff`` in seconds). ``next_run_ms`` is the next slot (Unix ms; ``None`` once
    the rule has no slot left, its limit or end reached), ``last_run_ms`` the newest slot
    fired (``None`` before the first), ``iterations`` the jobs fired so far; ``created_at``
    and ``updated_at`` (the last upsert) are Unix ms. Each slot's job runs at the slot and
    carries the unique key ``scheduler:<id>:<slot ms>``."""

    id: str
    repeat: Dict[str, Any]
    template: Dict[str, Any]
    next_run_ms: Optional[int]
    last_run_ms: Optional[int]
    iterations: int
    created_at: int
    updated_at: int

    def to_dict(self) -> Dict[str, Any]:
        """The scheduler as a plain dict."""
        return asdict(self)


#: The built-in event kinds, as :attr:`Event.kind` names them, in the engine's order (a custom
#: event's kind is ``"custom"``).
EVENT_KINDS: Tuple[str, ...] = tuple(_flexiq.EVENT_KINDS)


@dataclass(frozen=True)
class Event:
    """One event of a namespace's stream (see :meth:`flexiq.Queue.events`).

    ``id`` is opaque and ordered within the namespace: save it and pass it back as ``after``
    to resume, seeing every later event once. ``kind`` is what happened, one of
    :data:`EVENT_KINDS` (``"enqueued"``, ``"active"``, ``"completed"``, ``"failed"``,
    ``"retried"``, ``"dead"``, ``"cancelled"``, ...) or ``"custom"`` for an event from
    :meth:`flexiq.Queue.publish_event`; ``name`` is the kind's name, or the custom event's
    own. ``job_id``, ``queue``, ``task`` and ``attempt`` (the job's attempt counter after the
    change) describe the job it is about, ``None`` where there is none (a paused queue has a
    ``queue`` only). ``at_ms`` is when it was written (Unix ms). ``data`` is decoded JSON:
    what the kind carries (``enqueued``: ``status`` and ``run_at``; ``active``:
    ``worker_id``; ``completed``: ``result_size`` in bytes; ``failed`` / ``dead`` /
    ``cancelled``: ``error``; ``retried`` / ``requeued`` / ``stalled``: ``error`` and
    ``run_at``; ``progress``: ``progress``; ``deduplicated``: ``key``; times Unix ms), or a
    custom event's data."""

    id: str
    kind: str
    name: str
    job_id: Optional[str]
    queue: Optional[str]
    task: Optional[str]
    attempt: Optional[int]
    at_ms: int
    data: Any

    def to_dict(self) -> Dict[str, Any]:
        """The event as a plain dict."""
        return asdict(self)


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


@dataclass(frozen=True)
class Fence:
    """The stamp of one attempt of job ``job_id``, as :meth:`flexiq.WorkflowJobs.dequeue`
    issued it. Passed back to ``complete`` / ``fail`` / ``suspend`` / ``defer``, it makes the
    write conditional on that attempt still running (else the call returns
    ``"superseded"`` and changes nothing); given with another job's id it is refused
    (:class:`~flexiq.InvalidArgument`). ``started_at`` is Unix ms; ``claim_seq`` counts every
    claim of the job, so each claim's fence is unique."""

    job_id: str
    attempt: int
    started_at: int
    claim_seq: int


@dataclass(frozen=True)
class WorkflowJob:
    """A workflow job as the workflow contract names its fields. ``payload`` is the decoded
    JSON payload; every time is a timezone-aware UTC datetime: ``locked_at`` is the running
    attempt's last heartbeat (else its start), ``next_poll_at`` the earliest next claim,
    ``updated_at`` the latest of created, started, heartbeat and finished. ``max_attempts``
    counts the first attempt; ``group_key`` is the fairness group (``None``: the default
    group). The job is an ordinary flexiq job too: :meth:`flexiq.Queue.get_job` shows it with
    ``task`` = ``workflow_id``."""

    id: str
    queue: str
    workflow_run_id: str
    workflow_id: str
    stage_id: str
    definition_version: Optional[str]
    group_key: Optional[str]
    status: str
    attempt: int
    max_attempts: int
    worker_id: Optional[str]
    locked_at: Optional[datetime]
    started_at: Optional[datetime]
    next_poll_at: datetime
    last_error: Optional[str]
    payload: Any
    created_at: datetime
    updated_at: datetime

    def to_dict(self) -> Dict[str, Any]:
        """The job as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Dequeued:
    """What :meth:`flexiq.WorkflowJobs.dequeue` claimed: the job, now running, and the fence
    its acks should carry."""

    job: WorkflowJob
    fence: Fence
