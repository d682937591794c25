"""Job calls of :class:`flexiq.Queue`: enqueue (one job or an atomic batch), fetch, cancel,
the error record, replay, the dependency graph and the log, as ``flexiq-runtime``'s
``queue/jobs.rs``. Payloads and results go through the queue's serializer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence

from .._batch import batch_items
from .._options import EnqueueOptions, check_option_names, native_options
from ..exceptions import InvalidArgument
from ..models import Job
from ..result import JobResult
from ..task import call_args
from .base import QueueBase, job_or_none

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["JobsMixin"]


class JobsMixin(QueueBase):
    """Enqueue, fetch, cancel, errors, replay, the graph and logs."""

    def enqueue(
        self,
        task_name: str,
        args: Sequence[Any] = (),
        kwargs: Optional[Dict[str, Any]] = None,
        **options: Unpack[EnqueueOptions],
    ) -> JobResult:
        """Enqueues a job for a task by name (which may be handled by a Node or Rust worker),
        with :meth:`Task.apply_async`'s options. ``delay``, ``timeout`` and
        ``retry_backoff`` are seconds, ``eta`` a datetime or Unix seconds. A revoked task
        raises :class:`~flexiq.TaskRevoked`."""
        check_option_names("enqueue", options)
        if not isinstance(task_name, str):
            raise InvalidArgument(f"task_name must be a string, not {type(task_name).__name__}")
        payload = self.serializer.dumps_call(*call_args(args, kwargs))
        return self._job_result(self._native.enqueue(task_name, payload, native_options(options)))

    def enqueue_many(self, jobs: Iterable[Mapping[str, Any]]) -> List[JobResult]:
        """Enqueues a batch atomically: every job is written, or none is. Each job is a dict
        with ``task`` (a name, or a :class:`~flexiq.Task` whose defaults apply), optional
        ``args`` and ``kwargs``, and any option of :meth:`Task.apply_async` (``delay``,
        ``eta``, ``priority``, ``unique_key``, ``metadata``, ``depends_on``, ``queue``,
        ``max_retries``, ``timeout``, ``retry_backoff``, ``group_key``, ``lifo``; same
        units). Returns the jobs' handles in order. A bad job raises
        :class:`~flexiq.InvalidArgument` naming its index; a revoked task
        :class:`~flexiq.TaskRevoked`; the ``max_pending`` cap :class:`~flexiq.QueueFull`."""
        items = batch_items(jobs, self.serializer)
        return [self._job_result(i) for i in self._native.enqueue_many(items)]

    def get_job(self, job_id: str) -> Optional[Job]:
        """A job's current state, or ``None`` when no job has that id."""
        return job_or_none(self._native.get_job(job_id))

    def get_result(self, job_id: str) -> Any:
        """The deserialized result of a completed job, or ``None`` while not ready."""
        data = self._native.get_result(job_id)
        return None if data is None else self.serializer.loads(data)

    def request_cancel(self, job_id: str) -> bool:
        """Requests cooperative cancellation: a pending job is cancelled outright, a running
        one sees ``current_job().is_cancel_requested()``. False when already terminal."""
        return self._native.request_cancel(job_id)

    def is_cancel_requested(self, job_id: str) -> bool:
        """Whether cancellation has been requested for a job."""
        return self._native.is_cancel_requested(job_id)

    def cancel_job(self, job_id: str) -> bool:
        """Cancels a pending job (and its dependents); False when running or terminal."""
        return self._native.cancel_job(job_id)

    def get_job_errors(self, job_id: str) -> List[Dict[str, Any]]:
        """Every failed attempt (id, job_id, attempt, error, failed_at Unix ms), oldest first."""
        return self._native.get_job_errors(job_id)

    def replay(self, job_id: str) -> str:
        """Enqueues a copy of a job (fresh id and retry budget, same payload) and records
        the replay; returns the new id."""
        return self._native.replay(job_id)

    replay_job = replay

    def replay_history(self, job_id: str) -> List[Dict[str, Any]]:
        """Every replay of a job, newest first: id, original_job_id, replay_job_id,
        replayed_at (Unix ms), original_error, replay_error."""
        return self._native.replay_history(job_id)

    get_replay_history = replay_history

    def job_dag(self, job_id: str) -> Dict[str, List[Dict[str, str]]]:
        """The dependency graph reachable from a job: ``{"nodes": [...], "edges": [...]}``,
        each edge ``{"from": dependency, "to": dependent}``."""
        return self._native.job_dag(job_id)

    def job_logs(self, job_id: str) -> List[Dict[str, Any]]:
        """A job's log lines (job_id, level, message, logged_at Unix ms), oldest first."""
        return self._native.job_logs(job_id)
