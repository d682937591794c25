"""The workflow job view of :class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/workflow.rs``:
a workflow engine's hosts drive the stages of workflow runs through it.

``queue.workflow_jobs(...)`` returns a :class:`WorkflowJobs`. Each stage is an ordinary flexiq
job (task = the workflow id, on the view's queue, ``"workflow"`` by default) with at most one
row per (run, stage); ``dequeue`` claims one and returns it with its :class:`~flexiq.Fence`,
which the acks carry so a host that lost its lease can never overwrite the attempt that
replaced it. Payloads are JSON values (dumped here, decoded on the way back); poll times are
timezone-aware datetimes or Unix seconds, turned into the engine's Unix ms by
:func:`flexiq._units.seconds_to_ms`, the one conversion; lease thresholds are milliseconds, as
their names say. Every blocking call has an ``a``-prefixed async twin, made by
:func:`flexiq._aio.async_twins` onto :class:`flexiq._aio.WorkflowAsyncMixin`.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

from .. import _flexiq
from .._aio import WorkflowAsyncMixin, async_twins
from .._args import flag, integer, optional_text, text
from .._units import NotSeconds, seconds_to_ms
from ..exceptions import InvalidArgument, WrongType
from ..models import Dequeued, Fence, WorkflowJob
from .base import QueueBase

__all__ = ["WorkflowJobSpec", "WorkflowJobs", "WorkflowMixin", "WorkflowServes"]

#: A poll time: a timezone-aware datetime, or Unix seconds.
PollAt = Union[_dt.datetime, float]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class _StageIds(TypedDict):
    workflow_run_id: str
    workflow_id: str
    stage_id: str
    payload: Any


class WorkflowJobSpec(_StageIds, total=False):
    """One stage for :meth:`WorkflowJobs.enqueue_parallel`: the run, the workflow (the job's
    task), the stage and a JSON-serializable ``payload`` are required."""

    #: The workflow definition version the run is pinned to.
    definition_version: Optional[str]
    #: Higher runs first (default 0).
    priority: Optional[int]
    #: The earliest claim: a timezone-aware datetime or Unix seconds (default: now).
    next_poll_at: Optional[PollAt]
    #: Attempts allowed, the first included (default 3).
    max_attempts: Optional[int]


class _ServesWorkflow(TypedDict):
    workflow_id: str


class WorkflowServes(_ServesWorkflow, total=False):
    """A (workflow, definition version) pair a host serves; no version serves every one."""

    definition_version: Optional[str]


#: Every key a stage dict may carry, the required ones first.
_SPEC_KEYS = tuple(WorkflowJobSpec.__annotations__)


def _poll_ms(what: str, at: Any) -> int:
    """A poll time (an aware datetime, or Unix seconds) as Unix ms."""
    if isinstance(at, _dt.datetime):
        if at.utcoffset() is None:
            raise InvalidArgument(f"{what} {at.isoformat()} must be a timezone-aware datetime")
        seconds: float = at.timestamp()
    elif isinstance(at, bool) or not isinstance(at, (int, float)):
        raise NotSeconds(f"{what} must be a timezone-aware datetime or Unix seconds, not {type(at).__name__}")
    else:
        seconds = at
    ms = seconds_to_ms(what, seconds)
    assert ms is not None
    return ms


def _when(ms: Optional[int]) -> Optional[_dt.datetime]:
    return None if ms is None else _EPOCH + _dt.timedelta(milliseconds=ms)


def _payload(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data  # a job of the queue written by another producer, not as JSON


def _job(d: Dict[str, Any]) -> WorkflowJob:
    times = ("locked_at", "started_at", "next_poll_at", "created_at", "updated_at")
    fields: Dict[str, Any] = {k: (_when(v) if k in times else v) for k, v in d.items()}
    fields["payload"] = _payload(d["payload"])
    return WorkflowJob(**fields)


def _stage(i: int, job: Any) -> Dict[str, Any]:
    """Stage ``i`` of a batch as the native dict; errors name the index."""
    where = f"enqueue_parallel job {i}"
    if not isinstance(job, Mapping):
        raise WrongType(f"{where} must be a dict, not {type(job).__name__}")
    for k in job:
        if k not in _SPEC_KEYS:
            raise InvalidArgument(f"{where}: unknown key {k!r} (expected {', '.join(_SPEC_KEYS)})")
    for k in ("workflow_run_id", "workflow_id", "stage_id", "payload"):
        if k not in job:
            raise InvalidArgument(f"{where}: {k} is required")
    try:
        payload = json.dumps(job["payload"], separators=(",", ":")).encode()
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{where}: payload is not JSON serializable: {e}") from None
    out: Dict[str, Any] = {k: text(f"{where}: {k}", job[k]) for k in ("workflow_run_id", "workflow_id", "stage_id")}
    out["payload"] = payload
    out["definition_version"] = optional_text(f"{where}: definition_version", job.get("definition_version"))
    priority = job.get("priority")
    out["priority"] = 0 if priority is None else integer(f"{where}: priority", priority)
    at = job.get("next_poll_at")
    out["next_poll_at_ms"] = None if at is None else _poll_ms(f"{where}: next_poll_at", at)
    attempts = job.get("max_attempts")
    out["max_attempts"] = None if attempts is None else integer(f"{where}: max_attempts", attempts)
    return out


def _serves(serves: Any) -> List[Tuple[str, Optional[str]]]:
    if serves is None:
        return []
    if isinstance(serves, (str, Mapping)):
        raise WrongType("serves must be a list of workflow ids, (workflow_id, definition_version) pairs or dicts")
    out: List[Tuple[str, Optional[str]]] = []
    for i, s in enumerate(serves):
        what = f"serves[{i}]"
        if isinstance(s, str):
            out.append((s, None))
        elif isinstance(s, Mapping):
            for k in s:
                if k not in ("workflow_id", "definition_version"):
                    raise InvalidArgument(f"{what}: unknown key {k!r} (expected workflow_id, definition_version)")
            if "workflow_id" not in s:
                raise InvalidArgument(f"{what}: workflow_id is required")
            version = optional_text(f"{what}: definition_version", s.get("definition_version"))
            out.append((text(f"{what}: workflow_id", s["workflow_id"]), version))
        elif isinstance(s, tuple) and len(s) == 2:
            out.append((text(f"{what}: workflow_id", s[0]), optional_text(f"{what}: definition_version", s[1])))
        else:
            raise WrongType(f"{what} must be a workflow id, a (workflow_id, definition_version) pair or a dict")
    return out


def _queues(queues: Any) -> List[str]:
    if queues is None:
        return []
    if isinstance(queues, str):
        raise WrongType("queues must be a list of queue names, not str")
    return [text(f"queues[{i}]", q) for i, q in enumerate(queues)]


def _fence(fence: Optional[Fence]) -> Optional[Tuple[str, int, int, int]]:
    if fence is None:
        return None
    if not isinstance(fence, Fence):
        raise WrongType(f"fence must be a flexiq.Fence (from dequeue), not {type(fence).__name__}")
    return (fence.job_id, fence.attempt, fence.started_at, fence.claim_seq)


@async_twins(not_io=("adopt_worker_id",), into=WorkflowAsyncMixin)
class WorkflowJobs(WorkflowAsyncMixin):
    """A workflow view of one queue (see :meth:`flexiq.Queue.workflow_jobs`). Thread-safe; it
    stays usable while its queue is open. Acks return ``"acknowledged"`` or, for a fenced
    ack whose attempt no longer runs, ``"superseded"``; an unfenced ack always returns
    ``"acknowledged"``."""

    def __init__(self, native: _flexiq.NativeWorkflowJobs) -> None:
        self._native = native

    def __repr__(self) -> str:
        return (
            f"WorkflowJobs(queue={self.queue_name!r}, fairness_group_by={self.fairness_group_by!r}, "
            f"fairness_cap={self.fairness_cap!r}, worker_id={self.worker_id!r})"
        )

    @property
    def fairness_group_by(self) -> Optional[str]:
        """The dotted payload path (``tenant.id``) naming a job's fairness group; ``None``
        when fairness is off."""
        return self._native.fairness_group_by

    @property
    def fairness_cap(self) -> Optional[int]:
        """The most running jobs per fairness group across every worker; ``None``: uncapped."""
        return self._native.fairness_cap

    @property
    def queue_name(self) -> str:
        """The queue the view enqueues to and, by default, dequeues from."""
        return self._native.queue_name

    @property
    def worker_id(self) -> str:
        """The worker id stamped on this view's claims."""
        return self._native.worker_id

    def adopt_worker_id(self, worker_id: str) -> str:
        """Offers a host's worker id; returns the id the view will stamp (a view opened with
        its own ``worker_id`` keeps it, so compare to warn on a mismatch). No I/O."""
        return self._native.adopt_worker_id(text("worker_id", worker_id))

    def enqueue_parallel(self, jobs: Iterable[WorkflowJobSpec]) -> List[str]:
        """Inserts or replaces stages, all in one transaction; returns their job ids in
        order. A (run, stage) pair that already has a row (any status, running included)
        is replaced in place: same id, attempt 0, pending, no worker, lease or last error,
        the new payload and ``next_poll_at``; a running attempt's late ack is then
        ``"superseded"``. A bad stage raises :class:`~flexiq.InvalidArgument` naming its
        index and nothing is written."""
        if isinstance(jobs, (str, bytes, Mapping)):
            raise WrongType(f"jobs must be a list of stage dicts, not {type(jobs).__name__}")
        return self._native.enqueue_parallel([_stage(i, j) for i, j in enumerate(jobs)])

    def dequeue(
        self,
        serves: Optional[Iterable[Union[str, WorkflowServes, Tuple[str, Optional[str]]]]] = None,
        queues: Optional[Sequence[str]] = None,
    ) -> Optional[Dequeued]:
        """Atomically claims the next available job, or returns ``None``. ``serves``
        restricts it to workflows (a workflow id, a ``(workflow_id, definition_version)``
        pair or a :class:`WorkflowServes` dict; no version serves every one), ``queues`` to
        those queues (default: the view's). With a fairness cap, groups at their cap are
        skipped and groups with ready work are served in turn."""
        got = self._native.dequeue(_serves(serves), _queues(queues))
        if got is None:
            return None
        job, (attempt, started_at, claim_seq) = got
        record = _job(job)
        return Dequeued(record, Fence(record.id, attempt, started_at, claim_seq))

    def complete(self, job_id: str, fence: Optional[Fence] = None) -> str:
        """Completes a job. With ``fence``, only while that attempt runs."""
        return self._native.complete(text("job_id", job_id), _fence(fence))

    def fail(self, job_id: str, error: str, should_retry: bool = False, fence: Optional[Fence] = None) -> str:
        """Fails the attempt with ``error``; it is retried (within ``max_attempts``) only
        when ``should_retry`` is true. With ``fence``, only while that attempt runs."""
        if not isinstance(should_retry, bool):
            raise WrongType(f"should_retry must be a bool, not {type(should_retry).__name__}")
        return self._native.fail(text("job_id", job_id), text("error", error), should_retry, _fence(fence))

    def suspend(self, job_id: str, next_poll_at: PollAt, fence: Optional[Fence] = None) -> str:
        """Suspends a running job until ``next_poll_at`` (an aware datetime or Unix seconds),
        when it becomes claimable again. With ``fence``, only while that attempt runs."""
        at = _poll_ms("next_poll_at", next_poll_at)
        return self._native.suspend(text("job_id", job_id), at, _fence(fence))

    def defer(self, job_id: str, next_poll_at: PollAt, reason: str, fence: Optional[Fence] = None) -> str:
        """Declines a claim: back to pending until ``next_poll_at`` without spending the
        attempt (not a failure; use it for work this host cannot take now). With
        ``fence``, only while that attempt runs."""
        at = _poll_ms("next_poll_at", next_poll_at)
        return self._native.defer(text("job_id", job_id), at, text("reason", reason), _fence(fence))

    def touch_job(self, job_id: str) -> None:
        """Renews the lease of a running job (unfenced; nothing when it is not running), so
        :meth:`release_stale_jobs` leaves a long stage alone."""
        self._native.touch_job(text("job_id", job_id))

    def release_stale_jobs(self, threshold_ms: int = 60_000) -> int:
        """The fine lease tier: gives back running jobs whose lease was last renewed more
        than ``threshold_ms`` ago (default one minute; last error prefixed
        ``LEASE_HEARTBEAT_LOST``); returns how many."""
        return self._native.release_stale_jobs(integer("threshold_ms", threshold_ms))

    def expire_runaway_jobs(self, absolute_ms: int) -> int:
        """The coarse lease tier: fails running jobs whose attempt started more than
        ``absolute_ms`` ago, heartbeats or not (last error prefixed ``LEASE_ABSOLUTE_CAP``);
        returns how many."""
        return self._native.expire_runaway_jobs(integer("absolute_ms", absolute_ms))

    def cancel_by_run(self, run_id: str) -> int:
        """Cancels the run's jobs that have not started (pending, waiting, suspended);
        returns how many. Running and finished jobs are left alone."""
        return self._native.cancel_by_run(text("run_id", run_id))

    def delete_by_run_and_stages(self, run_id: str, stage_ids: Sequence[str]) -> int:
        """Deletes the job rows of the run's listed stages, whatever their status; returns
        how many. An empty list deletes nothing."""
        if isinstance(stage_ids, str):
            raise WrongType("stage_ids must be a list of stage ids, not str")
        ids = [text(f"stage_ids[{i}]", s) for i, s in enumerate(stage_ids)]
        return self._native.delete_by_run_and_stages(text("run_id", run_id), ids)

    def get_jobs_by_workflow_run(self, run_id: str) -> List[WorkflowJob]:
        """Every job of a run, any status, oldest first."""
        return [_job(d) for d in self._native.get_jobs_by_workflow_run(text("run_id", run_id))]


class WorkflowMixin(QueueBase):
    """Opens workflow views of the queue."""

    def workflow_jobs(
        self,
        fairness_group_by: Optional[str] = None,
        fairness_cap: Optional[int] = None,
        worker_id: Optional[str] = None,
        queue: str = "workflow",
        claim_ahead: bool = False,
    ) -> WorkflowJobs:
        """A :class:`WorkflowJobs` view on ``queue``. ``fairness_group_by`` is a dotted path
        into the payload (``"tenant.id"``) whose value is a job's fairness group (a payload
        without it is in the default group); ``fairness_cap`` (at least 1) caps the running
        jobs of each group across every worker and process; ``worker_id`` is stamped on
        claims (default: one made up, until a host offers its own with
        :meth:`WorkflowJobs.adopt_worker_id`). With ``claim_ahead``, each ack also claims
        this worker's next job in the same store call and holds it for the next
        :meth:`WorkflowJobs.dequeue` with the same options: one store call per job for a host
        loop instead of two. The held job is ``running`` under this worker id before the
        dequeue; it goes back to pending (the attempt not counted) when not dequeued within
        a second, on a dequeue with other options, a ``cancel_by_run`` or
        ``delete_by_run_and_stages`` in this process, or when the queue closes. No I/O."""
        native = self._native.workflow_jobs(
            optional_text("fairness_group_by", fairness_group_by),
            None if fairness_cap is None else integer("fairness_cap", fairness_cap),
            optional_text("worker_id", worker_id),
            text("queue", queue),
            flag("claim_ahead", claim_ahead),
        )
        return WorkflowJobs(native)
